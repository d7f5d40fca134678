// attn-fuse-softmax: attn.sdpa becomes a flash-style loop nest with an
// online softmax; no Tq x Tk score tensor survives.
// RUN: attention-opt %s -split-input-file -attn-fuse-softmax | FileCheck %s
// RUN: attention-opt %s -split-input-file -attn-fuse-softmax='block-q=32 block-kv=256' | FileCheck %s --check-prefix=BLOCKS

// Causal: one task per (batch, head, 64-row query block); the key loop is
// split at the diagonal: blocks fully below it run without a predicate, the
// blocks crossing it compare indices. The scale is folded into Q.
// CHECK-LABEL: func.func @causal
// CHECK-NOT: tensor<1x12x1024x1024xf32>
// CHECK-NOT: tensor<1024x1024xf32>
// CHECK: %[[NQ:.*]] = arith.ceildivsi %{{.*}}, %{{.*}} : index
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %[[QB:.*]]) in (1, 12, %[[NQ]])
// CHECK: tensor.extract_slice %{{.*}}[%[[B]], %[[H]], %{{.*}}, 0] [1, 1, %{{.*}}, 64] [1, 1, 1, 1] : tensor<1x12x1024x64xf32> to tensor<?x64xf32>
// CHECK: arith.constant 1.250000e-01 : f32
// CHECK: %[[FULL:.*]]:3 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args
// CHECK-NOT: linalg.index
// CHECK: math.exp
// CHECK: scf.yield
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[FULL]]#0, %{{.*}} = %[[FULL]]#1, %{{.*}} = %[[FULL]]#2)
// CHECK: linalg.index 0
// CHECK: linalg.index 1
// CHECK: arith.cmpi sgt
// CHECK: math.exp
// CHECK: arith.divf
// CHECK: scf.forall.in_parallel
// CHECK: tensor.parallel_insert_slice %{{.*}} into %{{.*}}[%[[B]], %[[H]], %{{.*}}, 0] [1, 1, %{{.*}}, 64]
// BLOCKS-LABEL: func.func @causal
// BLOCKS: arith.constant 32 : index
// BLOCKS: arith.constant 256 : index
func.func @causal(%q: tensor<1x12x1024x64xf32>) -> tensor<1x12x1024x64xf32> {
  %0 = attn.sdpa %q, %q, %q causal(top_left) : tensor<1x12x1024x64xf32>, tensor<1x12x1024x64xf32>, tensor<1x12x1024x64xf32> -> tensor<1x12x1024x64xf32>
  return %0 : tensor<1x12x1024x64xf32>
}

// -----

// Not causal, no mask: a single key loop and no element predicate at all.
// CHECK-LABEL: func.func @full
// CHECK: scf.forall
// CHECK-COUNT-1: scf.for
// CHECK-NOT: scf.for
// CHECK-NOT: linalg.index
// CHECK: scf.forall.in_parallel
func.func @full(%q: tensor<2x4x?x32xf32>, %k: tensor<2x4x?x32xf32>) -> tensor<2x4x?x32xf32> {
  %0 = attn.sdpa %q, %k, %k : tensor<2x4x?x32xf32>, tensor<2x4x?x32xf32>, tensor<2x4x?x32xf32> -> tensor<2x4x?x32xf32>
  return %0 : tensor<2x4x?x32xf32>
}

// -----

// Bottom-right alignment offsets the diagonal by Tk - Tq; GQA reads key head
// h floordiv 4; the mask is sliced per block and broadcast where it is 1.
// CHECK-LABEL: func.func @gqa_bottom_right_mask
// CHECK: %[[TQ:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<1x8x?x16xf32>
// CHECK: %[[TK:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<1x2x?x16xf32>
// CHECK: scf.forall (%{{.*}}, %[[H:.*]], %{{.*}}) in (1, 8, %{{.*}})
// CHECK: %[[HK:.*]] = arith.floordivsi %[[H]], %{{.*}} : index
// CHECK: %[[OFF:.*]] = arith.subi %[[TK]], %[[TQ]] : index
// CHECK: scf.for
// CHECK: tensor.extract_slice %{{.*}}[0, 0, %{{.*}}, %{{.*}}] [1, 1, %{{.*}}, %{{.*}}] [1, 1, 1, 1] : tensor<1x1x?x?xi1> to tensor<1x1x?x?xi1>
// CHECK: arith.select
// CHECK: scf.for
// CHECK: arith.addi %{{.*}}, %[[OFF]] : index
// CHECK: arith.cmpi sgt
func.func @gqa_bottom_right_mask(%q: tensor<1x8x?x16xf32>, %k: tensor<1x2x?x16xf32>, %m: tensor<1x1x?x?xi1>) -> tensor<1x8x?x16xf32> {
  %0 = attn.sdpa %q, %k, %k mask(%m : attend_where_true) causal(bottom_right) : tensor<1x8x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x2x?x16xf32>, tensor<1x1x?x?xi1> -> tensor<1x8x?x16xf32>
  return %0 : tensor<1x8x?x16xf32>
}

