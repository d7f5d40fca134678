// A bound on a sum of argument sizes (attnrt.sum_max: at most 8, plus 1,
// argument 0 dim 0, argument 1 dim 0), as the ONNX importer writes for a
// KV step that slices a table by past + T; sum-bounds.test runs it.
func.func @main(%a: tensor<?xf32>, %b: tensor<?xf32>) -> tensor<?xf32> attributes {attnrt.sum_max = [array<i64: 8, 1, 0, 0, 1, 0>]} {
  %0 = tensor.concat dim(0) %a, %b : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}
