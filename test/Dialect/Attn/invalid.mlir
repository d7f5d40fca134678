// Every verifier error of the attn dialect, one function per mistake.
// RUN: attention-opt %s -split-input-file -verify-diagnostics

func.func @self_attention_rank_1(%x: tensor<6xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{input must have rank >= 2 ([..., T, D]), got rank 1}}
  %0 = attn.self_attention %x : tensor<6xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @self_attention_result_shape(%x: tensor<6x3xf32>) -> tensor<6x4xf32> {
  // expected-error @+1 {{result shape [6, 4] does not match the expected shape [6, 3]}}
  %0 = attn.self_attention %x : tensor<6x3xf32> -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}

// -----

func.func @self_attention_mixed_types(%x: tensor<6x3xf32>) -> tensor<6x3xf16> {
  // expected-error @+1 {{expects one element type for all float operands and the result, found 'f32' and 'f16'}}
  %0 = attn.self_attention %x : tensor<6x3xf32> -> tensor<6x3xf16>
  return %0 : tensor<6x3xf16>
}

// -----

func.func @self_attention_infinite_scale(%x: tensor<6x3xf32>) -> tensor<6x3xf32> {
  // expected-error @+1 {{scale must be finite, got inf}}
  %0 = attn.self_attention %x {scale = 0x7F800000 : f32} : tensor<6x3xf32> -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

func.func @self_attention_integer_input(%x: tensor<6x3xi32>) -> tensor<6x3xi32> {
  // expected-error @+1 {{operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %0 = attn.self_attention %x : tensor<6x3xi32> -> tensor<6x3xi32>
  return %0 : tensor<6x3xi32>
}

// -----

func.func @sdpa_rank_1(%q: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{query must have rank >= 2 ([..., T, d]), got rank 1}}
  %0 = attn.sdpa %q, %q, %q : tensor<8xf32>, tensor<8xf32>, tensor<8xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @sdpa_rank_mismatch(%q: tensor<2x8x16xf32>, %k: tensor<8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{query, key and value must have the same rank, got 3, 2 and 2}}
  %0 = attn.sdpa %q, %k, %k : tensor<2x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @sdpa_head_dim_mismatch(%q: tensor<8x16xf32>, %k: tensor<8x32xf32>) -> tensor<8x32xf32> {
  // expected-error @+1 {{head dim mismatch: query dim 1 is 16 but key dim 1 is 32}}
  %0 = attn.sdpa %q, %k, %k : tensor<8x16xf32>, tensor<8x32xf32>, tensor<8x32xf32> -> tensor<8x32xf32>
  return %0 : tensor<8x32xf32>
}

// -----

func.func @sdpa_kv_length_mismatch(%q: tensor<8x16xf32>, %k: tensor<8x16xf32>, %v: tensor<9x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{key/value sequence length mismatch: key dim 0 is 8 but value dim 0 is 9}}
  %0 = attn.sdpa %q, %k, %v : tensor<8x16xf32>, tensor<8x16xf32>, tensor<9x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @sdpa_batch_mismatch(%q: tensor<2x4x8x16xf32>, %k: tensor<3x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{batch dim mismatch: query dim 0 is 2 but key dim 0 is 3}}
  %0 = attn.sdpa %q, %k, %k : tensor<2x4x8x16xf32>, tensor<3x4x8x16xf32>, tensor<3x4x8x16xf32> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_kv_heads_mismatch(%q: tensor<4x8x16xf32>, %k: tensor<2x8x16xf32>, %v: tensor<1x8x16xf32>) -> tensor<4x8x16xf32> {
  // expected-error @+1 {{key/value head count mismatch: key dim 0 is 2 but value dim 0 is 1}}
  %0 = attn.sdpa %q, %k, %v : tensor<4x8x16xf32>, tensor<2x8x16xf32>, tensor<1x8x16xf32> -> tensor<4x8x16xf32>
  return %0 : tensor<4x8x16xf32>
}

// -----

func.func @sdpa_gqa_not_multiple(%q: tensor<6x8x16xf32>, %k: tensor<4x8x16xf32>) -> tensor<6x8x16xf32> {
  // expected-error @+1 {{query heads (6) must be a multiple of key/value heads (4)}}
  %0 = attn.sdpa %q, %k, %k : tensor<6x8x16xf32>, tensor<4x8x16xf32>, tensor<4x8x16xf32> -> tensor<6x8x16xf32>
  return %0 : tensor<6x8x16xf32>
}

// -----

func.func @sdpa_zero_kv_heads(%q: tensor<2x8x16xf32>, %k: tensor<0x8x16xf32>) -> tensor<2x8x16xf32> {
  // expected-error @+1 {{key dim 0 is 0: empty operands are not supported}}
  %0 = attn.sdpa %q, %k, %k : tensor<2x8x16xf32>, tensor<0x8x16xf32>, tensor<0x8x16xf32> -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

func.func @sdpa_gqa_dynamic_heads(%q: tensor<?x8x16xf32>, %k: tensor<2x8x16xf32>) -> tensor<?x8x16xf32> {
  // expected-error @+1 {{grouped-query attention needs static head counts, got Hq = ? and Hkv = 2}}
  %0 = attn.sdpa %q, %k, %k : tensor<?x8x16xf32>, tensor<2x8x16xf32>, tensor<2x8x16xf32> -> tensor<?x8x16xf32>
  return %0 : tensor<?x8x16xf32>
}

// -----

func.func @sdpa_dynamic_head_dim_no_scale(%q: tensor<8x?xf32>) -> tensor<8x?xf32> {
  // expected-error @+1 {{needs a static head dim or an explicit scale}}
  %0 = attn.sdpa %q, %q, %q : tensor<8x?xf32>, tensor<8x?xf32>, tensor<8x?xf32> -> tensor<8x?xf32>
  return %0 : tensor<8x?xf32>
}

// -----

func.func @sdpa_bad_result(%q: tensor<8x16xf32>, %v: tensor<8x32xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{result shape [8, 16] does not match the expected shape [8, 32]}}
  %0 = attn.sdpa %q, %q, %v : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x32xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @sdpa_dropout_one(%q: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{dropout_p must be in [0, 1), got 1}}
  %0 = attn.sdpa %q, %q, %q {dropout_p = 1.0 : f32} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @sdpa_dropout_negative(%q: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{dropout_p must be in [0, 1), got -0.5}}
  %0 = attn.sdpa %q, %q, %q {dropout_p = -0.5 : f32} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @sdpa_bool_mask_as_additive(%q: tensor<8x16xf32>, %m: tensor<8x8xi1>) -> tensor<8x16xf32> {
  // expected-error @+1 {{mask of kind 'additive' must have float elements, got 'i1'}}
  %0 = attn.sdpa %q, %q, %q mask(%m : additive) : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x8xi1> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @sdpa_float_mask_as_bool(%q: tensor<8x16xf32>, %m: tensor<8x8xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{mask of kind 'attend_where_true' must have i1 elements, got 'f32'}}
  %0 = attn.sdpa %q, %q, %q mask(%m : attend_where_true) : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x8xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @sdpa_additive_mask_type(%q: tensor<8x16xf16>, %m: tensor<8x8xf32>) -> tensor<8x16xf16> {
  // expected-error @+1 {{additive mask element type 'f32' differs from the query's 'f16'}}
  %0 = attn.sdpa %q, %q, %q mask(%m : additive) : tensor<8x16xf16>, tensor<8x16xf16>, tensor<8x16xf16>, tensor<8x8xf32> -> tensor<8x16xf16>
  return %0 : tensor<8x16xf16>
}

// -----

func.func @sdpa_mask_rank(%q: tensor<8x16xf32>, %m: tensor<1x8x8xi1>) -> tensor<8x16xf32> {
  // expected-error @+1 {{mask rank 3 exceeds the score rank 2}}
  %0 = attn.sdpa %q, %q, %q mask(%m : masked_where_true) : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<1x8x8xi1> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @sdpa_mask_no_broadcast(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x6x16xf32>, %m: tensor<3x8x6xi1>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{mask dim 0 (3) does not broadcast to score dim 1 (4); scores are [B..., Hq, Tq, Tk]}}
  %0 = attn.sdpa %q, %k, %k mask(%m : masked_where_true) : tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>, tensor<2x4x6x16xf32>, tensor<3x8x6xi1> -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @sdpa_mask_wrong_axes(%q: tensor<8x16xf32>, %k: tensor<6x16xf32>, %m: tensor<6x8xi1>) -> tensor<8x16xf32> {
  // expected-error @+1 {{mask dim 1 (8) does not broadcast to score dim 1 (6)}}
  %0 = attn.sdpa %q, %k, %k mask(%m : masked_where_true) : tensor<8x16xf32>, tensor<6x16xf32>, tensor<6x16xf32>, tensor<6x8xi1> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @sdpa_seq_major_rank_2(%q: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{layout(seq_major) needs operands and result of one rank >= 3 ([B..., T, H, d])}}
  %0 = attn.sdpa %q, %q, %q layout(seq_major) : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @sdpa_seq_major_gqa_heads(%q: tensor<1x8x6x16xf32>, %k: tensor<1x8x4x16xf32>) -> tensor<1x8x6x16xf32> {
  // expected-error @+1 {{query heads (6) must be a multiple of key/value heads (4)}}
  %0 = attn.sdpa %q, %k, %k layout(seq_major) : tensor<1x8x6x16xf32>, tensor<1x8x4x16xf32>, tensor<1x8x4x16xf32> -> tensor<1x8x6x16xf32>
  return %0 : tensor<1x8x6x16xf32>
}

// -----

func.func @sdpa_negative_window(%q: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{window_left must be >= 0, got -2}}
  %0 = attn.sdpa %q, %q, %q {window_left = -2 : i64} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @sdpa_negative_softcap(%q: tensor<8x16xf32>) -> tensor<8x16xf32> {
  // expected-error @+1 {{softcap must be finite and > 0, got -1}}
  %0 = attn.sdpa %q, %q, %q {softcap = -1.0 : f32} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}

// -----

func.func @causal_rank_1(%x: tensor<3xf32>, %w: tensor<3x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{input must have rank >= 2 ([..., T, d_in]), got rank 1}}
  %0 = attn.causal_attention %x weights(%w, %w, %w) : (tensor<3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @causal_weight_rank(%x: tensor<6x3xf32>, %w: tensor<3x2xf32>, %w3: tensor<1x3x2xf32>) -> tensor<6x2xf32> {
  // expected-error @+1 {{w_key must be rank 2 [d_in, d_out], got rank 3}}
  %0 = attn.causal_attention %x weights(%w, %w3, %w) : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<1x3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  return %0 : tensor<6x2xf32>
}

// -----

func.func @causal_weight_rows(%x: tensor<6x3xf32>, %w: tensor<3x2xf32>, %wt: tensor<2x3xf32>) -> tensor<6x2xf32> {
  // expected-error @+1 {{w_query has 2 rows but the input's last dim (d_in) is 3}}
  %0 = attn.causal_attention %x weights(%wt, %w, %w) : (tensor<6x3xf32>, tensor<2x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  return %0 : tensor<6x2xf32>
}

// -----

func.func @causal_qk_width(%x: tensor<6x3xf32>, %w: tensor<3x2xf32>, %w4: tensor<3x4xf32>) -> tensor<6x2xf32> {
  // expected-error @+1 {{query/key width (d_out) mismatch: w_query dim 1 is 2 but w_key dim 1 is 4}}
  %0 = attn.causal_attention %x weights(%w, %w4, %w) : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<3x4xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  return %0 : tensor<6x2xf32>
}

// -----

func.func @causal_dynamic_dout(%x: tensor<6x3xf32>, %w: tensor<3x?xf32>) -> tensor<6x?xf32> {
  // expected-error @+1 {{needs a static d_out (w_query's or w_key's second dim) or an explicit scale}}
  %0 = attn.causal_attention %x weights(%w, %w, %w) : (tensor<6x3xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>) -> tensor<6x?xf32>
  return %0 : tensor<6x?xf32>
}

// -----

func.func @causal_bias_size(%x: tensor<6x3xf32>, %w: tensor<3x2xf32>, %b: tensor<2xf32>, %b3: tensor<3xf32>) -> tensor<6x2xf32> {
  // expected-error @+1 {{b_value has 3 elements but w_value's d_out is 2}}
  %0 = attn.causal_attention %x weights(%w, %w, %w) bias(%b, %b, %b3) : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>) -> tensor<6x2xf32>
  return %0 : tensor<6x2xf32>
}

// -----

func.func @causal_bias_rank(%x: tensor<6x3xf32>, %w: tensor<3x2xf32>, %b: tensor<2xf32>, %b2: tensor<1x2xf32>) -> tensor<6x2xf32> {
  // expected-error @+1 {{b_query must be rank 1, got rank 2}}
  %0 = attn.causal_attention %x weights(%w, %w, %w) bias(%b2, %b, %b) : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<1x2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<6x2xf32>
  return %0 : tensor<6x2xf32>
}

// -----

func.func @causal_partial_bias(%x: tensor<6x3xf32>, %w: tensor<3x2xf32>, %b: tensor<2xf32>) -> tensor<6x2xf32> {
  // expected-error @+1 {{expects all three of b_query, b_key, b_value or none, got 1}}
  %0 = "attn.causal_attention"(%x, %w, %w, %w, %b) <{operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0, 0>}> : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<2xf32>) -> tensor<6x2xf32>
  return %0 : tensor<6x2xf32>
}

// -----

func.func @causal_result(%x: tensor<2x6x3xf32>, %w: tensor<3x2xf32>) -> tensor<6x2xf32> {
  // expected-error @+1 {{result shape [6, 2] does not match the expected shape [2, 6, 2]}}
  %0 = attn.causal_attention %x weights(%w, %w, %w) : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  return %0 : tensor<6x2xf32>
}

// -----

func.func @mha_heads_do_not_divide(%x: tensor<1x6x768xf32>, %w: tensor<768x768xf32>) -> tensor<1x6x768xf32> {
  // expected-error @+1 {{d_out (768) must be divisible by num_heads (10)}}
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) {num_heads = 10 : i64} : (tensor<1x6x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>) -> tensor<1x6x768xf32>
  return %0 : tensor<1x6x768xf32>
}

// -----

func.func @mha_zero_heads(%x: tensor<1x6x768xf32>, %w: tensor<768x768xf32>) -> tensor<1x6x768xf32> {
  // expected-error @+1 {{attribute 'num_heads' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) {num_heads = 0 : i64} : (tensor<1x6x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>) -> tensor<1x6x768xf32>
  return %0 : tensor<1x6x768xf32>
}

// -----

func.func @mha_value_width(%x: tensor<1x6x8xf32>, %w: tensor<8x8xf32>, %wv: tensor<8x4xf32>) -> tensor<1x6x8xf32> {
  // expected-error @+1 {{d_out mismatch: w_query dim 1 is 8 but w_value dim 1 is 4}}
  %0 = attn.multi_head_attention %x weights(%w, %w, %wv) {num_heads = 2 : i64} : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x4xf32>) -> tensor<1x6x8xf32>
  return %0 : tensor<1x6x8xf32>
}

// -----

func.func @mha_dynamic_dout(%x: tensor<1x6x8xf32>, %w: tensor<8x?xf32>) -> tensor<1x6x?xf32> {
  // expected-error @+1 {{needs a static d_out (w_query's second dim), to split into heads}}
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) {num_heads = 2 : i64} : (tensor<1x6x8xf32>, tensor<8x?xf32>, tensor<8x?xf32>, tensor<8x?xf32>) -> tensor<1x6x?xf32>
  return %0 : tensor<1x6x?xf32>
}

// -----

func.func @mha_out_proj_rows(%x: tensor<1x6x8xf32>, %w: tensor<8x8xf32>, %wo: tensor<4x8xf32>) -> tensor<1x6x8xf32> {
  // expected-error @+1 {{w_out has 4 rows but d_out is 8}}
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) out_proj(%wo) {num_heads = 2 : i64} : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4x8xf32>) -> tensor<1x6x8xf32>
  return %0 : tensor<1x6x8xf32>
}

