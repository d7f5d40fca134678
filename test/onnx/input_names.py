# RUN: %python %s %t | FileCheck %s
#
# ONNX graph inputs bind by name (--input NAME=PATH) also where the name
# has a colon or a space (tf2onnx writes "input:0"); the signature shows
# the names. A MatMul plus an Add, bound out of order, against NumPy.
# A name spelt like an index ("1", "arg0": older torch exports name inputs
# by number, not always in order) binds by name: it bound by position,
# silently swapping the operands.

import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

RUN = os.environ["ATTENTION_RUN"]
work = sys.argv[1]
os.makedirs(work, exist_ok=True)
F = TensorProto.FLOAT
graph = helper.make_graph(
    [helper.make_node("MatMul", ["input:0", "w b"], ["m"]),
     helper.make_node("Add", ["m", "bias/0"], ["y"])], "g",
    [helper.make_tensor_value_info("input:0", F, [2, 3]),
     helper.make_tensor_value_info("w b", F, [3, 4]),
     helper.make_tensor_value_info("bias/0", F, [2, 4])],
    [helper.make_tensor_value_info("y", F, [2, 4])])
path = os.path.join(work, "names.onnx")
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
rng = np.random.default_rng(8)
arrays = {"input:0": rng.standard_normal((2, 3)), "w b": rng.standard_normal((3, 4)),
          "bias/0": rng.standard_normal((2, 4))}
files = {}
for i, (name, a) in enumerate(arrays.items()):
    files[name] = os.path.join(work, "in%d.npy" % i)
    np.save(files[name], a.astype(np.float32))
out = os.path.join(work, "y.npy")
cmd = [RUN, path, "--print-signature", "--output", out]
for name in ("bias/0", "w b", "input:0"):  # out of order
    cmd += ["--input", "%s=%s" % (name, files[name])]
proc = subprocess.run(cmd, capture_output=True, text=True)
print(proc.stdout.strip().splitlines()[0] if proc.returncode == 0 else proc.stderr)
want = arrays["input:0"] @ arrays["w b"] + arrays["bias/0"]
err = abs(np.load(out) - want).max() if proc.returncode == 0 else None
print("bound by name:", "ok" if err is not None and err < 1e-5 else "FAIL")

# CHECK: @main (input:0: f32[2, 3], w b: f32[3, 4], bias/0: f32[2, 4]) -> (f32[2, 4])
# CHECK: bound by name: ok

# Inputs named "1" (position 0) and "0" (position 1): y = "1" - "0".
for names in (("1", "0"), ("arg1", "arg0")):
    graph = helper.make_graph(
        [helper.make_node("Sub", list(names), ["y"])], "g",
        [helper.make_tensor_value_info(n, F, [3]) for n in names],
        [helper.make_tensor_value_info("y", F, [3])])
    path = os.path.join(work, "numbered.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    a, b = np.float32([10, 20, 30]), np.float32([1, 2, 3])
    np.save(os.path.join(work, "a.npy"), a)
    np.save(os.path.join(work, "b.npy"), b)
    if os.path.exists(out):
        os.remove(out)
    proc = subprocess.run([RUN, path, "--input", "%s=%s" % (names[0], os.path.join(work, "a.npy")),
                           "--input", "%s=%s" % (names[1], os.path.join(work, "b.npy")),
                           "--output", out], capture_output=True, text=True)
    got = np.load(out) if proc.returncode == 0 else proc.stderr
    print("names %s, %s:" % names, got.tolist() if proc.returncode == 0 else got,
          "ok" if proc.returncode == 0 and (got == a - b).all() else "FAIL")
# CHECK: names 1, 0: [9.0, 18.0, 27.0] ok
# CHECK: names arg1, arg0: [9.0, 18.0, 27.0] ok