// -----

// Dropout draws Philox numbers per weight inside the key loop (19
// 32x32->64 multiplies: 10 rounds of two, less the first round's product of
// the zero third word); the seq_major layout indexes heads in dim 2 without
// any transpose.
// CHECK-LABEL: func.func @dropout_seq_major
// CHECK-NOT: linalg.transpose
// CHECK: scf.forall (%[[B:.*]], %[[H:.*]], %{{.*}}) in (2, 4, %{{.*}})
// CHECK: tensor.extract_slice %{{.*}}[%[[B]], %{{.*}}, %[[H]], 0] [1, %{{.*}}, 1, 16]
// CHECK: scf.for
// CHECK-COUNT-19: arith.mului_extended
// CHECK-NOT: arith.mului_extended
// CHECK: arith.cmpf oge
// CHECK-NOT: linalg.transpose
func.func @dropout_seq_major(%q: tensor<2x?x4x16xf32>) -> tensor<2x?x4x16xf32> {
  %0 = attn.sdpa %q, %q, %q layout(seq_major) {dropout_p = 0.25 : f32, seed = 9 : i64} : tensor<2x?x4x16xf32>, tensor<2x?x4x16xf32>, tensor<2x?x4x16xf32> -> tensor<2x?x4x16xf32>
  return %0 : tensor<2x?x4x16xf32>
}

// -----

// A sliding window visits only the keys some row of the block can see:
// from q0 - 16 (clamped at 0) to the diagonal, with the predicate.
// CHECK-LABEL: func.func @causal_window
// CHECK: scf.forall
// CHECK: %[[LO:.*]] = arith.subi %{{.*}}, %c16{{.*}} : index
// CHECK: %[[BEGIN:.*]] = arith.maxsi %{{.*}}, %[[LO]] : index
// CHECK: %[[B2:.*]] = arith.minsi %[[BEGIN]], %{{.*}} : index
// CHECK: scf.for %{{.*}} = %[[B2]] to
// CHECK: arith.cmpi slt, %{{.*}}, %c-16
// CHECK-NOT: scf.for
// CHECK: scf.forall.in_parallel
func.func @causal_window(%q: tensor<1x2x256x32xf32>) -> tensor<1x2x256x32xf32> {
  %0 = attn.sdpa %q, %q, %q causal(top_left) {window_left = 16 : i64} : tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32>, tensor<1x2x256x32xf32> -> tensor<1x2x256x32xf32>
  return %0 : tensor<1x2x256x32xf32>
}

// -----

// A soft cap is applied to every block's scores, even without masks.
// CHECK-LABEL: func.func @softcap
// CHECK: scf.for
// CHECK: math.tanh
// CHECK-NOT: linalg.index
func.func @softcap(%q: tensor<1x2x64x16xf32>) -> tensor<1x2x64x16xf32> {
  %0 = attn.sdpa %q, %q, %q {softcap = 30.0 : f32} : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return %0 : tensor<1x2x64x16xf32>
}

// -----

// Other attn ops are left alone.
// CHECK-LABEL: func.func @other_ops
// CHECK: attn.self_attention
func.func @other_ops(%x: tensor<6x3xf32>) -> tensor<6x3xf32> {
  %0 = attn.self_attention %x : tensor<6x3xf32> -> tensor<6x3xf32>
  return %0 : tensor<6x3xf32>
}

// -----

// Block sizes must be positive.
// RUN: not attention-opt %s -split-input-file -attn-fuse-softmax='block-q=0' 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: attn-fuse-softmax: block sizes must be >= 1, got block-q=0 block-kv=128
