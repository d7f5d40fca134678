// A row sum whose summand uses math ops that only libm provides (cbrt,
// log1p) and expm1: attn-vectorize-row-reductions computes the summand on
// vector<16xf32>, so convert-math-to-libm unrolls those ops into
// vector.extract / scalar call / vector.insert. The pipeline runs it
// before convert-vector-to-llvm, so nothing of the vector or math dialects
// is left, and the sums match NumPy's (100 columns: six vectors and a
// scalar tail of 4).
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline | FileCheck %s
// RUN: rm -rf %t && mkdir %t
// RUN: %python -c "import numpy as np; r = np.random.default_rng(11); np.save('%t/x.npy', r.standard_normal((8, 100)).astype(np.float32))"
// RUN: attention-run %s --input %t/x.npy --output %t/sum.npy
// RUN: %python -c "import numpy as np; x = np.load('%t/x.npy').astype(float); want = (np.cbrt(x) + np.log1p(x * x) + np.expm1(x / 8)).sum(axis=1); got = np.load('%t/sum.npy'); print('max_rel_err', float(abs(got - want).max() / abs(want).max()) < 1e-5)" | FileCheck %s --check-prefix=NUM

// CHECK-LABEL: llvm.func @main(
// CHECK-NOT: {{ (vector|math)\.}}
// CHECK-DAG: llvm.call @cbrtf(
// CHECK-DAG: llvm.call @log1pf(
// CHECK: llvm.return
// CHECK-NOT: {{ (vector|math)\.}}
// NUM: max_rel_err True
#rows = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @main(%x: tensor<8x100xf32>) -> tensor<8xf32> {
  %zero = arith.constant 0.0 : f32
  %eighth = arith.constant 0.125 : f32
  %empty = tensor.empty() : tensor<8xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#rows, #row],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x100xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %c = math.cbrt %a : f32
    %sq = arith.mulf %a, %a : f32
    %l = math.log1p %sq : f32
    %s = arith.mulf %a, %eighth : f32
    %e = math.expm1 %s : f32
    %t0 = arith.addf %c, %l : f32
    %t1 = arith.addf %t0, %e : f32
    %r = arith.addf %acc, %t1 : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %sum : tensor<8xf32>
}
