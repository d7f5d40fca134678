// RUN: attention-opt %s --convert-attn-to-gpu --canonicalize --cse | FileCheck %s

// Transposes that keep the last dim are permuted views of the buffers
// (memref.transpose; rows stay contiguous, the kernel reads through the
// strides). A decode step as PyTorch exports a KV cache: the new keys are
// split into heads ([B, T, H, d] -> [B, H, T, d]) before the concatenation
// with the head-major cache, and the result is transposed back and merged.
// The copy kernels read the transposed views; the attention kernel reads
// Q through one and writes the result through another (the result
// buffer's expand_shape, then the inverse permutation).
// CHECK-LABEL: func.func @hf_decode(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<1x?x512xf16>, %[[K:[a-z0-9]+]]: memref<1x?x512xf16>, %[[V:[a-z0-9]+]]: memref<1x?x512xf16>, %[[PK:[a-z0-9]+]]: memref<1x8x?x64xf16>, %[[PV:[a-z0-9]+]]: memref<1x8x?x64xf16>, %[[O:[a-z0-9]+]]: memref<1x?x512xf16>, %[[PRK:[a-z0-9]+]]: memref<1x8x?x64xf16>, %[[PRV:[a-z0-9]+]]: memref<1x8x?x64xf16>)
// CHECK: %[[OE:.*]] = memref.expand_shape %[[O]] {{\[\[}}0], [1], [2, 3]]
// CHECK-NEXT: %[[OT:.*]] = memref.transpose %[[OE]] (d0, d1, d2, d3) -> (d0, d2, d1, d3) : memref<1x?x8x64xf16> to memref<1x8x?x64xf16, strided<[?, 64, 512, 1]>>
// CHECK: %[[QE:.*]] = memref.expand_shape %[[Q]]
// CHECK-NEXT: %[[QT:.*]] = memref.transpose %[[QE]] (d0, d1, d2, d3) -> (d0, d2, d1, d3)
// CHECK: gpu.launch_func @attn_gpu_kernels::@hf_decode_copy0 {{.*}} args(%[[PK]] : memref<1x8x?x64xf16>, %[[PRK]] : memref<1x8x?x64xf16>, %c0 : index)
// CHECK: %[[KE:.*]] = memref.expand_shape %[[K]]
// CHECK-NEXT: %[[KT:.*]] = memref.transpose %[[KE]] (d0, d1, d2, d3) -> (d0, d2, d1, d3)
// CHECK: gpu.launch_func @attn_gpu_kernels::@hf_decode_copy1 {{.*}} args(%[[KT]] : memref<1x8x?x64xf16, strided<[?, 64, 512, 1]>>, %[[PRK]] : memref<1x8x?x64xf16>, %{{.*}} : index)
// CHECK: gpu.launch_func @attn_gpu_kernels::@hf_decode_sdpa0 {{.*}} args(%[[QT]] : memref<1x8x?x64xf16, strided<[?, 64, 512, 1]>>, %[[PRK]] : memref<1x8x?x64xf16>, %[[PRV]] : memref<1x8x?x64xf16>, %[[OT]] : memref<1x8x?x64xf16, strided<[?, 64, 512, 1]>>)
// CHECK-NEXT: return
// CHECK-LABEL: gpu.func @hf_decode_copy1(
// CHECK-SAME: memref<1x8x?x64xf16, strided<[?, 64, 512, 1]>>
// CHECK-LABEL: gpu.func @hf_decode_sdpa0(
// CHECK-SAME: %{{.*}}: memref<1x8x?x64xf16, strided<[?, 64, 512, 1]>>, %{{.*}}: memref<1x8x?x64xf16>, %{{.*}}: memref<1x8x?x64xf16>, %{{.*}}: memref<1x8x?x64xf16, strided<[?, 64, 512, 1]>>)
// and merged.
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
