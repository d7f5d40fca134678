// Step 4: the efficient MultiHeadAttention (d_in = 3, d_out = 2, two heads
// of size 1), written with the explicit ops it is made of: projections,
// split_heads, the causal SDPA core, merge_heads and out_proj. Run
// `attention-opt --convert-attn-to-linalg` on it to see each become linalg.
func.func @main(%batch: tensor<2x6x3xf32>, %w_query: tensor<3x2xf32>,
                %w_key: tensor<3x2xf32>, %w_value: tensor<3x2xf32>,
                %w_out: tensor<2x2xf32>, %b_out: tensor<2xf32>) -> tensor<2x6x2xf32> {
  %y = attn.multi_head_attention %batch weights(%w_query, %w_key, %w_value)
      out_proj(%w_out, %b_out) causal {num_heads = 2 : i64}
      : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>,
         tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x6x2xf32>
  return %y : tensor<2x6x2xf32>
}

// The same computation spelled out: the heads are explicit tensors.
func.func @explicit(%q: tensor<2x6x2xf32>, %k: tensor<2x6x2xf32>,
                    %v: tensor<2x6x2xf32>) -> tensor<2x6x2xf32> {
  %qh = attn.split_heads %q {num_heads = 2 : i64} : tensor<2x6x2xf32> -> tensor<2x2x6x1xf32>
  %kh = attn.split_heads %k {num_heads = 2 : i64} : tensor<2x6x2xf32> -> tensor<2x2x6x1xf32>
  %vh = attn.split_heads %v {num_heads = 2 : i64} : tensor<2x6x2xf32> -> tensor<2x2x6x1xf32>
  %o = attn.sdpa %qh, %kh, %vh causal(top_left)
      : tensor<2x2x6x1xf32>, tensor<2x2x6x1xf32>, tensor<2x2x6x1xf32> -> tensor<2x2x6x1xf32>
  %c = attn.merge_heads %o : tensor<2x2x6x1xf32> -> tensor<2x6x2xf32>
  return %c : tensor<2x6x2xf32>
}
