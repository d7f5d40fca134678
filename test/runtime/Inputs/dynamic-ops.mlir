// Dynamic sizes that linalg ops, the projected attention forms and
// split/merge_heads need equal (none of them checks it while running).

// The contraction dim of a matmul: A's columns and B's rows.
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %a, %c0 : tensor<?x?xf32>
  %n = tensor.dim %b, %c1 : tensor<?x?xf32>
  %e = tensor.empty(%m, %n) : tensor<?x?xf32>
  %zero = arith.constant 0.0 : f32
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
  %r = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%z : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// An elementwise linalg.generic over two dynamic vectors; a broadcast
// operand (no dim of the loop) ties nothing.
#id = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
func.func @generic(%x: tensor<?xf32>, %y: tensor<?xf32>, %s: tensor<f32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #scalar, #id], iterator_types = ["parallel"]}
      ins(%x, %y, %s : tensor<?xf32>, tensor<?xf32>, tensor<f32>) outs(%e : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %q = arith.addf %p, %c : f32
    linalg.yield %q : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// Multi-head attention with dynamic d_in: the input's last dim and the
// weights' rows.
func.func @mha(%x: tensor<1x?x?xf32>, %wq: tensor<?x16xf32>, %wk: tensor<?x16xf32>, %wv: tensor<?x16xf32>) -> tensor<1x?x16xf32> {
  %y = attn.multi_head_attention %x weights(%wq, %wk, %wv) causal {num_heads = 2 : i64}
      : (tensor<1x?x?xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) -> tensor<1x?x16xf32>
  return %y : tensor<1x?x16xf32>
}

// Causal attention with static weights: the input's dynamic d_in must be 8.
func.func @causal(%x: tensor<?x?xf32>, %w: tensor<8x4xf32>) -> tensor<?x4xf32> {
  %y = attn.causal_attention %x weights(%w, %w, %w) : (tensor<?x?xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}

// Heads split from [1, T, 16] inputs: K's and V's T meet in the sdpa.
func.func @split(%xq: tensor<1x?x16xf32>, %xk: tensor<1x?x16xf32>, %xv: tensor<1x?x16xf32>) -> tensor<1x?x16xf32> {
  %q = attn.split_heads %xq {num_heads = 2 : i64} : tensor<1x?x16xf32> -> tensor<1x2x?x8xf32>
  %k = attn.split_heads %xk {num_heads = 2 : i64} : tensor<1x?x16xf32> -> tensor<1x2x?x8xf32>
  %v = attn.split_heads %xv {num_heads = 2 : i64} : tensor<1x?x16xf32> -> tensor<1x2x?x8xf32>
  %o = attn.sdpa %q, %k, %v : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  %m = attn.merge_heads %o : tensor<1x2x?x8xf32> -> tensor<1x?x16xf32>
  return %m : tensor<1x?x16xf32>
}