// -----

func.func @mha_out_proj_rank(%x: tensor<1x6x8xf32>, %w: tensor<8x8xf32>, %wo: tensor<64xf32>) -> tensor<1x6x8xf32> {
  // expected-error @+1 {{w_out must be rank 2 [d_out, d_model], got rank 1}}
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) out_proj(%wo) {num_heads = 2 : i64} : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<64xf32>) -> tensor<1x6x8xf32>
  return %0 : tensor<1x6x8xf32>
}

// -----

func.func @mha_out_bias(%x: tensor<1x6x8xf32>, %w: tensor<8x8xf32>, %b: tensor<4xf32>) -> tensor<1x6x8xf32> {
  // expected-error @+1 {{b_out has 4 elements but w_out's d_model is 8}}
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) out_proj(%w, %b) {num_heads = 2 : i64} : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4xf32>) -> tensor<1x6x8xf32>
  return %0 : tensor<1x6x8xf32>
}

// -----

func.func @mha_out_bias_without_weight(%x: tensor<1x6x8xf32>, %w: tensor<8x8xf32>, %b: tensor<8xf32>) -> tensor<1x6x8xf32> {
  // expected-error @+1 {{b_out needs w_out}}
  %0 = "attn.multi_head_attention"(%x, %w, %w, %w, %b) <{num_heads = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 1, 0, 0, 0, 0, 1>}> : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x6x8xf32>
  return %0 : tensor<1x6x8xf32>
}

