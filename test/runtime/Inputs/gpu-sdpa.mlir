// A GPU-compilable attention core (f16, head dim 16).
func.func @main(%q: tensor<1x2x40x16xf16>, %k: tensor<1x2x40x16xf16>, %v: tensor<1x2x40x16xf16>) -> tensor<1x2x40x16xf16> {
  %o = attn.sdpa %q, %k, %v causal(top_left) : tensor<1x2x40x16xf16>, tensor<1x2x40x16xf16>, tensor<1x2x40x16xf16> -> tensor<1x2x40x16xf16>
  return %o : tensor<1x2x40x16xf16>
}
