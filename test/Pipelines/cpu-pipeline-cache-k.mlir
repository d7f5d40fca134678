// The reduction block of attn-vectorize-contractions by target CPU: with
// AVX-512 (x86-64-v4) up to 2048 rows of K, here all of K = 640 in one
// block, whose packed panel (K x 32) the register tiles read over the whole
// k range with no k-block loop around them; with AVX2 (x86-64-v3) blocks of
// 256 rows (640 = 256 + 256 + 128), each n tile copying a 256 x 16 panel.
// An explicit contraction-cache-k overrides either.
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='target-cpu=x86-64-v4' -mlir-print-ir-after=attn-vectorize-contractions 2>&1 >/dev/null | FileCheck %s --check-prefix=AVX512
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='target-cpu=x86-64-v3' -mlir-print-ir-after=attn-vectorize-contractions 2>&1 >/dev/null | FileCheck %s --check-prefix=AVX2
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='target-cpu=x86-64-v4 contraction-cache-k=256' -mlir-print-ir-after=attn-vectorize-contractions 2>&1 >/dev/null | FileCheck %s --check-prefix=K256

func.func @main(%x: tensor<1x?x640xf32>, %w: tensor<640x640xf32>) -> tensor<1x?x640xf32> {
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) out_proj(%w) causal {num_heads = 10 : i64} : (tensor<1x?x640xf32>, tensor<640x640xf32>, tensor<640x640xf32>, tensor<640x640xf32>, tensor<640x640xf32>) -> tensor<1x?x640xf32>
  return %0 : tensor<1x?x640xf32>
}

// AVX512-LABEL: IR Dump After AttnVectorizeContractionsPass
// AVX512-NOT: step %c256
// AVX512: tensor.empty() : tensor<640x32xf32>
// AVX512: scf.for %{{.*}} = %c0 to %c640 step %c32 iter_args({{.*}}) -> (tensor<1x?x640xf32>, tensor<640x32xf32>)
// AVX512: scf.for %{{.*}} = %c0 to %c640 step %c1 iter_args({{.*}}) -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>)
// AVX512-NOT: step %c256

// AVX2-LABEL: IR Dump After AttnVectorizeContractionsPass
// AVX2: scf.for %{{.*}} = %c0 to %c640 step %c256 iter_args
// AVX2: tensor.empty() : tensor<256x16xf32>
// AVX2: scf.for %{{.*}} = %c0 to %c640 step %c16 iter_args({{.*}}) -> (tensor<1x?x640xf32>, tensor<256x16xf32>)

// K256-LABEL: IR Dump After AttnVectorizeContractionsPass
// K256: scf.for %{{.*}} = %c0 to %c640 step %c256 iter_args
// K256: tensor.empty() : tensor<256x32xf32>
