# RUN: %python %s %t | FileCheck %s
#
# ScatterND: hand-built graphs against a NumPy loop (indices of length 1 to
# the data's rank, so slices and single elements; negative indices;
# repeated indices, where the last update wins; reductions add, mul, max,
# min), with static and with dynamic dims; a graph input is never updated
# in place (runs repeated on one input agree); errors while importing and,
# for sizes known only while running, on the call. Then PyTorch's slice
# assignment, as Hugging Face builds a 4-D mask (a causal mask whose
# first L columns get the padding mask, `m[:, :, :, :L] = m[:, :, :,
# :L].masked_fill(pad, min)`, L the keys' length), exported with dynamic
# axes (torch writes ScatterND with one index tuple per element) and used
# as the additive mask of an attention block, against torch.

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
rng = np.random.default_rng(41)
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def scatter_ref(data, idx, upd, reduction="none"):
    out = data.copy()
    combine = {"none": lambda o, u: u, "add": np.add, "mul": np.multiply,
               "max": np.maximum, "min": np.minimum}[reduction]
    for p in np.ndindex(idx.shape[:-1]):
        t = tuple(int(i) for i in idx[p])
        out[t] = combine(out[t], upd[p])
    return out


def model(name, dims, reduction=None, opset=18):
    """dims: the three inputs' dims (strings for dynamic ones)."""
    attrs = {"reduction": reduction} if reduction else {}
    g = helper.make_graph(
        [helper.make_node("ScatterND", ["data", "idx", "upd"], ["y"], name="scatter", **attrs)],
        name, [helper.make_tensor_value_info(n, t, d)
               for n, t, d in zip(("data", "idx", "upd"), (F, I64, F), dims)],
        [helper.make_tensor_value_info("y", F, None)])
    path = os.path.join(work, name + ".onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def case(dshape, ishape, reduction="none", dynamic=False):
    k = ishape[-1]
    idx = np.stack([rng.integers(-dshape[j], dshape[j], ishape[:-1]) for j in range(k)],
                   -1).astype(np.int64)
    ushape = tuple(ishape[:-1]) + tuple(dshape[k:])
    data = rng.standard_normal(dshape).astype(np.float32)
    upd = rng.standard_normal(ushape).astype(np.float32)
    if dynamic:
        dims = [["d%d" % i for i in range(len(dshape))],
                ["i%d" % i for i in range(len(ishape) - 1)] + [k],
                ["u%d" % i for i in range(len(ushape))]]
    else:
        dims = [list(dshape), list(ishape), list(ushape)]
    path = model("scatter", dims, None if reduction == "none" else reduction)
    got = run_model(work, path, {"data": data, "idx": idx, "upd": upd})
    label = "data %s indices %s %s%s" % (list(dshape), list(ishape), reduction,
                                         " dynamic" if dynamic else "")
    if isinstance(got, str):
        print("FAIL %s: %s" % (label, got))
        return
    repeats = len({tuple(t) for t in (idx.reshape(-1, k) % np.array(dshape[:k]))}) < \
        idx.reshape(-1, k).shape[0]
    err = float(np.abs(got[0] - scatter_ref(data, idx, upd, reduction)).max())
    print("%s %s%s: max_abs_err %.2g" % ("ok" if err <= 1e-6 else "FAIL", label,
                                        " (repeated indices)" if repeats else "", err))


for dynamic in (False, True):
    case((4, 5), (3, 1), dynamic=dynamic)
    case((4, 5), (6, 2), dynamic=dynamic)
    case((2, 3, 4), (2, 2, 1), dynamic=dynamic)
    case((2, 3, 4), (9, 3), dynamic=dynamic)
    for reduction in ("add", "mul", "max", "min"):
        case((3, 4), (7, 1), reduction, dynamic=dynamic)
        case((3, 4), (7, 2), reduction, dynamic=dynamic)
# CHECK: ok data [4, 5] indices [3, 1] none: max_abs_err 0
# CHECK: ok data [4, 5] indices [6, 2] none
# CHECK: ok data [2, 3, 4] indices [2, 2, 1] none
# CHECK: ok data [2, 3, 4] indices [9, 3] none
# CHECK: ok data [3, 4] indices [7, 1] add (repeated indices)
# CHECK: ok data [3, 4] indices [7, 2] add
# CHECK: ok data [3, 4] indices [7, 1] mul (repeated indices)
# CHECK: ok data [3, 4] indices [7, 1] max (repeated indices)
# CHECK: ok data [3, 4] indices [7, 1] min (repeated indices)
# CHECK: ok data [4, 5] indices [3, 1] none dynamic
# CHECK: ok data [2, 3, 4] indices [9, 3] none dynamic
# CHECK: ok data [3, 4] indices [7, 2] min dynamic

# Errors on the call: an index outside its dim; updates whose dynamic size
# is not the one the indices and data give (nothing is written).
path = model("dyn", [["a", "b"], ["n", 1], ["m", "c"]])
feeds = {"data": np.zeros((4, 3), np.float32), "idx": np.array([[1], [4]], np.int64),
         "upd": np.ones((2, 3), np.float32)}
print(run_model(work, path, feeds))
feeds["idx"] = np.array([[1], [-5]], np.int64)
print(run_model(work, path, feeds))
feeds["idx"] = np.array([[1], [-4]], np.int64)
feeds["upd"] = np.ones((2, 2), np.float32)
print(run_model(work, path, feeds))
feeds["upd"] = np.ones((3, 3), np.float32)
print(run_model(work, path, feeds))
# CHECK: error: @main: dyn.onnx: 'scatter' (ScatterND, indices 'idx'): index 4 is outside [-4, 4) for an axis of size 4; the call returned no result
# CHECK: error: @main: dyn.onnx: 'scatter' (ScatterND, indices 'idx'): index -5 is outside [-4, 4) for an axis of size 4; the call returned no result
# CHECK: error: @main: dyn.onnx: 'scatter' (ScatterND, updates dim 1 against data dim 1): 2, expected 3; the call returned no result
# CHECK: error: @main: dyn.onnx: 'scatter' (ScatterND, updates dim 0 against indices dim 0): 3, expected 2; the call returned no result

# A dynamic dim of data read again after the loop (Relu(y) needs its
# size: the importer made it inside the loop, "does not dominate this
# use"); a graph input scattered with add and run 3 times (warm-up and two
# timed runs: the input was updated in place, 3 x the update); a static
# empty slice (nothing to write; an out-of-bounds offset while importing).
import subprocess  # noqa: E402
g = helper.make_graph(
    [helper.make_node("ScatterND", ["data", "idx", "upd"], ["s"], reduction="add"),
     helper.make_node("Relu", ["s"], ["y"])], "after",
    [helper.make_tensor_value_info("data", F, ["a", 3]),
     helper.make_tensor_value_info("idx", I64, [1, 1]),
     helper.make_tensor_value_info("upd", F, [1, 3])],
    [helper.make_tensor_value_info("y", F, None)])
path = os.path.join(work, "after.onnx")
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
feeds = {"data": np.ones((2, 3), np.float32), "idx": np.array([[1]], np.int64),
         "upd": np.full((1, 3), 2.0, np.float32)}
cmd = [os.environ["ATTENTION_RUN"], path, "--repeat", "2", "--output",
       os.path.join(work, "after_out.npy")]
for name, a in feeds.items():
    np.save(os.path.join(work, "after_%s.npy" % name), a)
    cmd += ["--input", "%s=%s" % (name, os.path.join(work, "after_%s.npy" % name))]
proc = subprocess.run(cmd, capture_output=True, text=True)
got = np.load(os.path.join(work, "after_out.npy")) if proc.returncode == 0 else proc.stderr
print("%s scatter-add then Relu, 3 runs of one input: %s" % (
    "ok" if not isinstance(got, str) and np.array_equal(
        got, [[1, 1, 1], [3, 3, 3]]) else "FAIL", got if isinstance(got, str) else got.tolist()))
path = model("empty_slice", [[4, 0], [2, 1], [2, 0]])
got = run_model(work, path, {"data": np.zeros((4, 0), np.float32),
                             "idx": np.array([[1], [3]], np.int64),
                             "upd": np.zeros((2, 0), np.float32)})
print("%s static empty slices: %s" % ("FAIL" if isinstance(got, str) else "ok",
                                       got if isinstance(got, str) else list(got[0].shape)))
# CHECK: ok scatter-add then Relu, 3 runs of one input: {{\[}}[1.0, 1.0, 1.0], [3.0, 3.0, 3.0]]
# CHECK: ok static empty slices: [4, 0]

# Errors while importing.
for name, dims, reduction in (("long", [[4, 3], [2, 3], [2]], None),
                              ("shape", [[4, 3], [2, 1], [2, 4]], None),
                              ("rank", [[4, 3], [2, 1], [2]], None),
                              ("dynlen", [[4, 3], [2, "k"], [2, 3]], None),
                              ("reduce", [[4, 3], [2, 1], [2, 3]], "sub")):
    print(run_model(work, model(name, dims, reduction), {}))
print(run_model(work, model("add13", [[4, 3], [2, 1], [2, 3]], "add", opset=13), {}))
print(run_model(work, model("max16", [[4, 3], [2, 1], [2, 3]], "max", opset=16), {}))
# CHECK: long.onnx:0:0: error: ONNX node 'scatter' (ScatterND, opset 18): indices of length 3 into data of rank 2 (expected 1 to 2)
# CHECK: shape.onnx:0:0: error: ONNX node 'scatter' (ScatterND, opset 18): updates dim 1 is 4, expected 3 (indices' dims but the last, then data's from 1)
# CHECK: rank.onnx:0:0: error: ONNX node 'scatter' (ScatterND, opset 18): updates must have rank 2 (indices' rank - 1 + data's rank - 1), got 'tensor<2xf32>'
# CHECK: dynlen.onnx:0:0: error: ONNX node 'scatter' (ScatterND, opset 18): the last dim of indices (the index length) must be static, got 'tensor<2x?xi64>'
# CHECK: reduce.onnx:0:0: error: ONNX node 'scatter' (ScatterND, opset 18): reduction 'sub' is not one of none, add, mul, max, min
# CHECK: add13.onnx:0:0: error: ONNX node 'scatter' (ScatterND, opset 13): reduction 'add' needs opset 16 or later
# CHECK: max16.onnx:0:0: error: ONNX node 'scatter' (ScatterND, opset 16): reduction 'max' needs opset 18 or later


# A Hugging Face style 4-D mask built by slice assignment, then attention.
class MaskedAttention(torch.nn.Module):
    def forward(self, q, k, v, pad):
        t, s, n = q.shape[2], k.shape[2], pad.shape[1]
        low = torch.finfo(torch.float32).min
        causal = torch.full((t, s), low).triu(1 + s - t)
        m = causal[None, None].expand(q.shape[0], 1, t, s).clone()
        m[:, :, :, :n] = m[:, :, :, :n].masked_fill(pad[:, None, None, :] == 0, low)
        w = (q @ k.transpose(-1, -2) / 4.0 + m).softmax(-1)
        return w @ v


torch.manual_seed(0)
mod = MaskedAttention().eval()
mk = lambda b, t: torch.randn(b, 2, t, 16)
ex = (mk(2, 5), mk(2, 7), mk(2, 7), torch.ones(2, 7, dtype=torch.int64))
path = os.path.join(work, "hf_mask.onnx")
torch.onnx.export(mod, ex, path, opset_version=17, input_names=["q", "k", "v", "pad"],
                  output_names=["y"],
                  dynamic_axes={"q": {0: "B", 2: "T"}, "k": {0: "B", 2: "S"},
                                "v": {0: "B", 2: "S"}, "pad": {0: "B", 1: "S"}, "y": {0: "B", 2: "T"}})
ops = sorted({n.op_type for n in onnx.load(path).graph.node})
print("hf mask export: ScatterND %s" % ("present" if "ScatterND" in ops else "MISSING"))
for b, t, s, nmask in ((2, 5, 7, 7), (3, 4, 9, 9), (1, 1, 12, 12)):
    q, k, v = mk(b, t), mk(b, s), mk(b, s)
    pad = torch.ones(b, nmask, dtype=torch.int64)
    pad[0, :2] = 0  # left padding of the first sequence
    with torch.no_grad():
        want = mod(q, k, v, pad).numpy()
    got = run_model(work, path, {"q": q.numpy(), "k": k.numpy(), "v": v.numpy(),
                                 "pad": pad.numpy()})
    if isinstance(got, str):
        print("FAIL hf mask B=%d T=%d S=%d N=%d: %s" % (b, t, s, nmask, got))
        continue
    err = float(np.abs(got[0] - want).max())
    print("%s hf mask B=%d T=%d S=%d N=%d: max_abs_err %.2g" % (
        "ok" if err < 1e-5 else "FAIL", b, t, s, nmask, err))
# CHECK: hf mask export: ScatterND present
# CHECK: ok hf mask B=2 T=5 S=7 N=7
# CHECK: ok hf mask B=3 T=4 S=9 N=9
# CHECK: ok hf mask B=1 T=1 S=12 N=12
print("scatter_nd: %d failed" % len(failures))
# CHECK: scatter_nd: 0 failed
