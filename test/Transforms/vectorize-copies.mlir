// RUN: attention-opt %s --pass-pipeline='builtin.module(func.func(attn-vectorize-copies),canonicalize,cse)' | FileCheck %s
// RUN: attention-opt %s --pass-pipeline='builtin.module(func.func(attn-vectorize-copies{parallel=false}),canonicalize,cse)' | FileCheck %s --check-prefix=SERIAL

// A KV cache's present buffer: the past (12 heads x 1023 x 64) goes in as
// 12 runs of 65472 contiguous elements, split into chunks of 32768 for the
// threads; the new token's rows (64 elements per head) as 12 runs. Each run
// is copied as vector<16xf32>s plus a scalar tail, between 1-D views at the
// run's offset (the subview's offset 65472 is part of the view's).
// CHECK-LABEL: func.func @kv_cache(
// CHECK-NOT: linalg.copy
// CHECK: scf.forall (%[[O:.*]], %[[C:.*]]) in (12, 2) {
// CHECK: %[[LO:.*]] = arith.muli %[[C]], %c32768
// CHECK: %[[SRC:.*]] = memref.reinterpret_cast %arg0 to offset: [%{{.*}}], sizes: [65472], strides: [1] : memref<1x12x1023x64xf32> to memref<65472xf32, strided<[1], offset: ?>>
// CHECK: %[[DST:.*]] = memref.reinterpret_cast %{{.*}} to offset: [%{{.*}}], sizes: [65472], strides: [1] : memref<1x12x1024x64xf32> to memref<65472xf32, strided<[1], offset: ?>>
// CHECK: scf.for %[[I:.*]] = %[[LO]] to %{{.*}} step %c16 {
// CHECK-NEXT: %[[V:.*]] = vector.load %[[SRC]][%[[I]]] : memref<65472xf32, strided<[1], offset: ?>>, vector<16xf32>
// CHECK-NEXT: vector.store %[[V]], %[[DST]][%[[I]]]
// CHECK: scf.for
// CHECK: memref.load
// CHECK: memref.store
// CHECK: scf.forall (%[[H:.*]]) in (12) {
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %c65536
// CHECK: arith.addi %[[ROW]], %c65472
// CHECK: memref.reinterpret_cast {{.*}} sizes: [64], strides: [1]
// CHECK: scf.for %{{.*}} = %c0 to %c64 step %c16
// SERIAL-LABEL: func.func @kv_cache(
// SERIAL-NOT: scf.forall
// SERIAL: scf.for %{{.*}} = %c0 to %c12 step %c1 {
// SERIAL: vector.load
func.func @kv_cache(%past: memref<1x12x1023x64xf32>, %new: memref<1x12x1x64xf32>) -> memref<1x12x1024x64xf32> {
  %alloc = memref.alloc() {alignment = 64 : i64} : memref<1x12x1024x64xf32>
  %sv = memref.subview %alloc[0, 0, 0, 0] [1, 12, 1023, 64] [1, 1, 1, 1] : memref<1x12x1024x64xf32> to memref<1x12x1023x64xf32, strided<[786432, 65536, 64, 1]>>
  linalg.copy ins(%past : memref<1x12x1023x64xf32>) outs(%sv : memref<1x12x1023x64xf32, strided<[786432, 65536, 64, 1]>>)
  %sv2 = memref.subview %alloc[0, 0, 1023, 0] [1, 12, 1, 64] [1, 1, 1, 1] : memref<1x12x1024x64xf32> to memref<1x12x1x64xf32, strided<[786432, 65536, 64, 1], offset: 65472>>
  linalg.copy ins(%new : memref<1x12x1x64xf32>) outs(%sv2 : memref<1x12x1x64xf32, strided<[786432, 65536, 64, 1], offset: 65472>>)
  return %alloc : memref<1x12x1024x64xf32>
}

