// Two results sharing one buffer, and a residual add on whole tensors.
func.func @twice(%x: tensor<64x16xf32>) -> (tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32>) {
  %z = attn.sdpa %x, %x, %x : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  %w = attn.sdpa %x, %x, %x {scale = 0.5 : f32} : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  return %z, %w, %z : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32>
}

func.func @residual(%x: tensor<64x16xf32>) -> tensor<64x16xf32> {
  %z = attn.self_attention %x : tensor<64x16xf32> -> tensor<64x16xf32>
  %r = arith.addf %z, %x : tensor<64x16xf32>
  return %r : tensor<64x16xf32>
}

// An input returned as it is, a computed result and a constant: the runtime
// copies the first and the last (it does not own them) and hands the
// computed buffer over as the output tensor.
func.func @passthrough(%x: tensor<64x16xf32>) -> (tensor<64x16xf32>, tensor<64x16xf32>, tensor<2xf32>) {
  %z = attn.sdpa %x, %x, %x : tensor<64x16xf32>, tensor<64x16xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  return %x, %z, %c : tensor<64x16xf32>, tensor<64x16xf32>, tensor<2xf32>
}
