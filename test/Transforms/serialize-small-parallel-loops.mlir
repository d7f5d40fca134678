// RUN: attention-opt %s --pass-pipeline='builtin.module(func.func(attn-serialize-small-parallel-loops))' | FileCheck %s
// RUN: attention-opt %s --pass-pipeline='builtin.module(func.func(attn-serialize-small-parallel-loops{min-work=100000}))' | FileCheck %s --check-prefix=HIGH

// A 50-entry fill: 50 x (store + terminator) = 100 operations, below
// min-work (4096): a plain loop, the same body.
// CHECK-LABEL: func.func @fill(
// CHECK-NOT: scf.parallel
// CHECK: scf.for %[[I:.*]] = %c0 to %c50 step %c1 {
// CHECK-NEXT: memref.store %{{.*}}, %arg0[%[[I]]] : memref<50xf32>
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @fill(%buf: memref<50xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c50 = arith.constant 50 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c50) step (%c1) {
    memref.store %z, %buf[%i] : memref<50xf32>
  }
  return
}

// Inner loops multiply out: 8 x 2 x 16 x (load, add, store, terminator)
// and the outer terminators, about 1100 operations in a 2-D nest, is
// serialized as two loops; 8 x 1024 x 4 = 32 k stays parallel (below the
// HIGH threshold of 100 k it is serialized too).
// CHECK-LABEL: func.func @nests(
// CHECK: scf.for %{{.*}} = %c0 to %c8
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c2
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c16
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c8)
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %c1024
// HIGH-LABEL: func.func @nests(
// HIGH-NOT: scf.parallel
// HIGH: return
func.func @nests(%a: memref<8x2x16xf32>, %b: memref<8x1024xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c1024 = arith.constant 1024 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i, %j) = (%c0, %c0) to (%c8, %c2) step (%c1, %c1) {
    scf.for %k = %c0 to %c16 step %c1 {
      %x = memref.load %a[%i, %j, %k] : memref<8x2x16xf32>
      %y = arith.addf %x, %one : f32
      memref.store %y, %a[%i, %j, %k] : memref<8x2x16xf32>
    }
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    scf.for %k = %c0 to %c1024 step %c1 {
      %x = memref.load %b[%i, %k] : memref<8x1024xf32>
      %y = arith.addf %x, %one : f32
      memref.store %y, %b[%i, %k] : memref<8x1024xf32>
    }
  }
  return
}

// A vector op counts once per 16 lanes of its widest vector (a store's is
// an operand), a math op 16 times as much: 64 rows of a vector<256xf32>
// exp (16 x 16 each) and its load and store (16 each) are about 18.5 k
// operations and stay parallel, as a row loop with a math.exp per element
// of 64 x 64 (78 k) and 1024 stores of a constant vector<256xf32> (16 k).
// 64 rows of vector<16xf32> loads, adds and stores (4 each: 256) run
// serially.
// CHECK-LABEL: func.func @weights(
// CHECK: scf.parallel
// CHECK: math.exp %{{.*}} : vector<256xf32>
// CHECK: scf.parallel
// CHECK: math.exp %{{.*}} : f32
// CHECK: scf.parallel
// CHECK: vector.store %{{.*}} : memref<1024x256xf32>, vector<256xf32>
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: arith.addf %{{.*}} : vector<16xf32>
// CHECK: return
func.func @weights(%a: memref<64x256xf32>, %b: memref<64x64xf32>, %c: memref<64x16xf32>, %d: memref<1024x256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = vector.load %a[%i, %c0] : memref<64x256xf32>, vector<256xf32>
    %e = math.exp %v : vector<256xf32>
    vector.store %e, %a[%i, %c0] : memref<64x256xf32>, vector<256xf32>
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.for %k = %c0 to %c64 step %c1 {
      %x = memref.load %b[%i, %k] : memref<64x64xf32>
      %e = math.exp %x : f32
      memref.store %e, %b[%i, %k] : memref<64x64xf32>
    }
  }
  %c1024 = arith.constant 1024 : index
  %ones = arith.constant dense<1.0> : vector<256xf32>
  scf.parallel (%i) = (%c0) to (%c1024) step (%c1) {
    vector.store %ones, %d[%i, %c0] : memref<1024x256xf32>, vector<256xf32>
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = vector.load %c[%i, %c0] : memref<64x16xf32>, vector<16xf32>
    %s = arith.addf %v, %v : vector<16xf32>
    vector.store %s, %c[%i, %c0] : memref<64x16xf32>, vector<16xf32>
  }
  return
}

// One iteration of unknown work (an inner loop of unknown length, as in a
// copy over chunks of a short output, whose chunk bounds are computed)
// stays parallel: outlined, the same region of every block compiles once.
// CHECK-LABEL: func.func @one_item(
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c1) step (%c1) {
// CHECK-NEXT: scf.for %{{.*}} = %c0 to %arg0 step %c1 {
// CHECK: return
func.func @one_item(%n: index, %buf: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    scf.for %k = %c0 to %n step %c1 {
      memref.store %z, %buf[%k] : memref<?xf32>
    }
  }
  return
}

// Left parallel however small: a dynamic trip count (here or in an inner
// loop), a call, a copy of dynamic size, and a loop with a reduction
// (scf.for has no scf.reduce).
// CHECK-LABEL: func.func @unknown(
// CHECK-COUNT-5: scf.parallel
// CHECK-NOT: scf.for
// CHECK: return
func.func private @ext(index)
func.func @unknown(%n: index, %buf: memref<?xf32>, %dst: memref<?xf32>, %s: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %z, %buf[%i] : memref<?xf32>
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %n step %c1 {
      memref.store %z, %buf[%k] : memref<?xf32>
    }
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    func.call @ext(%i) : (index) -> ()
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.copy %buf, %dst : memref<?xf32> to memref<?xf32>
  }
  %sum = scf.parallel (%i) = (%c0) to (%c4) step (%c1) init (%z) -> f32 {
    %x = memref.load %s[%i] : memref<4xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %t = arith.addf %l, %r : f32
      scf.reduce.return %t : f32
    }
  }
  memref.store %sum, %s[%c0] : memref<4xf32>
  return
}
