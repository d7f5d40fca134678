// Step 3: CausalAttention on a batch of two sequences, with dropout 0.5 on
// the attention weights (training mode; seed 123 makes it reproducible).
func.func @main(%batch: tensor<2x6x3xf32>, %w_query: tensor<3x2xf32>,
                %w_key: tensor<3x2xf32>, %w_value: tensor<3x2xf32>) -> tensor<2x6x2xf32> {
  %context = attn.causal_attention %batch weights(%w_query, %w_key, %w_value)
      {dropout_p = 0.5 : f32, seed = 123 : i64}
      : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x6x2xf32>
  return %context : tensor<2x6x2xf32>
}
