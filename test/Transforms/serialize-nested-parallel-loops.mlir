// attn-serialize-nested-parallel-loops keeps the outermost scf.parallel and
// turns nested ones into scf.for nests.
// RUN: attention-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(attn-serialize-nested-parallel-loops))' | FileCheck %s

// CHECK-LABEL: func.func @matmul_like
// CHECK: scf.parallel (%[[B:.*]], %[[T:.*]]) =
// CHECK: scf.for %[[K:.*]] =
// CHECK-NOT: scf.parallel
// CHECK: scf.for %[[N:.*]] = %{{.*}} to %{{.*}} step
// CHECK: memref.load %{{.*}}[%[[B]], %[[T]], %[[K]]]
// CHECK: memref.store %{{.*}}, %{{.*}}[%[[B]], %[[T]], %[[N]]]
func.func @matmul_like(%a: memref<2x4x8xf32>, %w: memref<8x16xf32>, %c: memref<2x4x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  scf.parallel (%b, %t) = (%c0, %c0) to (%c2, %c4) step (%c1, %c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      scf.parallel (%n) = (%c0) to (%c16) step (%c1) {
        %x = memref.load %a[%b, %t, %k] : memref<2x4x8xf32>
        %y = memref.load %w[%k, %n] : memref<8x16xf32>
        %z = memref.load %c[%b, %t, %n] : memref<2x4x16xf32>
        %p = arith.mulf %x, %y : f32
        %s = arith.addf %z, %p : f32
        memref.store %s, %c[%b, %t, %n] : memref<2x4x16xf32>
        scf.reduce
      }
    }
    scf.reduce
  }
  return
}

// -----

// Two nested levels of inner parallel loops (2-D) become four scf.for loops.
// CHECK-LABEL: func.func @doubly_nested
// CHECK: scf.parallel (%{{.*}}) =
// CHECK-COUNT-4: scf.for
// CHECK-NOT: scf.parallel
// CHECK: memref.store
func.func @doubly_nested(%m: memref<4x4x4x4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.parallel (%j, %k) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
      scf.parallel (%l, %n) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
        memref.store %f, %m[%i, %j, %k, %l, %n] : memref<4x4x4x4x4xf32>
        scf.reduce
      }
      scf.reduce
    }
    scf.reduce
  }
  return
}

// -----

// A lone top-level parallel loop is untouched.
// CHECK-LABEL: func.func @top_level_only
// CHECK: scf.parallel (%{{.*}}) =
// CHECK-NOT: scf.for
func.func @top_level_only(%m: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %f, %m[%i] : memref<4xf32>
    scf.reduce
  }
  return
}
