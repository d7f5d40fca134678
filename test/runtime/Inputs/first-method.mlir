// The seed's "first method" of causal attention on 6 tokens, written with
// named linalg ops as an importer emits them: softmax, multiply by
// tril(ones), renormalise by the row sum, then weights @ V.
func.func @main(%scores: tensor<6x6xf32>, %v: tensor<6x3xf32>) -> tensor<6x3xf32> {
  %tril = arith.constant dense<[[1.0, 0.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 0.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 0.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]> : tensor<6x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6x6xf32>
  %w = linalg.softmax dimension(1) ins(%scores : tensor<6x6xf32>) outs(%e : tensor<6x6xf32>) -> tensor<6x6xf32>
  %m = linalg.mul ins(%w, %tril : tensor<6x6xf32>, tensor<6x6xf32>) outs(%e : tensor<6x6xf32>) -> tensor<6x6xf32>
  %e1 = tensor.empty() : tensor<6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<6xf32>) -> tensor<6xf32>
  %sum = linalg.reduce ins(%m : tensor<6x6xf32>) outs(%z : tensor<6xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %a = arith.addf %in, %acc : f32
      linalg.yield %a : f32
    }
  %b = linalg.broadcast ins(%sum : tensor<6xf32>) outs(%e : tensor<6x6xf32>) dimensions = [1]
  %n = linalg.div ins(%m, %b : tensor<6x6xf32>, tensor<6x6xf32>) outs(%e : tensor<6x6xf32>) -> tensor<6x6xf32>
  %e2 = tensor.empty() : tensor<6x3xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<6x3xf32>) -> tensor<6x3xf32>
  %ctx = linalg.matmul ins(%n, %v : tensor<6x6xf32>, tensor<6x3xf32>) outs(%z2 : tensor<6x3xf32>) -> tensor<6x3xf32>
  return %ctx : tensor<6x3xf32>
}
