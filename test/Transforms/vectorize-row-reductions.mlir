// RUN: attention-opt %s --pass-pipeline='builtin.module(func.func(attn-vectorize-row-reductions,canonicalize,cse))' | FileCheck %s

// A LayerNorm's variance over [T, 768] rows: sum((x - mean)^2). Threads
// over the rows; each row loads its mean and the initial value once,
// computes the summand on vector<16xf32> loads into four accumulators (64
// elements a step), adds them, reduces horizontally and stores the sum
// once. (768 is a multiple of 64: the 16-wide loop and the scalar tail
// fold away, see @sums for them.)
// CHECK-LABEL: func.func @variance(
// CHECK-SAME: %[[X:[^:]*]]: memref<?x768xf32>, %[[MEAN:[^:]*]]: memref<?x1xf32>, %[[VAR:[^:]*]]: memref<?x1xf32>)
// CHECK: scf.parallel (%[[R:.*]]) = (%c0) to (%{{.*}}) step (%c1) {
// CHECK-NEXT: %[[XS:.*]] = memref.subview %[[X]][%[[R]], 0] [1, 768] [1, 1] : memref<?x768xf32> to memref<1x768xf32, strided<[768, 1], offset: ?>>
// CHECK-NEXT: %[[MS:.*]] = memref.subview %[[MEAN]][%[[R]], 0] [1, 1] [1, 1]
// CHECK-NEXT: %[[VS:.*]] = memref.subview %[[VAR]][%[[R]], 0] [1, 1] [1, 1]
// CHECK-NEXT: %[[M:.*]] = memref.load %[[MS]][%c0, %c0]
// CHECK-NEXT: %[[INIT:.*]] = memref.load %[[VS]][%c0, %c0]
// CHECK-NEXT: %[[ACC:.*]]:4 = scf.for %[[J:.*]] = %c0 to %c768 step %c64 iter_args(%[[A0:.*]] = %[[ZERO:.*]], %[[A1:.*]] = %[[ZERO]], %[[A2:.*]] = %[[ZERO]], %[[A3:.*]] = %[[ZERO]]) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK-NEXT: %[[V:.*]] = vector.load %[[XS]][%c0, %[[J]]] : memref<1x768xf32, strided<[768, 1], offset: ?>>, vector<16xf32>
// CHECK-NEXT: %[[MB:.*]] = vector.broadcast %[[M]] : f32 to vector<16xf32>
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[V]], %[[MB]] : vector<16xf32>
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[D]], %[[D]] : vector<16xf32>
// CHECK-NEXT: %[[N0:.*]] = arith.addf %[[A0]], %[[SQ]] : vector<16xf32>
// CHECK-NEXT: %[[J1:.*]] = arith.addi %[[J]], %c16 : index
// CHECK-NEXT: vector.load %[[XS]][%c0, %[[J1]]]
// CHECK: %[[N1:.*]] = arith.addf %[[A1]], %{{.*}} : vector<16xf32>
// CHECK: %[[N2:.*]] = arith.addf %[[A2]], %{{.*}} : vector<16xf32>
// CHECK: %[[N3:.*]] = arith.addf %[[A3]], %{{.*}} : vector<16xf32>
// CHECK-NEXT: scf.yield %[[N0]], %[[N1]], %[[N2]], %[[N3]]
// CHECK: %[[S01:.*]] = arith.addf %[[ACC]]#0, %[[ACC]]#1 : vector<16xf32>
// CHECK-NEXT: %[[S012:.*]] = arith.addf %[[S01]], %[[ACC]]#2 : vector<16xf32>
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[S012]], %[[ACC]]#3 : vector<16xf32>
// CHECK-NEXT: %[[SUM:.*]] = vector.reduction <add>, %[[S]] : vector<16xf32> into f32
// CHECK-NEXT: %[[TOTAL:.*]] = arith.addf %[[INIT]], %[[SUM]] : f32
// CHECK-NEXT: memref.store %[[TOTAL]], %[[VS]][%c0, %c0]
// CHECK-NOT: linalg.generic
// CHECK: return
#id2 = affine_map<(t, c) -> (t, c)>
#row = affine_map<(t, c) -> (t, 0)>
func.func @variance(%x: memref<?x768xf32>, %mean: memref<?x1xf32>, %var: memref<?x1xf32>) {
  linalg.generic {indexing_maps = [#id2, #row, #row], iterator_types = ["parallel", "reduction"]} ins(%x, %mean : memref<?x768xf32>, memref<?x1xf32>) outs(%var : memref<?x1xf32>) {
  ^bb0(%in: f32, %m: f32, %out: f32):
    %d = arith.subf %in, %m : f32
    %sq = arith.mulf %d, %d : f32
    %s = arith.addf %out, %sq : f32
    linalg.yield %s : f32
  }
  return
}

// A plain row sum over [B, T, C] with C dynamic (summand first in the
// addition): the 64-element loop, then 16 at a time up to N - N mod 16,
// the horizontal add, and a scalar loop over the rest. A sum of 0.5 * x
// over rows of 100 (a constant inside the body): 64 + 2 x 16 elements in
// vectors, the last 4 through the original body as scalars. A 1-D sum of
// one row: no tiling, the vector code directly.
// CHECK-LABEL: func.func @sums(
// CHECK: scf.parallel (%{{.*}}, %{{.*}}) =
// CHECK: %[[C:.*]] = memref.dim %{{.*}}, %c2 : memref<?x?x?xf32>
// CHECK: %[[XS:.*]] = memref.subview {{.*}} : memref<?x?x?xf32> to memref<1x1x?xf32, strided<[?, ?, 1], offset: ?>>
// CHECK: %[[REM64:.*]] = arith.remui %[[C]], %c64
// CHECK-NEXT: %[[END64:.*]] = arith.subi %[[C]], %[[REM64]]
// CHECK-NEXT: %[[REM16:.*]] = arith.remui %[[C]], %c16
// CHECK-NEXT: %[[END16:.*]] = arith.subi %[[C]], %[[REM16]]
// CHECK-NEXT: %[[W:.*]]:4 = scf.for %{{.*}} = %c0 to %[[END64]] step %c64
// CHECK: %[[L:.*]] = scf.for %[[J:.*]] = %[[END64]] to %[[END16]] step %c16 iter_args(%[[A:.*]] = %{{.*}}) -> (vector<16xf32>) {
// CHECK-NEXT: %[[V:.*]] = vector.load %[[XS]][%c0, %c0, %[[J]]] : memref<1x1x?xf32, strided<[?, ?, 1], offset: ?>>, vector<16xf32>
// CHECK-NEXT: %[[NA:.*]] = arith.addf %[[A]], %[[V]] : vector<16xf32>
// CHECK-NEXT: scf.yield %[[NA]]
// CHECK: %[[SUM:.*]] = vector.reduction <add>, %[[L]] : vector<16xf32> into f32
// CHECK-NEXT: %[[START:.*]] = arith.addf %{{.*}}, %[[SUM]] : f32
// CHECK-NEXT: %[[TOTAL:.*]] = scf.for %[[K:.*]] = %[[END16]] to %[[C]] step %c1 iter_args(%[[T:.*]] = %[[START]]) -> (f32) {
// CHECK-NEXT: %[[E:.*]] = memref.load %[[XS]][%c0, %c0, %[[K]]]
// CHECK-NEXT: %[[NT:.*]] = arith.addf %[[T]], %[[E]] : f32
// CHECK-NEXT: scf.yield %[[NT]] : f32
// CHECK: memref.store %[[TOTAL]]
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c4) step (%c1) {
// CHECK: %[[HALVES:.*]] = arith.mulf %{{.*}}, %[[HALFV:.*]] : vector<16xf32>
// CHECK: scf.for %{{.*}} = %c64 to %c96 step %c16
// CHECK: vector.reduction <add>
// CHECK: scf.for %[[K2:.*]] = %c96 to %c100 step %c1 iter_args(%[[T2:.*]] = %{{.*}}) -> (f32) {
// CHECK-NEXT: %[[E2:.*]] = memref.load %{{.*}}[%c0, %[[K2]]]
// CHECK-NEXT: %[[H:.*]] = arith.mulf %[[E2]], %[[HALF:.*]] : f32
// CHECK-NEXT: arith.addf %[[T2]], %[[H]] : f32
// CHECK: memref.dim %{{.*}}, %c0 : memref<?xf32>
// CHECK-NEXT: memref.load %{{.*}}[] : memref<f32>
// CHECK: vector.load %{{.*}} : memref<?xf32>, vector<16xf32>
// CHECK: vector.reduction <add>
// CHECK: memref.store %{{.*}}[] : memref<f32>
// CHECK-NOT: linalg.generic
// CHECK: return
#id3 = affine_map<(b, t, c) -> (b, t, c)>
#red3 = affine_map<(b, t, c) -> (b, t)>
#all = affine_map<(i) -> (i)>
#scalar = affine_map<(i) -> ()>
func.func @sums(%x: memref<?x?x?xf32>, %s: memref<?x?xf32>, %y: memref<4x100xf32>, %h: memref<4x1xf32>, %v: memref<?xf32>, %t: memref<f32>) {
  linalg.generic {indexing_maps = [#id3, #red3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x : memref<?x?x?xf32>) outs(%s : memref<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%y : memref<4x100xf32>) outs(%h : memref<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %half = arith.constant 0.5 : f32
    %p = arith.mulf %in, %half : f32
    %r = arith.addf %out, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#all, #scalar], iterator_types = ["reduction"]} ins(%v : memref<?xf32>) outs(%t : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  return
}

// A row max (an unfused softmax's first step): accumulators start at -inf,
// the body's own combiner (with its fast-math flags) combines them, and a
// vector.reduction <maximumf> ends the row; a row minnumf the same from
// NaN, its identity (from +inf, a row of NaN alone would end at +inf where
// minnumf over its elements, from a NaN start, gives NaN); a maxnumf under
// nnan from -inf.
// CHECK-LABEL: func.func @extrema(
// CHECK-DAG: %[[NEGINF:.*]] = arith.constant dense<0xFF800000> : vector<16xf32>
// CHECK-DAG: %[[NAN:.*]] = arith.constant dense<0x7FC00000> : vector<16xf32>
// CHECK: scf.parallel
// CHECK: %[[MAX:.*]] = memref.load
// CHECK: %[[M:.*]]:4 = scf.for {{.*}} iter_args(%[[A0:.*]] = %[[NEGINF]], %{{.*}} = %[[NEGINF]], %{{.*}} = %[[NEGINF]], %{{.*}} = %[[NEGINF]])
// CHECK: arith.maximumf %[[A0]], %{{.*}} fastmath<nnan> : vector<16xf32>
// CHECK: %[[R:.*]] = vector.reduction <maximumf>, %{{.*}} : vector<16xf32> into f32
// CHECK: arith.maximumf %[[MAX]], %[[R]] fastmath<nnan> : f32
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[NAN]],
// CHECK: vector.reduction <minnumf>
// CHECK: scf.parallel
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[NEGINF]],
// CHECK: arith.maxnumf %{{.*}} fastmath<nnan> : vector<16xf32>
// CHECK: vector.reduction <maxnumf>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @extrema(%x: memref<8x?xf32>, %m: memref<8x1xf32>, %n: memref<8x1xf32>, %p: memref<8x1xf32>) {
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x?xf32>) outs(%m : memref<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %out, %in fastmath<nnan> : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x?xf32>) outs(%n : memref<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.minnumf %in, %out : f32
    linalg.yield %r : f32
  }
  // maxnumf under nnan: NaN would be poison there, so -inf, as maximumf.
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x?xf32>) outs(%p : memref<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maxnumf %out, %in fastmath<nnan> : f32
    linalg.yield %r : f32
  }
  return
}

