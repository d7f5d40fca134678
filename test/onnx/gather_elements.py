# RUN: %python %s %t | FileCheck %s
#
# GatherElements (torch.gather) against NumPy: each axis, negative indices,
# indices shorter than the data in the other dims, static and dynamic
# sizes, an empty index tensor; errors on the call for an index outside its
# axis and for indices longer than the data in another dim (nothing is read
# there), and while importing for static sizes. Then torch.gather as
# torch.onnx.export writes it (dynamic axes), against torch.

import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from run_model import counting_print, run_model  # noqa: E402

print, failures = counting_print()
work = sys.argv[1]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(8)


def model(name, ddims, idims, axis):
    g = helper.make_graph(
        [helper.make_node("GatherElements", ["data", "idx"], ["y"], name="gather", axis=axis)],
        name, [helper.make_tensor_value_info("data", TensorProto.FLOAT, ddims),
               helper.make_tensor_value_info("idx", TensorProto.INT64, idims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = os.path.join(work, name + ".onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


def reference(data, idx, axis):
    """take_along_axis on data cut to the indices' other dims (ONNX reads
    out[i] = data[i with idx[i] on the axis]; NumPy wants equal dims)."""
    axis %= data.ndim
    cut = data[tuple(slice(None) if d == axis else slice(0, idx.shape[d])
                     for d in range(data.ndim))]
    return np.take_along_axis(cut, np.where(idx < 0, idx + data.shape[axis], idx), axis)


for dshape, ishape, axis in (((3, 4), (3, 4), 0), ((3, 4), (2, 6), 1), ((2, 3, 5), (2, 2, 5), -1),
                             ((2, 3, 5), (1, 3, 2), 1), ((4, 3), (0, 3), 0)):
    data = rng.standard_normal(dshape).astype(np.float32)
    size = dshape[axis]
    idx = rng.integers(-size, size, ishape).astype(np.int64)
    for dynamic in (False, True):
        dd = ["d%d" % i for i in range(len(dshape))] if dynamic else list(dshape)
        di = ["i%d" % i for i in range(len(ishape))] if dynamic else list(ishape)
        got = run_model(work, model("ge", dd, di, axis), {"data": data, "idx": idx})
        label = "data %s indices %s axis %d%s" % (list(dshape), list(ishape), axis,
                                                  " dynamic" if dynamic else "")
        want = reference(data, idx, axis)
        ok = not isinstance(got, str) and got[0].shape == want.shape and np.array_equal(got[0], want)
        print("%s %s" % ("ok" if ok else "FAIL", label), "" if ok else got)
# CHECK: ok data [3, 4] indices [3, 4] axis 0
# CHECK: ok data [3, 4] indices [3, 4] axis 0 dynamic
# CHECK: ok data [3, 4] indices [2, 6] axis 1
# CHECK: ok data [3, 4] indices [2, 6] axis 1 dynamic
# CHECK: ok data [2, 3, 5] indices [2, 2, 5] axis -1
# CHECK: ok data [2, 3, 5] indices [2, 2, 5] axis -1 dynamic
# CHECK: ok data [2, 3, 5] indices [1, 3, 2] axis 1
# CHECK: ok data [2, 3, 5] indices [1, 3, 2] axis 1 dynamic
# CHECK: ok data [4, 3] indices [0, 3] axis 0
# CHECK: ok data [4, 3] indices [0, 3] axis 0 dynamic

path = model("ge_dyn", ["a", "b"], ["c", "e"], 1)
data = np.arange(12, dtype=np.float32).reshape(3, 4)
print(run_model(work, path, {"data": data, "idx": np.array([[0, 4]], np.int64)}))
print(run_model(work, path, {"data": data, "idx": np.zeros((4, 1), np.int64)}))
print(run_model(work, model("ge_static", [3, 4], [4, 1], 1), {}))
# CHECK: error: @main: ge_dyn.onnx: 'gather' (GatherElements, indices 'idx'): index 4 is outside [-4, 4) for an axis of size 4; the call returned no result
# CHECK: error: @main: ge_dyn.onnx: 'gather' (GatherElements, indices dim 0 against data's): 4, more than 3; the call returned no result
# CHECK: ge_static.onnx:0:0: error: ONNX node 'gather' (GatherElements, opset 13): indices dim 0 is 4, more than data's 3
m = onnx.load(model("ge_opset10", [3, 4], [3, 4], 0))
m.opset_import[0].version = 10
onnx.save(m, os.path.join(work, "ge_opset10.onnx"))
print(run_model(work, os.path.join(work, "ge_opset10.onnx"), {}))
# CHECK: ge_opset10.onnx:0:0: error: ONNX node 'gather' (GatherElements, opset 10): GatherElements exists from opset 11; the model imports opset 10


class Pick(torch.nn.Module):
    def forward(self, scores, idx):
        return torch.gather(scores, -1, idx) * 2.0


scores, idx = torch.randn(2, 5, 7), torch.randint(0, 7, (2, 5, 3))
path = os.path.join(work, "pick.onnx")
torch.onnx.export(Pick(), (scores, idx), path, opset_version=13, input_names=["scores", "idx"],
                  dynamic_axes={"scores": {0: "B", 1: "T"}, "idx": {0: "B", 1: "T"}})
ops = sorted({n.op_type for n in onnx.load(path).graph.node})
scores, idx = torch.randn(3, 4, 7), torch.randint(0, 7, (3, 4, 3))
got = run_model(work, path, {"scores": scores.numpy(), "idx": idx.numpy()})
want = Pick()(scores, idx).numpy()
ok = not isinstance(got, str) and np.array_equal(got[0], want)
print("%s torch.gather export (%s) at B=3 T=4" % ("ok" if ok else "FAIL", ", ".join(ops)),
      "" if ok else got)
# CHECK: ok torch.gather export (Constant, GatherElements, Mul) at B=3 T=4
print("gather_elements: %d failed" % len(failures))
# CHECK: gather_elements: 0 failed
