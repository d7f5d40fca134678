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
from onnx import TensorProto, helper, numpy_helper

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

# Operands read transposed ([k, m] for A, [n, k] for B) are transposed once
# before the contraction kernels (a constant B at compile time): Gemm's
# transA / transB with B an input or an initializer (an nn.Linear weight),
# MatMul of a Transpose, and einsums with either operand transposed, 2-D
# and batched. M = 130 and N = 72 leave rows and columns past the register
# tiles.
M, K, N = 130, 96, 72


def graph_of(nodes, feeds, weights):
    inputs = [vi(k, TensorProto.FLOAT, list(v.shape)) for k, v in feeds.items()]
    inits = [numpy_helper.from_array(v, k) for k, v in weights.items()]
    return helper.make_graph(nodes, "g", inputs, [vi("y", TensorProto.FLOAT, None)], inits)


cases = []
for ta, tb, const in ((0, 1, False), (0, 1, True), (1, 0, False), (1, 1, True)):
    cases.append(("Gemm transA %d transB %d, B %s" % (ta, tb, "an initializer" if const else "an input"),
                  [helper.make_node("Gemm", ["a", "b"], ["y"], transA=ta, transB=tb)],
                  (K, M) if ta else (M, K), (N, K) if tb else (K, N), const,
                  lambda a, b, ta=ta, tb=tb: (a.T if ta else a) @ (b.T if tb else b)))
cases.append(("MatMul of a and Transpose(b)",
              [helper.make_node("Transpose", ["b"], ["bt"], perm=[1, 0]),
               helper.make_node("MatMul", ["a", "bt"], ["y"])],
              (M, K), (N, K), False, lambda a, b: a @ b.T))
for eq in ("mk,nk->mn", "km,kn->mn", "km,nk->mn", "bmk,bnk->bmn", "bkm,bkn->bmn"):
    lhs = eq.split("->")[0].split(",")
    dims = {"b": 3, "m": M, "k": K, "n": N}
    cases.append(("Einsum %s" % eq, [helper.make_node("Einsum", ["a", "b"], ["y"], equation=eq)],
                  tuple(dims[c] for c in lhs[0]), tuple(dims[c] for c in lhs[1]), False,
                  lambda a, b, eq=eq: np.einsum(eq, a, b)))
for what, nodes, ashape, bshape, const, reference in cases:
    a = rng.standard_normal(ashape).astype(np.float32)
    b = rng.standard_normal(bshape).astype(np.float32)
    feeds, weights = ({"a": a}, {"b": b}) if const else ({"a": a, "b": b}, {})
    path = os.path.join(work, "layout.onnx")
    onnx.save(helper.make_model(graph_of(nodes, feeds, weights),
                                opset_imports=[helper.make_opsetid("", 17)]), path)
    got = run_model(work, path, feeds)
    if isinstance(got, str):
        print("FAIL %s: %s" % (what, got))
        continue
    want = reference(a.astype(float), b.astype(float))
    err = float(np.abs(got[0].astype(float) - want).max() / np.abs(want).max())
    print("%s %s: relative error %s" % ("ok" if err < 1e-5 else "FAIL", what,
                                        "below 1e-05" if err < 1e-5 else err))
# CHECK: ok Gemm transA 0 transB 1, B an input: relative error below 1e-05
# CHECK: ok Gemm transA 0 transB 1, B an initializer: relative error below 1e-05
# CHECK: ok Gemm transA 1 transB 0, B an input: relative error below 1e-05
# CHECK: ok Gemm transA 1 transB 1, B an initializer: relative error below 1e-05
# CHECK: ok MatMul of a and Transpose(b): relative error below 1e-05
# CHECK: ok Einsum mk,nk->mn: relative error below 1e-05
# CHECK: ok Einsum km,kn->mn: relative error below 1e-05
# CHECK: ok Einsum km,nk->mn: relative error below 1e-05
# CHECK: ok Einsum bmk,bnk->bmn: relative error below 1e-05
# CHECK: ok Einsum bkm,bkn->bmn: relative error below 1e-05

# B an input read as [N, K] with a dynamic M: the row count chooses at run
# time between the transposed, register-tiled product (M >= 128) and B read
# in place (fewer rows, a decode step). Both, from one model.
graph = helper.make_graph([helper.make_node("Gemm", ["a", "b"], ["y"], transB=1)], "g",
                          [vi("a", TensorProto.FLOAT, ["M", K]), vi("b", TensorProto.FLOAT, [N, K])],
                          [vi("y", TensorProto.FLOAT, None)])
