// K and V with dynamic key lengths that must agree; a residual add whose
// operands must have the same dynamic length.
func.func @main(%q: tensor<2x?x8xf32>, %k: tensor<2x?x8xf32>, %v: tensor<2x?x8xf32>) -> tensor<2x?x8xf32> {
  %0 = attn.sdpa %q, %k, %v : tensor<2x?x8xf32>, tensor<2x?x8xf32>, tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  return %0 : tensor<2x?x8xf32>
}

func.func @residual(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = arith.addf %a, %b : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// A dynamic length with an upper bound (as the ONNX importer sets for
// sequence lengths that slice a fixed-size buffer).
func.func @bounded(%x: tensor<?x8xf32> {attnrt.dim_max = array<i64: 4, -1>}) -> tensor<?x8xf32> {
  %0 = arith.addf %x, %x : tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// A dynamic K length tied to V's static one: it must be 7.
func.func @mixed(%q: tensor<2x5x8xf32>, %k: tensor<2x?x8xf32>, %v: tensor<2x7x8xf32>) -> tensor<2x5x8xf32> {
  %0 = attn.sdpa %q, %k, %v : tensor<2x5x8xf32>, tensor<2x?x8xf32>, tensor<2x7x8xf32> -> tensor<2x5x8xf32>
  return %0 : tensor<2x5x8xf32>
}

// A dynamic K length tied to V's static length 1 (not a broadcast): it must
// be 1.
func.func @single_key(%q: tensor<1x5x8xf32>, %k: tensor<1x?x8xf32>, %v: tensor<1x1x8xf32>) -> tensor<1x5x8xf32> {
  %0 = attn.sdpa %q, %k, %v : tensor<1x5x8xf32>, tensor<1x?x8xf32>, tensor<1x1x8xf32> -> tensor<1x5x8xf32>
  return %0 : tensor<1x5x8xf32>
}

