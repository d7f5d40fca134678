// RUN: attention-opt %s --convert-attn-to-gpu --canonicalize --cse | FileCheck %s

// Head dims that are not multiples of 8 (ONNX's conformance cases have 1,
// 4, 6 and 10) are computed rounded up to one, with zeros in the extra
// columns: Q's are loaded by element (the column clamped to the row, then
// selected against zero), K and V tiles are staged synchronously by
// element (rows of 10 halves are not 16-byte aligned, so no cp.async), and
// the result is stored by element, only inside the value head dim.
// d = 10 computes as 16 (a row of 24 with the padding), dv = 6 as 8.
// CHECK-LABEL: gpu.func @ragged_sdpa0(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<1x2x100x10xf16>, %[[K:[a-z0-9]+]]: memref<1x2x100x10xf16>, %[[V:[a-z0-9]+]]: memref<1x2x100x6xf16>, %[[O:[a-z0-9]+]]: memref<1x2x100x6xf16>)
// CHECK-SAME: workgroup(%{{.*}} : memref<64x24xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<64x8xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-NOT: nvgpu.device_async_copy
// Q: column 2t (and 2t + 1, 2t + 8, ...) clamped to 9, zero past it.
// CHECK: %[[C:.*]] = arith.minui %[[COL:.*]], %c9 : index
// CHECK-NEXT: %[[X:.*]] = memref.load %[[Q]][%{{.*}}, %{{.*}}, %{{.*}}, %[[C]]] : memref<1x2x100x10xf16>
// CHECK: arith.select %{{.*}}, %[[X]], %{{.*}} : f16
// The K tile: element loads, clamped and selected the same way.
// CHECK: scf.for
// CHECK: memref.load %[[K]][{{.*}}] : memref<1x2x100x10xf16>
// CHECK: nvgpu.mma.sync
// The result: element stores guarded by the column.
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[OC:.*]], %c6 : index
// CHECK: scf.if %[[IN]] {
// CHECK-NEXT: memref.store %{{.*}}, %[[O]][%{{.*}}, %{{.*}}, %{{.*}}, %[[OC]]] : memref<1x2x100x6xf16>
func.func @ragged(%q: tensor<1x2x100x10xf16>, %k: tensor<1x2x100x10xf16>, %v: tensor<1x2x100x6xf16>) -> tensor<1x2x100x6xf16> {
  %o = attn.sdpa %q, %k, %v causal(top_left) : tensor<1x2x100x10xf16>, tensor<1x2x100x10xf16>, tensor<1x2x100x6xf16> -> tensor<1x2x100x6xf16>
  return %o : tensor<1x2x100x6xf16>
}
