// A small causal core for bench/compare_options.py's test (2 heads of
// 64 x 16).
func.func @main(%q: tensor<1x2x64x16xf32>, %k: tensor<1x2x64x16xf32>, %v: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  %o = attn.sdpa %q, %k, %v causal(top_left) : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return %o : tensor<1x2x64x16xf32>
}
