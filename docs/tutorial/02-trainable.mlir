// Step 2: SelfAttention_v2, scaled dot-product attention with trainable
// Wq/Wk/Wv (d_in = 3, d_out = 2). One head, not causal, no out_proj.
func.func @main(%x: tensor<6x3xf32>, %w_query: tensor<3x2xf32>,
                %w_key: tensor<3x2xf32>, %w_value: tensor<3x2xf32>) -> tensor<6x2xf32> {
  %context = attn.multi_head_attention %x weights(%w_query, %w_key, %w_value)
      {num_heads = 1 : i64}
      : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  return %context : tensor<6x2xf32>
}
