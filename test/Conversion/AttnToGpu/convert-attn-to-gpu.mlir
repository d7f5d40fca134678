// RUN: attention-opt %s --convert-attn-to-gpu --canonicalize | FileCheck %s
// RUN: attention-opt %s --convert-attn-to-gpu="ldmatrix=false stages=1" --canonicalize | FileCheck %s --check-prefix=SYNC

// GPT-2 small's attention core: the entry point becomes a host function on
// device buffers (inputs, then the result) that launches one block of 128
// threads per (64-row query tile, head, batch).
// CHECK-LABEL: func.func @gpt2_core(
// CHECK-SAME: %[[Q:.*]]: memref<1x12x1024x64xf16>, %[[K:.*]]: memref<1x12x1024x64xf16>, %[[V:.*]]: memref<1x12x1024x64xf16>, %[[O:.*]]: memref<1x12x1024x64xf16>)
// CHECK-SAME: attn.gpu_entry, llvm.emit_c_interface
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C12:.*]] = arith.constant 12 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: gpu.launch_func @attn_gpu_kernels::@gpt2_core_sdpa0 blocks in (%[[C16]], %[[C12]], %{{.*}}) threads in (%[[C128]], %{{.*}}, %{{.*}}) args(%[[Q]] : {{.*}}, %[[K]] : {{.*}}, %[[V]] : {{.*}}, %[[O]] : {{.*}})
// CHECK-NEXT: return
func.func @gpt2_core(%q: tensor<1x12x1024x64xf16>, %k: tensor<1x12x1024x64xf16>, %v: tensor<1x12x1024x64xf16>) -> tensor<1x12x1024x64xf16> {
  %o = attn.sdpa %q, %k, %v causal(top_left) : tensor<1x12x1024x64xf16>, tensor<1x12x1024x64xf16>, tensor<1x12x1024x64xf16> -> tensor<1x12x1024x64xf16>
  return %o : tensor<1x12x1024x64xf16>
}

// Grouped-query bf16 with a dynamic sequence length: the grid's x size is
// ceil(T / 64) at run time.
// CHECK-LABEL: func.func @gqa(
// CHECK-SAME: memref<2x8x?x128xbf16>, %{{.*}}: memref<2x2x?x128xbf16>, %{{.*}}: memref<2x2x?x128xbf16>, %{{.*}}: memref<2x8x?x128xbf16>)
// CHECK: %[[T:.*]] = memref.dim %{{.*}}, %c2
// CHECK: %[[TILES:.*]] = arith.ceildivui %[[T]], %c64
// CHECK: gpu.launch_func @attn_gpu_kernels::@gqa_sdpa0 blocks in (%[[TILES]], %c8, %c2)
func.func @gqa(%q: tensor<2x8x?x128xbf16>, %k: tensor<2x2x?x128xbf16>, %v: tensor<2x2x?x128xbf16>) -> tensor<2x8x?x128xbf16> {
  %o = attn.sdpa %q, %k, %v causal(bottom_right) {scale = 0.1 : f32} : tensor<2x8x?x128xbf16>, tensor<2x2x?x128xbf16>, tensor<2x2x?x128xbf16> -> tensor<2x8x?x128xbf16>
  return %o : tensor<2x8x?x128xbf16>
}

// Tokens-before-heads layout (a folded head split) and a single head.
// CHECK-LABEL: func.func @seq_major(
// CHECK-SAME: memref<1x100x4x32xf16>
// CHECK: gpu.launch_func @attn_gpu_kernels::@seq_major_sdpa0 blocks in (%c2, %c4, %c1)
func.func @seq_major(%q: tensor<1x100x4x32xf16>, %k: tensor<1x80x4x32xf16>, %v: tensor<1x80x4x32xf16>) -> tensor<1x100x4x32xf16> {
  %o = attn.sdpa %q, %k, %v layout(seq_major) : tensor<1x100x4x32xf16>, tensor<1x80x4x32xf16>, tensor<1x80x4x32xf16> -> tensor<1x100x4x32xf16>
  return %o : tensor<1x100x4x32xf16>
}

// f32 operands: loaded as f32, rounded to bf16 for the tensor cores, the
// result stored as f32.
// CHECK-LABEL: func.func @f32_single_head(
// CHECK-SAME: memref<300x64xf32>, %{{.*}}: memref<300x64xf32>, %{{.*}}: memref<300x64xf32>, %{{.*}}: memref<300x64xf32>)
// CHECK: gpu.launch_func @attn_gpu_kernels::@f32_single_head_sdpa0 blocks in (%c5, %c1, %c1)
func.func @f32_single_head(%q: tensor<300x64xf32>, %k: tensor<300x64xf32>, %v: tensor<300x64xf32>) -> tensor<300x64xf32> {
  %o = attn.sdpa %q, %k, %v causal(top_left) : tensor<300x64xf32>, tensor<300x64xf32>, tensor<300x64xf32> -> tensor<300x64xf32>
  return %o : tensor<300x64xf32>
}

