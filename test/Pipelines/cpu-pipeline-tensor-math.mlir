// math.tanh, math.exp and math.erf on whole tensors (a hand-written module;
// imported graphs arrive as linalg) through the CPU pipeline: each becomes
// a linalg.generic before attn-approximate-math, so every one is a
// polynomial, no libm call is left, and the numbers match NumPy's.
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline | FileCheck %s
// RUN: attention-opt %s -attn-lower-to-cpu-pipeline=fast-exp=false | FileCheck %s --check-prefix=LIBM
// RUN: rm -rf %t && mkdir %t
// RUN: %python -c "import numpy as np; r = np.random.default_rng(7); np.save('%t/x.npy', (3 * r.standard_normal((64, 64))).astype(np.float32))"
// RUN: attention-run %s --input %t/x.npy --output %t/fast.npy
// RUN: attention-run %s --input %t/x.npy --output %t/libm.npy --pipeline-options=fast-exp=false
// RUN: %python -c "import math, numpy as np; x = np.load('%t/x.npy').astype(float); e = np.exp(np.tanh(x)); want = np.vectorize(math.erf)(e) + e; [print(n, float(abs(np.load('%t/' + n + '.npy') - want).max()) < 1e-6) for n in ('fast', 'libm')]" | FileCheck %s --check-prefix=NUM

// CHECK-LABEL: llvm.func @main(
// CHECK-NOT: math.
// CHECK-NOT: llvm.call @{{.*(tanh|exp|erf)}}
// CHECK: llvm.return
// With fast-exp=false, tanh and exp stay libm calls (intrinsics); erf is
// approximated in any case.
// LIBM-LABEL: llvm.func @main(
// LIBM-DAG: llvm.intr.exp
// LIBM-DAG: llvm.intr.tanh
// LIBM-NOT: {{math\.erf|intr\.erf|@erf}}
// LIBM: llvm.return
// NUM: fast True
// NUM: libm True
func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %g = math.tanh %x : tensor<64x64xf32>
  %e = math.exp %g : tensor<64x64xf32>
  %r = math.erf %e : tensor<64x64xf32>
  %s = arith.addf %r, %e : tensor<64x64xf32>
  return %s : tensor<64x64xf32>
}
