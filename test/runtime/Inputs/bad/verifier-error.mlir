func.func @main(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %0 = attn.sdpa %x, %x, %x {dropout_p = 1.0 : f32} : tensor<8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32> -> tensor<8x16xf32>
  return %0 : tensor<8x16xf32>
}
