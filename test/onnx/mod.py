# RUN: %python %s %t | FileCheck %s
#
# Mod against NumPy: integers with fmod=0 (Python's %, the sign of the
# divisor: np.mod) and fmod=1 (C's remainder, the sign of the dividend:
# np.fmod), negative operands both ways, broadcasting; a divisor of 0 gives
# 0 (ONNX leaves it undefined; no trap), as does INT64_MIN % -1 (a trap in
# C); floats with fmod=1 (np.fmod, NaN for a divisor of 0); floats with
# fmod=0 are refused as ONNX requires. Integer Div beside it: truncating
# (C's /), a divisor of 0 gives 0, INT64_MIN / -1 wraps to INT64_MIN (as
# NumPy's; x86's idiv traps there).

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from run_model import run_model  # noqa: E402

work = sys.argv[1]
os.makedirs(work, exist_ok=True)


def mod_model(name, elem, fmod):
    g = helper.make_graph([helper.make_node("Mod", ["a", "b"], ["y"], name="mod", fmod=fmod)],
                          name, [helper.make_tensor_value_info("a", elem, ["n", 4]),
                                 helper.make_tensor_value_info("b", elem, [4])],
                          [helper.make_tensor_value_info("y", elem, None)])
    path = os.path.join(work, name + ".onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
    return path


a = np.array([[7, -7, 7, -7], [0, 5, -5, 13], [3, -3, 12, -12]], np.int64)
b = np.array([3, 3, -3, -3], np.int64)
for fmod, ref in ((0, np.mod), (1, np.fmod)):
    for elem, dt in ((TensorProto.INT64, np.int64), (TensorProto.INT32, np.int32)):
        got = run_model(work, mod_model("mod_%d_%s" % (fmod, dt.__name__), elem, fmod),
                        {"a": a.astype(dt), "b": b.astype(dt)})
        want = ref(a, b).astype(dt)
        ok = not isinstance(got, str) and got[0].dtype == dt and np.array_equal(got[0], want)
        print("%s %s fmod=%d: %s" % ("ok" if ok else "FAIL", dt.__name__, fmod,
                                     got if isinstance(got, str) else got[0].tolist()))
# CHECK: ok int64 fmod=0: {{\[}}[1, 2, -2, -1], [0, 2, -2, -2], [0, 0, 0, 0]]
# CHECK: ok int32 fmod=0
# CHECK: ok int64 fmod=1: {{\[}}[1, -1, 1, -1], [0, 2, -2, 1], [0, 0, 0, 0]]
# CHECK: ok int32 fmod=1

edge = np.array([[5, np.iinfo(np.int64).min, -5, 0]], np.int64)
for fmod in (0, 1):
    got = run_model(work, mod_model("mod_edge_%d" % fmod, TensorProto.INT64, fmod),
                    {"a": edge, "b": np.array([0, -1, 0, 0], np.int64)})
    print("edge fmod=%d: %s" % (fmod, got if isinstance(got, str) else got[0].tolist()))
# CHECK: edge fmod=0: {{\[}}[0, 0, 0, 0]]
# CHECK: edge fmod=1: {{\[}}[0, 0, 0, 0]]

af = np.array([[5.5, -5.5, 5.5, -5.5], [1.0, 0.0, -2.25, 7.0], [3.0, 4.0, 5.0, 6.0]], np.float32)
bf = np.array([2.0, 2.0, -2.0, 0.0], np.float32)
got = run_model(work, mod_model("fmod_float", TensorProto.FLOAT, 1), {"a": af, "b": bf})
want = np.fmod(af, bf)
ok = not isinstance(got, str) and np.array_equal(got[0], want, equal_nan=True)
print("%s float fmod=1: %s" % ("ok" if ok else "FAIL", got if isinstance(got, str) else got[0].tolist()))
print(run_model(work, mod_model("mod_float", TensorProto.FLOAT, 0), {"a": af, "b": bf}))
# CHECK: ok float fmod=1: {{\[}}[1.5, -1.5, 1.5, nan], [1.0, 0.0, -0.25, nan], [1.0, 0.0, 1.0, nan]]
# CHECK: mod_float.onnx:0:0: error: ONNX node 'mod' (Mod, opset 13): float operands need fmod=1 (fmod=0 is for integers)

g = helper.make_graph([helper.make_node("Div", ["a", "b"], ["y"], name="div")], "div",
                      [helper.make_tensor_value_info("a", TensorProto.INT64, ["n", 4]),
                       helper.make_tensor_value_info("b", TensorProto.INT64, [4])],
                      [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
path = os.path.join(work, "div.onnx")
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
imin = np.iinfo(np.int64).min
got = run_model(work, path, {"a": np.array([[7, -7, 5, imin], [-7, 7, 0, imin]], np.int64),
                             "b": np.array([2, 2, 0, -1], np.int64)})
print("div: %s" % (got if isinstance(got, str) else got[0].tolist()))
# CHECK: div: {{\[}}[3, -3, 0, -9223372036854775808], [-3, 3, 0, -9223372036854775808]]

# On sizes, Mod and Div are shape arithmetic (a size is no negative, the
# divisor a positive constant): x[:, : n - n % 4] as torch exports it.
F, I64 = TensorProto.FLOAT, TensorProto.INT64
nodes = [helper.make_node("Shape", ["x"], ["s"]),
         helper.make_node("Gather", ["s", "dim1"], ["n"], axis=0),
         helper.make_node("Mod", ["n", "four"], ["r"]),
         helper.make_node("Sub", ["n", "r"], ["end"]),
         helper.make_node("Div", ["n", "four"], ["q"]),
         helper.make_node("Unsqueeze", ["end", "zero"], ["ends"]),
         helper.make_node("Slice", ["x", "zero", "ends", "one"], ["cut"]),
         helper.make_node("Cast", ["q"], ["qf"], to=F),
         helper.make_node("Mul", ["cut", "qf"], ["y"])]
g = helper.make_graph(nodes, "multiple_of_4", [helper.make_tensor_value_info("x", F, ["b", "n"])],
                      [helper.make_tensor_value_info("y", F, None)],
                      [helper.make_tensor("dim1", I64, [], [1]),
                       helper.make_tensor("one", I64, [1], [1]),
                       helper.make_tensor("zero", I64, [1], [0]),
                       helper.make_tensor("four", I64, [], [4])])
path = os.path.join(work, "multiple_of_4.onnx")
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)
x = np.arange(22, dtype=np.float32).reshape(2, 11)
got = run_model(work, path, {"x": x})
want = x[:, :8] * 2
ok = not isinstance(got, str) and np.array_equal(got[0], want)
print("%s x[:, : n - n %% 4] * (n / 4), n = 11: %s" % (
    "ok" if ok else "FAIL", got if isinstance(got, str) else list(got[0].shape)))
# CHECK: ok x[:, : n - n % 4] * (n / 4), n = 11: [2, 8]

# Mod exists from opset 10.
path = mod_model("mod_opset9", TensorProto.INT64, 0)
m = onnx.load(path)
m.opset_import[0].version = 9
onnx.save(m, path)
print(run_model(work, path, {}))
# CHECK: mod_opset9.onnx:0:0: error: ONNX node 'mod' (Mod, opset 9): Mod exists from opset 10; the model imports opset 9
# CHECK-NOT: FAIL
