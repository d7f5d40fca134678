// attn-decompose: compound attention ops become the Q, K and V projections
// (three contractions on the same input: concatenating the weights would
// copy them on every call), head split/merge, one attn.sdpa and the output
// projection.
// RUN: attention-opt %s -split-input-file -attn-decompose | FileCheck %s

// CHECK-LABEL: func.func @multi_head_attention(
// CHECK-SAME: %[[X:.*]]: tensor<1x?x768xf32>, %[[WQ:.*]]: tensor<768x768xf32>, %[[WK:.*]]: tensor<768x768xf32>, %[[WV:.*]]: tensor<768x768xf32>, %[[WO:.*]]: tensor<768x768xf32>, %[[BO:.*]]: tensor<768xf32>)
// CHECK-NOT: attn.multi_head_attention
// CHECK-NOT: tensor.concat
// CHECK: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[WQ]] : tensor<1x?x768xf32>, tensor<768x768xf32>)
// CHECK: %[[K:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[WK]] : tensor<1x?x768xf32>, tensor<768x768xf32>)
// CHECK: %[[V:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[WV]] : tensor<1x?x768xf32>, tensor<768x768xf32>)
// CHECK: %[[QH:.*]] = attn.split_heads %[[Q]] {num_heads = 12 : i64} : tensor<1x?x768xf32> -> tensor<1x12x?x64xf32>
// CHECK: %[[KH:.*]] = attn.split_heads %[[K]]
// CHECK: %[[VH:.*]] = attn.split_heads %[[V]]
// CHECK: %[[O:.*]] = attn.sdpa %[[QH]], %[[KH]], %[[VH]] causal(top_left) {dropout_p = 1.000000e-01 : f32, scale = 1.250000e-01 : f32, seed = 5 : i64}
// CHECK: %[[C:.*]] = attn.merge_heads %[[O]] : tensor<1x12x?x64xf32> -> tensor<1x?x768xf32>
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[C]], %[[WO]] :
// CHECK: %[[YB:.*]] = linalg.generic {{.*}} ins(%[[BO]] : tensor<768xf32>) outs(%[[Y]] :
// CHECK: return %[[YB]]
func.func @multi_head_attention(%x: tensor<1x?x768xf32>, %wq: tensor<768x768xf32>, %wk: tensor<768x768xf32>, %wv: tensor<768x768xf32>, %wo: tensor<768x768xf32>, %bo: tensor<768xf32>) -> tensor<1x?x768xf32> {
  %0 = attn.multi_head_attention %x weights(%wq, %wk, %wv) out_proj(%wo, %bo) causal {num_heads = 12 : i64, dropout_p = 0.1 : f32, seed = 5 : i64} : (tensor<1x?x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>) -> tensor<1x?x768xf32>
  return %0 : tensor<1x?x768xf32>
}

// -----

// Each projection adds its bias; f16 is computed in f32 and truncated at
// the end.
// CHECK-LABEL: func.func @mha_bias_f16
// CHECK-NOT: tensor.concat
// CHECK-COUNT-3: ins(%{{.*}} : tensor<8xf32>) outs(%{{.*}} : tensor<2x6x8xf32>)
// CHECK: attn.sdpa {{.*}} {scale = 5.000000e-01 : f32} : tensor<2x2x6x4xf32>
// CHECK-NOT: causal
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @mha_bias_f16(%x: tensor<2x6x8xf16>, %w: tensor<8x8xf16>, %b: tensor<8xf16>) -> tensor<2x6x8xf16> {
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) bias(%b, %b, %b) {num_heads = 2 : i64} : (tensor<2x6x8xf16>, tensor<8x8xf16>, tensor<8x8xf16>, tensor<8x8xf16>, tensor<8xf16>, tensor<8xf16>, tensor<8xf16>) -> tensor<2x6x8xf16>
  return %0 : tensor<2x6x8xf16>
}

// -----

// CausalAttention: one head, no split, causal top-left, scale 1/sqrt(d_out).
// CHECK-LABEL: func.func @causal_attention
// CHECK-COUNT-3: ins(%{{.*}}, %{{.*}} : tensor<2x6x3xf32>, tensor<3x2xf32>)
// CHECK-NOT: attn.split_heads
// CHECK: attn.sdpa {{.*}} causal(top_left) {dropout_p = 5.000000e-01 : f32, scale = 0.707106769 : f32, seed = 123 : i64} : tensor<2x6x2xf32>, tensor<2x6x2xf32>, tensor<2x6x2xf32> -> tensor<2x6x2xf32>
func.func @causal_attention(%x: tensor<2x6x3xf32>, %w: tensor<3x2xf32>) -> tensor<2x6x2xf32> {
  %0 = attn.causal_attention %x weights(%w, %w, %w) {dropout_p = 0.5 : f32, seed = 123 : i64} : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x6x2xf32>
  return %0 : tensor<2x6x2xf32>
}

// -----

// Weightless self-attention: sdpa(x, x, x) with scale 1.
// CHECK-LABEL: func.func @self_attention(
// CHECK-SAME: %[[X:.*]]: tensor<6x3xf32>
// CHECK: attn.sdpa %[[X]], %[[X]], %[[X]] {scale = 1.000000e+00 : f32}
func.func @self_attention(%x: tensor<6x3xf32>) -> tensor<6x3xf32> {
  %0 = attn.self_attention %x : tensor<6x3xf32> -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

// A dynamic projection width cannot be split into column ranges: the op
// stays for the plain lowering.
// CHECK-LABEL: func.func @dynamic_width
// CHECK: attn.causal_attention
func.func @dynamic_width(%x: tensor<6x3xf32>, %w: tensor<3x?xf32>) -> tensor<6x?xf32> {
  %0 = attn.causal_attention %x weights(%w, %w, %w) {scale = 0.5 : f32} : (tensor<6x3xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>) -> tensor<6x?xf32>
  return %0 : tensor<6x?xf32>
}
