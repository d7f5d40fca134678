// attn-fold-repeated-kv: K and V repeated per query head (repeat_kv, a
// broadcast of one head) reach attn.sdpa unrepeated; the copies die.
// RUN: attention-opt %s -split-input-file -attn-fold-repeated-kv -canonicalize | FileCheck %s
// The lowered core indexes the unrepeated K and V (slices of [1, 2, ?, 64]
// read by the 8 query heads); the [1, 2, 4, ?, 64] copy is gone.
// RUN: attention-opt %s -split-input-file -attn-fold-repeated-kv -canonicalize -attn-fuse-softmax -convert-attn-to-linalg | FileCheck %s --check-prefix=LOWERED

#map_unit = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, 0, d3, d4)>
#map_id5 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>

// Hugging Face's repeat_kv as imported: expand_shape (the None), a
// broadcasting generic (expand), collapse_shape (reshape). 8 query heads
// read 2 K/V heads.
// CHECK-LABEL: func.func @repeat_kv(
// CHECK-SAME: %[[Q:.*]]: tensor<1x8x?x64xf32>, %[[K:.*]]: tensor<1x2x?x64xf32>, %[[V:.*]]: tensor<1x2x?x64xf32>)
// CHECK-NOT: linalg.generic
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[O:.*]] = attn.sdpa %[[Q]], %[[K]], %[[V]] causal(top_left) : tensor<1x8x?x64xf32>, tensor<1x2x?x64xf32>, tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
// CHECK: return %[[O]]
// LOWERED-LABEL: func.func @repeat_kv(
// LOWERED-NOT: tensor<1x2x4x?x64xf32>
// LOWERED: scf.forall
// LOWERED: tensor.extract_slice %{{.*}} : tensor<1x2x?x64xf32>
func.func @repeat_kv(%q: tensor<1x8x?x64xf32>, %k: tensor<1x2x?x64xf32>, %v: tensor<1x2x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %c2 = arith.constant 2 : index
  %t = tensor.dim %k, %c2 : tensor<1x2x?x64xf32>
  %ke = tensor.expand_shape %k [[0], [1, 2], [3], [4]] output_shape [1, 2, 1, %t, 64] : tensor<1x2x?x64xf32> into tensor<1x2x1x?x64xf32>
  %ki = tensor.empty(%t) : tensor<1x2x4x?x64xf32>
  %kb = linalg.generic {indexing_maps = [#map_unit, #map_id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%ke : tensor<1x2x1x?x64xf32>) outs(%ki : tensor<1x2x4x?x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x4x?x64xf32>
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x4x?x64xf32> into tensor<1x8x?x64xf32>
  %ve = tensor.expand_shape %v [[0], [1, 2], [3], [4]] output_shape [1, 2, 1, %t, 64] : tensor<1x2x?x64xf32> into tensor<1x2x1x?x64xf32>
  %vi = tensor.empty(%t) : tensor<1x2x4x?x64xf32>
  %vb = linalg.generic {indexing_maps = [#map_unit, #map_id5], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%ve : tensor<1x2x1x?x64xf32>) outs(%vi : tensor<1x2x4x?x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x4x?x64xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x4x?x64xf32> into tensor<1x8x?x64xf32>
  %o = attn.sdpa %q, %kr, %vr causal(top_left) : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

// -----

// The same repeat written with linalg.broadcast, in seq_major layout
// ([B, T, H, d]: the heads are dim 2), with a mask that stays.
// CHECK-LABEL: func.func @broadcast_seq_major(
// CHECK-SAME: %[[Q:.*]]: tensor<2x16x6x32xf32>, %[[K:.*]]: tensor<2x16x3x32xf32>, %[[V:.*]]: tensor<2x16x3x32xf32>, %[[M:.*]]: tensor<2x1x16x16xi1>)
// CHECK-NOT: linalg.broadcast
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] mask(%[[M]] : attend_where_true) layout(seq_major) : tensor<2x16x6x32xf32>, tensor<2x16x3x32xf32>, tensor<2x16x3x32xf32>, tensor<2x1x16x16xi1> -> tensor<2x16x6x32xf32>
func.func @broadcast_seq_major(%q: tensor<2x16x6x32xf32>, %k: tensor<2x16x3x32xf32>, %v: tensor<2x16x3x32xf32>, %m: tensor<2x1x16x16xi1>) -> tensor<2x16x6x32xf32> {
  %ki = tensor.empty() : tensor<2x16x3x2x32xf32>
  %kb = linalg.broadcast ins(%k : tensor<2x16x3x32xf32>) outs(%ki : tensor<2x16x3x2x32xf32>) dimensions = [3]
  %kr = tensor.collapse_shape %kb [[0], [1], [2, 3], [4]] : tensor<2x16x3x2x32xf32> into tensor<2x16x6x32xf32>
  %vi = tensor.empty() : tensor<2x16x3x2x32xf32>
  %vb = linalg.broadcast ins(%v : tensor<2x16x3x32xf32>) outs(%vi : tensor<2x16x3x2x32xf32>) dimensions = [3]
  %vr = tensor.collapse_shape %vb [[0], [1], [2, 3], [4]] : tensor<2x16x3x2x32xf32> into tensor<2x16x6x32xf32>
  %o = attn.sdpa %q, %kr, %vr mask(%m : attend_where_true) layout(seq_major) : tensor<2x16x6x32xf32>, tensor<2x16x6x32xf32>, tensor<2x16x6x32xf32>, tensor<2x1x16x16xi1> -> tensor<2x16x6x32xf32>
  return %o : tensor<2x16x6x32xf32>
}

// -----

// Multi-query: one K/V head broadcast to all 4 query heads, from a size-1
// dim (a generic reading index 0) for K and from a missing dim
// (linalg.broadcast) for V. V gets its unit head dim back as a view.
#map_h0 = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
#map_id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @multi_query(
// CHECK-SAME: %[[Q:.*]]: tensor<1x4x8x16xf32>, %[[K:.*]]: tensor<1x1x8x16xf32>, %[[V:.*]]: tensor<1x8x16xf32>)
// CHECK: %[[VV:.*]] = tensor.expand_shape %[[V]] {{\[}}[0], [1, 2], [3]] output_shape [1, 1, 8, 16] : tensor<1x8x16xf32> into tensor<1x1x8x16xf32>
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[VV]] : tensor<1x4x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x4x8x16xf32>
func.func @multi_query(%q: tensor<1x4x8x16xf32>, %k: tensor<1x1x8x16xf32>, %v: tensor<1x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %ki = tensor.empty() : tensor<1x4x8x16xf32>
  %kb = linalg.generic {indexing_maps = [#map_h0, #map_id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x1x8x16xf32>) outs(%ki : tensor<1x4x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x8x16xf32>
  %vi = tensor.empty() : tensor<1x4x8x16xf32>
  %vb = linalg.broadcast ins(%v : tensor<1x8x16xf32>) outs(%vi : tensor<1x4x8x16xf32>) dimensions = [1]
  %o = attn.sdpa %q, %kb, %vb : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

// Left alone:
// - k.repeat(1, 2, 1, 1) tiles the heads (copies along the dim *before*
//   the heads: head h reads h % 2), which is not attn.sdpa's grouping;
// - K repeated but V not;
// - K and V grouped differently (2 and 4 heads);
// - a copy along the sequence, not the heads;
// - a generic that computes (scales) while it copies.
#map_tile = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d3, d4)>
#map_id5b = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
#map_t0 = affine_map<(d0, d1, d2, d3) -> (d0, d1, 0, d3)>
#map_id4b = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @tiled(
// CHECK: %[[KR:.*]] = tensor.collapse_shape
// CHECK: %[[VR:.*]] = tensor.collapse_shape
// CHECK: attn.sdpa %{{.*}}, %[[KR]], %[[VR]] : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
func.func @tiled(%q: tensor<1x4x8x16xf32>, %k: tensor<1x1x2x8x16xf32>, %v: tensor<1x1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %ki = tensor.empty() : tensor<1x2x2x8x16xf32>
  %kb = linalg.generic {indexing_maps = [#map_tile, #map_id5b], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x1x2x8x16xf32>) outs(%ki : tensor<1x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x16xf32>
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<1x4x8x16xf32>
  %vb = linalg.generic {indexing_maps = [#map_tile, #map_id5b], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%v : tensor<1x1x2x8x16xf32>) outs(%ki : tensor<1x2x2x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x16xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<1x4x8x16xf32>
  %o = attn.sdpa %q, %kr, %vr : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// CHECK-LABEL: func.func @value_not_repeated(
// CHECK: %[[KB:.*]] = linalg.broadcast
// CHECK: attn.sdpa %{{.*}}, %[[KB]], %{{.*}} : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
func.func @value_not_repeated(%q: tensor<1x4x8x16xf32>, %k: tensor<1x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %ki = tensor.empty() : tensor<1x4x8x16xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x8x16xf32>) outs(%ki : tensor<1x4x8x16xf32>) dimensions = [1]
  %o = attn.sdpa %q, %kb, %v : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// CHECK-LABEL: func.func @groups_differ(
// CHECK: attn.sdpa %{{.*}}, %{{.*}}, %{{.*}} : tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>
func.func @groups_differ(%q: tensor<1x8x8x16xf32>, %k: tensor<1x2x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<1x8x8x16xf32> {
  %ki = tensor.empty() : tensor<1x2x4x8x16xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x2x8x16xf32>) outs(%ki : tensor<1x2x4x8x16xf32>) dimensions = [2]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x4x8x16xf32> into tensor<1x8x8x16xf32>
  %vi = tensor.empty() : tensor<1x4x2x8x16xf32>
  %vb = linalg.broadcast ins(%v : tensor<1x4x8x16xf32>) outs(%vi : tensor<1x4x2x8x16xf32>) dimensions = [2]
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x4x2x8x16xf32> into tensor<1x8x8x16xf32>
  %o = attn.sdpa %q, %kr, %vr : tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32>, tensor<1x8x8x16xf32> -> tensor<1x8x8x16xf32>
  return %o : tensor<1x8x8x16xf32>
}

// CHECK-LABEL: func.func @along_sequence(
// CHECK: %[[KB:.*]] = linalg.generic
// CHECK: attn.sdpa %{{.*}}, %[[KB]], %[[KB]] : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
func.func @along_sequence(%q: tensor<1x4x8x16xf32>, %k: tensor<1x4x1x16xf32>) -> tensor<1x4x8x16xf32> {
  %ki = tensor.empty() : tensor<1x4x8x16xf32>
  %kb = linalg.generic {indexing_maps = [#map_t0, #map_id4b], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x4x1x16xf32>) outs(%ki : tensor<1x4x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x8x16xf32>
  %o = attn.sdpa %q, %kb, %kb : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

#map_h0c = affine_map<(d0, d1, d2, d3) -> (d0, 0, d2, d3)>
// CHECK-LABEL: func.func @computes_while_copying(
// CHECK: %[[KB:.*]] = linalg.generic
// CHECK: attn.sdpa %{{.*}}, %[[KB]], %[[KB]] : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
func.func @computes_while_copying(%q: tensor<1x4x8x16xf32>, %k: tensor<1x1x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %ki = tensor.empty() : tensor<1x4x8x16xf32>
  %kb = linalg.generic {indexing_maps = [#map_h0c, #map_id4b], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x1x8x16xf32>) outs(%ki : tensor<1x4x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<1x4x8x16xf32>
  %o = attn.sdpa %q, %kb, %kb : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

// A static batch of 1 is read at index 0 as well (torch.onnx.export's
// static repeat_kv): still one repeat, of the heads only. A batch of 2 read
// at 0 would copy along the batch too, and stays.
#map_b0 = affine_map<(d0, d1, d2, d3, d4) -> (0, d1, 0, d3, d4)>
#map_id5c = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>
// CHECK-LABEL: func.func @repeat_kv_static_batch(
// CHECK-SAME: %[[Q:.*]]: tensor<1x8x16x64xf32>, %[[K:.*]]: tensor<1x2x16x64xf32>, %[[V:.*]]: tensor<1x2x16x64xf32>)
// CHECK-NOT: linalg.generic
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[V]] causal(top_left) : tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32> -> tensor<1x8x16x64xf32>
func.func @repeat_kv_static_batch(%q: tensor<1x8x16x64xf32>, %k: tensor<1x2x16x64xf32>, %v: tensor<1x2x16x64xf32>) -> tensor<1x8x16x64xf32> {
  %ke = tensor.expand_shape %k [[0], [1, 2], [3], [4]] output_shape [1, 2, 1, 16, 64] : tensor<1x2x16x64xf32> into tensor<1x2x1x16x64xf32>
  %ki = tensor.empty() : tensor<1x2x4x16x64xf32>
  %kb = linalg.generic {indexing_maps = [#map_b0, #map_id5c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%ke : tensor<1x2x1x16x64xf32>) outs(%ki : tensor<1x2x4x16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x4x16x64xf32>
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x4x16x64xf32> into tensor<1x8x16x64xf32>
  %ve = tensor.expand_shape %v [[0], [1, 2], [3], [4]] output_shape [1, 2, 1, 16, 64] : tensor<1x2x16x64xf32> into tensor<1x2x1x16x64xf32>
  %vb = linalg.generic {indexing_maps = [#map_b0, #map_id5c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%ve : tensor<1x2x1x16x64xf32>) outs(%ki : tensor<1x2x4x16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x4x16x64xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x4x16x64xf32> into tensor<1x8x16x64xf32>
  %o = attn.sdpa %q, %kr, %vr causal(top_left) : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return %o : tensor<1x8x16x64xf32>
}

// The same with the copy reading a source that lacks the repeat dim (no
// expand_shape first), and a multi-query broadcast of one head, each at a
// static batch of 1 read at index 0.
#map_b0_drop = affine_map<(d0, d1, d2, d3, d4) -> (0, d1, d3, d4)>
#map_b0_h0 = affine_map<(d0, d1, d2, d3) -> (0, 0, d2, d3)>
#map_id4d = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @repeat_kv_no_unit_dim(
// CHECK-SAME: %[[Q:.*]]: tensor<1x8x16x64xf32>, %[[K:.*]]: tensor<1x2x16x64xf32>)
// CHECK-NOT: linalg.generic
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[K]] : tensor<1x8x16x64xf32>, tensor<1x2x16x64xf32>, tensor<1x2x16x64xf32> -> tensor<1x8x16x64xf32>
func.func @repeat_kv_no_unit_dim(%q: tensor<1x8x16x64xf32>, %k: tensor<1x2x16x64xf32>) -> tensor<1x8x16x64xf32> {
  %ki = tensor.empty() : tensor<1x2x4x16x64xf32>
  %kb = linalg.generic {indexing_maps = [#map_b0_drop, #map_id5c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x2x16x64xf32>) outs(%ki : tensor<1x2x4x16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x4x16x64xf32>
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x4x16x64xf32> into tensor<1x8x16x64xf32>
  %o = attn.sdpa %q, %kr, %kr : tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32>, tensor<1x8x16x64xf32> -> tensor<1x8x16x64xf32>
  return %o : tensor<1x8x16x64xf32>
}

// CHECK-LABEL: func.func @multi_query_static_batch(
// CHECK-SAME: %[[Q:.*]]: tensor<1x4x8x16xf32>, %[[K:.*]]: tensor<1x1x8x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[K]] : tensor<1x4x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32> -> tensor<1x4x8x16xf32>
func.func @multi_query_static_batch(%q: tensor<1x4x8x16xf32>, %k: tensor<1x1x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %ki = tensor.empty() : tensor<1x4x8x16xf32>
  %kb = linalg.generic {indexing_maps = [#map_b0_h0, #map_id4d], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k : tensor<1x1x8x16xf32>) outs(%ki : tensor<1x4x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x8x16xf32>
  %o = attn.sdpa %q, %kb, %kb : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// CHECK-LABEL: func.func @repeat_kv_and_batch(
// CHECK: %[[KR:.*]] = tensor.collapse_shape
// CHECK: attn.sdpa %{{.*}}, %[[KR]], %[[KR]] : tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>
func.func @repeat_kv_and_batch(%q: tensor<2x8x16x64xf32>, %k: tensor<1x2x16x64xf32>) -> tensor<2x8x16x64xf32> {
  %ke = tensor.expand_shape %k [[0], [1, 2], [3], [4]] output_shape [1, 2, 1, 16, 64] : tensor<1x2x16x64xf32> into tensor<1x2x1x16x64xf32>
  %ki = tensor.empty() : tensor<2x2x4x16x64xf32>
  %kb = linalg.generic {indexing_maps = [#map_b0, #map_id5c], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%ke : tensor<1x2x1x16x64xf32>) outs(%ki : tensor<2x2x4x16x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x2x4x16x64xf32>
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<2x2x4x16x64xf32> into tensor<2x8x16x64xf32>
  %o = attn.sdpa %q, %kr, %kr : tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32>, tensor<2x8x16x64xf32> -> tensor<2x8x16x64xf32>
  return %o : tensor<2x8x16x64xf32>
}

// -----

// Also left alone: the tiling repeat written with linalg.broadcast (the
// copies on the dim before the heads), a repeat whose head dim is dynamic,
// and a K filled with a scalar (a generalized linalg.fill reads no tensor).
#fill4 = affine_map<(d0, d1, d2, d3) -> ()>
#id4c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @tiled_broadcast(
// CHECK: %[[KR:.*]] = tensor.collapse_shape
// CHECK: attn.sdpa %{{.*}}, %[[KR]], %[[KR]] : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
func.func @tiled_broadcast(%q: tensor<1x4x8x16xf32>, %k: tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  %ki = tensor.empty() : tensor<1x2x2x8x16xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x2x8x16xf32>) outs(%ki : tensor<1x2x2x8x16xf32>) dimensions = [1]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x16xf32> into tensor<1x4x8x16xf32>
  %o = attn.sdpa %q, %kr, %kr : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// CHECK-LABEL: func.func @dynamic_heads(
// CHECK: %[[KB:.*]] = linalg.broadcast
// CHECK: attn.sdpa %{{.*}}, %[[KB]], %[[KB]] : tensor<1x?x8x16xf32>, tensor<1x?x8x16xf32>, tensor<1x?x8x16xf32>
func.func @dynamic_heads(%q: tensor<1x?x8x16xf32>, %k: tensor<1x8x16xf32>, %h: index) -> tensor<1x?x8x16xf32> {
  %ki = tensor.empty(%h) : tensor<1x?x8x16xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x8x16xf32>) outs(%ki : tensor<1x?x8x16xf32>) dimensions = [1]
  %o = attn.sdpa %q, %kb, %kb : tensor<1x?x8x16xf32>, tensor<1x?x8x16xf32>, tensor<1x?x8x16xf32> -> tensor<1x?x8x16xf32>
  return %o : tensor<1x?x8x16xf32>
}

// CHECK-LABEL: func.func @scalar_fill(
// CHECK: %[[KF:.*]] = linalg.generic
// CHECK: attn.sdpa %{{.*}}, %[[KF]], %[[KF]] : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>
func.func @scalar_fill(%q: tensor<1x4x8x16xf32>, %c: f32) -> tensor<1x4x8x16xf32> {
  %ki = tensor.empty() : tensor<1x4x8x16xf32>
  %kf = linalg.generic {indexing_maps = [#fill4, #id4c], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c : f32) outs(%ki : tensor<1x4x8x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x4x8x16xf32>
  %o = attn.sdpa %q, %kf, %kf : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  return %o : tensor<1x4x8x16xf32>
}

// -----

// A repeat whose source is less static than the repeated tensor (the
// broadcast's init types the value width 64, its source leaves it ?): the
// unrepeated V is cast to the static width, so the op still verifies with
// its static result (run alone, the pass made an op whose result width
// the operands left dynamic).
// CHECK-LABEL: func.func @less_static_source(
// CHECK-SAME: %[[Q:.*]]: tensor<1x4x8x64xf32>, %[[K:.*]]: tensor<1x2x8x64xf32>, %[[V:.*]]: tensor<1x2x?x?xf32>)
// CHECK: %[[VC:.*]] = tensor.cast %[[V]] : tensor<1x2x?x?xf32> to tensor<1x2x8x64xf32>
// CHECK: attn.sdpa %[[Q]], %[[K]], %[[VC]] : tensor<1x4x8x64xf32>, tensor<1x2x8x64xf32>, tensor<1x2x8x64xf32> -> tensor<1x4x8x64xf32>
func.func @less_static_source(%q: tensor<1x4x8x64xf32>, %k: tensor<1x2x8x64xf32>, %v: tensor<1x2x?x?xf32>) -> tensor<1x4x8x64xf32> {
  %ki = tensor.empty() : tensor<1x2x2x8x64xf32>
  %kb = linalg.broadcast ins(%k : tensor<1x2x8x64xf32>) outs(%ki : tensor<1x2x2x8x64xf32>) dimensions = [2]
  %kr = tensor.collapse_shape %kb [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x64xf32> into tensor<1x4x8x64xf32>
  %vi = tensor.empty() : tensor<1x2x2x8x64xf32>
  %vb = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel"]} ins(%v : tensor<1x2x?x?xf32>) outs(%vi : tensor<1x2x2x8x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<1x2x2x8x64xf32>
  %vr = tensor.collapse_shape %vb [[0], [1, 2], [3], [4]] : tensor<1x2x2x8x64xf32> into tensor<1x4x8x64xf32>
  %o = attn.sdpa %q, %kr, %vr : tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32>, tensor<1x4x8x64xf32> -> tensor<1x4x8x64xf32>
  return %o : tensor<1x4x8x64xf32>
}
