// GPU entry points whose results the runtime must size from the inputs.
// Packed heads with a dynamic length: the result's length is the query's,
// through the reshapes.
func.func @packed(%q: tensor<1x?x256xf16>, %k: tensor<1x?x256xf16>, %v: tensor<1x?x256xf16>) -> tensor<1x?x256xf16> {
  %c1 = arith.constant 1 : index
  %tq = tensor.dim %q, %c1 : tensor<1x?x256xf16>
  %tk = tensor.dim %k, %c1 : tensor<1x?x256xf16>
  %qe = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, %tq, 4, 64] : tensor<1x?x256xf16> into tensor<1x?x4x64xf16>
  %ke = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [1, %tk, 4, 64] : tensor<1x?x256xf16> into tensor<1x?x4x64xf16>
  %ve = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [1, %tk, 4, 64] : tensor<1x?x256xf16> into tensor<1x?x4x64xf16>
  %o = attn.sdpa %qe, %ke, %ve layout(seq_major) : tensor<1x?x4x64xf16>, tensor<1x?x4x64xf16>, tensor<1x?x4x64xf16> -> tensor<1x?x4x64xf16>
  %oc = tensor.collapse_shape %o [[0], [1], [2, 3]] : tensor<1x?x4x64xf16> into tensor<1x?x256xf16>
  return %oc : tensor<1x?x256xf16>
}

// A KV-cache step with a dynamic batch and past length: the present
// outputs' batch is the past's, their length past + 1.
func.func @cache(%q: tensor<?x4x1x64xf16>, %k: tensor<?x2x1x64xf16>, %v: tensor<?x2x1x64xf16>, %pk: tensor<?x2x?x64xf16>, %pv: tensor<?x2x?x64xf16>) -> (tensor<?x4x1x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>) {
  %kc = tensor.concat dim(2) %pk, %k : (tensor<?x2x?x64xf16>, tensor<?x2x1x64xf16>) -> tensor<?x2x?x64xf16>
  %vc = tensor.concat dim(2) %pv, %v : (tensor<?x2x?x64xf16>, tensor<?x2x1x64xf16>) -> tensor<?x2x?x64xf16>
  %o = attn.sdpa %q, %kc, %vc : tensor<?x4x1x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x4x1x64xf16>
  return %o, %kc, %vc : tensor<?x4x1x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>
}

// PyTorch's cached step: the result's length is the query's through a
// transpose and a merge of heads; the present length is past + the
// query's length.
func.func @hf_decode(%q: tensor<1x?x512xf16>, %k: tensor<1x?x512xf16>, %v: tensor<1x?x512xf16>, %pk: tensor<1x8x?x64xf16>, %pv: tensor<1x8x?x64xf16>) -> (tensor<1x?x512xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>) {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %q, %c1 : tensor<1x?x512xf16>
  %q4 = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, %t, 8, 64] : tensor<1x?x512xf16> into tensor<1x?x8x64xf16>
  %k4 = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [1, %t, 8, 64] : tensor<1x?x512xf16> into tensor<1x?x8x64xf16>
  %v4 = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [1, %t, 8, 64] : tensor<1x?x512xf16> into tensor<1x?x8x64xf16>
  %e = tensor.empty(%t) : tensor<1x8x?x64xf16>
  %qt = linalg.transpose ins(%q4 : tensor<1x?x8x64xf16>) outs(%e : tensor<1x8x?x64xf16>) permutation = [0, 2, 1, 3]
  %kt = linalg.transpose ins(%k4 : tensor<1x?x8x64xf16>) outs(%e : tensor<1x8x?x64xf16>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v4 : tensor<1x?x8x64xf16>) outs(%e : tensor<1x8x?x64xf16>) permutation = [0, 2, 1, 3]
  %kc = tensor.concat dim(2) %pk, %kt : (tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>) -> tensor<1x8x?x64xf16>
  %vc = tensor.concat dim(2) %pv, %vt : (tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>) -> tensor<1x8x?x64xf16>
  %o = attn.sdpa %qt, %kc, %vc causal(bottom_right) : tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16> -> tensor<1x8x?x64xf16>
  %e2 = tensor.empty(%t) : tensor<1x?x8x64xf16>
  %ot = linalg.transpose ins(%o : tensor<1x8x?x64xf16>) outs(%e2 : tensor<1x?x8x64xf16>) permutation = [0, 2, 1, 3]
  %oc = tensor.collapse_shape %ot [[0], [1], [2, 3]] : tensor<1x?x8x64xf16> into tensor<1x?x512xf16>
  return %oc, %kc, %vc : tensor<1x?x512xf16>, tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>
}
