// RUN: attention-opt %s --pass-pipeline='builtin.module(func.func(attn-parallelize-outer-dims))' | FileCheck %s

// An elementwise op over [B, T, 64] with a broadcast bias: threads over
// (b, t), each a generic over one contiguous row of 64 (the innermost dim
// stays whole, a loop LLVM vectorizes).
// CHECK-LABEL: func.func @elementwise(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x?x64xf32>, %[[BIAS:[^:]*]]: memref<64xf32>, %[[Y:[^:]*]]: memref<?x?x64xf32>)
// CHECK: %[[B:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x?x64xf32>
// CHECK: %[[T:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x?x64xf32>
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%[[B]], %[[T]]) step (%{{.*}}, %{{.*}}) {
// CHECK-NEXT: %[[XS:.*]] = memref.subview %[[X]][%[[I]], %[[J]], 0] [1, 1, 64] [1, 1, 1] : memref<?x?x64xf32> to memref<1x1x64xf32, strided<[?, 64, 1], offset: ?>>
// CHECK-NEXT: %[[YS:.*]] = memref.subview %[[Y]][%[[I]], %[[J]], 0] [1, 1, 64] [1, 1, 1]
// CHECK-NEXT: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[XS]], %[[BIAS]] : {{.*}}) outs(%[[YS]] : {{.*}})
// CHECK: math.tanh
#id3 = affine_map<(b, t, c) -> (b, t, c)>
#col = affine_map<(b, t, c) -> (c)>
func.func @elementwise(%x: memref<?x?x64xf32>, %bias: memref<64xf32>, %y: memref<?x?x64xf32>) {
  linalg.generic {indexing_maps = [#id3, #col, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x, %bias : memref<?x?x64xf32>, memref<64xf32>) outs(%y : memref<?x?x64xf32>) {
  ^bb0(%v: f32, %b: f32, %o: f32):
    %s = arith.addf %v, %b : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  }
  return
}

// Left as they are: an op whose innermost dim is a reduction (a row sum:
// convert-linalg-to-parallel-loops already keeps that dim a loop), an op of
// one dim and one whose outer dims are all 1 (a decode step's row: nothing
// to split, the usual lowering splits the row), and an op inside a loop
// (one thread's share).
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: scf.parallel
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]}
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]}
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]} outs(%{{.*}} : memref<1x1x64xf32>)
// CHECK: scf.for
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]}
// CHECK-NOT: scf.parallel
// CHECK: return
#red = affine_map<(b, t, c) -> (b, t)>
#id1 = affine_map<(i) -> (i)>
#id2 = affine_map<(i, j) -> (i, j)>
func.func @left_alone(%x: memref<?x?x64xf32>, %sum: memref<?x?xf32>, %v: memref<?xf32>, %w: memref<4x8xf32>, %row: memref<1x1x64xf32>) {
  linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : memref<?x?x64xf32>) outs(%sum : memref<?x?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id1], iterator_types = ["parallel"]} outs(%v : memref<?xf32>) {
  ^bb0(%o: f32):
    %s = arith.addf %o, %o : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id3], iterator_types = ["parallel", "parallel", "parallel"]} outs(%row : memref<1x1x64xf32>) {
  ^bb0(%o: f32):
    %s = arith.addf %o, %o : f32
    linalg.yield %s : f32
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  scf.for %i = %c0 to %c3 step %c1 {
    linalg.generic {indexing_maps = [#id2], iterator_types = ["parallel", "parallel"]} outs(%w : memref<4x8xf32>) {
    ^bb0(%o: f32):
      %s = arith.mulf %o, %o : f32
      linalg.yield %s : f32
    }
  }
  return
}

// tensor.pad's fill of its padding value (a linalg.map with no inputs) and
// a linalg.fill: threads over the outer dims, each a fill of one row of
// 832 (before, one collapsed scalar loop: Pad on the last axis of [4, 512,
// 768] took 2.0 ms, 0.19 ms as rows).
// CHECK-LABEL: func.func @fills(
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%{{.*}}, %{{.*}}) to (%{{.*}}, %{{.*}}) step (%{{.*}}, %{{.*}}) {
// CHECK-NEXT: %[[ROW:.*]] = memref.subview %arg0[%[[I]], %[[J]], 0] [1, 1, 832] [1, 1, 1]
// CHECK-NEXT: linalg.map outs(%[[ROW]] : memref<1x1x832xf32, strided<[425984, 832, 1], offset: ?>>)
// CHECK: scf.parallel (%[[K:.*]]) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK-NEXT: %[[ROW2:.*]] = memref.subview %arg1[%[[K]], 0] [1, 100] [1, 1]
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[ROW2]] : memref<1x100xf32, strided<[100, 1], offset: ?>>)
func.func @fills(%padded: memref<4x512x832xf32>, %m: memref<30x100xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.map outs(%padded : memref<4x512x832xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  linalg.fill ins(%zero : f32) outs(%m : memref<30x100xf32>)
  return
}