// -----

func.func @mha_qkv_bias_size(%x: tensor<1x6x8xf32>, %w: tensor<8x8xf32>, %b: tensor<4xf32>) -> tensor<1x6x8xf32> {
  // expected-error @+1 {{b_query has 4 elements but d_out is 8}}
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) bias(%b, %b, %b) {num_heads = 2 : i64} : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x6x8xf32>
  return %0 : tensor<1x6x8xf32>
}

// -----

func.func @mha_dropout(%x: tensor<1x6x8xf32>, %w: tensor<8x8xf32>) -> tensor<1x6x8xf32> {
  // expected-error @+1 {{dropout_p must be in [0, 1), got 1.5}}
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) causal {num_heads = 2 : i64, dropout_p = 1.5 : f32} : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<1x6x8xf32>
  return %0 : tensor<1x6x8xf32>
}

// -----

func.func @split_heads_rank(%x: tensor<768xf32>) -> tensor<12x64xf32> {
  // expected-error @+1 {{input must have rank >= 2 ([..., T, H*d]), got rank 1}}
  %0 = attn.split_heads %x {num_heads = 12 : i64} : tensor<768xf32> -> tensor<12x64xf32>
  return %0 : tensor<12x64xf32>
}

// -----

func.func @split_heads_divisible(%x: tensor<4x768xf32>) -> tensor<7x4x109xf32> {
  // expected-error @+1 {{last dim (768) must be divisible by num_heads (7)}}
  %0 = attn.split_heads %x {num_heads = 7 : i64} : tensor<4x768xf32> -> tensor<7x4x109xf32>
  return %0 : tensor<7x4x109xf32>
}