path = os.path.join(work, "dynamic_rows.onnx")
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
for m in (3, 130):
    a = rng.standard_normal((m, K)).astype(np.float32)
    b = rng.standard_normal((N, K)).astype(np.float32)
    got = run_model(work, path, {"a": a, "b": b})
    if isinstance(got, str):
        print("FAIL Gemm transB dynamic M = %d: %s" % (m, got))
        continue
    want = a.astype(float) @ b.astype(float).T
    err = float(np.abs(got[0].astype(float) - want).max() / np.abs(want).max())
    print("%s Gemm transB dynamic M = %d: relative error %s" % (
        "ok" if err < 1e-5 else "FAIL", m, "below 1e-05" if err < 1e-5 else err))
# CHECK: ok Gemm transB dynamic M = 3: relative error below 1e-05
# CHECK: ok Gemm transB dynamic M = 130: relative error below 1e-05

# Decode-step products: fewer rows than a register tile (M = 1, 3, 7) by a
# weight initializer, which is transposed at compile time for the generic
# lowering's dot products (MatMul [.., K] x [K, N]), or read in place when
# it already is [N, K] (Gemm transB).
for m in (1, 3, 7):
    for what, node, wshape in (("MatMul", helper.make_node("MatMul", ["a", "w"], ["y"]), (K, N)),
                               ("Gemm transB", helper.make_node("Gemm", ["a", "w"], ["y"], transB=1),
                                (N, K))):
        a = rng.standard_normal((m, K)).astype(np.float32)
        w = rng.standard_normal(wshape).astype(np.float32)
        graph = helper.make_graph([node], "g", [vi("a", TensorProto.FLOAT, [m, K])],
                                  [vi("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(w, "w")])
        path = os.path.join(work, "decode.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
        got = run_model(work, path, {"a": a})
        if isinstance(got, str):
            print("FAIL %s M = %d by an initializer: %s" % (what, m, got))
            continue
        want = a.astype(float) @ (w.astype(float).T if what == "Gemm transB" else w.astype(float))
        err = float(np.abs(got[0].astype(float) - want).max() / np.abs(want).max())
        print("%s %s M = %d by an initializer: relative error %s" % (
            "ok" if err < 1e-5 else "FAIL", what, m, "below 1e-05" if err < 1e-5 else err))
# CHECK: ok MatMul M = 1 by an initializer: relative error below 1e-05
# CHECK: ok Gemm transB M = 1 by an initializer: relative error below 1e-05
# CHECK: ok MatMul M = 3 by an initializer: relative error below 1e-05
# CHECK: ok Gemm transB M = 3 by an initializer: relative error below 1e-05
# CHECK: ok MatMul M = 7 by an initializer: relative error below 1e-05
# CHECK: ok Gemm transB M = 7 by an initializer: relative error below 1e-05

# Narrow products: N = 2, 7 and 15 columns (15 = 8 in a register tile and 7
# as dot products), B an initializer and an input, against NumPy.
for n_cols in (2, 7, 15):
    for const in (True, False):
        a = rng.standard_normal((130, K)).astype(np.float32)
        w = rng.standard_normal((K, n_cols)).astype(np.float32)
        feeds, weights = ({"a": a}, {"w": w}) if const else ({"a": a, "w": w}, {})
        graph = graph_of([helper.make_node("MatMul", ["a", "w"], ["y"])], feeds, weights)
        path = os.path.join(work, "narrow.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
        got = run_model(work, path, feeds)
        what = "MatMul N = %d, B %s" % (n_cols, "an initializer" if const else "an input")
        if isinstance(got, str):
            print("FAIL %s: %s" % (what, got))
            continue
        want = a.astype(float) @ w.astype(float)
        err = float(np.abs(got[0].astype(float) - want).max() / np.abs(want).max())
        print("%s %s: relative error %s" % ("ok" if err < 1e-5 else "FAIL", what,
                                            "below 1e-05" if err < 1e-5 else err))
# CHECK: ok MatMul N = 2, B an initializer: relative error below 1e-05
# CHECK: ok MatMul N = 2, B an input: relative error below 1e-05
# CHECK: ok MatMul N = 7, B an initializer: relative error below 1e-05
# CHECK: ok MatMul N = 7, B an input: relative error below 1e-05
# CHECK: ok MatMul N = 15, B an initializer: relative error below 1e-05
# CHECK: ok MatMul N = 15, B an input: relative error below 1e-05
print("%d failed" % len(failures))
# CHECK: 0 failed
