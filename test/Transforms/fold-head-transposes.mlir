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

// linalg level: a transpose feeding a contraction becomes its indexing map
// (K^T in Q K^T), and one reading a contraction's result becomes the
// producer's output map.
// CHECK-DAG: #[[QM:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[KT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[ST:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1)>
// CHECK-LABEL: func.func @linalg_transposes(
// CHECK-SAME: %[[Q:.*]]: tensor<2x4x8xf32>, %[[K:.*]]: tensor<2x6x8xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[S:.*]] = linalg.generic {indexing_maps = [#[[QM]], #[[KT]], #[[ST]]], {{.*}} ins(%[[Q]], %[[K]] : tensor<2x4x8xf32>, tensor<2x6x8xf32>) outs(%{{.*}} : tensor<2x6x4xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return %[[S]]
func.func @linalg_transposes(%q: tensor<2x4x8xf32>, %k: tensor<2x6x8xf32>) -> tensor<2x6x4xf32> {
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
