# RUN: %python %s %t | FileCheck %s
#
# Gemm: alpha * A' B' + beta * C, A' and B' as transA / transB say, C
# broadcast to [M, N] (a row, a column, a full matrix, absent), against
# NumPy in float64. With alpha = 1 the product adds onto beta * C; with
# another alpha it is a plain contraction followed by alpha * AB + beta * C
# elementwise (alpha inside the product kept it off the contraction
# kernels: 1024x768x768 took 267 ms for 5.9 ms), and alpha = 0 leaves
# beta * C, as BLAS does. The same in float16 (summed in f32).

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from run_model import counting_print, run_model  # noqa: E402

print, failures = counting_print()
work = sys.argv[1]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(12)
vi = helper.make_tensor_value_info
M, K, N = 64, 48, 40
for dtype, name, npt, tol in ((TensorProto.FLOAT, "f32", np.float32, 1e-5),
                              (TensorProto.FLOAT16, "f16", np.float16, 2e-3)):
    for alpha, beta, cshape, ta, tb in ((1.0, 1.0, (N,), 0, 1), (0.5, 1.0, (N,), 0, 0),
                                        (0.5, 2.0, (M, N), 1, 1), (0.0, 3.0, (1, N), 0, 0),
                                        (2.0, 0.0, (N,), 1, 0), (0.25, 1.0, None, 0, 0),
                                        (1.0, 0.5, (M, 1), 0, 1)):
        a = rng.standard_normal((K, M) if ta else (M, K)).astype(npt)
        b = rng.standard_normal((N, K) if tb else (K, N)).astype(npt)
        feeds = {"a": a, "b": b}
        if cshape:
            feeds["c"] = rng.standard_normal(cshape).astype(npt)
        graph = helper.make_graph(
            [helper.make_node("Gemm", list(feeds), ["y"], alpha=alpha, beta=beta, transA=ta,
                              transB=tb)], "g",
            [vi(k, dtype, list(v.shape)) for k, v in feeds.items()], [vi("y", dtype, None)])
        path = os.path.join(work, "gemm.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
        a64, b64 = a.astype(float), b.astype(float)
        want = alpha * ((a64.T if ta else a64) @ (b64.T if tb else b64))
        if cshape:
            want = want + beta * feeds["c"].astype(float)
        got = run_model(work, path, feeds)
        what = "%s alpha %g beta %g C %s transA %d transB %d" % (name, alpha, beta,
                                                                list(cshape or []), ta, tb)
        if isinstance(got, str):
            print("FAIL %s: %s" % (what, got))
            continue
        err = float(np.abs(got[0].astype(float) - want).max() / np.abs(want).max())
        print("%s %s: relative error %s" % ("ok" if err < tol else "FAIL", what,
                                            "below %g" % tol if err < tol else err))
# CHECK: ok f32 alpha 1 beta 1 C [40] transA 0 transB 1: relative error below 1e-05
# CHECK: ok f32 alpha 0.5 beta 1 C [40] transA 0 transB 0: relative error below 1e-05
# CHECK: ok f32 alpha 0.5 beta 2 C [64, 40] transA 1 transB 1: relative error below 1e-05
# CHECK: ok f32 alpha 0 beta 3 C [1, 40] transA 0 transB 0: relative error below 1e-05
# CHECK: ok f32 alpha 2 beta 0 C [40] transA 1 transB 0: relative error below 1e-05
# CHECK: ok f32 alpha 0.25 beta 1 C [] transA 0 transB 0: relative error below 1e-05
# CHECK: ok f32 alpha 1 beta 0.5 C [64, 1] transA 0 transB 1: relative error below 1e-05
# CHECK: ok f16 alpha 1 beta 1 C [40] transA 0 transB 1: relative error below 0.002
# CHECK: ok f16 alpha 0.5 beta 1 C [40] transA 0 transB 0: relative error below 0.002
# CHECK: ok f16 alpha 0.5 beta 2 C [64, 40] transA 1 transB 1: relative error below 0.002
# CHECK: ok f16 alpha 0 beta 3 C [1, 40] transA 0 transB 0: relative error below 0.002
# CHECK: ok f16 alpha 2 beta 0 C [40] transA 1 transB 0: relative error below 0.002
# CHECK: ok f16 alpha 0.25 beta 1 C [] transA 0 transB 0: relative error below 0.002
# CHECK: ok f16 alpha 1 beta 0.5 C [64, 1] transA 0 transB 1: relative error below 0.002
print("%d failed" % len(failures))
# CHECK: 0 failed
