// attn-fuse-heads: the seed's MultiHeadAttentionWrapper (N causal heads on
// one input, concatenated) becomes one multi_head_attention.
// RUN: attention-opt %s -split-input-file -attn-fuse-heads | FileCheck %s

// CHECK-LABEL: func.func @wrapper(
// CHECK-SAME: %[[X:.*]]: tensor<2x6x3xf32>, %[[Q0:.*]]: tensor<3x2xf32>, %[[K0:.*]]: tensor<3x2xf32>, %[[V0:.*]]: tensor<3x2xf32>, %[[Q1:.*]]: tensor<3x2xf32>, %[[K1:.*]]: tensor<3x2xf32>, %[[V1:.*]]: tensor<3x2xf32>)
// CHECK-DAG: %[[WQ:.*]] = tensor.concat dim(1) %[[Q0]], %[[Q1]] : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x4xf32>
// CHECK-DAG: %[[WK:.*]] = tensor.concat dim(1) %[[K0]], %[[K1]]
// CHECK-DAG: %[[WV:.*]] = tensor.concat dim(1) %[[V0]], %[[V1]]
// CHECK: %[[Y:.*]] = attn.multi_head_attention %[[X]] weights(%[[WQ]], %[[WK]], %[[WV]]) causal {num_heads = 2 : i64} : (tensor<2x6x3xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<2x6x4xf32>
// CHECK-NOT: attn.causal_attention
// CHECK: return %[[Y]]
func.func @wrapper(%x: tensor<2x6x3xf32>, %q0: tensor<3x2xf32>, %k0: tensor<3x2xf32>, %v0: tensor<3x2xf32>, %q1: tensor<3x2xf32>, %k1: tensor<3x2xf32>, %v1: tensor<3x2xf32>) -> tensor<2x6x4xf32> {
  %a = attn.causal_attention %x weights(%q0, %k0, %v0) : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x6x2xf32>
  %b = attn.causal_attention %x weights(%q1, %k1, %v1) : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x6x2xf32>
  %c = tensor.concat dim(2) %a, %b : (tensor<2x6x2xf32>, tensor<2x6x2xf32>) -> tensor<2x6x4xf32>
  return %c : tensor<2x6x4xf32>
}

// -----

// Biases are stacked too.
// CHECK-LABEL: func.func @wrapper_bias
// CHECK: tensor.concat dim(0) {{.*}} -> tensor<6xf32>
// CHECK: attn.multi_head_attention {{.*}} bias({{.*}}) causal {num_heads = 3 : i64}
func.func @wrapper_bias(%x: tensor<6x3xf32>, %w: tensor<3x2xf32>, %b: tensor<2xf32>) -> tensor<6x6xf32> {
  %a = attn.causal_attention %x weights(%w, %w, %w) bias(%b, %b, %b) : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<6x2xf32>
  %c = tensor.concat dim(1) %a, %a, %a : (tensor<6x2xf32>, tensor<6x2xf32>, tensor<6x2xf32>) -> tensor<6x6xf32>
  return %c : tensor<6x6xf32>
}

// -----

// Not fused: different inputs, dropout, concat on another dim.
// CHECK-LABEL: func.func @different_inputs
// CHECK-COUNT-2: attn.causal_attention
// CHECK: tensor.concat
func.func @different_inputs(%x: tensor<6x3xf32>, %y: tensor<6x3xf32>, %w: tensor<3x2xf32>) -> tensor<6x4xf32> {
  %a = attn.causal_attention %x weights(%w, %w, %w) : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  %b = attn.causal_attention %y weights(%w, %w, %w) : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  %c = tensor.concat dim(1) %a, %b : (tensor<6x2xf32>, tensor<6x2xf32>) -> tensor<6x4xf32>
  return %c : tensor<6x4xf32>
}

