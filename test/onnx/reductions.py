# RUN: %python %s %t | FileCheck %s
#
# ReduceProd, ReduceSumSquare, ReduceL1, ReduceL2 (F.normalize's norm,
# QK-norm) and ReduceLogSumExp (torch.logsumexp) at opset 13 (axes as an
# attribute) and 18 (axes as an input), keepdims on and off, against NumPy
# in float64: floats, and integers for the three that take them. LogSumExp
# subtracts its max first: rows of 100-ish values do not overflow, a row of
# -inf gives -inf and one holding +inf gives +inf. Then LogSoftmax (x - max
# - log(sum(exp(x - max)))), at opsets 11 and 13. noop_with_empty_axes
# without axes applies each op's elementwise step.

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from run_model import run_model  # noqa: E402

work = sys.argv[1]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(17)

OPS = {
    "ReduceProd": lambda x, a, k: np.prod(x, axis=a, keepdims=k),
    "ReduceSumSquare": lambda x, a, k: np.sum(x * x, axis=a, keepdims=k),
    "ReduceL1": lambda x, a, k: np.sum(np.abs(x), axis=a, keepdims=k),
    "ReduceL2": lambda x, a, k: np.sqrt(np.sum(x * x, axis=a, keepdims=k)),
    "ReduceLogSumExp": lambda x, a, k: np.log(np.sum(np.exp(x - np.max(x, axis=a, keepdims=True)),
                                                     axis=a, keepdims=True)).reshape(
        np.max(x, axis=a, keepdims=k).shape) + np.max(x, axis=a, keepdims=k),
}


def model(path, op, opset, dtype, axes, keep, shape=(3, 4, 5)):
    nodes, inits = [], []
    if opset >= 18:
        inits.append(helper.make_tensor("axes", TensorProto.INT64, [len(axes)], axes))
        nodes.append(helper.make_node(op, ["x", "axes"], ["y"], keepdims=int(keep)))
    else:
        nodes.append(helper.make_node(op, ["x"], ["y"], axes=axes, keepdims=int(keep)))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", dtype, list(shape))],
                              [helper.make_tensor_value_info("y", dtype, None)], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)


def run(path, x):
    got = run_model(work, path, {"x": x})
    return got if isinstance(got, str) else got[0]

xf = (rng.standard_normal((3, 4, 5)) * 0.8).astype(np.float32)
xi = rng.integers(-3, 4, (3, 4, 5)).astype(np.int64)
for op, ref in OPS.items():
    for opset in (13, 18):
        for axes, keep in (([-1], True), ([0, 2], False)):
            path = os.path.join(work, "%s_%d.onnx" % (op, opset))
            model(path, op, opset, TensorProto.FLOAT, axes, keep)
            got = run(path, xf)
            want = ref(xf.astype(np.float64), tuple(axes), keep)
            ok = not isinstance(got, str) and got.shape == want.shape and \
                np.allclose(got, want, rtol=1e-5, atol=1e-6)
            print("%s %s opset %d axes %s keepdims %d float" % (
                "ok" if ok else "FAIL", op, opset, axes, keep), "" if ok else got)
    if op in ("ReduceProd", "ReduceSumSquare", "ReduceL1"):
        path = os.path.join(work, "%s_int.onnx" % op)
        model(path, op, 18, TensorProto.INT64, [1], False)
        got = run(path, xi)
        want = ref(xi, (1,), False)
        ok = not isinstance(got, str) and np.array_equal(got, want)
        print("%s %s int64" % ("ok" if ok else "FAIL", op), "" if ok else got)
