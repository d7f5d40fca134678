// The pipeline packs each projection weight once per call when two or more
// m blocks share it (here T = 512: eight 64-row blocks, pack-b-once-blocks by default), and passes
// contraction-pack-b-once=false on to attn-vectorize-contractions, which
// then copies a panel per n tile (into a 64 x 16 buffer: cache-k rows, or
// all of K when it is shorter, 64 here) instead. The register-n size is
// given so that the IR is the same on AVX-512 and AVX2 hosts.
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='contraction-register-m=4 contraction-register-n=16' -mlir-print-ir-after=attn-vectorize-contractions 2>&1 >/dev/null | FileCheck %s
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='contraction-register-m=4 contraction-register-n=16 contraction-pack-b-once=false' -mlir-print-ir-after=attn-vectorize-contractions 2>&1 >/dev/null | FileCheck %s --check-prefix=ONCEOFF

// Q, K and V, then (after the attention core) out_proj: each weight is packed into 4 panels of 64
// rows x 16 columns, by a parallel loop over 4 groups of 16 rows, before
// the parallel loop over the 64-row blocks that reads it.
// CHECK-LABEL: IR Dump After AttnVectorizeContractionsPass
// CHECK: scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<4x64x16xf32>)
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 512) step (1, 64)
// CHECK: vector.transfer_read {{.*}} : tensor<4x64x16xf32>, vector<16xf32>
// CHECK: scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<4x64x16xf32>)
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 512) step (1, 64)
// CHECK: vector.transfer_read {{.*}} : tensor<4x64x16xf32>, vector<16xf32>
// CHECK: scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<4x64x16xf32>)
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 512) step (1, 64)
// CHECK: vector.transfer_read {{.*}} : tensor<4x64x16xf32>, vector<16xf32>
// CHECK: scf.forall (%{{.*}}) in (4) shared_outs(%{{.*}} = %{{.*}}) -> (tensor<4x64x16xf32>)
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (1, 512) step (1, 64)
// CHECK: vector.transfer_read {{.*}} : tensor<4x64x16xf32>, vector<16xf32>
// CHECK-NOT: tensor<64x16xf32>

// ONCEOFF-LABEL: IR Dump After AttnVectorizeContractionsPass
// ONCEOFF-NOT: tensor<4x64x16xf32>
// ONCEOFF-COUNT-4: iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<1x64x64xf32>, tensor<64x16xf32>)
// ONCEOFF-NOT: tensor<4x64x16xf32>

func.func @main(%x: tensor<1x512x64xf32>, %w: tensor<64x64xf32>) -> tensor<1x512x64xf32> {
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) out_proj(%w) causal {num_heads = 1 : i64} : (tensor<1x512x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<1x512x64xf32>
  return %0 : tensor<1x512x64xf32>
}
