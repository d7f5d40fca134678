// The seed's MultiHeadAttention at GPT-2 small size (d_in = d_out = 768,
// 12 heads of 64, context 1024, qkv_bias=False), in inference mode (dropout
// off). Weights are [d_in, d_out] (x @ W); the sequence length is dynamic.
func.func @main(%x: tensor<1x?x768xf32>,
                %w_query: tensor<768x768xf32>, %w_key: tensor<768x768xf32>,
                %w_value: tensor<768x768xf32>,
                %w_out: tensor<768x768xf32>, %b_out: tensor<768xf32>) -> tensor<1x?x768xf32> {
  %y = attn.multi_head_attention %x weights(%w_query, %w_key, %w_value)
      out_proj(%w_out, %b_out) causal {num_heads = 12 : i64}
      : (tensor<1x?x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>,
         tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>) -> tensor<1x?x768xf32>
  return %y : tensor<1x?x768xf32>
}
