// attn-bufferize: identity-layout memrefs at function boundaries, copies as
// linalg.copy (never memref.copy, which would need libmlir_c_runner_utils).
// RUN: attention-opt %s -attn-bufferize | FileCheck %s

// CHECK-LABEL: func.func @concat(
// CHECK-SAME: %[[A:.*]]: memref<2x4xf32>, %[[B:.*]]: memref<2x4xf32>) -> memref<2x8xf32>
// CHECK: %[[OUT:.*]] = memref.alloc() {{.*}} : memref<2x8xf32>
// CHECK: %[[V0:.*]] = memref.subview %[[OUT]][0, 0] [2, 4] [1, 1]
// CHECK: linalg.copy ins(%[[A]] : memref<2x4xf32>) outs(%[[V0]] : memref<2x4xf32, strided<[8, 1]>>)
// CHECK: %[[V1:.*]] = memref.subview %[[OUT]][0, 4] [2, 4] [1, 1]
// CHECK: linalg.copy ins(%[[B]] : memref<2x4xf32>) outs(%[[V1]] : memref<2x4xf32, strided<[8, 1], offset: 4>>)
// CHECK-NOT: memref.copy
// CHECK: return %[[OUT]] : memref<2x8xf32>
func.func @concat(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x8xf32> {
  %0 = tensor.concat dim(1) %a, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}
