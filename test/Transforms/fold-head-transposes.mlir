// attn-fold-head-transposes: split_heads -> sdpa -> merge_heads becomes
// views around one seq_major sdpa; inverse pairs cancel.
// RUN: attention-opt %s -split-input-file -attn-fold-head-transposes | FileCheck %s
// RUN: attention-opt %s -split-input-file -attn-decompose -attn-fold-head-transposes -attn-fuse-softmax -convert-attn-to-linalg | FileCheck %s --check-prefix=LOWERED

// CHECK-LABEL: func.func @split_sdpa_merge(
// CHECK-SAME: %[[Q:.*]]: tensor<1x?x768xf32>, %[[K:.*]]: tensor<1x?x768xf32>, %[[V:.*]]: tensor<1x?x768xf32>)
// CHECK-NOT: attn.split_heads
// CHECK: %[[QV:.*]] = tensor.expand_shape %[[Q]] {{\[}}[0], [1], [2, 3]] output_shape [1, %{{.*}}, 12, 64] : tensor<1x?x768xf32> into tensor<1x?x12x64xf32>
// CHECK: %[[KV:.*]] = tensor.expand_shape %[[K]]
// CHECK: %[[VV:.*]] = tensor.expand_shape %[[V]]
// CHECK: %[[O:.*]] = attn.sdpa %[[QV]], %[[KV]], %[[VV]] causal(top_left) layout(seq_major) : tensor<1x?x12x64xf32>, tensor<1x?x12x64xf32>, tensor<1x?x12x64xf32> -> tensor<1x?x12x64xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[O]] {{\[}}[0], [1], [2, 3]] : tensor<1x?x12x64xf32> into tensor<1x?x768xf32>
// CHECK-NOT: attn.merge_heads
// CHECK: return %[[C]]
func.func @split_sdpa_merge(%q: tensor<1x?x768xf32>, %k: tensor<1x?x768xf32>, %v: tensor<1x?x768xf32>) -> tensor<1x?x768xf32> {
  %qh = attn.split_heads %q {num_heads = 12 : i64} : tensor<1x?x768xf32> -> tensor<1x12x?x64xf32>
  %kh = attn.split_heads %k {num_heads = 12 : i64} : tensor<1x?x768xf32> -> tensor<1x12x?x64xf32>
  %vh = attn.split_heads %v {num_heads = 12 : i64} : tensor<1x?x768xf32> -> tensor<1x12x?x64xf32>
  %o = attn.sdpa %qh, %kh, %vh causal(top_left) : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  %c = attn.merge_heads %o : tensor<1x12x?x64xf32> -> tensor<1x?x768xf32>
  return %c : tensor<1x?x768xf32>
}

// -----

// The seed's MHA after decomposition: after the flash lowering no
// linalg.transpose and no copy is left for the head split or merge.
// LOWERED-LABEL: func.func @seed_mha
// LOWERED-NOT: linalg.transpose
// LOWERED-NOT: linalg.copy
// LOWERED: scf.forall
// LOWERED-NOT: linalg.transpose
// LOWERED: return
func.func @seed_mha(%x: tensor<2x?x32xf32>, %w: tensor<32x32xf32>, %b: tensor<32xf32>) -> tensor<2x?x32xf32> {
  %0 = attn.multi_head_attention %x weights(%w, %w, %w) out_proj(%w, %b) causal {num_heads = 4 : i64} : (tensor<2x?x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32x32xf32>, tensor<32xf32>) -> tensor<2x?x32xf32>
  return %0 : tensor<2x?x32xf32>
}

// -----

// Inverse pairs cancel.
// CHECK-LABEL: func.func @inverse_pairs(
// CHECK-SAME: %[[X:.*]]: tensor<1x8x64xf32>, %[[Y:.*]]: tensor<1x4x8x16xf32>)
// CHECK-NOT: attn.split_heads
// CHECK-NOT: attn.merge_heads
// CHECK: return %[[X]], %[[Y]]
func.func @inverse_pairs(%x: tensor<1x8x64xf32>, %y: tensor<1x4x8x16xf32>) -> (tensor<1x8x64xf32>, tensor<1x4x8x16xf32>) {
  %s = attn.split_heads %x {num_heads = 4 : i64} : tensor<1x8x64xf32> -> tensor<1x4x8x16xf32>
  %m = attn.merge_heads %s : tensor<1x4x8x16xf32> -> tensor<1x8x64xf32>
  %m2 = attn.merge_heads %y : tensor<1x4x8x16xf32> -> tensor<1x8x64xf32>
  %s2 = attn.split_heads %m2 {num_heads = 4 : i64} : tensor<1x8x64xf32> -> tensor<1x4x8x16xf32>
  return %m, %s2 : tensor<1x8x64xf32>, tensor<1x4x8x16xf32>
}

