# RUN: %python %s %t | FileCheck %s
#
# Split into equal parts (opset 18's num_outputs, torch.chunk): ceil(size /
# parts) each and the last what remains, an empty last part included
# (4 in 3: 2, 2, 0); explicit lengths with a 0. Against NumPy slices, on
# static and dynamic axes. A size whose last part would be negative (5 in
# 4: 2, 2, 2, -1) is refused while importing for a static axis and fails
# the call for a dynamic one (it crashed reading past the axis; static
# empty parts failed to verify).

import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from run_model import run_model  # noqa: E402

work = sys.argv[1]
os.makedirs(work, exist_ok=True)
F = TensorProto.FLOAT


def save(name, parts, shape, lengths=None, opset=18):
    outs = ["y%d" % i for i in range(parts)]
    inputs = ["x"]
    inits = []
    if lengths is not None:
        inputs.append("lengths")
        inits.append(numpy_helper.from_array(np.array(lengths, np.int64), "lengths"))
        node = helper.make_node("Split", inputs, outs, axis=1, name="split")
    else:
        node = helper.make_node("Split", inputs, outs, axis=1, name="split",
                                **({"num_outputs": parts} if opset >= 18 else {}))
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", F, shape)],
                              [helper.make_tensor_value_info(o, F, None) for o in outs],
                              inits)
    path = os.path.join(work, name + ".onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def check(label, path, x, bounds):
    got = run_model(work, path, {"x": x}, n_out=len(bounds))
    if isinstance(got, str):
        print("FAIL %s: %s" % (label, got))
        return
    want = [x[:, a:b] for a, b in bounds]
    ok = all(g.shape == w.shape and np.array_equal(g, w) for g, w in zip(got, want))
    print("%s %s: %s" % ("ok" if ok else "FAIL", label,
                         " ".join("x".join(map(str, g.shape)) for g in got)))


x = np.arange(3 * 9, dtype=np.float32).reshape(3, 9)
check("static 4 in 3", save("s4_3", 3, [3, 4]), x[:, :4], [(0, 2), (2, 4), (4, 4)])
check("static 5 in 2", save("s5_2", 2, [3, 5]), x[:, :5], [(0, 3), (3, 5)])
check("static lengths 4, 0", save("l4_0", 2, [3, 4], [4, 0]), x[:, :4], [(0, 4), (4, 4)])
check("static lengths 0, 4", save("l0_4", 2, [3, 4], [0, 4]), x[:, :4], [(0, 0), (0, 4)])
dynamic = save("d3", 3, [3, "w"])
for w, bounds in ((9, [(0, 3), (3, 6), (6, 9)]), (4, [(0, 2), (2, 4), (4, 4)]),
                  (7, [(0, 3), (3, 6), (6, 7)])):
    check("dynamic %d in 3" % w, dynamic, x[:, :w], bounds)
# 5 in 3: 2, 2, 1; in 4 parts: 2, 2, 2, -1.
print("static 5 in 4:", run_model(work, save("s5_4", 4, [3, 5]), {"x": x[:, :5]}, 4))
print("dynamic 5 in 4:", run_model(work, save("d4", 4, [3, "w"]), {"x": x[:, :5]}, 4))
check("dynamic 8 in 4", os.path.join(work, "d4.onnx"), x[:, :8],
      [(0, 2), (2, 4), (4, 6), (6, 8)])
# Before opset 18 the parts are equal: 5 in 2 is refused, 6 in 2 splits.
print("opset 13 5 in 2:", run_model(work, save("o13_5", 2, [3, 5], opset=13), {"x": x[:, :5]}, 2))
check("opset 13 6 in 2", save("o13_6", 2, [3, 6], opset=13), x[:, :6], [(0, 3), (3, 6)])
# One or two parts on a dynamic axis always fit: no check while running.
translate = os.path.join(os.path.dirname(os.environ["ATTENTION_RUN"]), "attention-translate")
for parts in (1, 2):
    ir = subprocess.run([translate, "--import-onnx", save("dyn%d" % parts, parts, [3, "w"])],
                        capture_output=True, text=True).stdout
    print("dynamic in %d: %s" % (parts, "checked" if "index_checks" in ir else "no check"))
check("dynamic 7 in 2", os.path.join(work, "dyn2.onnx"), x[:, :7], [(0, 4), (4, 7)])

# CHECK: ok static 4 in 3: 3x2 3x2 3x0
# CHECK: ok static 5 in 2: 3x3 3x2
# CHECK: ok static lengths 4, 0: 3x4 3x0
# CHECK: ok static lengths 0, 4: 3x0 3x4
# CHECK: ok dynamic 9 in 3: 3x3 3x3 3x3
# CHECK: ok dynamic 4 in 3: 3x2 3x2 3x0
# CHECK: ok dynamic 7 in 3: 3x3 3x3 3x1
# CHECK: static 5 in 4: {{.*}}error: ONNX node 'split' (Split, opset 18): 4 equal parts of 5 elements leave -1 for the last (axis 1)
# CHECK: dynamic 5 in 4: attention-run: error: @main: d4.onnx: 'split' (Split, 4 equal parts of axis 1: the first 3 against its size): 6, more than 5; the call returned no result
# CHECK: ok dynamic 8 in 4: 3x2 3x2 3x2 3x2
# CHECK: opset 13 5 in 2: {{.*}}error: ONNX node 'split' (Split, opset 13): 5 elements do not split into 2 equal parts (axis 1; before opset 18 the parts are equal)
# CHECK: ok opset 13 6 in 2: 3x3 3x3
# CHECK: dynamic in 1: no check
# CHECK: dynamic in 2: no check
# CHECK: ok dynamic 7 in 2: 3x4 3x3
# CHECK-NOT: FAIL
