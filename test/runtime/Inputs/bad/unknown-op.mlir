func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = attn.flash %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
