// An elementwise bf16 multiply (target-cpu.test).
func.func @main(%x: tensor<4x32xbf16>, %y: tensor<4x32xbf16>) -> tensor<4x32xbf16> {
  %e = tensor.empty() : tensor<4x32xbf16>
  %p = linalg.mul ins(%x, %y : tensor<4x32xbf16>, tensor<4x32xbf16>) outs(%e : tensor<4x32xbf16>) -> tensor<4x32xbf16>
  return %p : tensor<4x32xbf16>
}
