// RUN: attention-opt %s --pass-pipeline='builtin.module(func.func(attn-fence-streaming-stores))' | FileCheck %s

// Streaming stores in an OpenMP loop: a store fence ends the loop body (the
// worker's item), and another precedes the return.
// CHECK-LABEL: func.func @in_parallel_loop(
// CHECK: omp.loop_nest
// CHECK: vector.store %{{.*}} {nontemporal = true}
// CHECK-NEXT: llvm.call_intrinsic "llvm.x86.sse.sfence"() : () -> ()
// CHECK-NEXT: omp.yield
// CHECK: llvm.call_intrinsic "llvm.x86.sse.sfence"() : () -> ()
// CHECK-NEXT: return
func.func @in_parallel_loop(%out: memref<16x16xf32>, %v: vector<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c16) step (%c1) {
        vector.store %v, %out[%i, %c0] {nontemporal = true} : memref<16x16xf32>, vector<16xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// Outside any parallel loop (a serial pipeline): only before the return.
// CHECK-LABEL: func.func @serial(
// CHECK: scf.for
// CHECK-NEXT: vector.store %{{.*}} {nontemporal = true}
// CHECK-NEXT: }
// CHECK-NEXT: llvm.call_intrinsic "llvm.x86.sse.sfence"() : () -> ()
// CHECK-NEXT: return
func.func @serial(%out: memref<16x16xf32>, %v: vector<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    vector.store %v, %out[%i, %c0] {nontemporal = true} : memref<16x16xf32>, vector<16xf32>
  }
  return
}

// Ordinary stores need no fence.
// CHECK-LABEL: func.func @ordinary(
// CHECK-NOT: sfence
// CHECK: return
func.func @ordinary(%out: memref<16x16xf32>, %v: vector<16xf32>) {
  %c0 = arith.constant 0 : index
  vector.store %v, %out[%c0, %c0] : memref<16x16xf32>, vector<16xf32>
  return
}
