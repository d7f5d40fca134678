// RUN: attention-opt %s --convert-attn-to-gpu --canonicalize | FileCheck %s

// A causal sliding window of 256 keys (window_left = 255) in the GPU
// kernel. A block's 64 rows lie on the diagonal keys row0 .. row0 + 63, so
// some row sees keys [row0 - 255, row0 + 64) and every row those in
// [row0 + 63 - 255, row0 + 1): with 64-key tiles, [t0, t1) on the window's
// left edge and [nFull, nTiles) on the diagonal take the key predicate,
// [t1, nFull) do not, and the tiles before t0 are never loaded. The
// cp.async prologue stages tile t0 into buffer t0 % 2 (nothing when the
// block sees no key), where the loops' prefetch chain expects it.
// CHECK-LABEL: gpu.func @window_sdpa0
// CHECK: %[[END:.*]] = arith.addi %[[ROW0:.*]], %c64 : index
// CHECK: %[[NTILES:.*]] = arith.ceildivui %{{.*}}, %c64 : index
// CHECK: arith.addi %[[ROW0]], %c-255 : index
// CHECK: arith.addi %[[ROW0]], %c-192 : index
// CHECK: %[[T0:.*]] = arith.minsi %{{.*}}, %[[NTILES]] : index
// CHECK: %[[T1:.*]] = arith.minsi %{{.*}}, %[[NTILES]] : index
// CHECK: %[[NFULL:.*]] = arith.minsi %{{.*}}, %[[NTILES]] : index
// CHECK: %[[BUF0:.*]] = arith.remui %[[T0]], %c2 : index
// CHECK: %[[ANY:.*]] = arith.cmpi slt, %[[T0]], %[[NTILES]] : index
// CHECK: nvgpu.device_async_copy %{{.*}}, %{{.*}}[%[[BUF0]], %{{.*}}, %{{.*}}], 8, %{{.*}} {bypassL1} : memref<1x2x512x64xf16> to memref<2x64x72xf16, #gpu.address_space<workgroup>>
// CHECK: scf.for %{{.*}} = %[[T0]] to %[[T1]] step %c1
// CHECK: nvgpu.mma.sync
// CHECK: arith.cmpi sle
// CHECK: arith.cmpi sge
// CHECK: scf.for %{{.*}} = %[[T1]] to %[[NFULL]] step %c1
// CHECK-NOT: arith.cmpi sge
// CHECK: scf.for %{{.*}} = %[[NFULL]] to %[[NTILES]] step %c1
// CHECK: arith.cmpi sle
// CHECK: arith.cmpi sge
// CHECK: gpu.return
func.func @window(%q: tensor<1x2x512x64xf16>, %k: tensor<1x2x512x64xf16>, %v: tensor<1x2x512x64xf16>) -> tensor<1x2x512x64xf16> {
  %o = attn.sdpa %q, %k, %v causal(top_left) {window_left = 255 : i64} : tensor<1x2x512x64xf16>, tensor<1x2x512x64xf16>, tensor<1x2x512x64xf16> -> tensor<1x2x512x64xf16>
  return %o : tensor<1x2x512x64xf16>
}
