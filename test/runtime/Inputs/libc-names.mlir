// Entry points named like C library functions (`index`, `strlen`): a saved
// shared object must call its own, not the process's (shared-object.test).
func.func @index(%q: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = attn.sdpa %q, %q, %q causal(top_left) : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}
func.func @strlen(%q: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = attn.sdpa %q, %q, %q : tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}
