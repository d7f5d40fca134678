// A core whose result the function only returns: attn-vectorize-sdpa writes
// it with non-temporal stores, and attn-fence-streaming-stores ends each
// OpenMP work item with a store fence (and the function before it returns),
// so the thread that joins the loop reads the workers' stores. With
// streaming-stores=false: ordinary stores and no fence.
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='sdpa-accumulators=24 sdpa-block-q=64 sdpa-block-kv=128' | FileCheck %s
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline='streaming-stores=false' | FileCheck %s --check-prefix=OFF
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline -mlir-print-ir-after-all 2>&1 >/dev/null | FileCheck %s --check-prefix=STAGES

// CHECK: llvm.func @main(
// CHECK: omp.loop_nest
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 64 : i64, nontemporal} : vector<16xf32>, !llvm.ptr
// CHECK: llvm.call_intrinsic "llvm.x86.sse.sfence"() : () -> ()
// CHECK-NEXT: omp.yield
// CHECK: llvm.call_intrinsic "llvm.x86.sse.sfence"() : () -> ()
// CHECK-NEXT: llvm.return

// OFF-NOT: nontemporal
// OFF-NOT: sfence
// OFF: llvm.func @main(
// OFF-NOT: nontemporal
// OFF-NOT: sfence

// The fences go in after the OpenMP conversion and the guided schedule.
// STAGES: IR Dump After ConvertSCFToOpenMPPass (convert-scf-to-openmp)
// STAGES-NOT: sfence
// STAGES: IR Dump After AttnGuidedOmpSchedulePass (attn-guided-omp-schedule)
// STAGES-NOT: sfence
// STAGES: IR Dump After AttnFenceStreamingStoresPass (attn-fence-streaming-stores)
// STAGES: vector.store %{{.*}} {alignment = 64 : i64, nontemporal = true} : memref<1x2x64x64xf32>, vector<16xf32>
// STAGES: llvm.call_intrinsic "llvm.x86.sse.sfence"() : () -> ()
// STAGES-NEXT: omp.yield
func.func @main(%q: tensor<1x2x64x64xf32>, %k: tensor<1x2x64x64xf32>, %v: tensor<1x2x64x64xf32>) -> tensor<1x2x64x64xf32> {
  %o = attn.sdpa %q, %k, %v causal(top_left) : tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32>, tensor<1x2x64x64xf32> -> tensor<1x2x64x64xf32>
  return %o : tensor<1x2x64x64xf32>
}