// -----

func.func @split_heads_dynamic(%x: tensor<4x?xf32>) -> tensor<2x4x?xf32> {
  // expected-error @+1 {{needs a static last dim to split into heads}}
  %0 = attn.split_heads %x {num_heads = 2 : i64} : tensor<4x?xf32> -> tensor<2x4x?xf32>
  return %0 : tensor<2x4x?xf32>
}

// -----

func.func @split_heads_result(%x: tensor<1x4x768xf32>) -> tensor<1x4x12x64xf32> {
  // expected-error @+1 {{result shape [1, 4, 12, 64] does not match the expected shape [1, 12, 4, 64]}}
  %0 = attn.split_heads %x {num_heads = 12 : i64} : tensor<1x4x768xf32> -> tensor<1x4x12x64xf32>
  return %0 : tensor<1x4x12x64xf32>
}

// -----

func.func @merge_heads_rank(%x: tensor<4x64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{input must have rank >= 3 ([..., H, T, d]), got rank 2}}
  %0 = attn.merge_heads %x : tensor<4x64xf32> -> tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

func.func @merge_heads_dynamic(%x: tensor<?x4x64xf32>) -> tensor<4x?xf32> {
  // expected-error @+1 {{needs static head count and head dim, got ? and 64}}
  %0 = attn.merge_heads %x : tensor<?x4x64xf32> -> tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}

