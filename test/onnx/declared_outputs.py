# RUN: %python %s %t | FileCheck %s
#
# A graph output declared with a static size that the graph computes only
# while running (here from a dynamic input dim): the importer cast the
# result to the declared type, so a call whose size differs handed back a
# buffer of another size typed as the declared one (T = 1 read two rows
# past its end, T = 5 was cut to 3, both with exit code 0). Each such dim
# is now checked on each call: a differing size fails the call with the
# output, the dim and both sizes, and writes no output; the declared size
# runs. The result keeps its computed type (the signature shows ?): with
# the cast, canonicalization gave the declared size to the Relu, which
# wrote 5 rows into 3 (heap corruption, about one call in three at T = 5).
# The same from a saved shared object; T = 5 repeated.
# Outputs against NumPy, exactly (Relu and Attention to 1e-5).

import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from run_model import counting_print, run_model  # noqa: E402

print, failures = counting_print()
work = sys.argv[1]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(5)
F = TensorProto.FLOAT
vi = helper.make_tensor_value_info


def save(name, nodes, inputs, outputs, opset):
    graph = helper.make_graph(nodes, "g", [vi(*i) for i in inputs], [vi(*o) for o in outputs])
    path = os.path.join(work, name + ".onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def report(what, got, want):
    if isinstance(got, str):
        print("error %s: %s" % (what, got))
        return
    err = float(np.abs(got[0].astype(float) - want).max()) if got[0].shape == want.shape else None
    print("%s %s: shape %s, max abs error %s" % (
        "ok" if err is not None and err < 1e-5 else "FAIL", what, list(got[0].shape), err))


# Relu of x[1, T, 4] into y declared [1, 3, 4].
path = save("relu", [helper.make_node("Relu", ["x"], ["y"])],
            [("x", F, [1, "T", 4])], [("y", F, [1, 3, 4])], 17)
proc = subprocess.run([os.environ["ATTENTION_RUN"], path, "--print-signature"],
                      capture_output=True, text=True)
print("signature:", proc.stdout.strip())
# CHECK: signature: @main (x: f32[1, ?, 4]) -> (f32[1, ?, 4])
for t in (3, 1, 5):
    x = rng.standard_normal((1, t, 4)).astype(np.float32)
    report("relu T=%d" % t, run_model(work, path, {"x": x}), np.maximum(x, 0))
# CHECK: ok relu T=3: shape [1, 3, 4], max abs error 0.0
# CHECK: error relu T=1: attention-run: error: @main: relu.onnx: graph output 'y' dim 1 against its declared size: 1, expected 3; the call returned no result
# CHECK: error relu T=5: attention-run: error: @main: relu.onnx: graph output 'y' dim 1 against its declared size: 5, expected 3; the call returned no result
print("output written after a failed call:", os.path.exists(os.path.join(work, "out0.npy")))
x = rng.standard_normal((1, 5, 4)).astype(np.float32)
print("T=5, 12 times:", set(run_model(work, path, {"x": x}) for _ in range(12)))
# CHECK: output written after a failed call: False
# CHECK: T=5, 12 times: {"attention-run: error: @main: relu.onnx: graph output 'y' dim 1 against its declared size: 5, expected 3; the call returned no result"}

# The same from a saved shared object.
so = os.path.join(work, "relu.so")
subprocess.run([os.environ["ATTENTION_RUN"], path, "--compile-only", "--emit-shared-object", so],
               check=True, capture_output=True)
for t in (3, 2):
    x = rng.standard_normal((1, t, 4)).astype(np.float32)
    report("relu.so T=%d" % t, run_model(work, so, {"x": x}), np.maximum(x, 0))
# CHECK: ok relu.so T=3: shape [1, 3, 4], max abs error 0.0
# CHECK: error relu.so T=2: attention-run: error: @main: relu.onnx: graph output 'y' dim 1 against its declared size: 2, expected 3; the call returned no result

# Attention over dynamic query and key lengths, Y declared [1, 2, 4, 8]:
# only the query length reaches Y.
path = save("attention", [helper.make_node("Attention", ["Q", "K", "V"], ["Y"], is_causal=0)],
            [("Q", F, [1, 2, "T", 8]), ("K", F, [1, 2, "S", 8]), ("V", F, [1, 2, "S", 8])],
            [("Y", F, [1, 2, 4, 8])], 23)
for t, s in ((4, 6), (4, 2), (6, 6)):
    q = rng.standard_normal((1, 2, t, 8)).astype(np.float32)
    k = rng.standard_normal((1, 2, s, 8)).astype(np.float32)
    v = rng.standard_normal((1, 2, s, 8)).astype(np.float32)
    sc = q.astype(float) @ k.astype(float).transpose(0, 1, 3, 2) / np.sqrt(8)
    w = np.exp(sc - sc.max(-1, keepdims=True))
    report("attention T=%d S=%d" % (t, s), run_model(work, path, {"Q": q, "K": k, "V": v}),
           (w / w.sum(-1, keepdims=True)) @ v)
# CHECK: ok attention T=4 S=6: shape [1, 2, 4, 8], max abs error
# CHECK: ok attention T=4 S=2: shape [1, 2, 4, 8], max abs error
# CHECK: error attention T=6 S=6: attention-run: error: @main: attention.onnx: graph output 'Y' dim 2 against its declared size: 6, expected 4; the call returned no result

print("%d failed" % len(failures))
# CHECK: 0 failed
