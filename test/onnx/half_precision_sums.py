# RUN: %python %s %t | FileCheck %s
#
# FLOAT16 and BFLOAT16 models op by op: every op that sums (MatMul, Gemm,
# Einsum, Softmax, LogSoftmax, the sum-like reductions, CumSum) runs its
# sums in f32 and rounds the result once, as ONNX Runtime does. They
# summed in the 16-bit type, where a running sum stops growing once large:
# a softmax over 4096 columns was 17% off (rows summed to 1.15), an f16
# MatMul over K = 4096 8% off, a bf16 ReduceSum of 2048 values gave 260 for
# 993. Long rows against NumPy in float64 on the same (16-bit) inputs: the
# error is the result's own rounding, relative to the largest |value|
# below 2e-3 for f16 (2^-11 = 4.9e-4) and 1e-2 for bf16 (2^-8 = 3.9e-3).
# ReduceMax and LayerNormalization convert to f32 too (exact for max, the
# vectorized kernels), Softmax before opset 13 over flattened dims, and a
# Cast between f16 and bf16 goes through f32.
# 16-bit constants an op converts to f32 are converted at import, bit for
# bit (all 65536 patterns of each type).
# Transpose of a rank-0 tensor (and any identity perm) is the input (the
# import crashed on a linalg.transpose of rank 0); a perm naming a dim twice
# is refused by name.

import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from run_model import counting_print, run_model  # noqa: E402

print, failures = counting_print()
work = sys.argv[1]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(16)
vi = helper.make_tensor_value_info