// -----

func.func @merge_heads_result(%x: tensor<12x4x64xf32>) -> tensor<4x64xf32> {
  // expected-error @+1 {{result shape [4, 64] does not match the expected shape [4, 768]}}
  %0 = attn.merge_heads %x : tensor<12x4x64xf32> -> tensor<4x64xf32>
  return %0 : tensor<4x64xf32>
}

// -----

func.func @sdpa_empty_head_dim(%q: tensor<4x0xf32>, %v: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{query dim 1 is 0: empty operands are not supported}}
  %0 = attn.sdpa %q, %q, %v : tensor<4x0xf32>, tensor<4x0xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @sdpa_empty_value_dim(%q: tensor<4x8xf32>, %v: tensor<4x0xf32>) -> tensor<4x0xf32> {
  // expected-error @+1 {{value dim 1 is 0: empty operands are not supported}}
  %0 = attn.sdpa %q, %q, %v : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x0xf32> -> tensor<4x0xf32>
  return %0 : tensor<4x0xf32>
}

// -----

func.func @mha_dynamic_value_width(%x: tensor<1x6x8xf32>, %w: tensor<8x4xf32>, %wv: tensor<8x?xf32>) -> tensor<1x6x4xf32> {
  // expected-error @+1 {{needs a static d_out (w_value's second dim), to split into heads}}
  %0 = attn.multi_head_attention %x weights(%w, %w, %wv) {num_heads = 2 : i64} : (tensor<1x6x8xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x?xf32>) -> tensor<1x6x4xf32>
  return %0 : tensor<1x6x4xf32>
}