// -----

// Not folded: an operand that is not a split, or a result used unmerged.
// CHECK-LABEL: func.func @not_all_split
// CHECK: attn.split_heads
// CHECK: attn.sdpa
// CHECK-NOT: layout(seq_major)
// CHECK: attn.merge_heads
func.func @not_all_split(%q: tensor<1x8x64xf32>, %k: tensor<1x4x8x16xf32>) -> tensor<1x8x64xf32> {
  %qh = attn.split_heads %q {num_heads = 4 : i64} : tensor<1x8x64xf32> -> tensor<1x4x8x16xf32>
  %o = attn.sdpa %qh, %k, %k : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  %c = attn.merge_heads %o : tensor<1x4x8x16xf32> -> tensor<1x8x64xf32>
  return %c : tensor<1x8x64xf32>
}

// CHECK-LABEL: func.func @result_used_unmerged
// CHECK: attn.sdpa
// CHECK-NOT: layout(seq_major)
func.func @result_used_unmerged(%q: tensor<1x8x64xf32>) -> (tensor<1x8x64xf32>, tensor<1x4x8x16xf32>) {
  %qh = attn.split_heads %q {num_heads = 4 : i64} : tensor<1x8x64xf32> -> tensor<1x4x8x16xf32>
  %o = attn.sdpa %qh, %qh, %qh : tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32> -> tensor<1x4x8x16xf32>
  %c = attn.merge_heads %o : tensor<1x4x8x16xf32> -> tensor<1x8x64xf32>
  return %c, %o : tensor<1x8x64xf32>, tensor<1x4x8x16xf32>
}

// -----

// linalg level: a transpose feeding an elementwise op becomes its input's
// indexing map, and one reading an elementwise result becomes the
// producer's output map.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @elementwise_transposes(
// CHECK-SAME: %[[X:.*]]: tensor<2x6x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[E:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[ID]]], {{.*}} ins(%[[X]] : tensor<2x6x8xf32>) outs(%{{.*}} : tensor<2x8x6xf32>)
// CHECK: math.exp
// CHECK: %[[N:.*]] = linalg.generic {indexing_maps = [#[[ID]], #[[IN]]], {{.*}} ins(%[[E]] : tensor<2x8x6xf32>) outs(%{{.*}} : tensor<2x6x8xf32>)
// CHECK: arith.negf
// CHECK-NOT: linalg.transpose
// CHECK: return %[[N]]
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @elementwise_transposes(%x: tensor<2x6x8xf32>) -> tensor<2x6x8xf32> {
  %e1 = tensor.empty() : tensor<2x8x6xf32>
  %xt = linalg.transpose ins(%x : tensor<2x6x8xf32>) outs(%e1 : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %e = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%xt : tensor<2x8x6xf32>) outs(%e1 : tensor<2x8x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = math.exp %in : f32
    linalg.yield %r : f32
  } -> tensor<2x8x6xf32>
  %n = linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%e : tensor<2x8x6xf32>) outs(%e1 : tensor<2x8x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  } -> tensor<2x8x6xf32>
  %e2 = tensor.empty() : tensor<2x6x8xf32>
  %nt = linalg.transpose ins(%n : tensor<2x8x6xf32>) outs(%e2 : tensor<2x6x8xf32>) permutation = [0, 2, 1]
  return %nt : tensor<2x6x8xf32>
}

// -----