// The kernel of @gpt2_core: K and V tiles of 64 rows, double-buffered in
// padded shared memory (2 x 64 x (64 + 8)), Q fragments loaded once, a
// prologue copying tile 0 with cp.async, then two key loops (unmasked tiles,
// then the diagonal), each prefetching the next tile, online softmax with
// quad shuffles, tensor-core MMAs, one guarded store per row pair.
// CHECK: gpu.module @attn_gpu_kernels
// CHECK: gpu.func @gpt2_core_sdpa0(%{{.*}}: memref<1x12x1024x64xf16>, %{{.*}}: memref<1x12x1024x64xf16>, %{{.*}}: memref<1x12x1024x64xf16>, %{{.*}}: memref<1x12x1024x64xf16>)
// CHECK-SAME: workgroup(%[[KS:[a-z0-9]+]] : memref<2x64x72xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %[[VS:[a-z0-9]+]] : memref<2x64x72xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// CHECK-SAME: kernel
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK-COUNT-16: vector.load {{.*}} : memref<1x12x1024x64xf16>, vector<2xf16>
// CHECK: nvgpu.device_async_copy {{.*}}, %[[KS]][%c0, {{.*}}], 8, %{{.*}} {bypassL1} : memref<1x12x1024x64xf16> to memref<2x64x72xf16, #gpu.address_space<workgroup>>
// CHECK: nvgpu.device_async_create_group
// CHECK: scf.for
// CHECK: nvgpu.device_async_copy
// CHECK: %[[GROUP:.*]] = nvgpu.device_async_create_group
// CHECK: nvgpu.device_async_wait %[[GROUP]] {numGroups = 1 : i32}
// CHECK: gpu.barrier
// CHECK: nvgpu.ldmatrix %[[KS]]{{.*}} {numTiles = 2 : i32, transpose = false}
// CHECK: nvgpu.mma.sync({{.*}}) {mmaShape = [16, 8, 16]} : (vector<4x2xf16>, vector<2x2xf16>, vector<2x2xf32>) -> vector<2x2xf32>
// CHECK: gpu.shuffle xor {{.*}}, %c1_i32, %c32_i32 : f32
// CHECK: gpu.shuffle xor {{.*}}, %c2_i32, %c32_i32 : f32
// CHECK: math.exp2
// CHECK: arith.truncf {{.*}} : f32 to f16
// CHECK: nvgpu.ldmatrix %[[VS]]{{.*}} {numTiles = 2 : i32, transpose = true}
// CHECK: nvgpu.mma.sync
// CHECK: gpu.barrier
// CHECK: scf.yield
// The diagonal loop masks scores with -inf.
// CHECK: scf.for
// CHECK: arith.cmpi sle
// CHECK: arith.select {{.*}}, %cst
// CHECK: scf.yield
// CHECK: scf.if
// CHECK: vector.store {{.*}} : memref<1x12x1024x64xf16>, vector<2xf16>
// CHECK: gpu.return

// d = 128: 32-key tiles, so that the two buffers of K and V fit 48 KiB.
// CHECK: gpu.func @gqa_sdpa0
// CHECK-SAME: workgroup(%{{.*}} : memref<2x32x136xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}, %{{.*}} : memref<2x32x136xbf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64})
// The K/V head of query head h is h / (Hq / Hk) = h / 4.
// CHECK: %[[H:.*]] = gpu.block_id y
// CHECK: arith.divui %[[H]], %c4
// bf16 MMAs are nvvm.mma.sync on packed registers (nvgpu cannot lower them).
// CHECK: vector.bitcast {{.*}} : vector<2xbf16> to vector<1xi32>
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (i32, i32, f32) -> !llvm.struct<(f32, f32, f32, f32)>

// CHECK: gpu.func @seq_major_sdpa0
// CHECK: vector.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] {alignment = 4 : i64} : memref<1x100x4x32xf16>, vector<2xf16>

// stages=1: load, barrier, compute, one buffer; without ldmatrix, V
// fragments are gathered element by element.
// SYNC-LABEL: gpu.func @gpt2_core_sdpa0
// SYNC-SAME: workgroup(%[[KS:[a-z0-9]+]] : memref<64x72xf16, #gpu.address_space<workgroup>> {llvm.align = 16 : i64}
// SYNC-NOT: nvgpu.ldmatrix
// SYNC-NOT: nvgpu.device_async_copy
// SYNC: scf.for
// SYNC: gpu.barrier
// SYNC: vector.load {{.*}} {alignment = 16 : i64} : memref<1x12x1024x64xf16>, vector<8xf16>
// SYNC: vector.store {{.*}}, %[[KS]]{{.*}} {alignment = 16 : i64} : memref<64x72xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// SYNC: gpu.barrier
// SYNC: vector.load %[[KS]]{{.*}} : memref<64x72xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// SYNC: nvgpu.mma.sync
// SYNC: memref.load {{.*}} : memref<64x72xf16, #gpu.address_space<workgroup>>
// SYNC: nvgpu.mma.sync
