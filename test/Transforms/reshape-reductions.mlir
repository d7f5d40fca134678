// RUN: attention-opt %s --pass-pipeline='builtin.module(func.func(attn-reshape-reductions))' | FileCheck %s

#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#none3 = affine_map<(d0, d1, d2) -> ()>
#keep3 = affine_map<(d0, d1, d2) -> (d0, 0, 0)>
#row3 = affine_map<(d0, d1, d2) -> (d0)>
#mid3 = affine_map<(d0, d1, d2) -> (d0, d2)>
#tr3 = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row2 = affine_map<(d0, d1) -> (d0)>

// A sum over all axes: the three reduction dims collapse into one row of
// 1572864 elements, which has no parallel dim to spread over the threads:
// it is split into 16 rows of 98304 partial sums (from the combiner's
// identity, 0), reduced into the original init after.
// CHECK-LABEL: func.func @sum_all(
// CHECK: %[[INIT:.*]] = linalg.fill
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1, 2]] : tensor<4x512x768xf32> into tensor<1572864xf32>
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [16, 98304] : tensor<1572864xf32> into tensor<16x98304xf32>
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<16xf32>)
// CHECK: %[[PARTIAL:.*]] = linalg.generic {{{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[ROWS]] : tensor<16x98304xf32>) outs(%[[ZEROS]] : tensor<16xf32>)
// CHECK: arith.addf
// CHECK: %[[SUM:.*]] = linalg.generic {{{.*}}iterator_types = ["reduction"]} ins(%[[PARTIAL]] : tensor<16xf32>) outs(%[[INIT]] : tensor<f32>)
// CHECK: return %[[SUM]]