// A contraction keeps its two innermost loops in each operand (m, k in A;
// k, n in B; m, n in C), the layout attn-vectorize-contractions' register
// tiles take: K^T feeding Q K^T and the transposed result stay copies (a
// pass over memory each) rather than turn the contraction into one the
// vector code generator leaves scalar.
// CHECK-LABEL: func.func @contraction_keeps_inner_loops(
// CHECK-SAME: %[[Q:.*]]: tensor<2x4x8xf32>, %[[K:.*]]: tensor<2x6x8xf32>)
// CHECK: %[[KT:.*]] = linalg.transpose ins(%[[K]] : tensor<2x6x8xf32>) {{.*}} permutation = [0, 2, 1]
// CHECK: %[[S:.*]] = linalg.batch_matmul ins(%[[Q]], %[[KT]] : tensor<2x4x8xf32>, tensor<2x8x6xf32>)
// CHECK: %[[ST:.*]] = linalg.transpose ins(%[[S]] : tensor<2x4x6xf32>) {{.*}} permutation = [0, 2, 1]
// CHECK: return %[[ST]]
func.func @contraction_keeps_inner_loops(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>) -> tensor<2x6x4xf32> {
  %zero = arith.constant 0.0 : f32
  %ek = tensor.empty() : tensor<2x8x6xf32>
  %kt = linalg.transpose ins(%k : tensor<2x6x8xf32>) outs(%ek : tensor<2x8x6xf32>) permutation = [0, 2, 1]
  %es = tensor.empty() : tensor<2x4x6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%es : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %s = linalg.batch_matmul ins(%q, %kt : tensor<2x4x8xf32>, tensor<2x8x6xf32>) outs(%z : tensor<2x4x6xf32>) -> tensor<2x4x6xf32>
  %et = tensor.empty() : tensor<2x6x4xf32>
  %st = linalg.transpose ins(%s : tensor<2x4x6xf32>) outs(%et : tensor<2x6x4xf32>) permutation = [0, 2, 1]
  return %st : tensor<2x6x4xf32>
}

// -----