// A dynamic past length: the destination's rows are contiguous within a
// head (stride 64, then a dynamic size), so the runs are the 12 heads' T x
// 64 elements (the destination's sizes: the loops index it), chunked by a
// count computed at run time; the source alone (identity layout) would be
// one run.
// CHECK-LABEL: func.func @dynamic_past(
// CHECK-NOT: linalg.copy
// CHECK: %{{.*}}, %{{.*}}, %[[SIZES:.*]]:4, %{{.*}}:4 = memref.extract_strided_metadata %arg1
// CHECK: %[[LEN:.*]] = arith.muli %[[SIZES]]#2, %c64
// CHECK: %[[CHUNKS:.*]] = arith.ceildivui %[[LEN]], %c32768
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (12, %[[CHUNKS]]) {
// CHECK: sizes: [%[[LEN]]], strides: [1] : memref<1x12x?x64xf32> to memref<?xf32, strided<[1], offset: ?>>
func.func @dynamic_past(%past: memref<1x12x?x64xf32>, %dst: memref<1x12x?x64xf32, strided<[?, ?, 64, 1]>>) {
  linalg.copy ins(%past : memref<1x12x?x64xf32>) outs(%dst : memref<1x12x?x64xf32, strided<[?, ?, 64, 1]>>)
  return
}

// A copy inside a parallel loop stays serial; f16 copies 32 lanes.
// CHECK-LABEL: func.func @nested(
// CHECK: scf.forall (%{{.*}}) in (4) {
// CHECK-NOT: scf.forall
// CHECK: vector.load {{.*}} vector<32xf16>
func.func @nested(%src: memref<4x100xf16>, %dst: memref<4x100xf16>) {
  scf.forall (%i) in (4) {
    %s = memref.subview %src[%i, 0] [1, 100] [1, 1] : memref<4x100xf16> to memref<100xf16, strided<[1], offset: ?>>
    %d = memref.subview %dst[%i, 0] [1, 100] [1, 1] : memref<4x100xf16> to memref<100xf16, strided<[1], offset: ?>>
    memref.copy %s, %d : memref<100xf16, strided<[1], offset: ?>> to memref<100xf16, strided<[1], offset: ?>>
  }
  return
}

// A transposed view has no contiguous run: one element per run, still
// correct. i1 copies are left as they are.
// CHECK-LABEL: func.func @transposed(
// CHECK: scf.forall (%{{.*}}) in (12) {
// CHECK: sizes: [1], strides: [1]
// CHECK-LABEL: func.func @bools(
// CHECK: linalg.copy
func.func @transposed(%src: memref<3x4xf32>, %dst: memref<4x3xf32>) {
  %t = memref.transpose %src (i, j) -> (j, i) : memref<3x4xf32> to memref<4x3xf32, strided<[1, 4]>>
  linalg.copy ins(%t : memref<4x3xf32, strided<[1, 4]>>) outs(%dst : memref<4x3xf32>)
  return
}
func.func @bools(%src: memref<8x8xi1>, %dst: memref<8x8xi1>) {
  linalg.copy ins(%src : memref<8x8xi1>) outs(%dst : memref<8x8xi1>)
  return
}

// A head merge, [B, H, T, d] -> [B, T, H, d]: d stays in place, so each of
// the 2 x 16 x 4 (b, t, h) destination rows of 64 is one run, read from the
// source at (b, h, t): the source's offset takes t by 64 and h by 1024
// (16 x 64), the destination's t by 256 and h by 64.
// CHECK-LABEL: func.func @merge_heads(
// CHECK-NOT: linalg.transpose
// CHECK: scf.forall (%[[F:.*]]) in (128) {
// CHECK: %[[H:.*]] = arith.remui %[[F]], %c4
// CHECK: %[[BT:.*]] = arith.divui %[[F]], %c4
// CHECK: %[[T:.*]] = arith.remui %[[BT]], %c16
// CHECK: %[[B:.*]] = arith.divui %[[BT]], %c16
// CHECK: %[[B2:.*]] = arith.remui %[[B]], %c2
// CHECK: %[[SB:.*]] = arith.muli %[[B2]], %c4096
// CHECK: %[[ST:.*]] = arith.muli %[[T]], %c64
// CHECK: %[[S1:.*]] = arith.addi %[[SB]], %[[ST]]
// CHECK: %[[SH:.*]] = arith.muli %[[H]], %c1024
// CHECK: %[[S2:.*]] = arith.addi %[[S1]], %[[SH]]
// CHECK: %[[SRC:.*]] = memref.reinterpret_cast %arg0 to offset: [%[[S2]]], sizes: [64], strides: [1] : memref<2x4x16x64xf32> to memref<64xf32, strided<[1], offset: ?>>
// CHECK: %[[DT:.*]] = arith.muli %[[T]], %c256
// CHECK: %[[D1:.*]] = arith.addi %[[SB]], %[[DT]]
// CHECK: %[[DH:.*]] = arith.muli %[[H]], %c64
// CHECK: %[[D2:.*]] = arith.addi %[[D1]], %[[DH]]
// CHECK: %[[DST:.*]] = memref.reinterpret_cast %arg1 to offset: [%[[D2]]], sizes: [64], strides: [1] : memref<2x16x4x64xf32> to memref<64xf32, strided<[1], offset: ?>>
// CHECK: scf.for %[[I:.*]] = %c0 to %c64 step %c16 {
// CHECK-NEXT: %[[V:.*]] = vector.load %[[SRC]][%[[I]]]
// CHECK-NEXT: vector.store %[[V]], %[[DST]][%[[I]]]
func.func @merge_heads(%src: memref<2x4x16x64xf32>, %dst: memref<2x16x4x64xf32>) {
  linalg.transpose ins(%src : memref<2x4x16x64xf32>) outs(%dst : memref<2x16x4x64xf32>) permutation = [0, 2, 1, 3]
  return
}

// A transpose of the two inner dims (f32) is copied in 16 x 16 blocks:
// an scf.forall over (outer index, strip of 16 destination rows), in a
// whole strip 16 source row loads per block of 16 columns (source row j0 +
// t from column i0), the block transposed by vector.shuffle (4 stages of
// 16), 16 row stores; the columns past the last whole block and a partial
// strip as scalar loops. Serially (parallel=false) the strips are an
// scf.for per outer index.
// CHECK-LABEL: func.func @inner_transpose(
// CHECK-NOT: linalg.transpose
// CHECK: scf.forall (%{{.*}}, %[[S:.*]]) in (4, 4) {
// CHECK: %[[I0:.*]] = arith.muli %[[S]], %c16
// CHECK: scf.if
// CHECK: scf.for %[[J0:.*]] = %c0 to %c48 step %c16 {
// CHECK: vector.load %arg0[%[[OI:.*]], %[[J0]], %[[I0]]] : memref<4x48x64xf32>, vector<16xf32>
// CHECK-COUNT-64: vector.shuffle
// CHECK: vector.store %{{.*}}, %arg1[%[[OI]], %[[I0]], %[[J0]]] : memref<4x64x48xf32>, vector<16xf32>
// CHECK: } else {
// CHECK: memref.load %arg0
// CHECK: memref.store %{{.*}}, %arg1
// SERIAL-LABEL: func.func @inner_transpose(
// SERIAL-NOT: scf.forall
// SERIAL: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// SERIAL: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// SERIAL: vector.shuffle
// A ragged, dynamic one with its outer dims permuted too ([1, 0, 3, 2]):
// the source index takes the outer dims swapped.
// CHECK-LABEL: func.func @swap_last_two_dynamic(
// CHECK: scf.forall
// CHECK: vector.load %arg0[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] : memref<2x3x?x?xf32>, vector<16xf32>
// CHECK: vector.shuffle
// Any permutation that moves the innermost dim is a 2-D transpose per
// index of the other dims: channels-last to channels-first, [B, H, W, C]
// -> [B, C, H, W] ([0, 3, 1, 2]), transposes the destination's C (rows,
// the source's innermost dim) with its W (the source's dim 2), for each
// (b, h): 16 loads of source rows (b, h, w0 + t) from c0, 16 stores of
// destination rows (b, c0 + t, h) from w0. The scf.forall runs over the
// 2 x 5 (b, h) pairs and the 3 strips of 16 of C's 40 (a partial one).
// CHECK-LABEL: func.func @channels_first(
// CHECK-NOT: linalg.transpose
// CHECK: scf.forall (%[[BH:.*]], %[[S:.*]]) in (10, 3) {
// CHECK: %[[H:.*]] = arith.remui %[[BH]], %c5
// CHECK: %[[Q:.*]] = arith.divui %[[BH]], %c5
// CHECK: %[[B:.*]] = arith.remui %[[Q]], %c2
// CHECK: %[[C0:.*]] = arith.muli %[[S]], %c16
// CHECK: scf.for %[[W0:.*]] = %c0 to %c32 step %c16 {
// CHECK: vector.load %arg0[%[[B]], %[[H]], %[[W0]], %[[C0]]] : memref<2x5x33x40xf32>, vector<16xf32>
// CHECK-COUNT-64: vector.shuffle
// CHECK: vector.store %{{.*}}, %arg1[%[[B]], %[[C0]], %[[H]], %[[W0]]] : memref<2x40x5x33xf32>, vector<16xf32>
// Keys laid out for Q K, [B, T, H, d] -> [B, H, d, T] ([0, 2, 3, 1]): d
// (the source's innermost) is the destination's rows, T its columns.
// CHECK-LABEL: func.func @keys_for_qk(
// CHECK-NOT: linalg.transpose
// CHECK: scf.forall (%[[BH:.*]], %[[S:.*]]) in (6, 4) {
// CHECK: %[[H:.*]] = arith.remui %[[BH]], %c3
// CHECK: %[[Q:.*]] = arith.divui %[[BH]], %c3
// CHECK: %[[B:.*]] = arith.remui %[[Q]], %c2
// CHECK: %[[D0:.*]] = arith.muli %[[S]], %c16
// CHECK: scf.for %[[T0:.*]] = %c0 to %c128 step %c16 {
// CHECK: vector.load %arg0[%[[B]], %[[T0]], %[[H]], %[[D0]]] : memref<2x128x3x64xf32>, vector<16xf32>
// CHECK: vector.store %{{.*}}, %arg1[%[[B]], %[[H]], %[[D0]], %[[T0]]] : memref<2x3x64x128xf32>, vector<16xf32>
// 16-bit elements, and a transpose on tensors, are not rewritten.
// CHECK-LABEL: func.func @half_transpose(
// CHECK: linalg.transpose
// CHECK-LABEL: func.func @on_tensors(
// CHECK: linalg.transpose
func.func @inner_transpose(%src: memref<4x48x64xf32>, %dst: memref<4x64x48xf32>) {
  linalg.transpose ins(%src : memref<4x48x64xf32>) outs(%dst : memref<4x64x48xf32>) permutation = [0, 2, 1]
  return
}
func.func @swap_last_two_dynamic(%src: memref<2x3x?x?xf32>, %dst: memref<3x2x?x?xf32>) {
  linalg.transpose ins(%src : memref<2x3x?x?xf32>) outs(%dst : memref<3x2x?x?xf32>) permutation = [1, 0, 3, 2]
  return
}
func.func @channels_first(%src: memref<2x5x33x40xf32>, %dst: memref<2x40x5x33xf32>) {
  linalg.transpose ins(%src : memref<2x5x33x40xf32>) outs(%dst : memref<2x40x5x33xf32>) permutation = [0, 3, 1, 2]
  return
}
func.func @keys_for_qk(%src: memref<2x128x3x64xf32>, %dst: memref<2x3x64x128xf32>) {
  linalg.transpose ins(%src : memref<2x128x3x64xf32>) outs(%dst : memref<2x3x64x128xf32>) permutation = [0, 2, 3, 1]
  return
}
func.func @half_transpose(%src: memref<32x48xf16>, %dst: memref<48x32xf16>) {
  linalg.transpose ins(%src : memref<32x48xf16>) outs(%dst : memref<48x32xf16>) permutation = [1, 0]
  return
}
func.func @on_tensors(%src: tensor<4x16x64xf32>, %init: tensor<16x4x64xf32>) -> tensor<16x4x64xf32> {
  %t = linalg.transpose ins(%src : tensor<4x16x64xf32>) outs(%init : tensor<16x4x64xf32>) permutation = [1, 0, 2]
  return %t : tensor<16x4x64xf32>
}
