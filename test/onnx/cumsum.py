# RUN: %python %s %t | FileCheck %s
#
# CumSum as a scan: an scf.forall over the dims before the axis, in each
# item an scf.for along the axis carrying the running sum of a row of the
# dims after it. (A masked reduction over the whole axis per position, as
# before, was O(n^2): [4, 512, 768] along axis 1 took 448 ms.) Every axis
# of a rank-3 tensor (first, middle, last, negative), exclusive and
# reverse and both, static and dynamic sizes, rank 1, a single item (no
# dims before the axis but 1), static empty tensors, int64 (exact) and
# float16 (summed in f32), against NumPy in float64.

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
rng = np.random.default_rng(5)
vi = helper.make_tensor_value_info
types = {np.float32: TensorProto.FLOAT, np.int64: TensorProto.INT64,
         np.float16: TensorProto.FLOAT16}


def reference(x, axis, exclusive, reverse):
    x = x.astype(np.float64) if x.dtype != np.int64 else x
    if reverse:
        x = np.flip(x, axis)
    c = np.cumsum(x, axis)
    if exclusive:
        c = c - x
    return np.flip(c, axis) if reverse else c


cases = []
for axis in (0, 1, 2, -1):
    for exclusive, reverse in ((0, 0), (1, 0), (0, 1), (1, 1)):
        cases.append(((3, 37, 20), axis, exclusive, reverse, np.float32, False))
cases += [((3, 37, 20), 1, 0, 0, np.float32, True), ((2, 5, 300), -1, 1, 1, np.float32, True),
          ((1000,), 0, 0, 0, np.float32, False), ((4, 700), -1, 0, 0, np.int64, False),
          ((4, 700), 1, 1, 0, np.int64, True), ((2, 64, 48), 1, 0, 1, np.float16, False),
          ((1, 300, 20), 1, 1, 0, np.float32, False), ((3, 0), 1, 0, 0, np.float32, False),
          ((0,), 0, 0, 0, np.float32, False), ((2, 0, 3), 0, 0, 1, np.float32, False)]
for shape, axis, exclusive, reverse, dtype, dynamic in cases:
    if dtype == np.int64:
        x = rng.integers(-1000, 1000, shape).astype(np.int64)
    else:
        x = rng.standard_normal(shape).astype(dtype)
    dims = ["d%d" % i for i in range(len(shape))] if dynamic else list(shape)
    graph = helper.make_graph(
        [helper.make_node("CumSum", ["x", "axis"], ["y"], exclusive=exclusive, reverse=reverse)],
        "g", [vi("x", types[dtype], dims)], [vi("y", types[dtype], None)],
        [numpy_helper.from_array(np.array(axis, np.int64), "axis")])
    path = os.path.join(work, "cumsum.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    what = "%s %s axis %d exclusive %d reverse %d%s" % (
        np.dtype(dtype).name, list(shape), axis, exclusive, reverse, " dynamic" if dynamic else "")
    got = run_model(work, path, {"x": x})
    if isinstance(got, str):
        print("FAIL %s: %s" % (what, got))
        continue
    want = reference(x, axis, exclusive, reverse)
    if dtype == np.int64:
        ok = got[0].dtype == np.int64 and np.array_equal(got[0], want)
        print("%s %s: %s" % ("ok" if ok else "FAIL", what, "exact" if ok else "differs"))
        continue
    tol = 2e-3 if dtype == np.float16 else 1e-5
    err = float(np.abs(got[0].astype(np.float64) - want).max() / max(1.0, np.abs(want).max())
                if want.size else 0.0)
    ok = got[0].shape == want.shape and err < tol
    print("%s %s: error %s" % ("ok" if ok else "FAIL", what,
                               "below %g" % tol if ok else err))
# CHECK: ok float32 [3, 37, 20] axis 0 exclusive 0 reverse 0: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis 0 exclusive 1 reverse 0: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis 0 exclusive 0 reverse 1: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis 0 exclusive 1 reverse 1: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis 1 exclusive 0 reverse 0: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis 1 exclusive 1 reverse 0: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis 1 exclusive 0 reverse 1: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis 1 exclusive 1 reverse 1: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis 2 exclusive 0 reverse 0: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis 2 exclusive 1 reverse 0: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis 2 exclusive 0 reverse 1: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis 2 exclusive 1 reverse 1: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis -1 exclusive 0 reverse 0: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis -1 exclusive 1 reverse 0: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis -1 exclusive 0 reverse 1: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis -1 exclusive 1 reverse 1: error below 1e-05
# CHECK: ok float32 [3, 37, 20] axis 1 exclusive 0 reverse 0 dynamic: error below 1e-05
# CHECK: ok float32 [2, 5, 300] axis -1 exclusive 1 reverse 1 dynamic: error below 1e-05
# CHECK: ok float32 [1000] axis 0 exclusive 0 reverse 0: error below 1e-05
# CHECK: ok int64 [4, 700] axis -1 exclusive 0 reverse 0: exact
# CHECK: ok int64 [4, 700] axis 1 exclusive 1 reverse 0 dynamic: exact
# CHECK: ok float16 [2, 64, 48] axis 1 exclusive 0 reverse 1: error below 0.002
# CHECK: ok float32 [1, 300, 20] axis 1 exclusive 1 reverse 0: error below 1e-05
# CHECK: ok float32 [3, 0] axis 1 exclusive 0 reverse 0: error below 1e-05
# CHECK: ok float32 [0] axis 0 exclusive 0 reverse 0: error below 1e-05
# CHECK: ok float32 [2, 0, 3] axis 0 exclusive 0 reverse 1: error below 1e-05
print("%d failed" % len(failures))
# CHECK: 0 failed
