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

// A loop whose body writes a new tensor each iteration (an op into a fresh
// tensor.empty) yields a new buffer (it was refused: "Yield operand #0 is
// not equivalent to the corresponding iter bbArg").
// CHECK-LABEL: func.func @fresh_tensor_per_iteration(
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (memref<4xf32>)
// CHECK: %[[NEW:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: linalg.add ins(%[[ACC]], %[[ACC]] : memref<4xf32>, memref<4xf32>) outs(%[[NEW]] : memref<4xf32>)
// CHECK: scf.yield %[[NEW]] : memref<4xf32>
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python -c "import numpy as np; np.save('%t/x.npy', np.arange(4, dtype=np.float32))"
// RUN: attention-run %s --entry fresh_tensor_per_iteration --input %t/x.npy --output %t/y.npy
// RUN: %python -c "import numpy as np; print('times 8', np.array_equal(np.load('%t/y.npy'), 8 * np.arange(4, dtype=np.float32)))" | FileCheck %s --check-prefix=NUM
// NUM: times 8 True
func.func @fresh_tensor_per_iteration(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x) -> tensor<4xf32> {
    %e = tensor.empty() : tensor<4xf32>
    %0 = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// Entry points never write their arguments (the caller's inputs are const):
// an op that would update one in place works on a copy of it. (In place,
// a warm-up and two timed runs added 7 three times.)
// CHECK-LABEL: func.func @update_argument(
// CHECK-SAME: %[[X:.*]]: memref<4xf32>) -> memref<4xf32>
// CHECK: %[[COPY:.*]] = memref.alloc() {{.*}} : memref<4xf32>
// CHECK: linalg.copy ins(%[[X]] : memref<4xf32>) outs(%[[COPY]] : memref<4xf32>)
// CHECK: memref.store %{{.*}}, %[[COPY]][%{{.*}}] : memref<4xf32>
// CHECK: return %[[COPY]] : memref<4xf32>
func.func @update_argument(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7.0 : f32
  %old = tensor.extract %x[%c1] : tensor<4xf32>
  %v = arith.addf %old, %c7 : f32
  %0 = tensor.insert %v into %x[%c1] : tensor<4xf32>
  return %0 : tensor<4xf32>
}
// RUN: attention-run %s --entry update_argument --input %t/x.npy --output %t/u.npy --repeat 2 | FileCheck %s --check-prefix=REPEAT
// REPEAT: median_ms=
// RUN: %python -c "import numpy as np; print('updated once', np.load('%t/u.npy').tolist())" | FileCheck %s --check-prefix=UPDATE
// UPDATE: updated once [0.0, 8.0, 2.0, 3.0]
