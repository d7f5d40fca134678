// convert-attn-to-linalg: every attn op becomes plain, unfused linalg.
// RUN: attention-opt %s -split-input-file -convert-attn-to-linalg | FileCheck %s

// Q K^T as a contraction over the head dim, scaled, causally masked with the
// bottom-right offset Tk - Tq, then max / exp / sum / divide and P V.
// CHECK-DAG: #[[Q:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[K:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[S:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @sdpa_causal_bottom_right(
// CHECK-SAME: %[[ARG_Q:.*]]: tensor<2x4x8xf32>, %[[ARG_K:.*]]: tensor<2x6x8xf32>)
// CHECK-NOT: attn.
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[QK:.*]] = linalg.generic {indexing_maps = [#[[Q]], #[[K]], #[[S]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[ARG_Q]], %[[ARG_K]] : {{.*}}) outs(%[[ZERO]] : tensor<2x4x6xf32>)
// CHECK: arith.mulf {{.*}} fastmath<reassoc,contract>
// CHECK: %[[TQ:.*]] = tensor.dim %[[ARG_Q]]
// CHECK: %[[TK:.*]] = tensor.dim %[[ARG_K]]
// CHECK: %[[OFF:.*]] = arith.subi %[[TK]], %[[TQ]] : index
// CHECK: %[[MASKED:.*]] = linalg.generic {{.*}} outs(%[[QK]] : tensor<2x4x6xf32>)
// CHECK: arith.constant 0.353553385 : f32
// CHECK: %[[I:.*]] = linalg.index 1
// CHECK: %[[J:.*]] = linalg.index 2
// CHECK: %[[DIAG:.*]] = arith.addi %[[I]], %[[OFF]]
// CHECK: %[[D:.*]] = arith.subi %[[J]], %[[DIAG]] : index
// CHECK: %[[FUT:.*]] = arith.cmpi sgt, %[[D]], %c0
// CHECK: %[[OUT:.*]] = arith.ori %{{.*}}, %[[FUT]] : i1
// CHECK: arith.select %[[OUT]], %{{.*}}, %{{.*}} : f32
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[MASKED]]
// CHECK: arith.maximumf
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[MASKED]], %[[MAX]]
// CHECK: %[[DEAD:.*]] = arith.cmpf oeq
// CHECK: math.exp
// CHECK: arith.select %[[DEAD]]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[EXP]]
// CHECK: arith.addf
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]]
// CHECK: arith.divf
// CHECK: %[[PV:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%[[P]], %[[ARG_K]]
// CHECK: return %[[PV]]
func.func @sdpa_causal_bottom_right(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>) -> tensor<2x4x8xf32> {
  %0 = attn.sdpa %q, %k, %k causal(bottom_right) : tensor<2x4x8xf32>, tensor<2x6x8xf32>, tensor<2x6x8xf32> -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

// Top-left causal has no offset; a rank-2 problem gets a unit head dim.
// CHECK-LABEL: func.func @sdpa_causal_top_left_rank2
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [1, 5, 8] : tensor<5x8xf32> into tensor<1x5x8xf32>
// CHECK-NOT: tensor.dim
// CHECK: arith.cmpi sgt
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<1x5x8xf32> into tensor<5x8xf32>
func.func @sdpa_causal_top_left_rank2(%q: tensor<5x8xf32>) -> tensor<5x8xf32> {
  %0 = attn.sdpa %q, %q, %q causal(top_left) : tensor<5x8xf32>, tensor<5x8xf32>, tensor<5x8xf32> -> tensor<5x8xf32>
  return %0 : tensor<5x8xf32>
}

// -----

// A sliding window masks keys more than 3 left or 1 right of the diagonal.
// CHECK-LABEL: func.func @sdpa_window
// CHECK: %[[I:.*]] = linalg.index 1
// CHECK: %[[J:.*]] = linalg.index 2
// CHECK: %[[D:.*]] = arith.subi %[[J]], %[[I]] : index
// CHECK: arith.cmpi sgt, %[[D]], %c1
// CHECK: arith.cmpi slt, %[[D]], %c-3
// CHECK: arith.select
func.func @sdpa_window(%q: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = attn.sdpa %q, %q, %q {window_left = 3 : i64, window_right = 1 : i64} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Soft cap: c * tanh(s / c) after scaling, before masking.
// CHECK-LABEL: func.func @sdpa_softcap
// CHECK: arith.constant 2.500000e-01 : f32
// CHECK: %[[T:.*]] = math.tanh
// CHECK: arith.mulf %[[T]], %{{.*}} : f32
// CHECK: arith.cmpi sgt
func.func @sdpa_softcap(%q: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = attn.sdpa %q, %q, %q causal(top_left) {softcap = 4.0 : f32} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

// Grouped-query attention reads K/V head h floordiv 4: no copy of K or V.
// CHECK-DAG: #[[KG:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1 floordiv 4, d3, d4)>
// CHECK-LABEL: func.func @sdpa_gqa
// CHECK-NOT: tensor.concat
// CHECK-NOT: linalg.broadcast
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[KG]], #{{.*}}]
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[KG]], #{{.*}}]
func.func @sdpa_gqa(%q: tensor<1x8x16x32xf32>, %k: tensor<1x2x16x32xf32>) -> tensor<1x8x16x32xf32> {
  %0 = attn.sdpa %q, %k, %k : tensor<1x8x16x32xf32>, tensor<1x2x16x32xf32>, tensor<1x2x16x32xf32> -> tensor<1x8x16x32xf32>
  return %0 : tensor<1x8x16x32xf32>
}

// -----

// Masks: a broadcast bool mask indexes size-1 dims at 0; an additive mask is
// added after scaling.
// CHECK-DAG: #[[MB:.*]] = affine_map<(d0, d1, d2, d3) -> (0, d2, d3)>
// CHECK-LABEL: func.func @sdpa_masks
// CHECK: linalg.generic {indexing_maps = [#[[MB]], #{{.*}}]
// CHECK: arith.select %{{.*}}, %{{.*}}, %{{.*}} : f32
// CHECK: linalg.generic
// CHECK: arith.addf
func.func @sdpa_masks(%q: tensor<1x2x4x8xf32>, %m: tensor<1x4x4xi1>, %a: tensor<4x4xf32>) -> (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) {
  %0 = attn.sdpa %q, %q, %q mask(%m : attend_where_true) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x4x4xi1> -> tensor<1x2x4x8xf32>
  %1 = attn.sdpa %q, %q, %q mask(%a : additive) : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<4x4xf32> -> tensor<1x2x4x8xf32>
  return %0, %1 : tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>
}

// -----

// Dropout: Philox-4x32-10 (ten rounds of two 32x32->64 multiplies per
// counter; the first round's product of the zero third word folds away, 19
// remain) on the flat index; kept weights are scaled by 1 / (1 - p) = 2.
// CHECK-LABEL: func.func @sdpa_dropout
// CHECK: arith.divf
// CHECK-COUNT-19: arith.mului_extended
// CHECK-NOT: arith.mului_extended
// CHECK: arith.cmpf oge
// CHECK: arith.constant 2.000000e+00 : f32
func.func @sdpa_dropout(%q: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = attn.sdpa %q, %q, %q {dropout_p = 0.5 : f32, seed = 7 : i64} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Low precision is computed in f32: extf in, truncf out.
// CHECK-LABEL: func.func @self_attention_bf16
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: arith.constant 1.000000e+00 : f32
// CHECK: arith.truncf %{{.*}} : f32 to bf16
func.func @self_attention_bf16(%x: tensor<6x3xbf16>) -> tensor<6x3xbf16> {
  %0 = attn.self_attention %x : tensor<6x3xbf16> -> tensor<6x3xbf16>
  return %0 : tensor<6x3xbf16>
}

// -----

// The seed's MultiHeadAttention: three projections, head split (expand +
// transpose), causal SDPA with scale 1/sqrt(head_dim), merge, out_proj + bias.
// CHECK-LABEL: func.func @multi_head_attention
// CHECK-COUNT-3: tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [2, %{{.*}}, 2, 4]
// CHECK: arith.constant 5.000000e-01 : f32
// CHECK: arith.cmpi sgt
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x2x?x4xf32>) outs(%{{.*}} : tensor<2x?x2x4xf32>) permutation = [0, 2, 1, 3]
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1], [2, 3]] : tensor<2x?x2x4xf32> into tensor<2x?x8xf32>
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: return %{{.*}} : tensor<2x?x8xf32>
func.func @multi_head_attention(%x: tensor<2x?x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<2x?x8xf32> {
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) out_proj(%w, %b) causal {num_heads = 2 : i64} : (tensor<2x?x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x?x8xf32>
  return %0 : tensor<2x?x8xf32>
}

// -----

// The seed's CausalAttention: projections with biases, causal top-left,
// scale 1/sqrt(d_out).
// CHECK-LABEL: func.func @causal_attention
// CHECK-COUNT-3: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK: arith.constant 0.707106769 : f32
// CHECK: arith.cmpi sgt
func.func @causal_attention(%x: tensor<2x6x3xf32>, %w: tensor<3x2xf32>, %b: tensor<2xf32>) -> tensor<2x6x2xf32> {
  %0 = attn.causal_attention %x weights(%w, %w, %w) bias(%b, %b, %b) : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x6x2xf32>
  return %0 : tensor<2x6x2xf32>
}

// -----

// d_out from w_query when only w_key's width is dynamic: scale 1/sqrt(4)
// (it was taken from w_key's dynamic width: NaN).
// CHECK-LABEL: func.func @causal_dynamic_key_width
// CHECK: arith.constant 5.000000e-01 : f32
func.func @causal_dynamic_key_width(%x: tensor<6x3xf32>, %wq: tensor<3x4xf32>, %wk: tensor<3x?xf32>) -> tensor<6x4xf32> {
  %0 = attn.causal_attention %x weights(%wq, %wk, %wq) : (tensor<6x3xf32>, tensor<3x4xf32>, tensor<3x?xf32>, tensor<3x4xf32>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

// split_heads / merge_heads: views plus one transpose each.
// CHECK-LABEL: func.func @heads
// CHECK: %[[E:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1], [2, 3]] output_shape [1, %{{.*}}, 12, 64] : tensor<1x?x768xf32> into tensor<1x?x12x64xf32>
// CHECK: %[[T:.*]] = linalg.transpose ins(%[[E]] : tensor<1x?x12x64xf32>) outs(%{{.*}} : tensor<1x12x?x64xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[T2:.*]] = linalg.transpose ins(%[[T]] : tensor<1x12x?x64xf32>) outs(%{{.*}} : tensor<1x?x12x64xf32>) permutation = [0, 2, 1, 3]
// CHECK: tensor.collapse_shape %[[T2]] {{\[}}[0], [1], [2, 3]] : tensor<1x?x12x64xf32> into tensor<1x?x768xf32>
func.func @heads(%x: tensor<1x?x768xf32>) -> tensor<1x?x768xf32> {
  %0 = attn.split_heads %x {num_heads = 12 : i64} : tensor<1x?x768xf32> -> tensor<1x12x?x64xf32>
  %1 = attn.merge_heads %0 : tensor<1x12x?x64xf32> -> tensor<1x?x768xf32>
  return %1 : tensor<1x?x768xf32>
}