// -----

func.func @causal_empty_weight_width(%x: tensor<4x3xf32>, %w: tensor<3x0xf32>) -> tensor<4x0xf32> {
  // expected-error @+1 {{operand #1 ('tensor<3x0xf32>') dim 1 is 0: empty operands are not supported}}
  %0 = attn.causal_attention %x weights(%w, %w, %w) : (tensor<4x3xf32>, tensor<3x0xf32>, tensor<3x0xf32>, tensor<3x0xf32>) -> tensor<4x0xf32>
  return %0 : tensor<4x0xf32>
}

// -----

func.func @mha_empty_weight_width(%x: tensor<2x4x3xf32>, %w: tensor<3x0xf32>) -> tensor<2x4x0xf32> {
  // expected-error @+1 {{operand #1 ('tensor<3x0xf32>') dim 1 is 0: empty operands are not supported}}
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) {num_heads = 1 : i64} : (tensor<2x4x3xf32>, tensor<3x0xf32>, tensor<3x0xf32>, tensor<3x0xf32>) -> tensor<2x4x0xf32>
  return %0 : tensor<2x4x0xf32>
}

// -----

func.func @self_attention_no_tokens(%x: tensor<0x3xf32>) -> tensor<0x3xf32> {
  // expected-error @+1 {{operand #0 ('tensor<0x3xf32>') dim 0 is 0: empty operands are not supported}}
  %0 = attn.self_attention %x : tensor<0x3xf32> -> tensor<0x3xf32>
  return %0 : tensor<0x3xf32>
}

// -----

func.func @split_heads_empty(%x: tensor<2x0x8xf32>) -> tensor<2x2x0x4xf32> {
  // expected-error @+1 {{operand #0 ('tensor<2x0x8xf32>') dim 1 is 0: empty operands are not supported}}
  %0 = attn.split_heads %x {num_heads = 2 : i64} : tensor<2x0x8xf32> -> tensor<2x2x0x4xf32>
  return %0 : tensor<2x2x0x4xf32>
}

// -----

func.func @sdpa_empty_mask_dim(%q: tensor<4x8xf32>, %m: tensor<4x0xi1>) -> tensor<4x8xf32> {
  // expected-error @+1 {{operand #3 ('tensor<4x0xi1>') dim 1 is 0: empty operands are not supported}}
  %0 = attn.sdpa %q, %q, %q mask(%m : masked_where_true) : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x0xi1> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// The result's rows come from the query's, known only while running: a
// static 5 there would be a size nothing checks (a 3-row query gave a
// 3-row result typed 5 x 4).
func.func @sdpa_static_result_of_dynamic_query(%q: tensor<?x4xf32>) -> tensor<5x4xf32> {
  // expected-error @+1 {{result dim 0 is static (5) but the operands leave it dynamic (expected shape [?, 4]): make it ?, or give the operands its size}}
  %0 = attn.sdpa %q, %q, %q : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<5x4xf32>
  return %0 : tensor<5x4xf32>
}

// -----

func.func @causal_static_result_of_dynamic_width(%x: tensor<6x3xf32>, %w: tensor<3x?xf32>) -> tensor<6x2xf32> {
  // expected-error @+1 {{result dim 1 is static (2) but the operands leave it dynamic (expected shape [6, ?])}}
  %0 = attn.causal_attention %x weights(%w, %w, %w) {scale = 0.5 : f32} : (tensor<6x3xf32>, tensor<3x?xf32>, tensor<3x?xf32>, tensor<3x?xf32>) -> tensor<6x2xf32>
  return %0 : tensor<6x2xf32>
}

// -----

func.func @merge_heads_width_overflows(%x: tensor<4294967296x1x4294967296xf32>) -> tensor<1x?xf32> {
  // expected-error @+1 {{head count 4294967296 times head dim 4294967296 is too large a width}}
  %m = attn.merge_heads %x : tensor<4294967296x1x4294967296xf32> -> tensor<1x?xf32>
  return %m : tensor<1x?xf32>
}