# LogSum: log of the sum (of positive values here; opsets 13 and 18, one
# and two axes); an int64 input is refused.
# (Its own generator: the draws of the cases below stay as they were.)
xp = (np.abs(np.random.default_rng(23).standard_normal((3, 4, 5))) + 0.1).astype(np.float32)
for opset in (13, 18):
    for axes, keep in (([-1], True), ([0, 2], False)):
        path = os.path.join(work, "logsum_%d.onnx" % opset)
        model(path, "ReduceLogSum", opset, TensorProto.FLOAT, axes, keep)
        got = run(path, xp)
        want = np.log(np.sum(xp.astype(np.float64), axis=tuple(axes), keepdims=keep))
        ok = not isinstance(got, str) and got.shape == want.shape and \
            np.allclose(got, want, rtol=1e-6, atol=1e-6)
        print("%s ReduceLogSum opset %d axes %s keepdims %d" % (
            "ok" if ok else "FAIL", opset, axes, keep), "" if ok else got)
path = os.path.join(work, "logsum_int.onnx")
model(path, "ReduceLogSum", 18, TensorProto.INT64, [1], False)
print("ReduceLogSum int64:", run(path, xi))

# LogSumExp: large values, a row of -inf, a row holding +inf.
x = (rng.standard_normal((3, 4, 5)) + 100).astype(np.float32)
x[0, 0, :] = -np.inf
x[0, 1, 2] = np.inf
path = os.path.join(work, "lse.onnx")
model(path, "ReduceLogSumExp", 18, TensorProto.FLOAT, [-1], False)
got = run(path, x)
print("logsumexp edges:", got[0, 0], got[0, 1], "finite rest",
      bool(np.allclose(got[1:], np.log(np.exp(x[1:].astype(np.float64) - 100).sum(-1)) + 100,
                       rtol=1e-6)))

# noop_with_empty_axes=1 without axes (opset 18): nothing is reduced, but
# each element takes the op's step, as ONNX specifies and ONNX Runtime
# computes (x^2, |x|, sqrt(x^2) = |x|, log(x); the others x). The input
# came back unchanged.
x = np.float32([[-1.5, 2], [0.5, -3]])
for op, want in (("ReduceSumSquare", x * x), ("ReduceL1", np.abs(x)), ("ReduceL2", np.abs(x)),
                 ("ReduceLogSum", np.log(np.abs(x))), ("ReduceLogSumExp", x),
                 ("ReduceProd", x), ("ReduceSum", x)):
    given = np.abs(x) if op == "ReduceLogSum" else x  # (log of positive values)
    path = os.path.join(work, "noop_%s.onnx" % op)
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], noop_with_empty_axes=1)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    got = run(path, given)
    ok = not isinstance(got, str) and got.shape == want.shape and np.allclose(got, want)
    print("%s %s noop_with_empty_axes" % ("ok" if ok else "FAIL", op), "" if ok else got)

# LogSoftmax along the last axis (opset 13) and, before opset 13, over the
# dims from the axis on, flattened; large logits, a row of -inf (NaN, as
# torch) and a row holding +inf (NaN throughout, as ONNX: x - max is NaN;
# it gave -inf beside the NaN).
def log_softmax(x, axes):
    m = np.max(x, axis=axes, keepdims=True)
    m = np.where(m == -np.inf, 0, m)
    return x - m - np.log(np.sum(np.exp(x - m), axis=axes, keepdims=True))


x = (rng.standard_normal((3, 4, 5)) * 30).astype(np.float32)
x[2, 3, :] = -np.inf
x[1, 2, 3] = np.inf
for opset, axis, axes in ((13, -1, -1), (11, 1, (1, 2))):
    path = os.path.join(work, "logsoftmax_%d.onnx" % opset)
    graph = helper.make_graph([helper.make_node("LogSoftmax", ["x"], ["y"], axis=axis)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4, 5])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    got = run(path, x)
    with np.errstate(invalid="ignore", divide="ignore"):
        want = log_softmax(x.astype(np.float64), axes)  # (the -inf row: NaN)
    ok = not isinstance(got, str) and got.shape == want.shape and \
        np.allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True) and \
        bool(np.isnan(want[1, 2]).all())
    print("%s LogSoftmax opset %d axis %d" % ("ok" if ok else "FAIL", opset, axis),
          "" if ok else got)

