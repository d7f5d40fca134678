# RUN: %python %s %t | FileCheck %s
#
# Tile (x.repeat, nn.MultiheadAttention's add_bias_kv) and constant Pad
# (F.pad): against NumPy's tile and pad. Tile repeats static dims and
# dynamic ones (run with a batch and an empty batch); Pad takes its pads
# as an attribute before opset 11 and as an input from 11 (negative pads
# crop), a constant_value input, opset 18's axes. Reflect padding and a
# crop of a dynamic dim are errors naming the node.

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from run_model import run_model  # noqa: E402

work = sys.argv[1]
os.makedirs(work, exist_ok=True)
F = TensorProto.FLOAT
rng = np.random.default_rng(23)
x = rng.standard_normal((2, 3, 4)).astype(np.float32)


def save(name, nodes, shape, inits=(), opset=17):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", F, shape)],
                              [helper.make_tensor_value_info("y", F, None)], list(inits))
    path = os.path.join(work, name + ".onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def run(path, a):
    got = run_model(work, path, {"x": a})
    return got if isinstance(got, str) else got[0]

def check(label, got, want):
    ok = not isinstance(got, str) and got.shape == want.shape and np.array_equal(got, want)
    print("%s %s" % ("ok" if ok else "FAIL", label), "" if ok else got)


ints = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
path = save("tile", [helper.make_node("Tile", ["x", "r"], ["y"])], [2, 3, 4],
            [ints("r", [2, 1, 3])])
check("tile [2, 1, 3]", run(path, x), np.tile(x, (2, 1, 3)))
path = save("tile_dyn", [helper.make_node("Tile", ["x", "r"], ["y"])], ["b", 3, 4],
            [ints("r", [1, 2, 1])])
check("tile dynamic batch kept", run(path, x), np.tile(x, (1, 2, 1)))
path = save("tile_dyn_repeat", [helper.make_node("Tile", ["x", "r"], ["y"], name="rep")],
            ["b", 3, "c"], [ints("r", [2, 1, 3])])
check("tile dynamic dims repeated", run(path, x), np.tile(x, (2, 1, 3)))
check("tile dynamic dims repeated, empty batch", run(path, x[:0]), np.tile(x[:0], (2, 1, 3)))
path = save("tile_huge", [helper.make_node("Tile", ["x", "r"], ["y"], name="huge")],
            ["b", 3, 4], [ints("r", [1, 1, 2 ** 62])])
print(run(path, x))
path = save("pad11", [helper.make_node("Pad", ["x", "p", "v"], ["y"])], [2, 3, 4],
            [ints("p", [0, 1, 2, 1, 0, 3]),
             numpy_helper.from_array(np.array(-5.0, np.float32), "v")], opset=11)
check("pad opset 11 value -5", run(path, x),
      np.pad(x, ((0, 1), (1, 0), (2, 3)), constant_values=-5))
path = save("pad_crop", [helper.make_node("Pad", ["x", "p"], ["y"])], ["b", 3, 4],
            [ints("p", [0, -1, 1, 0, 0, -2])])
check("pad crop and pad, dynamic batch", run(path, x), np.pad(x[:, 1:, :2], ((0, 0), (0, 0), (1, 0))))
path = save("pad10", [helper.make_node("Pad", ["x"], ["y"], pads=[1, 0, 0, 0, 2, 1], value=0.5)],
            [2, 3, 4], opset=10)
check("pad opset 10 attributes", run(path, x),
      np.pad(x, ((1, 0), (0, 2), (0, 1)), constant_values=0.5))
path = save("pad18", [helper.make_node("Pad", ["x", "p", "", "a"], ["y"])], [2, 3, 4],
            [ints("p", [2, 1]), ints("a", [-1])], opset=18)
check("pad opset 18 axes [-1]", run(path, x), np.pad(x, ((0, 0), (0, 0), (2, 1))))
path = save("pad_crop_dynamic", [helper.make_node("Pad", ["x", "p"], ["y"], name="crop")],
            ["b", 3, 4], [ints("p", [-1, 0, 0, 0, 0, 0])])
print(run(path, x))
path = save("pad_reflect", [helper.make_node("Pad", ["x", "p"], ["y"], mode="reflect",
                                             name="mirror")], [2, 3, 4],
            [ints("p", [0, 0, 1, 0, 0, 1])])
print(run(path, x))

# CHECK: ok tile [2, 1, 3]
# CHECK: ok tile dynamic batch kept
# CHECK: ok tile dynamic dims repeated
# CHECK: ok tile dynamic dims repeated, empty batch
# CHECK: error: ONNX node 'huge' (Tile, opset 17): repeat 4611686018427387904 of dim 2 makes too many elements
# CHECK: ok pad opset 11 value -5
# CHECK: ok pad crop and pad, dynamic batch
# CHECK: ok pad opset 10 attributes
# CHECK: ok pad opset 18 axes [-1]
# CHECK: error: ONNX node 'crop' (Pad, opset 17): negative pads (a crop) on dynamic dim 0 are not supported (its size is only known while running)
# CHECK: error: ONNX node 'mirror' (Pad, opset 17): mode 'reflect' is not supported (only 'constant' padding)
# CHECK-NOT: FAIL
