// attn-guided-omp-schedule gives the OpenMP loops that have no schedule
// schedule(guided, chunk), with the chunk in the type of the loop's
// induction variables, or schedule(static) when their estimated work is
// below static-below; a loop with a schedule keeps it.
// RUN: attention-opt %s -attn-guided-omp-schedule | FileCheck %s
// RUN: attention-opt %s -attn-guided-omp-schedule='static-below=0' | FileCheck %s --check-prefix=NOSTATIC
// RUN: attention-opt %s -attn-guided-omp-schedule='chunk=4' | FileCheck %s --check-prefix=CHUNK
// RUN: not attention-opt %s -attn-guided-omp-schedule='chunk=0' 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: attn-guided-omp-schedule: chunk must be at least 1, got 0

// CHECK-LABEL: func.func @index_loop(
// CHECK: omp.parallel {
// CHECK-NEXT: %[[C:.*]] = arith.constant 1 : index
// CHECK-NEXT: omp.wsloop schedule(guided = %[[C]] : index) {
// CHECK-NEXT: omp.loop_nest (%{{.*}}, %{{.*}}) : index = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) collapse(2) {
// CHUNK-LABEL: func.func @index_loop(
// CHUNK: %[[C:.*]] = arith.constant 4 : index
// CHUNK-NEXT: omp.wsloop schedule(guided = %[[C]] : index) {
func.func @index_loop(%h: index, %n: index, %buf: memref<?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i, %j) : index = (%c0, %c0) to (%h, %n) step (%c1, %c1) collapse(2) {
        memref.store %z, %buf[%i, %j] : memref<?x?xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// An i64 loop (as after the LLVM conversion of its bounds) gets an i64
// chunk.
// CHECK-LABEL: func.func @i64_loop(
// CHECK: omp.parallel {
// CHECK-NEXT: %[[C:.*]] = llvm.mlir.constant(1 : i64) : i64
// CHECK-NEXT: omp.wsloop schedule(guided = %[[C]] : i64) {
func.func @i64_loop(%n: i64) {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  %c1 = llvm.mlir.constant(1 : i64) : i64
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : i64 = (%c0) to (%n) step (%c1) {
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// CHECK-LABEL: func.func @scheduled(
// CHECK: omp.wsloop schedule(static) {
// CHECK-NOT: guided
// CHECK: return
func.func @scheduled(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  omp.parallel {
    omp.wsloop schedule(static) {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        omp.yield
      }
    }
    omp.terminator
  }
  return
}

// Known trip counts: 12 x 64 stores (about 1.5 k operations) get the
// static schedule; 64 x 4096 (about 520 k, above static-below's 262144)
// the guided one. With static-below=0 both are guided. One iteration of
// unknown work (an inner loop of dynamic length) is static in any case.
// CHECK-LABEL: func.func @sized(
// CHECK: omp.wsloop schedule(static) {
// CHECK-NEXT: omp.loop_nest (%{{.*}}, %{{.*}}) : index = (%c0, %c0) to (%c12, %c64)
// CHECK: omp.wsloop schedule(guided = %{{.*}} : index) {
// CHECK-NEXT: omp.loop_nest (%{{.*}}, %{{.*}}) : index = (%c0, %c0) to (%c64, %c4096)
// CHECK: omp.wsloop schedule(static) {
// CHECK-NEXT: omp.loop_nest (%{{.*}}) : index = (%c0) to (%c1)
// NOSTATIC-LABEL: func.func @sized(
// NOSTATIC-NOT: static
// NOSTATIC: omp.wsloop schedule(guided
// NOSTATIC: omp.wsloop schedule(guided
// NOSTATIC: omp.wsloop schedule(static)
// NOSTATIC: return
func.func @sized(%a: memref<12x64xf32>, %b: memref<64x4096xf32>, %n: index, %c: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c12 = arith.constant 12 : index
  %c64 = arith.constant 64 : index
  %c4096 = arith.constant 4096 : index
  %z = arith.constant 0.0 : f32
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i, %j) : index = (%c0, %c0) to (%c12, %c64) step (%c1, %c1) collapse(2) {
        memref.store %z, %a[%i, %j] : memref<12x64xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i, %j) : index = (%c0, %c0) to (%c64, %c4096) step (%c1, %c1) collapse(2) {
        memref.store %z, %b[%i, %j] : memref<64x4096xf32>
        omp.yield
      }
    }
    omp.terminator
  }
  omp.parallel {
    omp.wsloop {
      omp.loop_nest (%i) : index = (%c0) to (%c1) step (%c1) {
        scf.for %k = %c0 to %n step %c1 {
          memref.store %z, %c[%k] : memref<?xf32>
        }
        omp.yield
      }
    }
    omp.terminator
  }
  return
}
