func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %0 = attn.sdpa %x, %x
  return %0 : tensor<2x4x8xf32>
}