func.func @sum_all(%x: tensor<4x512x768xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#id3, #none3], iterator_types = ["reduction", "reduction", "reduction"]} ins(%x : tensor<4x512x768xf32>) outs(%f : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// ReduceMax over axes [1, 2] with keepdims: the init's unit dims (indexed
// by 0) are collapsed away first and the result expanded back after; the
// 3 rows of 40000 become 3 x 16 partial rows of 2500, from -inf.
// CHECK-LABEL: func.func @max_keepdims(
// CHECK: %[[INIT:.*]] = linalg.fill
// CHECK: %[[INIT3:.*]] = tensor.collapse_shape %[[INIT]] {{\[\[}}0, 1, 2]] : tensor<3x1x1xf32> into tensor<3xf32>
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2]] : tensor<3x40x1000xf32> into tensor<3x40000xf32>
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0], [1, 2]] output_shape [3, 16, 2500]
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[START:.*]] = linalg.fill ins(%[[NINF]] : f32) outs(%{{.*}} : tensor<3x16xf32>)
// CHECK: %[[PARTIAL:.*]] = linalg.generic {{{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[ROWS]] : tensor<3x16x2500xf32>) outs(%[[START]] : tensor<3x16xf32>)
// CHECK: arith.maximumf
// CHECK: %[[MAX:.*]] = linalg.generic {{{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[PARTIAL]] : tensor<3x16xf32>) outs(%[[INIT3]] : tensor<3xf32>)
// CHECK: %[[OUT:.*]] = tensor.expand_shape %[[MAX]] {{\[\[}}0, 1, 2]] output_shape [3, 1, 1] : tensor<3xf32> into tensor<3x1x1xf32>
// CHECK: return %[[OUT]]
func.func @max_keepdims(%x: tensor<3x40x1000xf32>) -> tensor<3x1x1xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<3x1x1xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<3x1x1xf32>) -> tensor<3x1x1xf32>
  %r = linalg.generic {indexing_maps = [#id3, #keep3], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x : tensor<3x40x1000xf32>) outs(%f : tensor<3x1x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<3x1x1xf32>
  return %r : tensor<3x1x1xf32>
}

// 8 rows (a sum of squares over axes [1, 2]): collapsed, not split.
// CHECK-LABEL: func.func @enough_rows(
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2]] : tensor<8x128x256xf32> into tensor<8x32768xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<8x32768xf32>) outs(%arg1 : tensor<8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
func.func @enough_rows(%x: tensor<8x128x256xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x : tensor<8x128x256xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %out, %sq : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// A dynamic number of rows: collapsed, not split.
// CHECK-LABEL: func.func @dynamic_rows(
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0], [1, 2]] : tensor<?x40x1000xf32> into tensor<?x40000xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x40000xf32>)
// CHECK-NOT: linalg.generic
func.func @dynamic_rows(%x: tensor<?x40x1000xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x : tensor<?x40x1000xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// One row of 12800, below 16384: collapsed, not split.
// CHECK-LABEL: func.func @short(
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1, 2]] : tensor<2x64x100xf32> into tensor<12800xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{{.*}}iterator_types = ["reduction"]} ins(%[[X]] : tensor<12800xf32>) outs(%arg1 : tensor<f32>)
// CHECK-NOT: linalg.generic
func.func @short(%x: tensor<2x64x100xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [#id3, #none3], iterator_types = ["reduction", "reduction", "reduction"]} ins(%x : tensor<2x64x100xf32>) outs(%init : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// A single row along the last axis (nothing to collapse) is split too.
// CHECK-LABEL: func.func @one_long_row(
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [1, 16, 4096] : tensor<1x65536xf32> into tensor<1x16x4096xf32>
// CHECK: %[[PARTIAL:.*]] = linalg.generic {{{.*}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[ROWS]] : tensor<1x16x4096xf32>)
// CHECK: linalg.generic {{{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[PARTIAL]] : tensor<1x16xf32>) outs(%arg1 : tensor<1xf32>)
func.func @one_long_row(%x: tensor<1x65536xf32>, %init: tensor<1xf32>) -> tensor<1xf32> {
  %r = linalg.generic {indexing_maps = [#id2, #row2], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<1x65536xf32>) outs(%init : tensor<1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<1xf32>
  return %r : tensor<1xf32>
}

// Not taken: a reduction dim between parallel ones, and trailing
// reduction dims that the input reads in another order.
// CHECK-LABEL: func.func @middle(
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{{.*}}iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg0 : tensor<4x512x768xf32>)
func.func @middle(%x: tensor<4x512x768xf32>, %init: tensor<4x768xf32>) -> tensor<4x768xf32> {
  %r = linalg.generic {indexing_maps = [#id3, #mid3], iterator_types = ["parallel", "reduction", "parallel"]} ins(%x : tensor<4x512x768xf32>) outs(%init : tensor<4x768xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4x768xf32>
  return %r : tensor<4x768xf32>
}

// CHECK-LABEL: func.func @transposed_read(
// CHECK-NOT: tensor.collapse_shape
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{{.*}}iterator_types = ["parallel", "reduction", "reduction"]} ins(%arg0 : tensor<4x768x512xf32>)
func.func @transposed_read(%x: tensor<4x768x512xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#tr3, #row3], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x : tensor<4x768x512xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// A body that reads its loop indices (ArgMax's index pass: the first index
// holding the row's extreme) is collapsed, its linalg.index rewritten from
// the collapsed dim, but not split: in a partial row the index would count
// from the row's start.
// CHECK-LABEL: func.func @first_index(
// CHECK: %[[X:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1]] : tensor<2x16384xf32> into tensor<32768xf32>
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{{.*}}iterator_types = ["reduction"]} ins(%[[X]] : tensor<32768xf32>)
// CHECK: %[[I:.*]] = linalg.index 0 : index
// CHECK: arith.remsi %[[I]], %c16384
// CHECK: arith.divsi %[[I]], %c16384
// CHECK-NOT: linalg.generic
func.func @first_index(%x: tensor<2x16384xf32>, %extreme: f32, %init: tensor<i64>) -> tensor<i64> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%x : tensor<2x16384xf32>) outs(%init : tensor<i64>) {
  ^bb0(%in: f32, %out: i64):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %n = arith.constant 16384 : index
    %row = arith.muli %i, %n : index
    %flat = arith.addi %row, %j : index
    %k = arith.index_cast %flat : index to i64
    %big = arith.constant 9223372036854775807 : i64
    %hit = arith.cmpf oeq, %in, %extreme : f32
    %cand = arith.select %hit, %k, %big : i64
    %m = arith.minsi %out, %cand : i64
    linalg.yield %m : i64
  } -> tensor<i64>
  return %r : tensor<i64>
}

// A column reduction (ReduceSum over axes [0, 1] of [4, 512, 768]: the
// reduction dims lead in the input, the kept ones trail): x as [2048, 12,
// 64] and the result as [12, 64], loops (block, row, column in the block)
// with the blocks parallel and the columns innermost along memory.
// CHECK-LABEL: func.func @columns(
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<4x512x768xf32> into tensor<2048x768xf32>
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %[[FLAT]] {{\[\[}}0], [1, 2]] output_shape [2048, 12, 64] : tensor<2048x768xf32> into tensor<2048x12x64xf32>
// CHECK: %[[INIT:.*]] = tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [12, 64] : tensor<768xf32> into tensor<12x64xf32>
// CHECK: %[[SUMS:.*]] = linalg.generic {indexing_maps = [#[[XMAP:.*]], #[[OMAP:.*]]], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[ROWS]] : tensor<2048x12x64xf32>) outs(%[[INIT]] : tensor<12x64xf32>)
// CHECK: arith.addf
// CHECK: tensor.collapse_shape %[[SUMS]] {{\[\[}}0, 1]] : tensor<12x64xf32> into tensor<768xf32>
func.func @columns(%x: tensor<4x512x768xf32>, %init: tensor<768xf32>) -> tensor<768xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2, d0)>, affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x : tensor<4x512x768xf32>) outs(%init : tensor<768xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<768xf32>
  return %r : tensor<768xf32>
}

// With keepdims ([1, 96] for axis 0 of [300, 96]): 96 columns in blocks of
// 32, the unit dim collapsed away and expanded back.
// CHECK-LABEL: func.func @columns_keepdims(
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [300, 3, 32] : tensor<300x96xf32> into tensor<300x3x32xf32>
// CHECK: linalg.generic {{{.*}}iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK: arith.maximumf
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<3x32xf32> into tensor<96xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [1, 96] : tensor<96xf32> into tensor<1x96xf32>
func.func @columns_keepdims(%x: tensor<300x96xf32>, %init: tensor<1x96xf32>) -> tensor<1x96xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (0, d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<300x96xf32>) outs(%init : tensor<1x96xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<1x96xf32>
  return %r : tensor<1x96xf32>
}

// 100 columns (not a multiple of 16) are left as they are.
// CHECK-LABEL: func.func @columns_ragged(
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic {{{.*}}iterator_types = ["parallel", "reduction"]} ins(%arg0 : tensor<512x100xf32>)
func.func @columns_ragged(%x: tensor<512x100xf32>, %init: tensor<100xf32>) -> tensor<100xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<512x100xf32>) outs(%init : tensor<100xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<100xf32>
  return %r : tensor<100xf32>
}
