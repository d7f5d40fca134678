// Scaled dot-product attention as an unfused export writes it: the head
// split is reshape + transpose(1, 2), K is transposed again for Q K^T, and
// the context is transposed back before the merge reshape.
func.func @main(%q: tensor<4x8x16xf32>, %k: tensor<4x8x16xf32>, %v: tensor<4x8x16xf32>) -> tensor<4x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %qh = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [4, 8, 2, 8] : tensor<4x8x16xf32> into tensor<4x8x2x8xf32>
  %kh = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [4, 8, 2, 8] : tensor<4x8x16xf32> into tensor<4x8x2x8xf32>
  %vh = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [4, 8, 2, 8] : tensor<4x8x16xf32> into tensor<4x8x2x8xf32>
  %e4 = tensor.empty() : tensor<4x2x8x8xf32>
  %qt = linalg.transpose ins(%qh : tensor<4x8x2x8xf32>) outs(%e4 : tensor<4x2x8x8xf32>) permutation = [0, 2, 1, 3]
  %kt = linalg.transpose ins(%kh : tensor<4x8x2x8xf32>) outs(%e4 : tensor<4x2x8x8xf32>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%vh : tensor<4x8x2x8xf32>) outs(%e4 : tensor<4x2x8x8xf32>) permutation = [0, 2, 1, 3]
  %q3 = tensor.collapse_shape %qt [[0, 1], [2], [3]] : tensor<4x2x8x8xf32> into tensor<8x8x8xf32>
  %k3 = tensor.collapse_shape %kt [[0, 1], [2], [3]] : tensor<4x2x8x8xf32> into tensor<8x8x8xf32>
  %v3 = tensor.collapse_shape %vt [[0, 1], [2], [3]] : tensor<4x2x8x8xf32> into tensor<8x8x8xf32>
  %e3 = tensor.empty() : tensor<8x8x8xf32>
  %kT = linalg.transpose ins(%k3 : tensor<8x8x8xf32>) outs(%e3 : tensor<8x8x8xf32>) permutation = [0, 2, 1]
  %z = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %s = linalg.batch_matmul ins(%q3, %kT : tensor<8x8x8xf32>, tensor<8x8x8xf32>) outs(%z : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %w = linalg.softmax dimension(2) ins(%s : tensor<8x8x8xf32>) outs(%e3 : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %o = linalg.batch_matmul ins(%w, %v3 : tensor<8x8x8xf32>, tensor<8x8x8xf32>) outs(%z : tensor<8x8x8xf32>) -> tensor<8x8x8xf32>
  %o4 = tensor.expand_shape %o [[0, 1], [2], [3]] output_shape [4, 2, 8, 8] : tensor<8x8x8xf32> into tensor<4x2x8x8xf32>
  %eo = tensor.empty() : tensor<4x8x2x8xf32>
  %ot = linalg.transpose ins(%o4 : tensor<4x2x8x8xf32>) outs(%eo : tensor<4x8x2x8xf32>) permutation = [0, 2, 1, 3]
  %c = tensor.collapse_shape %ot [[0], [1], [2, 3]] : tensor<4x8x2x8xf32> into tensor<4x8x16xf32>
  return %c : tensor<4x8x16xf32>
}
