// RUN: attention-opt %s --convert-attn-to-gpu --canonicalize | FileCheck %s

// Reshapes that only regroup dims become views of the entry point's
// buffers: ONNX's 3-D attention ([B, T, H * d] expanded to seq_major
// [B, T, H, d] around the attn.sdpa, the result collapsed back) launches
// the kernel on memref.expand_shape views of the arguments and of the
// result buffer. The kernel sees only the 4-D views.
// CHECK-LABEL: func.func @packed_heads(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<2x100x512xf16>, %[[K:[a-z0-9]+]]: memref<2x130x256xf16>, %[[V:[a-z0-9]+]]: memref<2x130x256xf16>, %[[O:[a-z0-9]+]]: memref<2x100x512xf16>)
// CHECK-SAME: attributes {attn.gpu_entry
// CHECK-DAG: %[[OV:.*]] = memref.expand_shape %[[O]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 100, 8, 64] : memref<2x100x512xf16> into memref<2x100x8x64xf16>
// CHECK-DAG: %[[QV:.*]] = memref.expand_shape %[[Q]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 100, 8, 64] : memref<2x100x512xf16> into memref<2x100x8x64xf16>
// CHECK-DAG: %[[KV:.*]] = memref.expand_shape %[[K]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 130, 4, 64] : memref<2x130x256xf16> into memref<2x130x4x64xf16>
// CHECK-DAG: %[[VV:.*]] = memref.expand_shape %[[V]] {{\[\[}}0], [1], [2, 3]] output_shape [2, 130, 4, 64] : memref<2x130x256xf16> into memref<2x130x4x64xf16>
// CHECK: gpu.launch_func @attn_gpu_kernels::@packed_heads_sdpa0 blocks in (%c2, %c8, %c2) threads in (%c128, %c1, %c1) args(%[[QV]] : memref<2x100x8x64xf16>, %[[KV]] : memref<2x130x4x64xf16>, %[[VV]] : memref<2x130x4x64xf16>, %[[OV]] : memref<2x100x8x64xf16>)
// CHECK-NEXT: return
func.func @packed_heads(%q: tensor<2x100x512xf16>, %k: tensor<2x130x256xf16>, %v: tensor<2x130x256xf16>) -> tensor<2x100x512xf16> {
  %qe = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [2, 100, 8, 64] : tensor<2x100x512xf16> into tensor<2x100x8x64xf16>
  %ke = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [2, 130, 4, 64] : tensor<2x130x256xf16> into tensor<2x130x4x64xf16>
  %ve = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [2, 130, 4, 64] : tensor<2x130x256xf16> into tensor<2x130x4x64xf16>
  %o = attn.sdpa %qe, %ke, %ve causal(bottom_right) layout(seq_major) : tensor<2x100x8x64xf16>, tensor<2x130x4x64xf16>, tensor<2x130x4x64xf16> -> tensor<2x100x8x64xf16>
  %oc = tensor.collapse_shape %o [[0], [1], [2, 3]] : tensor<2x100x8x64xf16> into tensor<2x100x512xf16>
  return %oc : tensor<2x100x512xf16>
}

// A dynamic length: the views' sizes follow from their sources (one
// dynamic dim per group), so the tensor.dim feeding the expand_shape's
// output sizes is dropped with it. A mask collapsed from 4-D to 2-D is one
// more view. The result's reshapes are inverted on the result buffer
// (collapse_shape for the outer expand_shape, expand_shape for the inner
// collapse_shape); the pair cancels, and the kernel writes the buffer.
// CHECK-LABEL: func.func @dynamic_length(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<1x?x256xbf16>, %[[K:[a-z0-9]+]]: memref<1x?x256xbf16>, %[[V:[a-z0-9]+]]: memref<1x?x256xbf16>, %[[M:[a-z0-9]+]]: memref<1x1x?x?xi1>, %[[O:[a-z0-9]+]]: memref<1x?x4x64xbf16>)
// CHECK-NOT: tensor.
// CHECK-DAG: %[[DQ:.*]] = memref.dim %[[Q]], %c1 : memref<1x?x256xbf16>
// CHECK-DAG: %[[QV:.*]] = memref.expand_shape %[[Q]] {{\[\[}}0], [1], [2, 3]] output_shape [1, %[[DQ]], 4, 64] : memref<1x?x256xbf16> into memref<1x?x4x64xbf16>
// CHECK-DAG: %[[MV:.*]] = memref.collapse_shape %[[M]] {{\[\[}}0, 1, 2], [3]] : memref<1x1x?x?xi1> into memref<?x?xi1>
// CHECK: gpu.launch_func @attn_gpu_kernels::@dynamic_length_sdpa0 {{.*}} args(%[[QV]] : memref<1x?x4x64xbf16>, %{{.*}} : memref<1x?x4x64xbf16>, %{{.*}} : memref<1x?x4x64xbf16>, %[[MV]] : memref<?x?xi1>, %[[O]] : memref<1x?x4x64xbf16>)
func.func @dynamic_length(%q: tensor<1x?x256xbf16>, %k: tensor<1x?x256xbf16>, %v: tensor<1x?x256xbf16>, %m: tensor<1x1x?x?xi1>) -> tensor<1x?x4x64xbf16> {
  %c1 = arith.constant 1 : index
  %tq = tensor.dim %q, %c1 : tensor<1x?x256xbf16>
  %tk = tensor.dim %k, %c1 : tensor<1x?x256xbf16>
  %qe = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [1, %tq, 4, 64] : tensor<1x?x256xbf16> into tensor<1x?x4x64xbf16>
  %ke = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [1, %tk, 4, 64] : tensor<1x?x256xbf16> into tensor<1x?x4x64xbf16>
  %ve = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [1, %tk, 4, 64] : tensor<1x?x256xbf16> into tensor<1x?x4x64xbf16>
  %m2 = tensor.collapse_shape %m [[0, 1, 2], [3]] : tensor<1x1x?x?xi1> into tensor<?x?xi1>
  %o = attn.sdpa %qe, %ke, %ve mask(%m2 : masked_where_true) layout(seq_major) : tensor<1x?x4x64xbf16>, tensor<1x?x4x64xbf16>, tensor<1x?x4x64xbf16>, tensor<?x?xi1> -> tensor<1x?x4x64xbf16>
  %oc = tensor.collapse_shape %o [[0], [1], [2, 3]] : tensor<1x?x4x64xbf16> into tensor<1x?x256xbf16>
  %oe = tensor.expand_shape %oc [[0], [1], [2, 3]] output_shape [1, %tq, 4, 64] : tensor<1x?x256xbf16> into tensor<1x?x4x64xbf16>
  return %oe : tensor<1x?x4x64xbf16>
}

// CHECK-LABEL: gpu.func @packed_heads_sdpa0(
// CHECK-SAME: memref<2x100x8x64xf16>, %{{.*}}: memref<2x130x4x64xf16>, %{{.*}}: memref<2x130x4x64xf16>, %{{.*}}: memref<2x100x8x64xf16>)
// CHECK-LABEL: gpu.func @dynamic_length_sdpa0(
// CHECK-SAME: memref<1x?x4x64xbf16>, %{{.*}}: memref<1x?x4x64xbf16>, %{{.*}}: memref<1x?x4x64xbf16>, %{{.*}}: memref<?x?xi1>, %{{.*}}: memref<1x?x4x64xbf16>)
