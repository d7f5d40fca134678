// RUN: attention-opt %s --split-input-file --convert-attn-to-gpu --canonicalize | FileCheck %s

// A mask computed in the graph by an elementwise linalg.generic (ONNX's
// nonpad_kv_seqlen: key j of batch b is seen iff j < lens[b]) is not
// materialized: the kernel takes the generator's inputs (the lengths) and
// the scalars it captures from outside (here the key length, a tensor.dim
// of K, computed on the host), and evaluates the payload for each score,
// its loop indices being the score's mask indices (batch = block_id z,
// key = the score's key; the dims of size 1 read 0).
// CHECK-LABEL: func.func @nonpad_decode(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<2x4x1x64xf16>, %[[K:[a-z0-9]+]]: memref<2x2x?x64xf16>, %[[V:[a-z0-9]+]]: memref<2x2x?x64xf16>, %[[LENS:[a-z0-9]+]]: memref<2xi64>, %[[O:[a-z0-9]+]]: memref<2x4x1x64xf16>)
// CHECK-NOT: linalg.generic
// CHECK: %[[TK:.*]] = memref.dim %[[K]], %c2 : memref<2x2x?x64xf16>
// CHECK: gpu.launch_func @attn_gpu_kernels::@nonpad_decode_sdpa0 {{.*}} args(%[[Q]] : memref<2x4x1x64xf16>, %[[K]] : memref<2x2x?x64xf16>, %[[V]] : memref<2x2x?x64xf16>, %[[LENS]] : memref<2xi64>, %[[TK]] : index, %[[O]] : memref<2x4x1x64xf16>)
// CHECK-NEXT: return
// CHECK-LABEL: gpu.func @nonpad_decode_sdpa0(
// CHECK-SAME: %{{.*}}: memref<2xi64>, %[[KTK:[a-z0-9]+]]: index, %{{.*}}: memref<2x4x1x64xf16>)
// CHECK: %[[BATCH:.*]] = gpu.block_id z
// CHECK: nvgpu.mma.sync
// CHECK: %[[S:.*]] = arith.mulf
// CHECK-NEXT: %[[KEY:.*]] = arith.addi
// CHECK-NEXT: %[[N:.*]] = memref.load %{{.*}}[%[[BATCH]]] : memref<2xi64>
// CHECK-NEXT: %[[NI:.*]] = arith.index_cast %[[N]] : i64 to index
// CHECK-NEXT: %[[SEEN:.*]] = arith.cmpi slt, %[[KEY]], %[[NI]] : index
// CHECK-NEXT: %[[LAST:.*]] = arith.subi %[[KTK]], %[[KEY]] : index
// CHECK-NEXT: %[[OK:.*]] = arith.cmpi sgt, %[[LAST]], %c0 : index
// CHECK-NEXT: %[[BOTH:.*]] = arith.andi %[[SEEN]], %[[OK]] : i1
// CHECK-NEXT: arith.select %[[BOTH]], %[[S]], %{{.*}} : f32
#lens = affine_map<(d0, d1, d2, d3) -> (d0)>
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @nonpad_decode(%q: tensor<2x4x1x64xf16>, %k: tensor<2x2x?x64xf16>, %v: tensor<2x2x?x64xf16>, %lens: tensor<2xi64>) -> tensor<2x4x1x64xf16> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %tk = tensor.dim %k, %c2 : tensor<2x2x?x64xf16>
  %e = tensor.empty(%tk) : tensor<2x4x1x?xi1>
  %m = linalg.generic {indexing_maps = [#lens, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%lens : tensor<2xi64>) outs(%e : tensor<2x4x1x?xi1>) {
  ^bb0(%n: i64, %out: i1):
    %key = linalg.index 3 : index
    %len = arith.index_cast %n : i64 to index
    %seen = arith.cmpi slt, %key, %len : index
    %last = arith.subi %tk, %key : index
    %ok = arith.cmpi sgt, %last, %c0 : index
    %both = arith.andi %seen, %ok : i1
    linalg.yield %both : i1
  } -> tensor<2x4x1x?xi1>
  %o = attn.sdpa %q, %k, %v mask(%m : attend_where_true) : tensor<2x4x1x64xf16>, tensor<2x2x?x64xf16>, tensor<2x2x?x64xf16>, tensor<2x4x1x?xi1> -> tensor<2x4x1x64xf16>
  return %o : tensor<2x4x1x64xf16>
}

// -----

// A generator input that pads an argument with a constant (ONNX pads a
// mask shorter than the keys with -inf) reads the argument itself: the
// kernel takes the short bias, loads it at the column clamped into it and
// selects the padding value past its 70 columns.
// CHECK-LABEL: func.func @padded_bias(
// CHECK-SAME: %[[B:[a-z0-9]+]]: memref<64x70xf16>, %{{.*}}: memref<64x32xf16>)
// CHECK-NOT: tensor.pad
// CHECK: gpu.launch_func @attn_gpu_kernels::@padded_bias_sdpa0 {{.*}} args({{.*}}, %[[B]] : memref<64x70xf16>, %{{.*}} : memref<64x32xf16>)
// CHECK-LABEL: gpu.func @padded_bias_sdpa0(
// CHECK-SAME: %[[KB:[a-z0-9]+]]: memref<64x70xf16>, %{{.*}}: memref<64x32xf16>)
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFC00 : f16
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[COL:.*]], %c70 : index
// CHECK-NEXT: %[[BOTH:.*]] = arith.andi %{{.*}}, %[[IN]] : i1
// CHECK-NEXT: %[[CC:.*]] = arith.minui %[[COL]], %c69 : index
// CHECK-NEXT: %[[X:.*]] = memref.load %[[KB]][%{{.*}}, %[[CC]]] : memref<64x70xf16>
// CHECK-NEXT: arith.select %[[BOTH]], %[[X]], %[[NINF]] : f16
#pad_id = affine_map<(d0, d1) -> (d0, d1)>
func.func @padded_bias(%q: tensor<64x32xf16>, %k: tensor<100x32xf16>, %v: tensor<100x32xf16>, %bias: tensor<64x70xf16>) -> tensor<64x32xf16> {
  %ninf = arith.constant 0xFC00 : f16
  %padded = tensor.pad %bias low[0, 0] high[0, 30] {
  ^bb0(%i: index, %j: index):
    tensor.yield %ninf : f16
  } : tensor<64x70xf16> to tensor<64x100xf16>
  %e = tensor.empty() : tensor<64x100xf16>
  %m = linalg.generic {indexing_maps = [#pad_id, #pad_id], iterator_types = ["parallel", "parallel"]} ins(%padded : tensor<64x100xf16>) outs(%e : tensor<64x100xf16>) {
  ^bb0(%b: f16, %out: f16):
    linalg.yield %b : f16
  } -> tensor<64x100xf16>
  %o = attn.sdpa %q, %k, %v mask(%m : additive) : tensor<64x32xf16>, tensor<100x32xf16>, tensor<100x32xf16>, tensor<64x100xf16> -> tensor<64x32xf16>
  return %o : tensor<64x32xf16>
}
