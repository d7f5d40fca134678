// A small causal SDPA entry point used by the runtime tests.
func.func @main(%q: tensor<2x4x8xf32>, %k: tensor<2x4x8xf32>, %v: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = attn.sdpa %q, %k, %v causal(top_left) : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

func.func @dynamic(%q: tensor<2x?x8xf32>) -> tensor<2x?x8xf32> {
  %0 = attn.sdpa %q, %q, %q : tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  return %0 : tensor<2x?x8xf32>
}
