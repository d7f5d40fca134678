// attn-fold-mask: constant causal masks become the causal attribute;
// anything that is not exactly a causal triangle stays a mask.
// RUN: attention-opt %s -split-input-file -attn-fold-mask | FileCheck %s

// The seed's buffer: triu(ones(4, 4), 1), true = masked.
// CHECK-LABEL: func.func @seed_triu
// CHECK-NOT: mask(
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} causal(top_left) :
func.func @seed_triu(%q: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %m = arith.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %0 = attn.sdpa %q, %q, %q mask(%m : masked_where_true) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<4x4xi1> -> tensor<1x2x4x8xf32>
  return %0 : tensor<1x2x4x8xf32>
}

// -----

// The seed slices its context-length buffer: mask.bool()[:T, :T] with a
// dynamic T is still top-left causal.
// CHECK-LABEL: func.func @seed_triu_sliced
// CHECK-NOT: mask(
// CHECK: attn.sdpa {{.*}} causal(top_left) :
func.func @seed_triu_sliced(%q: tensor<1x?x8xf32>, %t: index) -> tensor<1x?x8xf32> {
  %buf = arith.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %m = tensor.extract_slice %buf[0, 0] [%t, %t] [1, 1] : tensor<4x4xi1> to tensor<?x?xi1>
  %0 = attn.sdpa %q, %q, %q mask(%m : masked_where_true) : tensor<1x?x8xf32>, tensor<1x?x8xf32>, tensor<1x?x8xf32>, tensor<?x?xi1> -> tensor<1x?x8xf32>
  return %0 : tensor<1x?x8xf32>
}

// -----

// tril with true = attend (ONNX bool masks), with leading unit dims.
// CHECK-LABEL: func.func @tril_attend
// CHECK: attn.sdpa {{.*}} causal(top_left) :
func.func @tril_attend(%q: tensor<1x2x3x8xf32>) -> tensor<1x2x3x8xf32> {
  %m = arith.constant dense<[[[[true, false, false], [true, true, false], [true, true, true]]]]> : tensor<1x1x3x3xi1>
  %0 = attn.sdpa %q, %q, %q mask(%m : attend_where_true) : tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x2x3x8xf32>, tensor<1x1x3x3xi1> -> tensor<1x2x3x8xf32>
  return %0 : tensor<1x2x3x8xf32>
}

// -----