def to_bf16(x):
    """x rounded to bfloat16 (nearest even), as float32."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


# (name, nodes, input shapes, reference, opset)
CASES = [
    ("MatMul K=4096", [helper.make_node("MatMul", ["a", "b"], ["y"])],
     {"a": (4, 4096), "b": (4096, 3)}, lambda a, b: a @ b, 17),
    ("Gemm K=4096 transB", [helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=1,
                                             alpha=0.5, beta=2.0)],
     {"a": (3, 4096), "b": (5, 4096), "c": (5,)}, lambda a, b, c: 0.5 * a @ b.T + 2 * c, 17),
    ("Einsum ij,jk->ik K=4096", [helper.make_node("Einsum", ["a", "b"], ["y"],
                                                  equation="ij,jk->ik")],
     {"a": (3, 4096), "b": (4096, 2)}, lambda a, b: a @ b, 17),
    ("Softmax n=4096", [helper.make_node("Softmax", ["a"], ["y"], axis=-1)],
     {"a": (4, 4096)}, lambda a: softmax(a), 13),
    ("LogSoftmax n=4096", [helper.make_node("LogSoftmax", ["a"], ["y"], axis=-1)],
     {"a": (4, 4096)}, lambda a: np.log(softmax(a)), 13),
    ("ReduceSum n=2048", [helper.make_node("ReduceSum", ["a", "axes"], ["y"], keepdims=0)],
     {"a": (2, 2048)}, lambda a: a.sum(-1), 18),
    ("ReduceMean n=8192", [helper.make_node("ReduceMean", ["a", "axes"], ["y"], keepdims=0)],
     {"a": (2, 8192)}, lambda a: a.mean(-1), 18),
    ("ReduceL2 n=4096", [helper.make_node("ReduceL2", ["a", "axes"], ["y"], keepdims=0)],
     {"a": (2, 4096)}, lambda a: np.sqrt((a * a).sum(-1)), 18),
    ("ReduceLogSumExp n=4096", [helper.make_node("ReduceLogSumExp", ["a", "axes"], ["y"],
                                                 keepdims=0)],
     {"a": (2, 4096)}, lambda a: np.log(np.exp(a).sum(-1)), 18),
    ("CumSum n=4096", [helper.make_node("CumSum", ["a", "axis"], ["y"])],
     {"a": (2, 4096)}, lambda a: np.cumsum(a, -1), 17),
    # Also computed in f32 now (exact for max; the f32 kernels are the
    # vectorized ones), and before opset 13 over flattened dims (the
    # import crashed for 16-bit types).
    ("ReduceMax n=4096", [helper.make_node("ReduceMax", ["a", "axes"], ["y"], keepdims=0)],
     {"a": (2, 4096)}, lambda a: a.max(-1), 18),
    ("LayerNormalization n=4096", [helper.make_node("LayerNormalization", ["a", "g", "c"], ["y"],
                                                    axis=-1)],
     {"a": (2, 4096), "g": (4096,), "c": (4096,)},
     lambda a, g, c: (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5)
     * g + c, 17),
    ("Softmax opset 11 axis 1", [helper.make_node("Softmax", ["a"], ["y"], axis=1)],
     {"a": (2, 64, 64)}, lambda a: softmax(a.reshape(2, -1)).reshape(2, 64, 64), 11),
    ("LogSoftmax opset 11 axis 0", [helper.make_node("LogSoftmax", ["a"], ["y"], axis=0)],
     {"a": (16, 4, 64)}, lambda a: np.log(softmax(a.reshape(1, -1))).reshape(16, 4, 64), 11),
]
for dtype, name, tol in ((TensorProto.FLOAT16, "f16", 2e-3), (TensorProto.BFLOAT16, "bf16", 1e-2)):
    for what, nodes, shapes, ref, opset in CASES:
        inits = [helper.make_tensor("axes", TensorProto.INT64, [1], [-1]),
                 helper.make_tensor("axis", TensorProto.INT64, [], [1])]
        used = {i for nd in nodes for i in nd.input}
        graph = helper.make_graph(nodes, "g", [vi(k, dtype, list(s)) for k, s in shapes.items()],
                                  [vi("y", dtype, None)],
                                  [t for t in inits if t.name in used])
        path = os.path.join(work, "%s_%s.onnx" % (name, what.split()[0]))
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
        # Positive values (uniform in [0, 1)): the sums grow, as in the
        # failures; the softmax rows are a half-normal's.
        feeds = {}
        for k, s in shapes.items():
            x = rng.random(s) if "Softmax" not in what else rng.standard_normal(s) * 0.5
            if "LayerNorm" in what:
                x = rng.standard_normal(s)
            feeds[k] = (x.astype(np.float16) if name == "f16"
                        else to_bf16(x.astype(np.float32)))
        want = ref(*[feeds[k].astype(np.float64) for k in shapes])
        got = run_model(work, path, feeds)
        if isinstance(got, str):
            print("FAIL %s %s: %s" % (name, what, got))
            continue
        err = float(np.abs(got[0].astype(np.float64) - want).max() / np.abs(want).max())
        print("%s %s %s: relative error %s" % ("ok" if err < tol else "FAIL", name, what,
                                               "below %g" % tol if err < tol else err))
# CHECK: ok f16 MatMul K=4096: relative error below 0.002
# CHECK: ok f16 Gemm K=4096 transB: relative error below 0.002
# CHECK: ok f16 Einsum ij,jk->ik K=4096: relative error below 0.002
# CHECK: ok f16 Softmax n=4096: relative error below 0.002
# CHECK: ok f16 LogSoftmax n=4096: relative error below 0.002
# CHECK: ok f16 ReduceSum n=2048: relative error below 0.002
# CHECK: ok f16 ReduceMean n=8192: relative error below 0.002
# CHECK: ok f16 ReduceL2 n=4096: relative error below 0.002
# CHECK: ok f16 ReduceLogSumExp n=4096: relative error below 0.002
# CHECK: ok f16 CumSum n=4096: relative error below 0.002
# CHECK: ok f16 ReduceMax n=4096: relative error below 0.002
# CHECK: ok f16 LayerNormalization n=4096: relative error below 0.002
# CHECK: ok f16 Softmax opset 11 axis 1: relative error below 0.002
# CHECK: ok f16 LogSoftmax opset 11 axis 0: relative error below 0.002
# CHECK: ok bf16 MatMul K=4096: relative error below 0.01
# CHECK: ok bf16 Gemm K=4096 transB: relative error below 0.01
# CHECK: ok bf16 Einsum ij,jk->ik K=4096: relative error below 0.01
# CHECK: ok bf16 Softmax n=4096: relative error below 0.01
# CHECK: ok bf16 LogSoftmax n=4096: relative error below 0.01
# CHECK: ok bf16 ReduceSum n=2048: relative error below 0.01
# CHECK: ok bf16 ReduceMean n=8192: relative error below 0.01
# CHECK: ok bf16 ReduceL2 n=4096: relative error below 0.01
# CHECK: ok bf16 ReduceLogSumExp n=4096: relative error below 0.01
# CHECK: ok bf16 CumSum n=4096: relative error below 0.01
# CHECK: ok bf16 ReduceMax n=4096: relative error below 0.01
# CHECK: ok bf16 LayerNormalization n=4096: relative error below 0.01
# CHECK: ok bf16 Softmax opset 11 axis 1: relative error below 0.01
# CHECK: ok bf16 LogSoftmax opset 11 axis 0: relative error below 0.01

# Cast between FLOAT16 and BFLOAT16 (equal widths: through f32, rounding
# once; the import made an invalid arith.truncf f16 -> bf16). Values
# exact in both types, and ones each rounds.
x = np.float32([1.5, -2.25, 0.0, 3.0e4, 1.0e-3, 7.0, -0.5, 100.0])
for first, second in ((TensorProto.FLOAT16, TensorProto.BFLOAT16),
                      (TensorProto.BFLOAT16, TensorProto.FLOAT16)):
    graph = helper.make_graph([helper.make_node("Cast", ["x"], ["h"], to=first),
                               helper.make_node("Cast", ["h"], ["y"], to=second)], "g",
                              [vi("x", TensorProto.FLOAT, [8])], [vi("y", second, None)])
    path = os.path.join(work, "cast.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    if first == TensorProto.FLOAT16:
        want = to_bf16(x.astype(np.float16).astype(np.float32))
    else:
        want = to_bf16(x).astype(np.float16).astype(np.float32)
    got = run_model(work, path, {"x": x})
    ok = not isinstance(got, str) and (got[0].astype(np.float32) == want).all()
    print("%s Cast %s" % ("ok" if ok else "FAIL", "f16 -> bf16" if first == TensorProto.FLOAT16
                          else "bf16 -> f16"), "" if ok else got)
# CHECK: ok Cast f16 -> bf16
# CHECK: ok Cast bf16 -> f16

# Transpose: rank 0 (no perm, and perm=[]), an identity perm; a repeated dim.
for what, shape, perm in (("rank 0", [], None), ("rank 0 perm []", [], []),
                          ("identity [0, 1]", [2, 3], [0, 1]), ("perm [1, 0]", [2, 3], [1, 0])):
    kw = {} if perm is None else {"perm": perm}
    graph = helper.make_graph([helper.make_node("Transpose", ["x"], ["y"], **kw)], "g",
                              [vi("x", TensorProto.FLOAT, shape)],
                              [vi("y", TensorProto.FLOAT, None)])
    path = os.path.join(work, "transpose.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    x = rng.standard_normal(shape).astype(np.float32)
    got = run_model(work, path, {"x": x})
    want = np.transpose(x, perm) if perm else x.T
    ok = not isinstance(got, str) and got[0].shape == want.shape and (got[0] == want).all()
    print("%s Transpose %s" % ("ok" if ok else "FAIL", what), "" if ok else got)
graph = helper.make_graph([helper.make_node("Transpose", ["x"], ["y"], perm=[0, 0], name="t")],
                          "g", [vi("x", TensorProto.FLOAT, [2, 2])],
                          [vi("y", TensorProto.FLOAT, None)])
path = os.path.join(work, "transpose_twice.onnx")
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
print("Transpose perm [0, 0]:", run_model(work, path, {"x": np.zeros((2, 2), np.float32)}))
# CHECK: ok Transpose rank 0
# CHECK: ok Transpose rank 0 perm []
# CHECK: ok Transpose identity [0, 1]
# CHECK: ok Transpose perm [1, 0]
# CHECK: Transpose perm [0, 0]: {{.*}}transpose_twice.onnx:0:0: error: ONNX node 't' (Transpose, opset 17): perm names dim 0 twice (a permutation names each dim once)


# 16-bit constants that an op converts to f32 (a MatMul or Gemm weight, a
# Cast) are converted once at import, into an f32 constant, instead of on
# every call. Every one of the 65536 bit patterns of f16 and of bf16 (a
# weight blob of 128 KiB), 16 values (inline) and a uniform weight (a
# splat), through Cast to FLOAT,
# bit for bit against NumPy (NaN as NaN): subnormals, +-0, +-inf, NaN
# payloads. Then MatMuls by 16-bit initializer weights against NumPy.
patterns = np.arange(65536, dtype=np.uint32).astype(np.uint16)
small = np.array([0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x7bff, 0x7c00, 0xfc00, 0x7e00,
                  0x7c01, 0x3c00, 0xbc00, 0x3555, 0x0200, 0x8001, 0xfbff], np.uint16)
for name, dtype in (("f16", TensorProto.FLOAT16), ("bf16", TensorProto.BFLOAT16)):
    splat = np.full((64, 64), 0x3E00 if name == "f16" else 0x3FC0, np.uint16)  # 1.5
    for what, bits in (("all 65536 patterns", patterns.reshape(256, 256)),
                       ("16 values inline", small.reshape(4, 4)),
                       ("uniform 1.5 (a splat)", splat)):
        init = helper.make_tensor("c", dtype, bits.shape, bits.tobytes(), raw=True)
        graph = helper.make_graph([helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT)],
                                  "g", [], [vi("y", TensorProto.FLOAT, None)], [init])
        path = os.path.join(work, "widen_constant.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
        got = run_model(work, path, {})
        want = (bits.view(np.float16).astype(np.float32) if name == "f16"
                else (bits.astype(np.uint32) << 16).view(np.float32))
        if isinstance(got, str):
            print("FAIL constant %s %s: %s" % (name, what, got))
            continue
        nan = np.isnan(want)
        same = (np.array_equal(np.isnan(got[0]), nan)
                and np.array_equal(got[0][~nan].view(np.uint32), want[~nan].view(np.uint32)))
        print("%s constant %s %s widened exactly" % ("ok" if same else "FAIL", name, what))
# CHECK: ok constant f16 all 65536 patterns widened exactly
# CHECK: ok constant f16 16 values inline widened exactly
# CHECK: ok constant f16 uniform 1.5 (a splat) widened exactly
# CHECK: ok constant bf16 all 65536 patterns widened exactly
# CHECK: ok constant bf16 16 values inline widened exactly
# CHECK: ok constant bf16 uniform 1.5 (a splat) widened exactly
for name, dtype, tol in (("f16", TensorProto.FLOAT16, 2e-3), ("bf16", TensorProto.BFLOAT16, 1e-2)):
    for m in (1, 70):
        x = rng.standard_normal((m, 512)).astype(np.float32)
        w = rng.standard_normal((512, 96)).astype(np.float32)
        if name == "f16":
            x, w = x.astype(np.float16).astype(np.float32), w.astype(np.float16).astype(np.float32)
            feed = x.astype(np.float16)
            init = numpy_helper.from_array(w.astype(np.float16), "w")
        else:
            x, w = to_bf16(x), to_bf16(w)
            feed = x
            init = helper.make_tensor("w", dtype, w.shape,
                                      (w.view(np.uint32) >> 16).astype(np.uint16).tobytes(), raw=True)
        graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                                  [vi("x", dtype, list(x.shape))], [vi("y", dtype, None)], [init])
        path = os.path.join(work, "matmul_weight.onnx")
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
        if m == 1:
            # The imported module holds the weight as an f32 blob.
            translate = os.path.join(os.path.dirname(os.environ["ATTENTION_RUN"]),
                                     "attention-translate")
            ir = subprocess.run([translate, "--import-onnx", path], stdout=subprocess.PIPE,
                                universal_newlines=True).stdout
            print("%s weight imported as:" % name,
                  " ".join(l.strip() for l in ir.splitlines() if "dense_resource" in l))
        got = run_model(work, path, {"x": feed})
        want = x.astype(float) @ w.astype(float)
        if isinstance(got, str):
            print("FAIL %s MatMul [%d, 512] by an initializer: %s" % (name, m, got))
            continue
        err = float(np.abs(got[0].astype(float) - want).max() / np.abs(want).max())
        print("%s %s MatMul [%d, 512] by an initializer: relative error %s" % (
            "ok" if err < tol else "FAIL", name, m, "below %g" % tol if err < tol else err))
# CHECK: f16 weight imported as: %cst = arith.constant dense_resource<w_f32> : tensor<512x96xf32>
# CHECK: ok f16 MatMul [1, 512] by an initializer: relative error below 0.002
# CHECK: ok f16 MatMul [70, 512] by an initializer: relative error below 0.002
# CHECK: bf16 weight imported as: %cst = arith.constant dense_resource<w_f32> : tensor<512x96xf32>
# CHECK: ok bf16 MatMul [1, 512] by an initializer: relative error below 0.01
# CHECK: ok bf16 MatMul [70, 512] by an initializer: relative error below 0.01

print("%d failed" % len(failures))
# CHECK: 0 failed
