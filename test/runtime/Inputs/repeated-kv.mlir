// Grouped-query attention with K and V repeated per query head in seq_major
// layout ([B, T, H, d]): 6 query heads over 3 K/V heads, each K/V head
// copied twice with linalg.broadcast and the copies merged into the heads.
func.func @main(%q: tensor<2x16x6x32xf32>, %k: tensor<2x16x3x32xf32>, %v: tensor<2x16x3x32xf32>) -> tensor<2x16x6x32xf32> {
  %ki = tensor.empty() : tensor<2x16x3x2x32xf32>
  %kb = linalg.broadcast ins(%k : tensor<2x16x3x32xf32>) outs(%ki : tensor<2x16x3x2x32xf32>) dimensions = [3]
  %kr = tensor.collapse_shape %kb [[0], [1], [2, 3], [4]] : tensor<2x16x3x2x32xf32> into tensor<2x16x6x32xf32>
  %vb = linalg.broadcast ins(%v : tensor<2x16x3x32xf32>) outs(%ki : tensor<2x16x3x2x32xf32>) dimensions = [3]
  %vr = tensor.collapse_shape %vb [[0], [1], [2, 3], [4]] : tensor<2x16x3x2x32xf32> into tensor<2x16x6x32xf32>
  %o = attn.sdpa %q, %kr, %vr causal(top_left) layout(seq_major) : tensor<2x16x6x32xf32>, tensor<2x16x6x32xf32>, tensor<2x16x6x32xf32> -> tensor<2x16x6x32xf32>
  return %o : tensor<2x16x6x32xf32>
}