# CHECK-NOT: FAIL
# CHECK: ok ReduceProd opset 13 axes [-1] keepdims 1 float
# CHECK: ok ReduceProd int64
# CHECK: ok ReduceSumSquare opset 18 axes [0, 2] keepdims 0 float
# CHECK: ok ReduceL1 int64
# CHECK: ok ReduceL2 opset 18 axes [0, 2] keepdims 0 float
# CHECK: ok ReduceLogSumExp opset 18 axes [0, 2] keepdims 0 float
# CHECK: ok ReduceLogSum opset 13 axes [-1] keepdims 1
# CHECK: ok ReduceLogSum opset 13 axes [0, 2] keepdims 0
# CHECK: ok ReduceLogSum opset 18 axes [-1] keepdims 1
# CHECK: ok ReduceLogSum opset 18 axes [0, 2] keepdims 0
# CHECK: ReduceLogSum int64: {{.*}}error: {{.*}}ReduceLogSum{{.*}}expects a float tensor, got 'i64'
# CHECK: logsumexp edges: -inf inf finite rest True
# CHECK: ok ReduceSumSquare noop_with_empty_axes
# CHECK: ok ReduceL1 noop_with_empty_axes
# CHECK: ok ReduceL2 noop_with_empty_axes
# CHECK: ok ReduceLogSum noop_with_empty_axes
# CHECK: ok ReduceLogSumExp noop_with_empty_axes
# CHECK: ok ReduceProd noop_with_empty_axes
# CHECK: ok ReduceSum noop_with_empty_axes
# CHECK: ok LogSoftmax opset 13 axis -1
# CHECK: ok LogSoftmax opset 11 axis 1

# A reduction over a middle axis with kept dims on both sides (a mean over
# the sequence of [B, T, C]) loops in the input's order, C innermost and
# contiguous; ArgMax/ArgMin the same, with ties and a NaN in a column.
xm = (rng.standard_normal((3, 33, 40)) * 0.8).astype(np.float32)
MIDDLE = dict(OPS, ReduceSum=lambda x, a, k: np.sum(x, axis=a, keepdims=k),
              ReduceMean=lambda x, a, k: np.mean(x, axis=a, keepdims=k),
              ReduceMax=lambda x, a, k: np.max(x, axis=a, keepdims=k))
for op, ref in MIDDLE.items():
    path = os.path.join(work, "%s_middle.onnx" % op)
    model(path, op, 18, TensorProto.FLOAT, [1], False, xm.shape)
    got = run(path, xm)
    want = ref(xm.astype(np.float64), (1,), False)
    ok = not isinstance(got, str) and got.shape == want.shape and \
        np.allclose(got, want, rtol=1e-5, atol=1e-5)
    print("%s %s axis 1 of [3, 33, 40]" % ("ok" if ok else "FAIL", op), "" if ok else got)
xa = rng.integers(-2, 3, (3, 33, 40)).astype(np.float32)
xa[1, 7, 5] = xa[1, 20, 5] = np.nan
for op, last in (("ArgMax", 0), ("ArgMax", 1), ("ArgMin", 0)):
    path = os.path.join(work, "%s_middle.onnx" % op)
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"], axis=1, keepdims=0, select_last_index=last)], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 33, 40])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    got = run(path, xa)
    pick = np.argmax if op == "ArgMax" else np.argmin
    want = (xa.shape[1] - 1 - pick(xa[:, ::-1], axis=1)) if last else pick(xa, axis=1)
    ok = not isinstance(got, str) and np.array_equal(got, want)
    print("%s %s select_last_index %d axis 1 of [3, 33, 40]" % ("ok" if ok else "FAIL", op, last),
          "" if ok else got)