// A transpose of batch dims only (heads and batch swapped) still folds into
// a contraction: its inner loops stay where they are.
// CHECK-DAG: #[[A:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d2, d4)>
// CHECK-LABEL: func.func @batch_transpose_folds(
// CHECK-SAME: %[[X:.*]]: tensor<4x2x8x16xf32>, %[[W:.*]]: tensor<2x4x16x32xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[A]], {{.*}} ins(%[[X]], %[[W]] : tensor<4x2x8x16xf32>, tensor<2x4x16x32xf32>)
#a4 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#b4 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#c4 = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
func.func @batch_transpose_folds(%x: tensor<4x2x8x16xf32>, %w: tensor<2x4x16x32xf32>) -> tensor<2x4x8x32xf32> {
  %zero = arith.constant 0.0 : f32
  %ex = tensor.empty() : tensor<2x4x8x16xf32>
  %xt = linalg.transpose ins(%x : tensor<4x2x8x16xf32>) outs(%ex : tensor<2x4x8x16xf32>) permutation = [1, 0, 2, 3]
  %ec = tensor.empty() : tensor<2x4x8x32xf32>
  %z = linalg.fill ins(%zero : f32) outs(%ec : tensor<2x4x8x32xf32>) -> tensor<2x4x8x32xf32>
  %c = linalg.generic {indexing_maps = [#a4, #b4, #c4], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%xt, %w : tensor<2x4x8x16xf32>, tensor<2x4x16x32xf32>) outs(%z : tensor<2x4x8x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8x32xf32>
  return %c : tensor<2x4x8x32xf32>
}

// -----

// A contraction's result transposed so that its rows (m) and heads swap
// would move C's inner loops: the transpose stays a copy. A projection
// [B, T, H*d] reshaped to [B, T, H, d] and transposed for an elementwise
// op (a rotary embedding) does not take the reshape (its columns would
// split into H and d): the transpose folds into the elementwise op instead.
#pa = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#pb = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#pc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#ga = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#gb = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#gc = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#e4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[ROT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
// CHECK-LABEL: func.func @contraction_result_transposed(
// CHECK: %[[C:.*]] = linalg.generic
// CHECK: linalg.transpose ins(%[[C]] : tensor<2x4x8x16xf32>) {{.*}} permutation = [0, 2, 1, 3]
func.func @contraction_result_transposed(%a: tensor<2x4x8x32xf32>, %b: tensor<2x4x32x16xf32>) -> tensor<2x8x4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %c = linalg.generic {indexing_maps = [#ga, #gb, #gc], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%a, %b : tensor<2x4x8x32xf32>, tensor<2x4x32x16xf32>) outs(%z : tensor<2x4x8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8x16xf32>
  %et = tensor.empty() : tensor<2x8x4x16xf32>
  %ct = linalg.transpose ins(%c : tensor<2x4x8x16xf32>) outs(%et : tensor<2x8x4x16xf32>) permutation = [0, 2, 1, 3]
  return %ct : tensor<2x8x4x16xf32>
}

// CHECK-LABEL: func.func @projection_then_rotary(
// CHECK: %[[P:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<1x8x64xf32>, tensor<64x64xf32>) outs(%{{.*}} : tensor<1x8x64xf32>)
// CHECK: %[[V:.*]] = tensor.expand_shape %[[P]] {{\[}}[0], [1], [2, 3]] output_shape [1, 8, 4, 16]
// CHECK-NOT: linalg.transpose
// CHECK: linalg.generic {indexing_maps = [#[[ROT]], {{.*}} ins(%[[V]] : tensor<1x8x4x16xf32>) outs(%{{.*}} : tensor<1x4x8x16xf32>)
func.func @projection_then_rotary(%x: tensor<1x8x64xf32>, %w: tensor<64x64xf32>) -> tensor<1x4x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x8x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x8x64xf32>) -> tensor<1x8x64xf32>
  %p = linalg.generic {indexing_maps = [#pa, #pb, #pc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<1x8x64xf32>, tensor<64x64xf32>) outs(%z : tensor<1x8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<1x8x64xf32>
  %v = tensor.expand_shape %p [[0], [1], [2, 3]] output_shape [1, 8, 4, 16] : tensor<1x8x64xf32> into tensor<1x8x4x16xf32>
  %et = tensor.empty() : tensor<1x4x8x16xf32>
  %t = linalg.transpose ins(%v : tensor<1x8x4x16xf32>) outs(%et : tensor<1x4x8x16xf32>) permutation = [0, 2, 1, 3]
  %r = linalg.generic {indexing_maps = [#e4, #e4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%t : tensor<1x4x8x16xf32>) outs(%et : tensor<1x4x8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %n = arith.negf %a : f32
    linalg.yield %n : f32
  } -> tensor<1x4x8x16xf32>
  return %r : tensor<1x4x8x16xf32>
}

// -----

// Of two transposed inputs of a contraction, the one whose fold keeps the
// inner loops folds (B's batch dims swapped), the other stays (A's rows
// and heads swapped).
#qa = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
#qb = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#qc = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[BMAP:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d0, d4, d3)>
// CHECK-LABEL: func.func @fold_the_foldable_input(
// CHECK-SAME: %[[A:.*]]: tensor<2x8x4x32xf32>, %[[B:.*]]: tensor<4x2x32x16xf32>)
// CHECK: %[[AT:.*]] = linalg.transpose ins(%[[A]] : tensor<2x8x4x32xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[BMAP]], #{{.*}}], {{.*}} ins(%[[AT]], %[[B]] : tensor<2x4x8x32xf32>, tensor<4x2x32x16xf32>)
func.func @fold_the_foldable_input(%a: tensor<2x8x4x32xf32>, %b: tensor<4x2x32x16xf32>) -> tensor<2x4x8x16xf32> {
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<2x4x8x32xf32>
  %at = linalg.transpose ins(%a : tensor<2x8x4x32xf32>) outs(%ea : tensor<2x4x8x32xf32>) permutation = [0, 2, 1, 3]
  %eb = tensor.empty() : tensor<2x4x32x16xf32>
  %bt = linalg.transpose ins(%b : tensor<4x2x32x16xf32>) outs(%eb : tensor<2x4x32x16xf32>) permutation = [1, 0, 2, 3]
  %e = tensor.empty() : tensor<2x4x8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %c = linalg.generic {indexing_maps = [#qa, #qb, #qc], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%at, %bt : tensor<2x4x8x32xf32>, tensor<2x4x32x16xf32>) outs(%z : tensor<2x4x8x16xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x4x8x16xf32>
  return %c : tensor<2x4x8x16xf32>
}
