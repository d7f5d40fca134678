// attn-lower-to-cpu-pipeline takes attn IR all the way to the LLVM dialect,
// with C-interface wrappers and OpenMP parallel loops (or plain loops).
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline | FileCheck %s
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline | FileCheck %s --check-prefix=FASTEXP
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='fast-exp=false' | FileCheck %s --check-prefix=LIBMEXP
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='parallel=false' | FileCheck %s --check-prefix=SERIAL
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='emit-c-interface=false' | FileCheck %s --check-prefix=NOCIFACE
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='guided-schedule=false' | FileCheck %s --check-prefix=STATIC
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline -mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=STAGES
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='optimize=false' -mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=PLAIN
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='fuse-softmax=false fold-head-transposes=false' -mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=SOME

// CHECK-NOT: attn.
// CHECK-NOT: linalg.
// CHECK-NOT: func.func
// CHECK: llvm.func @main(
// CHECK: omp.parallel
// CHECK: omp.wsloop schedule(guided = %{{.*}} : i64)
// CHECK: llvm.func @_mlir_ciface_main(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)

// FASTEXP-NOT: llvm.intr.exp
// FASTEXP: llvm.func @main(
// LIBMEXP: llvm.intr.exp

// SERIAL-NOT: omp.
// SERIAL: llvm.func @main(
// SERIAL: llvm.func @_mlir_ciface_main(

// NOCIFACE-NOT: _mlir_ciface_main

// The OpenMP runtime's static split instead of guided scheduling.
// STATIC-NOT: schedule(
// STATIC: omp.wsloop {
// STATIC-NOT: schedule(

// STAGES: IR Dump After AttnFuseHeadsPass (attn-fuse-heads)
// STAGES: IR Dump After AttnDecomposePass (attn-decompose)
// STAGES: attn.split_heads
// STAGES: IR Dump After AttnFoldRepeatedKvPass (attn-fold-repeated-kv)
// STAGES: IR Dump After AttnFoldHeadTransposesPass (attn-fold-head-transposes)
// STAGES: layout(seq_major)
// STAGES: IR Dump After AttnFoldMaskPass (attn-fold-mask)
// STAGES: IR Dump After AttnFuseSoftmaxPass (attn-fuse-softmax)
// STAGES: scf.forall
// STAGES: IR Dump After ConvertAttnToLinalgPass (convert-attn-to-linalg)
// STAGES: IR Dump After AttnEmitCInterfacePass (attn-emit-c-interface)
// STAGES: IR Dump After AttnBufferizePass (attn-bufferize)
// STAGES: IR Dump After SCFForallToParallelLoop
// STAGES: IR Dump After ConvertLinalgToParallelLoopsPass (convert-linalg-to-parallel-loops)
// STAGES: IR Dump After AttnSerializeNestedParallelLoopsPass (attn-serialize-nested-parallel-loops)
// STAGES: IR Dump After ConvertSCFToOpenMPPass (convert-scf-to-openmp)
// STAGES: IR Dump After AttnGuidedOmpSchedulePass (attn-guided-omp-schedule)
// STAGES: omp.wsloop schedule(guided
// STAGES: IR Dump After ReconcileUnrealizedCastsPass (reconcile-unrealized-casts)
// PLAIN-NOT: IR Dump After Attn{{(FuseHeads|Decompose|FoldRepeatedKv|FoldHeadTransposes|FoldMask|FuseSoftmax)}}Pass
// PLAIN: IR Dump After ConvertAttnToLinalgPass (convert-attn-to-linalg)
// PLAIN: linalg.transpose

// SOME: IR Dump After AttnDecomposePass (attn-decompose)
// SOME-NOT: IR Dump After AttnFoldHeadTransposesPass
// SOME: IR Dump After AttnFoldMaskPass (attn-fold-mask)
// SOME-NOT: IR Dump After AttnFuseSoftmaxPass
// SOME: IR Dump After ConvertAttnToLinalgPass (convert-attn-to-linalg)
func.func @main(%x: tensor<1x?x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x?x8xf32> {
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) out_proj(%w) causal {num_heads = 2 : i64} : (tensor<1x?x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x?x8xf32>
  return %0 : tensor<1x?x8xf32>
}