// A body that reads a value from outside it (a scale passed in): the
// vector code broadcasts it.
// CHECK-LABEL: func.func @captured(
// CHECK-SAME: %{{[^:]*}}: memref<8x?xf32>, %{{[^:]*}}: memref<8x1xf32>, %[[SCALE:[^:]*]]: f32)
// CHECK: scf.parallel
// CHECK: %[[SV:.*]] = vector.broadcast %[[SCALE]] : f32 to vector<16xf32>
// CHECK: arith.mulf %{{.*}}, %[[SV]] : vector<16xf32>
// CHECK: vector.reduction <add>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @captured(%x: memref<8x?xf32>, %s: memref<8x1xf32>, %scale: f32) {
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x?xf32>) outs(%s : memref<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %p = arith.mulf %in, %scale : f32
    %r = arith.addf %out, %p : f32
    linalg.yield %r : f32
  }
  return
}

// In a branch at the function's top level (attn-vectorize-contractions'
// run-time choice on M leaves the in-place dot products in an scf.if) the
// rows are taken as at the top level: threads over the rows, vector loads
// (the branch's op stayed scalar loops: 6-16x slower).
// CHECK-LABEL: func.func @in_branch(
// CHECK: scf.if %arg2 {
// CHECK: scf.parallel
// CHECK: vector.load
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @in_branch(%x: memref<8x64xf32>, %m: memref<8x1xf32>, %c: i1) {
  scf.if %c {
    linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x64xf32>) outs(%m : memref<8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %out, %in : f32
      linalg.yield %r : f32
    }
  }
  return
}

