// RUN: attention-opt %s --convert-attn-to-gpu --canonicalize | FileCheck %s

// A KV-cache step as ONNX's Attention with past_key/past_value imports it:
// present_key = tensor.concat of past_key and the new keys along the
// sequence, returned and read by the attn.sdpa. The concatenation is built
// in its result buffer by one copy kernel per input (the past at offset 0,
// the new keys at the past's length), launched before the attention kernel,
// which then reads K and V from the result buffers.
// CHECK-LABEL: func.func @decode_step(
// CHECK-SAME: %[[Q:[a-z0-9]+]]: memref<1x8x1x64xf16>, %[[K:[a-z0-9]+]]: memref<1x2x1x64xf16>, %[[V:[a-z0-9]+]]: memref<1x2x1x64xf16>, %[[PK:[a-z0-9]+]]: memref<1x2x?x64xf16>, %[[PV:[a-z0-9]+]]: memref<1x2x?x64xf16>,
// CHECK-SAME: %[[O:[a-z0-9]+]]: memref<1x8x1x64xf16>, %[[PRK:[a-z0-9]+]]: memref<1x2x?x64xf16>, %[[PRV:[a-z0-9]+]]: memref<1x2x?x64xf16>)
// The past's length (dynamic) sizes the first copy's grid and is the
// second copy's offset.
// CHECK: gpu.launch_func @attn_gpu_kernels::@decode_step_copy0 blocks in (%{{.*}}, %c1, %c1) threads in (%c256, %c1, %c1) args(%[[PK]] : memref<1x2x?x64xf16>, %[[PRK]] : memref<1x2x?x64xf16>, %c0 : index)
// CHECK-NEXT: %[[TP:.*]] = memref.dim %[[PK]], %c2 : memref<1x2x?x64xf16>
// CHECK: gpu.launch_func @attn_gpu_kernels::@decode_step_copy1 blocks in (%c1, %c1, %c1) threads in (%c256, %c1, %c1) args(%[[K]] : memref<1x2x1x64xf16>, %[[PRK]] : memref<1x2x?x64xf16>, %[[TP]] : index)
// CHECK: gpu.launch_func @attn_gpu_kernels::@decode_step_copy2 {{.*}} args(%[[PV]] : memref<1x2x?x64xf16>, %[[PRV]] : memref<1x2x?x64xf16>, %c0 : index)
// CHECK: gpu.launch_func @attn_gpu_kernels::@decode_step_copy3 {{.*}} args(%[[V]] : memref<1x2x1x64xf16>, %[[PRV]] : memref<1x2x?x64xf16>, %{{.*}} : index)
// CHECK: gpu.launch_func @attn_gpu_kernels::@decode_step_sdpa0 {{.*}} args(%[[Q]] : memref<1x8x1x64xf16>, %[[PRK]] : memref<1x2x?x64xf16>, %[[PRV]] : memref<1x2x?x64xf16>, %[[O]] : memref<1x8x1x64xf16>)
// CHECK-NEXT: return
func.func @decode_step(%q: tensor<1x8x1x64xf16>, %k: tensor<1x2x1x64xf16>, %v: tensor<1x2x1x64xf16>, %pk: tensor<1x2x?x64xf16>, %pv: tensor<1x2x?x64xf16>) -> (tensor<1x8x1x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>) {
  %kc = tensor.concat dim(2) %pk, %k : (tensor<1x2x?x64xf16>, tensor<1x2x1x64xf16>) -> tensor<1x2x?x64xf16>
  %vc = tensor.concat dim(2) %pv, %v : (tensor<1x2x?x64xf16>, tensor<1x2x1x64xf16>) -> tensor<1x2x?x64xf16>
  %o = attn.sdpa %q, %kc, %vc causal(bottom_right) : tensor<1x8x1x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x1x64xf16>
  return %o, %kc, %vc : tensor<1x8x1x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16>
}

// A concatenation returned twice is built once; the second result copies it.
// CHECK-LABEL: func.func @returned_twice(
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<4x8xf32>, %[[B:[a-z0-9]+]]: memref<2x8xf32>, %[[R0:[a-z0-9]+]]: memref<6x8xf32>, %[[R1:[a-z0-9]+]]: memref<6x8xf32>)
// CHECK: gpu.launch_func @attn_gpu_kernels::@returned_twice_copy0 {{.*}} args(%[[A]] : memref<4x8xf32>, %[[R0]] : memref<6x8xf32>, %c0 : index)
// CHECK: gpu.launch_func @attn_gpu_kernels::@returned_twice_copy1 {{.*}} args(%[[B]] : memref<2x8xf32>, %[[R0]] : memref<6x8xf32>, %c4 : index)
// CHECK: gpu.launch_func @attn_gpu_kernels::@returned_twice_copy2 {{.*}} args(%[[R0]] : memref<6x8xf32>, %[[R1]] : memref<6x8xf32>, %c0 : index)
// CHECK-NEXT: return
func.func @returned_twice(%a: tensor<4x8xf32>, %b: tensor<2x8xf32>) -> (tensor<6x8xf32>, tensor<6x8xf32>) {
  %c = tensor.concat dim(0) %a, %b : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<6x8xf32>
  return %c, %c : tensor<6x8xf32>, tensor<6x8xf32>
}

// The copy kernel: one element per thread, the flat index decomposed over
// the source's dims, stored at the offset along the concatenated dim.
// CHECK-LABEL: gpu.func @decode_step_copy0(
// CHECK-SAME: %[[S:[a-z0-9]+]]: memref<1x2x?x64xf16>, %[[D:[a-z0-9]+]]: memref<1x2x?x64xf16>, %[[OFF:[a-z0-9]+]]: index) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
// CHECK: scf.if
// CHECK: %[[X:.*]] = memref.load %[[S]][%c0, %[[H:.*]], %[[T:.*]], %[[E:.*]]] : memref<1x2x?x64xf16>
// CHECK: %[[TO:.*]] = arith.addi %[[T]], %[[OFF]] : index
// CHECK: memref.store %[[X]], %[[D]][%c0, %[[H]], %[[TO]], %[[E]]] : memref<1x2x?x64xf16>
