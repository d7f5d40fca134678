// The CPU pipeline sizes register tiles to the host's register file unless
// told otherwise: 8 x 32 projection tiles, up to 24 attention-core
// accumulators and 64-row x 128-key blocks with AVX-512 (32 zmm); 6 x 16,
// 4 accumulators and 32 x 64 blocks with AVX2 (16 ymm).
// These runs give the sizes explicitly, or the CPU (target-cpu: x86-64-v4
// has AVX-512, x86-64-v3 only AVX2), so they show the same IR on any host.
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='contraction-register-m=8 contraction-register-n=32 sdpa-accumulators=24 sdpa-block-q=64 sdpa-block-kv=128' -mlir-print-ir-after=attn-vectorize-contractions 2>&1 >/dev/null | FileCheck %s --check-prefix=AVX512
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='contraction-register-m=6 contraction-register-n=16 sdpa-accumulators=4 sdpa-block-q=32 sdpa-block-kv=64' -mlir-print-ir-after=attn-vectorize-contractions 2>&1 >/dev/null | FileCheck %s --check-prefix=AVX2
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='target-cpu=x86-64-v4' -mlir-print-ir-after=attn-vectorize-contractions 2>&1 >/dev/null | FileCheck %s --check-prefix=AVX512
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='target-cpu=x86-64-v3' -mlir-print-ir-after=attn-vectorize-contractions 2>&1 >/dev/null | FileCheck %s --check-prefix=AVX2
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='target-cpu=znver3' -mlir-print-ir-after=attn-vectorize-contractions 2>&1 >/dev/null | FileCheck %s --check-prefix=AVX2
// RUN: not attention-opt %s -attn-lower-to-cpu-pipeline='contraction-register-m=-1 contraction-register-n=32' 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not attention-opt %s -attn-lower-to-cpu-pipeline='target-cpu=pentium9' 2>&1 | FileCheck %s --check-prefix=BADCPU
// Register tiles are unrolled: 100000 rows compiled for minutes; refused.
// RUN: not attention-opt %s -attn-lower-to-cpu-pipeline='contraction-register-m=100000' 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: register-m at most 64 and register-n at most 256, got {{.*}} register-m=100000
// Of the negative mask copy limits only -1 ("by the target CPU") is one.
// RUN: not attention-opt %s -attn-lower-to-cpu-pipeline='sdpa-mask-copy-limit-mib=-5' 2>&1 | FileCheck %s --check-prefix=LIMIT
// LIMIT: mask-copy-limit-mib >= 0; got {{.*}} mask-copy-limit-mib=-5

// The projections (Q, K, V first): n tiles of 32 and m tiles of 8 rows, 8
// vector<32xf32> FMAs per k (AVX-512), or n tiles of 16 and m tiles of 6
// rows, 6 vector<16xf32> FMAs per k, then a tile of 4 rows for the rest of
// a 64-row block (AVX2). Then the core: score tiles of 4
// keys (AVX-512, 16 accumulators) over the 64 query rows of a block, or of
// 2 keys (AVX2, 4) over 32 rows; output tiles of 4 rows x 64 columns
// (AVX-512) or 2 rows x 32 columns (with AVX2, where two loads of a V row
// serve two rows, and V's 64-key block stays in L1).
// AVX512-LABEL: IR Dump After AttnVectorizeContractionsPass
// AVX512: scf.for %{{.*}} = %c0 to %c64 step %c32 iter_args
// AVX512: scf.for %{{.*}} step %c8 iter_args
// AVX512: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args({{[^)]*}}) -> (vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>, vector<32xf32>) {
// AVX512-COUNT-8: vector.fma {{.*}} : vector<32xf32>
// AVX512: scf.for %{{.*}} = %c0 to %c128 step %c4 iter_args
// AVX512: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args
// AVX512-COUNT-16: vector.fma {{.*}} : vector<16xf32>

// AVX2-LABEL: IR Dump After AttnVectorizeContractionsPass
// AVX2-NOT: vector<32xf32>
// AVX2: scf.for %{{.*}} = %c0 to %c64 step %c16 iter_args
// AVX2: scf.for %{{.*}} step %c6 iter_args
// AVX2: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args({{[^)]*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// AVX2-COUNT-6: vector.fma {{.*}} : vector<16xf32>
// AVX2: scf.for %{{.*}} step %c4 iter_args
// AVX2: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args({{[^)]*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// AVX2-COUNT-4: vector.fma {{.*}} : vector<16xf32>
// AVX2-NOT: vector<32xf32>
// AVX2: scf.for %{{.*}} = %c0 to %c64 step %c2 iter_args({{[^)]*}}) -> (vector<16xf32>, vector<16xf32>) {
// AVX2: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args({{[^)]*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// AVX2-COUNT-4: vector.fma {{.*}} : vector<16xf32>
// AVX2: scf.for %{{.*}} = %c0 to %c32 step %c2 {
// AVX2: scf.for %{{.*}} = %c0 to %c64 step %c1 iter_args({{[^)]*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// AVX2-COUNT-4: vector.fma {{.*}} : vector<16xf32>
// AVX2-NOT: vector<32xf32>

// BAD: attn-vectorize-contractions: tile sizes must be positive, register-m at most 64 and register-n at most 256, got cache-m=64 cache-k={{256|2048}} register-m=-1 register-n=32

func.func @main(%x: tensor<1x?x64xf32>, %w: tensor<64x64xf32>) -> tensor<1x?x64xf32> {
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) out_proj(%w) causal {num_heads = 1 : i64} : (tensor<1x?x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<1x?x64xf32>
  return %0 : tensor<1x?x64xf32>
}

// BADCPU: error: attn-lower-to-cpu-pipeline: unknown target-cpu 'pentium9' (expected host, or an x86-64 CPU name as for clang's -march: x86-64-v3, x86-64-v4, znver4, sapphirerapids, ...)