# CHECK: ok ReduceProd axis 1 of [3, 33, 40]
# CHECK: ok ReduceSumSquare axis 1 of [3, 33, 40]
# CHECK: ok ReduceL1 axis 1 of [3, 33, 40]
# CHECK: ok ReduceL2 axis 1 of [3, 33, 40]
# CHECK: ok ReduceLogSumExp axis 1 of [3, 33, 40]
# CHECK: ok ReduceSum axis 1 of [3, 33, 40]
# CHECK: ok ReduceMean axis 1 of [3, 33, 40]
# CHECK: ok ReduceMax axis 1 of [3, 33, 40]
# CHECK: ok ArgMax select_last_index 0 axis 1 of [3, 33, 40]
# CHECK: ok ArgMax select_last_index 1 axis 1 of [3, 33, 40]
# CHECK: ok ArgMin select_last_index 0 axis 1 of [3, 33, 40]

# Reductions over several trailing axes or all of them (attn-reshape-
# reductions collapses the axes into one row, and splits a reduction with
# fewer than 8 rows into 16 partial rows when its length, static, is at
# least 16384 and a multiple of 16): over all axes of [2, 64, 1024] (one
# row, split) and axes [1, 2] of [3, 40, 1000] (three rows, split), with
# keepdims on and off; axes [1, 2] of [3, 37, 1001] (not a multiple of 16:
# collapsed, not split) and of [B, 40, 1000] with B dynamic (not split). A
# NaN in a row must come out of the max and the sum. Against NumPy in
# float64: rtol 1e-5, atol 1e-4 (sums of up to 131072 values of order 1).
TRAILING = dict(OPS, ReduceSum=lambda x, a, k: np.sum(x, axis=a, keepdims=k),
                ReduceMean=lambda x, a, k: np.mean(x, axis=a, keepdims=k),
                ReduceMax=lambda x, a, k: np.max(x, axis=a, keepdims=k),
                ReduceMin=lambda x, a, k: np.min(x, axis=a, keepdims=k))
del TRAILING["ReduceProd"]
worst, failed = 0.0, 0
for shape, axes, dynamic in (((2, 64, 1024), [0, 1, 2], False), ((3, 40, 1000), [1, 2], False),
                             ((3, 37, 1001), [1, 2], False), ((3, 40, 1000), [1, 2], True)):
    xt = (rng.standard_normal(shape) * 0.8).astype(np.float32)
    for op, ref in TRAILING.items():
        for keep in (False, True):
            path = os.path.join(work, "%s_trailing.onnx" % op)
            dims = ["B"] + list(shape[1:]) if dynamic else shape
            model(path, op, 18, TensorProto.FLOAT, axes, keep, dims)
            got = run(path, xt)
            want = ref(xt.astype(np.float64), tuple(axes), keep)
            ok = not isinstance(got, str) and got.shape == want.shape and \
                np.allclose(got, want, rtol=1e-5, atol=1e-4)
            if not isinstance(got, str) and got.shape == want.shape:
                worst = max(worst, float(np.max(np.abs(got - want))))
            failed += not ok
            print("%s %s axes %s of %s%s keepdims %d" % (
                "ok" if ok else "FAIL", op, axes, list(shape), " (B dynamic)" if dynamic else "",
                keep), "" if ok else got)
print("trailing axes: %d failed, largest error %.1e" % (failed, worst))
xn = rng.standard_normal((2, 64, 1024)).astype(np.float32)
xn[1, 5, 7] = np.nan
for op in ("ReduceMax", "ReduceSum"):
    path = os.path.join(work, "%s_nan.onnx" % op)
    model(path, op, 18, TensorProto.FLOAT, [0, 1, 2], False, xn.shape)
    got = run(path, xn)
    print("%s %s over all axes with a NaN" % (
        "ok" if not isinstance(got, str) and np.isnan(got).all() else "FAIL", op), got)
# CHECK: ok ReduceL2 axes [0, 1, 2] of [2, 64, 1024] keepdims 0
# CHECK: ok ReduceSum axes [0, 1, 2] of [2, 64, 1024] keepdims 1
# CHECK: ok ReduceLogSumExp axes [1, 2] of [3, 40, 1000] keepdims 0
# CHECK: ok ReduceMax axes [1, 2] of [3, 40, 1000] keepdims 1
# CHECK: ok ReduceMean axes [1, 2] of [3, 37, 1001] keepdims 0
# CHECK: ok ReduceMin axes [1, 2] of [3, 40, 1000] (B dynamic) keepdims 1
# CHECK: trailing axes: 0 failed, largest error
# CHECK: ok ReduceMax over all axes with a NaN
# CHECK: ok ReduceSum over all axes with a NaN