// In the body of an scf.forall (an imported op's per-item work: TopK's
// block maxima of one row, [6, 16] -> [6]) the rows are taken too: an
// scf.parallel over them (made serial inside the forall's loop later),
// each a vector load and a horizontal max.
// CHECK-LABEL: func.func @in_forall(
// CHECK: scf.forall (%[[I:.*]]) in (2) {
// CHECK: %[[ROW:.*]] = memref.subview %arg0[%[[I]], 0, 0] [1, 6, 16] [1, 1, 1]
// CHECK: scf.parallel (%[[B:.*]]) = (%c0) to (%c6) step (%c1) {
// CHECK: %[[BLOCK:.*]] = memref.subview %[[ROW]][%[[B]], 0] [1, 16] [1, 1]
// CHECK: %[[V:.*]] = vector.load %[[BLOCK]][%c0, %c0] : memref<1x16xf32, {{.*}}>, vector<16xf32>
// CHECK: vector.reduction <maximumf>, %{{.*}} : vector<16xf32> into f32
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @in_forall(%x: memref<2x6x16xf32>, %m: memref<2x6xf32>) {
  scf.forall (%i) in (2) {
    %row = memref.subview %x[%i, 0, 0] [1, 6, 16] [1, 1, 1] : memref<2x6x16xf32> to memref<6x16xf32, strided<[16, 1], offset: ?>>
    %out = memref.subview %m[%i, 0] [1, 6] [1, 1] : memref<2x6xf32> to memref<6xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#id2, affine_map<(b, e) -> (b)>], iterator_types = ["parallel", "reduction"]} ins(%row : memref<6x16xf32, strided<[16, 1], offset: ?>>) outs(%out : memref<6xf32, strided<[1], offset: ?>>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.maximumf %acc, %in : f32
      linalg.yield %r : f32
    }
  }
  return
}

