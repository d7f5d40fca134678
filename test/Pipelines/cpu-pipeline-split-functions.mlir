// The CPU pipeline splits a function with more parallel regions than
// `regions-per-function` into internal parts (attn-split-parallel-functions)
// before LLVM translation (8 by default, so this small function stays whole
// unless the option is lower); 0 keeps one function. The split code computes
// the same bits, and NumPy's float64 values to a relative 1e-5 of the
// largest.
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline=regions-per-function=2 | FileCheck %s
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline=regions-per-function=0 | FileCheck %s --check-prefix=OFF
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline | FileCheck %s --check-prefix=OFF
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline=regions-per-function=2 | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=IR
// RUN: rm -rf %t && mkdir %t
// RUN: %python -c "import numpy as np; r = np.random.default_rng(5); [np.save('%t/' + n + '.npy', r.standard_normal((64, 64)).astype(np.float32)) for n in ('x', 'w')]"
// RUN: attention-run %s --input %t/x.npy --input %t/w.npy --output %t/split.npy --pipeline-options=regions-per-function=1 --print-ir-after-all 2>&1 | FileCheck %s --check-prefix=JIT
// JIT: IR Dump After AttnSplitParallelFunctionsPass
// JIT: call @main_part0(
// JIT: func.func private @main_part0(
// RUN: attention-run %s --input %t/x.npy --input %t/w.npy --output %t/whole.npy --pipeline-options=regions-per-function=0
// RUN: %python -c "import numpy as np; l = lambda n: np.load('%t/' + n + '.npy'); x, w = l('x').astype(float), l('w').astype(float); s = np.maximum(x @ w, x) + x; want = (s @ w) * s; print('bitwise', np.array_equal(l('split'), l('whole')), 'numpy', float(abs(l('split') - want).max() / abs(want).max()) < 1e-5)" | FileCheck %s --check-prefix=NUM
// NUM: bitwise True numpy True
//
// The default of 8 regions per part splits a longer function: six steps of
// x = (x @ w) * x are 12 regions, two parts (8 and 4), with the same bits.
// RUN: %python %S/Inputs/matmul_chain.py 6 > %t/chain.mlir
// RUN: attention-opt %t/chain.mlir -attn-lower-to-cpu-pipeline | FileCheck %s --check-prefix=DEFAULT
// RUN: attention-opt %t/chain.mlir -attn-lower-to-cpu-pipeline=regions-per-function=0 | FileCheck %s --check-prefix=WHOLE
// RUN: %python -c "import numpy as np; r = np.random.default_rng(6); np.save('%t/w8.npy', (r.standard_normal((64, 64)) / 8).astype(np.float32))"
// RUN: attention-run %t/chain.mlir --input %t/x.npy --input %t/w8.npy --output %t/chain_split.npy
// RUN: attention-run %t/chain.mlir --input %t/x.npy --input %t/w8.npy --output %t/chain_whole.npy --pipeline-options=regions-per-function=0
// RUN: %python -c "import numpy as np; l = lambda n: np.load('%t/' + n + '.npy'); x, w = l('x').astype(float), l('w8').astype(float); exec('for _ in range(6): x = (x @ w) * x'); print('bitwise', np.array_equal(l('chain_split'), l('chain_whole')), 'numpy', float(abs(l('chain_split') - x).max() / abs(x).max()) < 1e-5)" | FileCheck %s --check-prefix=NUM
// DEFAULT-LABEL: llvm.func @main(
// DEFAULT-NOT: omp.parallel
// DEFAULT: llvm.call @main_part0(
// DEFAULT: llvm.call @main_part1(
// DEFAULT-NOT: @main_part2
// DEFAULT-COUNT-8: omp.parallel
// DEFAULT: llvm.func internal @main_part1(
// DEFAULT-COUNT-4: omp.parallel
// DEFAULT-NOT: omp.parallel
// WHOLE-LABEL: llvm.func @main(
// WHOLE-NOT: @main_part
// WHOLE-COUNT-12: omp.parallel
// WHOLE-NOT: omp.parallel

// CHECK-LABEL: llvm.func @main(
// CHECK-NOT: omp.parallel
// CHECK: llvm.call @main_part0(
// CHECK-NOT: omp.parallel
// CHECK: llvm.call @main_part1(
// CHECK-NOT: omp.parallel
// CHECK: llvm.return
// CHECK: llvm.func internal @main_part0(
// CHECK: omp.parallel
// CHECK: llvm.func internal @main_part1(
// CHECK: omp.parallel
// OFF-NOT: main_part
// OFF: llvm.func @main(
// OFF: omp.parallel
// OFF-NOT: main_part
// IR: define internal {{.*}} @main_part0(
// IR: define internal {{.*}} @main_part1(
func.func @main(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %e = tensor.empty() : tensor<64x64xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %p = linalg.matmul ins(%x, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %g = arith.maximumf %p, %x : tensor<64x64xf32>
  %s = arith.addf %g, %x : tensor<64x64xf32>
  %f2 = linalg.fill ins(%z : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %q = linalg.matmul ins(%s, %w : tensor<64x64xf32>, tensor<64x64xf32>) outs(%f2 : tensor<64x64xf32>) -> tensor<64x64xf32>
  %r = arith.mulf %q, %s : tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}