// CHECK-LABEL: func.func @with_dropout
// CHECK-COUNT-2: attn.causal_attention
func.func @with_dropout(%x: tensor<6x3xf32>, %w: tensor<3x2xf32>) -> tensor<6x4xf32> {
  %a = attn.causal_attention %x weights(%w, %w, %w) {dropout_p = 0.1 : f32, seed = 1 : i64} : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  %b = attn.causal_attention %x weights(%w, %w, %w) {dropout_p = 0.1 : f32, seed = 2 : i64} : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  %c = tensor.concat dim(1) %a, %b : (tensor<6x2xf32>, tensor<6x2xf32>) -> tensor<6x4xf32>
  return %c : tensor<6x4xf32>
}

// CHECK-LABEL: func.func @concat_on_rows
// CHECK: attn.causal_attention
// CHECK: tensor.concat dim(0)
func.func @concat_on_rows(%x: tensor<6x3xf32>, %w: tensor<3x2xf32>) -> tensor<12x2xf32> {
  %a = attn.causal_attention %x weights(%w, %w, %w) : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  %c = tensor.concat dim(0) %a, %a : (tensor<6x2xf32>, tensor<6x2xf32>) -> tensor<12x2xf32>
  return %c : tensor<12x2xf32>
}

// A key width the type leaves dynamic (the op takes it from w_query, 2)
// cannot become one multi_head_attention, which needs static widths: the
// heads stay (they were fused into an op that failed to verify).
// CHECK-LABEL: func.func @dynamic_key_width
// CHECK-COUNT-2: attn.causal_attention
// CHECK: tensor.concat
func.func @dynamic_key_width(%x: tensor<6x3xf32>, %wq: tensor<3x2xf32>, %wk: tensor<3x?xf32>, %wv: tensor<3x2xf32>) -> tensor<6x4xf32> {
  %a = attn.causal_attention %x weights(%wq, %wk, %wv) : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<3x?xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  %b = attn.causal_attention %x weights(%wq, %wk, %wv) : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<3x?xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  %c = tensor.concat dim(1) %a, %b : (tensor<6x2xf32>, tensor<6x2xf32>) -> tensor<6x4xf32>
  return %c : tensor<6x4xf32>
}

// A concatenation typed more statically than its heads: the fused op takes
// its operands' type and a cast gives the concatenation's (the op typed 6
// rows on a dynamic input failed to verify).
// CHECK-LABEL: func.func @static_concat_of_dynamic_heads
// CHECK: %[[M:.*]] = attn.multi_head_attention {{.*}} -> tensor<?x4xf32>
// CHECK: %[[C:.*]] = tensor.cast %[[M]] : tensor<?x4xf32> to tensor<6x4xf32>
// CHECK: return %[[C]]
func.func @static_concat_of_dynamic_heads(%x: tensor<?x3xf32>, %w: tensor<3x2xf32>) -> tensor<6x4xf32> {
  %a = attn.causal_attention %x weights(%w, %w, %w) : (tensor<?x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %b = attn.causal_attention %x weights(%w, %w, %w) : (tensor<?x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<?x2xf32>
  %c = tensor.concat dim(1) %a, %b : (tensor<?x2xf32>, tensor<?x2xf32>) -> tensor<6x4xf32>
  return %c : tensor<6x4xf32>
}

// Weights whose rows the type leaves dynamic still fuse: only the widths
// (d_out) must be one static size.
// CHECK-LABEL: func.func @dynamic_key_rows
// CHECK: attn.multi_head_attention
// CHECK-NOT: attn.causal_attention
func.func @dynamic_key_rows(%x: tensor<6x3xf32>, %wq: tensor<3x2xf32>, %wk: tensor<?x2xf32>) -> tensor<6x4xf32> {
  %a = attn.causal_attention %x weights(%wq, %wk, %wq) : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  %b = attn.causal_attention %x weights(%wq, %wk, %wq) : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<?x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  %c = tensor.concat dim(1) %a, %b : (tensor<6x2xf32>, tensor<6x2xf32>) -> tensor<6x4xf32>
  return %c : tensor<6x4xf32>
}