# Leading axes reduced, trailing ones kept (column sums; attn-reshape-
# reductions loops over blocks of up to 64 columns, the reduction over
# whole rows, the columns innermost): axes [0, 1] of [4, 50, 96], axis 0 of
# [300, 96] (blocks of 32) and of [300, 100] (not a multiple of 16: left
# as it was), keepdims on and off, and an int64 sum.
failed = 0
for shape, axes in (((4, 50, 96), [0, 1]), ((300, 96), [0]), ((300, 100), [0])):
    xc = (rng.standard_normal(shape) * 0.8).astype(np.float32)
    xc[1, 7] = np.nan
    for op, ref in TRAILING.items():
        for keep in (False, True):
            path = os.path.join(work, "%s_leading.onnx" % op)
            model(path, op, 18, TensorProto.FLOAT, axes, keep, shape)
            got = run(path, xc)
            want = ref(xc.astype(np.float64), tuple(axes), keep)
            ok = not isinstance(got, str) and got.shape == want.shape and \
                np.allclose(got, want, rtol=1e-5, atol=1e-5, equal_nan=True)
            failed += not ok
            if not ok:
                print("FAIL %s axes %s of %s keepdims %d" % (op, axes, list(shape), keep), got)
xi = rng.integers(-1000, 1000, (64, 48)).astype(np.int64)
path = os.path.join(work, "sum_int_leading.onnx")
model(path, "ReduceSum", 18, TensorProto.INT64, [0], False, xi.shape)
got = run(path, xi)
failed += isinstance(got, str) or not np.array_equal(got, xi.sum(axis=0))
print("leading axes: %d failed" % failed)
# CHECK: leading axes: 0 failed

# ArgMax/ArgMin over long rows, few of them: their index pass reads the
# loop index, and is not split into partial rows (the extreme's pass is).
for shape in ((16384,), (3, 16384), (2, 32768)):
    xl = rng.integers(-3, 3, shape).astype(np.float32)
    xl[..., 10000] = 9.0
    xl[..., -5] = 9.0
    xl[..., 20] = -9.0
    for op, last in (("ArgMax", 0), ("ArgMax", 1), ("ArgMin", 0)):
        path = os.path.join(work, "%s_long.onnx" % op)
        graph = helper.make_graph(
            [helper.make_node(op, ["x"], ["y"], axis=-1, keepdims=0, select_last_index=last)], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
            [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
        got = run(path, xl)
        pick = np.argmax if op == "ArgMax" else np.argmin
        want = (shape[-1] - 1 - pick(xl[..., ::-1], axis=-1)) if last else pick(xl, axis=-1)
        ok = not isinstance(got, str) and np.array_equal(got, want)
        print("%s %s select_last_index %d over the last axis of %s" % (
            "ok" if ok else "FAIL", op, last, list(shape)), "" if ok else (got, want))
# CHECK: ok ArgMax select_last_index 0 over the last axis of [16384]
# CHECK: ok ArgMax select_last_index 1 over the last axis of [16384]
# CHECK: ok ArgMin select_last_index 0 over the last axis of [16384]
# CHECK: ok ArgMax select_last_index 0 over the last axis of [3, 16384]
# CHECK: ok ArgMax select_last_index 1 over the last axis of [3, 16384]
# CHECK: ok ArgMin select_last_index 0 over the last axis of [3, 16384]
# CHECK: ok ArgMax select_last_index 0 over the last axis of [2, 32768]
# CHECK: ok ArgMax select_last_index 1 over the last axis of [2, 32768]
# CHECK: ok ArgMin select_last_index 0 over the last axis of [2, 32768]
