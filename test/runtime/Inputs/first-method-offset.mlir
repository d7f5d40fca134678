// Not the first method: the row sum starts at 1 (a fill of 1.0), so the
// result is m / (1 + rowsum(m)), which attn-fold-mask must leave alone.
func.func @main(%s: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %t = arith.constant dense<[[1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0]]> : tensor<3x4xf32>
  %e = tensor.empty() : tensor<3x4xf32>
  %w = linalg.softmax dimension(1) ins(%s : tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %m = linalg.mul ins(%w, %t : tensor<3x4xf32>, tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %one = arith.constant 1.0 : f32
  %e3 = tensor.empty() : tensor<3xf32>
  %i3 = linalg.fill ins(%one : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %r = linalg.reduce ins(%m : tensor<3x4xf32>) outs(%i3 : tensor<3xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %b = linalg.broadcast ins(%r : tensor<3xf32>) outs(%e : tensor<3x4xf32>) dimensions = [1]
  %n = linalg.div ins(%m, %b : tensor<3x4xf32>, tensor<3x4xf32>) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  return %n : tensor<3x4xf32>
}
