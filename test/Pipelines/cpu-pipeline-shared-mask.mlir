// An f32 mask that several heads share ([H, Tq, Tk] under B = 2 here) and
// that varies along the rows: with AVX-512 the pipeline leaves it to the
// per-key-block transposes of each work item (no second copy of the mask;
// measured faster there), with AVX2 it is transposed once per call into a
// copy, MtAll [H, Tq / 32, Tk, 32] (sdpa-mask-copy-limit-mib: 0 with
// AVX-512, 64 with AVX2). The option overrides the CPU's choice.
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='target-cpu=x86-64-v4' -mlir-print-ir-after=attn-vectorize-sdpa 2>&1 >/dev/null | FileCheck %s --check-prefix=AVX512
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='target-cpu=x86-64-v3' -mlir-print-ir-after=attn-vectorize-sdpa 2>&1 >/dev/null | FileCheck %s --check-prefix=AVX2
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='target-cpu=x86-64-v4 sdpa-mask-copy-limit-mib=64' -mlir-print-ir-after=attn-vectorize-sdpa 2>&1 >/dev/null | FileCheck %s --check-prefix=COPY

func.func @main(%q: tensor<2x4x64x64xf32>, %shared: tensor<4x64x64xf32>) -> tensor<2x4x64x64xf32> {
  %o = attn.sdpa %q, %q, %q mask(%shared : additive) : tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<2x4x64x64xf32>, tensor<4x64x64xf32> -> tensor<2x4x64x64xf32>
  return %o : tensor<2x4x64x64xf32>
}

// AVX512-LABEL: IR Dump After AttnVectorizeSdpaPass
// AVX512: %[[M:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<4x64x64xf32> to memref<4x64x64xf32, strided<[?, ?, 1], offset: ?>>
// AVX512-NOT: memref<4x1x64x64xf32>
// AVX512: %[[MT:.*]] = memref.view %{{.*}}[%c49152][] : memref<98560xi8> to memref<128x64xf32>
// AVX512: vector.maskedload %[[M]]
// AVX512: vector.store %{{.*}}, %[[MT]]

// AVX2-LABEL: IR Dump After AttnVectorizeSdpaPass
// AVX2: %[[M:.*]] = bufferization.to_buffer %{{.*}} read_only : tensor<4x64x64xf32> to memref<4x64x64xf32, strided<[?, ?, 1], offset: ?>>
// AVX2: %[[ALL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x2x64x32xf32>
// AVX2: vector.maskedload %[[M]]
// AVX2: vector.store %{{.*}}, %[[ALL]]
// AVX2: vector.load %[[ALL]]

// COPY-LABEL: IR Dump After AttnVectorizeSdpaPass
// COPY: %[[ALL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x1x64x64xf32>
// COPY: vector.load %[[ALL]]