// Left to the default lowering: a product (not a sum, max or min), a
// reduction dim that is not the innermost, a row read across its stride
// (transposed), f64, a body that is not lanewise (linalg.index), a sum
// whose output is also read in the body (out * out + x), an op inside a
// loop, a row with a stride of 2 between its elements, a summand from
// outside the body, an output that is a view of the input's buffer, and
// an output that one parallel dim does not index (its rows would race).
// CHECK-LABEL: func.func @left_alone(
// CHECK-NOT: vector.
// CHECK-NOT: scf.parallel
// CHECK-COUNT-6: linalg.generic
// CHECK: scf.for
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: vector.
// CHECK: return
#colred = affine_map<(c, t) -> (c)>
#tr = affine_map<(c, t) -> (t, c)>
func.func @left_alone(%x: memref<8x64xf32>, %m: memref<8x1xf32>, %xt: memref<64x8xf32>, %c: memref<8xf32>, %d: memref<8x64xf64>, %dm: memref<8x1xf64>, %strided: memref<8x64xf32, strided<[128, 2]>>, %k: f32, %buf: memref<8x65xf32>, %x3: memref<2x3x64xf32>, %b2: memref<2xf32>) {
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x64xf32>) outs(%m : memref<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.mulf %out, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#tr, #colred], iterator_types = ["parallel", "reduction"]} ins(%xt : memref<64x8xf32>) outs(%c : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(t, c) -> (c, t)>, #row], iterator_types = ["parallel", "reduction"]} ins(%xt : memref<64x8xf32>) outs(%m : memref<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%d : memref<8x64xf64>) outs(%dm : memref<8x1xf64>) {
  ^bb0(%in: f64, %out: f64):
    %r = arith.addf %out, %in : f64
    linalg.yield %r : f64
  }
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x64xf32>) outs(%m : memref<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %p = arith.mulf %in, %f : f32
    %r = arith.addf %out, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x64xf32>) outs(%m : memref<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %two = arith.mulf %out, %out : f32
    %r = arith.addf %two, %in : f32
    linalg.yield %r : f32
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %i = %c0 to %c2 step %c1 {
    linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x64xf32>) outs(%m : memref<8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %out, %in : f32
      linalg.yield %r : f32
    }
  }
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%strided : memref<8x64xf32, strided<[128, 2]>>) outs(%m : memref<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x64xf32>) outs(%m : memref<8x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %k : f32
    linalg.yield %r : f32
  }
  %rows = memref.subview %buf[0, 0] [8, 64] [1, 1] : memref<8x65xf32> to memref<8x64xf32, strided<[65, 1]>>
  %last = memref.subview %buf[0, 64] [8, 1] [1, 1] : memref<8x65xf32> to memref<8x1xf32, strided<[65, 1], offset: 64>>
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%rows : memref<8x64xf32, strided<[65, 1]>>) outs(%last : memref<8x1xf32, strided<[65, 1], offset: 64>>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id3, affine_map<(a, b, c) -> (a)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x3 : memref<2x3x64xf32>) outs(%b2 : memref<2xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  return
}
