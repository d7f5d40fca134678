// A KV-cache step with a dynamic batch and past length: the concatenations
// need the past and the new keys to agree on the batch, and the attn.sdpa
// the query's batch and the K and V lengths (past + 1 each) to match.
func.func @cache(%q: tensor<?x4x1x8xf32>, %k: tensor<?x2x1x8xf32>, %v: tensor<?x2x1x8xf32>, %pk: tensor<?x2x?x8xf32>, %pv: tensor<?x2x?x8xf32>) -> (tensor<?x4x1x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>) {
  %kc = tensor.concat dim(2) %pk, %k : (tensor<?x2x?x8xf32>, tensor<?x2x1x8xf32>) -> tensor<?x2x?x8xf32>
  %vc = tensor.concat dim(2) %pv, %v : (tensor<?x2x?x8xf32>, tensor<?x2x1x8xf32>) -> tensor<?x2x?x8xf32>
  %o = attn.sdpa %q, %kc, %vc : tensor<?x4x1x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32> -> tensor<?x4x1x8xf32>
  return %o, %kc, %vc : tensor<?x4x1x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32>
}

// Packed heads split by a reshape and a transpose into an init sized by
// the query's length: K's and V's lengths must be the query's.
func.func @heads(%q: tensor<1x?x16xf32>, %k: tensor<1x?x16xf32>, %v: tensor<1x?x16xf32>) -> tensor<1x2x?x8xf32> {
  %c1 = arith.constant 1 : index
  %t = tensor.dim %q, %c1 : tensor<1x?x16xf32>
  %e = tensor.empty(%t) : tensor<1x2x?x8xf32>
  %q4 = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, %t, 2, 8] : tensor<1x?x16xf32> into tensor<1x?x2x8xf32>
  %k4 = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [1, %t, 2, 8] : tensor<1x?x16xf32> into tensor<1x?x2x8xf32>
  %v4 = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [1, %t, 2, 8] : tensor<1x?x16xf32> into tensor<1x?x2x8xf32>
  %qt = linalg.transpose ins(%q4 : tensor<1x?x2x8xf32>) outs(%e : tensor<1x2x?x8xf32>) permutation = [0, 2, 1, 3]
  %kt = linalg.transpose ins(%k4 : tensor<1x?x2x8xf32>) outs(%e : tensor<1x2x?x8xf32>) permutation = [0, 2, 1, 3]
  %vt = linalg.transpose ins(%v4 : tensor<1x?x2x8xf32>) outs(%e : tensor<1x2x?x8xf32>) permutation = [0, 2, 1, 3]
  %o = attn.sdpa %qt, %kt, %vt : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %o : tensor<1x2x?x8xf32>
}