// Additive masks with -inf, -1e4, -1e9 and finfo(f32).min above the diagonal.
// CHECK-LABEL: func.func @additive
// CHECK-COUNT-4: attn.sdpa {{.*}} causal(top_left) :
// CHECK-NOT: mask(
func.func @additive(%q: tensor<3x8xf32>) -> (tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>) {
  %a = arith.constant dense<[[0.0, 0xFF800000, 0xFF800000], [0.0, 0.0, 0xFF800000], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  %b = arith.constant dense<[[0.0, -1.0e4, -1.0e4], [0.0, 0.0, -1.0e4], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  %c = arith.constant dense<[[0.0, -1.0e9, -1.0e9], [0.0, 0.0, -1.0e9], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  %d = arith.constant dense<[[0.0, -3.40282347e+38, -3.40282347e+38], [0.0, 0.0, -3.40282347e+38], [0.0, 0.0, 0.0]]> : tensor<3x3xf32>
  %0 = attn.sdpa %q, %q, %q mask(%a : additive) : tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x3xf32> -> tensor<3x8xf32>
  %1 = attn.sdpa %q, %q, %q mask(%b : additive) : tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x3xf32> -> tensor<3x8xf32>
  %2 = attn.sdpa %q, %q, %q mask(%c : additive) : tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x3xf32> -> tensor<3x8xf32>
  %3 = attn.sdpa %q, %q, %q mask(%d : additive) : tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x3xf32> -> tensor<3x8xf32>
  return %0, %1, %2, %3 : tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>
}

// -----

// Tq = 2, Tk = 4: the triangle offset by Tk - Tq = 2 is bottom-right.
// CHECK-LABEL: func.func @bottom_right
// CHECK: attn.sdpa {{.*}} causal(bottom_right) :
func.func @bottom_right(%q: tensor<2x8xf32>, %k: tensor<4x8xf32>) -> tensor<2x8xf32> {
  %m = arith.constant dense<[[false, false, false, true], [false, false, false, false]]> : tensor<2x4xi1>
  %0 = attn.sdpa %q, %k, %k mask(%m : masked_where_true) : tensor<2x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<2x4xi1> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// A mask that masks nothing is dropped.
// CHECK-LABEL: func.func @masks_nothing
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} : tensor<3x8xf32>
func.func @masks_nothing(%q: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %m = arith.constant dense<0.0> : tensor<1x3xf32>
  %0 = attn.sdpa %q, %q, %q mask(%m : additive) : tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<1x3xf32> -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

// Wrong diagonals are not causal. triu(ones, 2) lets each query see one
// key ahead: exactly a window with window_right = 1, never causal.
// CHECK-LABEL: func.func @wrong_diagonal
// CHECK-NOT: causal
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {window_right = 1 : i64}
func.func @wrong_diagonal(%q: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %m = arith.constant dense<[[false, false, true], [false, false, false], [false, false, false]]> : tensor<3x3xi1>
  %0 = attn.sdpa %q, %q, %q mask(%m : masked_where_true) : tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x3xi1> -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// triu(ones, 0) also masks the diagonal (query i sees only keys j < i):
// neither causal nor a window; it stays a mask.
// CHECK-LABEL: func.func @diagonal_masked
// CHECK: mask(%{{.*}} : masked_where_true)
// CHECK-NOT: causal
func.func @diagonal_masked(%q: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %m = arith.constant dense<[[true, true, true], [false, true, true], [false, false, true]]> : tensor<3x3xi1>
  %0 = attn.sdpa %q, %q, %q mask(%m : masked_where_true) : tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x3xi1> -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// CHECK-LABEL: func.func @not_constant
// CHECK: mask(%{{.*}} : masked_where_true)
func.func @not_constant(%q: tensor<3x8xf32>, %m: tensor<3x3xi1>) -> tensor<3x8xf32> {
  %0 = attn.sdpa %q, %q, %q mask(%m : masked_where_true) : tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x3xi1> -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// CHECK-LABEL: func.func @wrong_axes
// CHECK: mask(%{{.*}} : masked_where_true)
func.func @wrong_axes(%q: tensor<3x3x8xf32>) -> tensor<3x3x8xf32> {
  // A triangle over (head, query) instead of (query, key).
  %m = arith.constant dense<[[[false], [true], [true]], [[false], [false], [true]], [[false], [false], [false]]]> : tensor<3x3x1xi1>
  %0 = attn.sdpa %q, %q, %q mask(%m : masked_where_true) : tensor<3x3x8xf32>, tensor<3x3x8xf32>, tensor<3x3x8xf32>, tensor<3x3x1xi1> -> tensor<3x3x8xf32>
  return %0 : tensor<3x3x8xf32>
}

// CHECK-LABEL: func.func @additive_bias
// CHECK: mask(%{{.*}} : additive)
func.func @additive_bias(%q: tensor<3x8xf32>) -> tensor<3x8xf32> {
  // 0.5 below the diagonal is a bias (ALiBi-like), not a mask.
  %m = arith.constant dense<[[0.0, 0xFF800000, 0xFF800000], [0.5, 0.0, 0xFF800000], [0.5, 0.5, 0.0]]> : tensor<3x3xf32>
  %0 = attn.sdpa %q, %q, %q mask(%m : additive) : tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x3xf32> -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// CHECK-LABEL: func.func @differs_per_head
// CHECK: mask(%{{.*}} : masked_where_true)
func.func @differs_per_head(%q: tensor<2x2x8xf32>) -> tensor<2x2x8xf32> {
  %m = arith.constant dense<[[[false, true], [false, false]], [[false, false], [false, false]]]> : tensor<2x2x2xi1>
  %0 = attn.sdpa %q, %q, %q mask(%m : masked_where_true) : tensor<2x2x8xf32>, tensor<2x2x8xf32>, tensor<2x2x8xf32>, tensor<2x2x2xi1> -> tensor<2x2x8xf32>
  return %0 : tensor<2x2x8xf32>
}

// CHECK-LABEL: func.func @slice_off_origin
// CHECK: mask(%{{.*}} : masked_where_true)
func.func @slice_off_origin(%q: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %buf = arith.constant dense<[[false, true, true], [false, false, true], [false, false, false]]> : tensor<3x3xi1>
  %m = tensor.extract_slice %buf[1, 0] [2, 2] [1, 1] : tensor<3x3xi1> to tensor<2x2xi1>
  %0 = attn.sdpa %q, %q, %q mask(%m : masked_where_true) : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x2xi1> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// An origin slice one row high broadcasts that row (key 0 only) over every
// query: not the triangle its source is.
// CHECK-LABEL: func.func @slice_one_row
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} mask(%{{.*}} : masked_where_true) :
func.func @slice_one_row(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %buf = arith.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %m = tensor.extract_slice %buf[0, 0] [1, 4] [1, 1] : tensor<4x4xi1> to tensor<1x4xi1>
  %0 = attn.sdpa %q, %k, %k mask(%m : masked_where_true) : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x4xi1> -> tensor<1x1x4x8xf32>
  return %0 : tensor<1x1x4x8xf32>
}

// -----

// One column of the triangle masks nothing (column 0 is all false): the
// mask goes and no causal attribute comes.
// CHECK-LABEL: func.func @slice_one_column
// CHECK-NOT: mask(
// CHECK-NOT: causal
// CHECK: return
func.func @slice_one_column(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x4x8xf32>) -> tensor<1x1x4x8xf32> {
  %buf = arith.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %m = tensor.extract_slice %buf[0, 0] [4, 1] [1, 1] : tensor<4x4xi1> to tensor<4x1xi1>
  %0 = attn.sdpa %q, %k, %k mask(%m : masked_where_true) : tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<4x1xi1> -> tensor<1x1x4x8xf32>
  return %0 : tensor<1x1x4x8xf32>
}

// -----

// The first two rows of a 4 x 4 triangle, for 2 queries and 4 keys, are
// still top-left causal.
// CHECK-LABEL: func.func @slice_two_rows
// CHECK-NOT: mask(
// CHECK: attn.sdpa {{.*}} causal(top_left) :
func.func @slice_two_rows(%q: tensor<1x1x2x8xf32>, %k: tensor<1x1x4x8xf32>) -> tensor<1x1x2x8xf32> {
  %buf = arith.constant dense<[[false, true, true, true], [false, false, true, true], [false, false, false, true], [false, false, false, false]]> : tensor<4x4xi1>
  %m = tensor.extract_slice %buf[0, 0] [2, 4] [1, 1] : tensor<4x4xi1> to tensor<2x4xi1>
  %0 = attn.sdpa %q, %k, %k mask(%m : masked_where_true) : tensor<1x1x2x8xf32>, tensor<1x1x4x8xf32>, tensor<1x1x4x8xf32>, tensor<2x4xi1> -> tensor<1x1x2x8xf32>
  return %0 : tensor<1x1x2x8xf32>
}

// -----

// Masks computed from indices: a linalg.generic comparing linalg.index
// values (j > i: masked) and a tensor.generate selecting -inf above the
// diagonal.
// CHECK-LABEL: func.func @computed_masks
// CHECK-COUNT-2: attn.sdpa {{.*}} causal(top_left) :
// CHECK-NOT: mask(
func.func @computed_masks(%q: tensor<1x4x8xf32>) -> (tensor<1x4x8xf32>, tensor<1x4x8xf32>) {
  %e = tensor.empty() : tensor<4x4xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x4xi1>) {
  ^bb0(%out: i1):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %f = arith.cmpi sgt, %j, %i : index
    linalg.yield %f : i1
  } -> tensor<4x4xi1>
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %a = tensor.generate {
  ^bb0(%i: index, %j: index):
    %f = arith.cmpi ugt, %j, %i : index
    %v = arith.select %f, %ninf, %zero : f32
    tensor.yield %v : f32
  } : tensor<4x4xf32>
  %0 = attn.sdpa %q, %q, %q mask(%m : masked_where_true) : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<4x4xi1> -> tensor<1x4x8xf32>
  %1 = attn.sdpa %q, %q, %q mask(%a : additive) : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<4x4xf32> -> tensor<1x4x8xf32>
  return %0, %1 : tensor<1x4x8xf32>, tensor<1x4x8xf32>
}

// -----

// A computed mask that depends on data, or on something the evaluator does
// not understand, stays.
// CHECK-LABEL: func.func @computed_from_data
// CHECK: mask(%{{.*}} : masked_where_true)
func.func @computed_from_data(%q: tensor<4x8xf32>, %lim: index) -> tensor<4x8xf32> {
  %e = tensor.empty() : tensor<4x4xi1>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%e : tensor<4x4xi1>) {
  ^bb0(%out: i1):
    %j = linalg.index 1 : index
    %f = arith.cmpi sgt, %j, %lim : index
    linalg.yield %f : i1
  } -> tensor<4x4xi1>
  %0 = attn.sdpa %q, %q, %q mask(%m : masked_where_true) : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xi1> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Banded constants become sliding windows: a causal window of three keys
// (j in [i-2, i]) and a symmetric band (j in [i-1, i+1]).
// CHECK-LABEL: func.func @sliding_windows
// CHECK: attn.sdpa {{.*}} causal(top_left) {window_left = 2 : i64} :
// CHECK: attn.sdpa {{.*}} {window_left = 1 : i64, window_right = 1 : i64} :
// CHECK-NOT: mask(
func.func @sliding_windows(%q: tensor<5x8xf32>) -> (tensor<5x8xf32>, tensor<5x8xf32>) {
  %c = arith.constant dense<[[false, true, true, true, true], [false, false, true, true, true], [false, false, false, true, true], [true, false, false, false, true], [true, true, false, false, false]]> : tensor<5x5xi1>
  %s = arith.constant dense<[[true, true, false, false, false], [true, true, true, false, false], [false, true, true, true, false], [false, false, true, true, true], [false, false, false, true, true]]> : tensor<5x5xi1>
  %0 = attn.sdpa %q, %q, %q mask(%c : masked_where_true) : tensor<5x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>, tensor<5x5xi1> -> tensor<5x8xf32>
  %1 = attn.sdpa %q, %q, %q mask(%s : attend_where_true) : tensor<5x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>, tensor<5x5xi1> -> tensor<5x8xf32>
  return %0, %1 : tensor<5x8xf32>, tensor<5x8xf32>
}

// -----

// Not a band (a hole in the middle): stays a mask.
// CHECK-LABEL: func.func @not_a_band
// CHECK: mask(%{{.*}} : masked_where_true)
func.func @not_a_band(%q: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %m = arith.constant dense<[[false, true, false], [false, false, false], [false, false, false]]> : tensor<3x3xi1>
  %0 = attn.sdpa %q, %q, %q mask(%m : masked_where_true) : tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x3xi1> -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

// Index masks evaluate with the integers' own semantics: an unsigned
// compare sees i - j < 0 as huge, so (i - j) <u 3 is a causal window of 2
// (read as signed it was a window without the causal limit); i1 true is
// all ones, so xori with it is NOT (read as +-1 it made a mask of only
// "true" values, dropped as masking nothing).
// CHECK-LABEL: func.func @unsigned_band
// CHECK-NOT: mask(
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} causal(top_left) {window_left = 2 : i64}
func.func @unsigned_band(%q: tensor<1x2x9x16xf32>) -> tensor<1x2x9x16xf32> {
  %c3 = arith.constant 3 : index
  %m = tensor.generate {
  ^bb0(%i: index, %j: index):
    %d = arith.subi %i, %j : index
    %in = arith.cmpi ult, %d, %c3 : index
    tensor.yield %in : i1
  } : tensor<9x9xi1>
  %0 = attn.sdpa %q, %q, %q mask(%m : attend_where_true) : tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32>, tensor<9x9xi1> -> tensor<1x2x9x16xf32>
  return %0 : tensor<1x2x9x16xf32>
}
// CHECK-LABEL: func.func @not_of_band
// CHECK-NOT: mask(
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} causal(top_left) {window_left = 2 : i64}
func.func @not_of_band(%q: tensor<1x2x9x16xf32>) -> tensor<1x2x9x16xf32> {
  %true = arith.constant true
  %c2 = arith.constant 2 : index
  %m = tensor.generate {
  ^bb0(%i: index, %j: index):
    %future = arith.cmpi sgt, %j, %i : index
    %lo = arith.subi %i, %c2 : index
    %old = arith.cmpi slt, %j, %lo : index
    %hidden = arith.ori %future, %old : i1
    %visible = arith.xori %hidden, %true : i1
    tensor.yield %visible : i1
  } : tensor<9x9xi1>
  %0 = attn.sdpa %q, %q, %q mask(%m : attend_where_true) : tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32>, tensor<9x9xi1> -> tensor<1x2x9x16xf32>
  return %0 : tensor<1x2x9x16xf32>
}

// -----

// A bottom-right triangle (Tq = 3 < Tk = 5) on an op with a window and no
// causal attribute stays a mask: the window leans on the top-left
// diagonal, which causal(bottom_right) would move.
// CHECK-LABEL: func.func @bottom_right_with_window
// CHECK: attn.sdpa %{{.*}} mask(%{{.*}} : masked_where_true) {window_left = 2 : i64}
func.func @bottom_right_with_window(%q: tensor<1x1x3x8xf32>, %k: tensor<1x1x5x8xf32>) -> tensor<1x1x3x8xf32> {
  %m = arith.constant dense<[[false, false, false, true, true], [false, false, false, false, true], [false, false, false, false, false]]> : tensor<3x5xi1>
  %0 = attn.sdpa %q, %k, %k mask(%m : masked_where_true) {window_left = 2 : i64} : tensor<1x1x3x8xf32>, tensor<1x1x5x8xf32>, tensor<1x1x5x8xf32>, tensor<3x5xi1> -> tensor<1x1x3x8xf32>
  return %0 : tensor<1x1x3x8xf32>
}

// -----

// Tq = 4 > Tk = 2 bottom-right: rows 0 and 1 see no key. Masked by -1e4
// (finite) they keep softmax(s), a uniform shift: the mask stays. Masked
// by -inf they are rows of zeros either way: it folds.
// CHECK-LABEL: func.func @finite_fully_masked_rows
// CHECK: attn.sdpa %{{.*}} mask(%{{.*}} : additive)
// CHECK-LABEL: func.func @infinite_fully_masked_rows
// CHECK-NOT: mask(
// CHECK: causal(bottom_right)
func.func @finite_fully_masked_rows(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x2x8xf32>) -> tensor<1x1x4x8xf32> {
  %m = arith.constant dense<[[-1.0e+04, -1.0e+04], [-1.0e+04, -1.0e+04], [0.0, -1.0e+04], [0.0, 0.0]]> : tensor<4x2xf32>
  %0 = attn.sdpa %q, %k, %k mask(%m : additive) : tensor<1x1x4x8xf32>, tensor<1x1x2x8xf32>, tensor<1x1x2x8xf32>, tensor<4x2xf32> -> tensor<1x1x4x8xf32>
  return %0 : tensor<1x1x4x8xf32>
}
func.func @infinite_fully_masked_rows(%q: tensor<1x1x4x8xf32>, %k: tensor<1x1x2x8xf32>) -> tensor<1x1x4x8xf32> {
  %m = arith.constant dense<[[0xFF800000, 0xFF800000], [0xFF800000, 0xFF800000], [0.0, 0xFF800000], [0.0, 0.0]]> : tensor<4x2xf32>
  %0 = attn.sdpa %q, %k, %k mask(%m : additive) : tensor<1x1x4x8xf32>, tensor<1x1x2x8xf32>, tensor<1x1x2x8xf32>, tensor<4x2xf32> -> tensor<1x1x4x8xf32>
  return %0 : tensor<1x1x4x8xf32>
}

// -----

// Float arithmetic evaluates in the mask's own type: in f32, 3 * 0.1 is
// 0.3 exactly (in double it is below 0.3), so keys 3 or more ahead are
// masked: a window of 2 to the right, not 3.
// CHECK-LABEL: func.func @f32_arithmetic
// CHECK-NOT: mask(
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} {window_right = 2 : i64}
func.func @f32_arithmetic(%q: tensor<1x2x9x16xf32>) -> tensor<1x2x9x16xf32> {
  %tenth = arith.constant 0.1 : f32
  %limit = arith.constant 0.3 : f32
  %m = tensor.generate {
  ^bb0(%i: index, %j: index):
    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %f = arith.sitofp %di : i64 to f32
    %s = arith.mulf %f, %tenth : f32
    %far = arith.cmpf oge, %s, %limit : f32
    tensor.yield %far : i1
  } : tensor<9x9xi1>
  %0 = attn.sdpa %q, %q, %q mask(%m : masked_where_true) : tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32>, tensor<1x2x9x16xf32>, tensor<9x9xi1> -> tensor<1x2x9x16xf32>
  return %0 : tensor<1x2x9x16xf32>
}
