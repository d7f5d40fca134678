# RUN: %python %s %t | FileCheck %s
#
# Activations and elementwise math functions through the CPU pipeline
# against NumPy in float64: Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh,
# Atanh, Softplus, Softsign, HardSigmoid, HardSwish, Elu, Selu, Celu,
# ThresholdedRelu, Mish, PRelu (a per-channel slope and a scalar one),
# IsNaN and IsInf (every detect_negative/detect_positive pair), with their
# ONNX default parameters and with others. Inputs: a sweep over each op's
# domain with 0, -0, values near the edges (-100 and 100 for the
# exponentials: Softplus must not overflow), +-inf and NaN. rtol 2e-6, atol
# 1e-6 against float64 (the exponentials rtol 1e-5; an infinity where the
# float64 result is beyond the f32 range), NaN where NumPy gives NaN; f16 inputs for a few (rtol 2e-3). Then the refusals: an op newer
# than the model's opset, integer inputs, a slope that does not broadcast
# to X.

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from run_model import counting_print, run_model  # noqa: E402

print, failures = counting_print()
work = sys.argv[1]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(31)
inf, nan = np.inf, np.nan
SELU_ALPHA, SELU_GAMMA = 1.67326319217681884765625, 1.05070102214813232421875


def softplus(x):
    return np.logaddexp(0.0, x)


def hard_sigmoid(x, alpha=0.2, beta=0.5):
    return np.clip(alpha * x + beta, 0.0, 1.0)


def elu(x, alpha=1.0):
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def celu(x, alpha=1.0):
    return np.maximum(0, x) + np.minimum(0, alpha * np.expm1(np.minimum(x, 0) / alpha))


# (op, attributes, reference, inputs, rtol)
wide = np.concatenate([np.linspace(-100, 100, 41), [0.0, -0.0, 1e-8, -1e-8, 3.5, -3.5,
                                                     inf, -inf, nan]])
unit = np.concatenate([np.linspace(-1, 1, 41), [0.0, -0.0, 1e-8, 0.999999, -0.999999,
                                                 1.5, -1.5, inf, nan]])
cases = [
    ("Tan", {}, np.tan, np.concatenate([np.linspace(-1.5, 1.5, 31), [0.0, -0.0, inf, nan]]), 2e-6),
    ("Asin", {}, np.arcsin, unit, 2e-6),
    ("Acos", {}, np.arccos, unit, 2e-6),
    ("Atan", {}, np.arctan, wide, 2e-6),
    ("Sinh", {}, np.sinh, np.concatenate([np.linspace(-80, 80, 33), [0.0, -0.0, 100, inf, nan]]), 1e-5),
    ("Cosh", {}, np.cosh, np.concatenate([np.linspace(-80, 80, 33), [0.0, 100, -inf, nan]]), 1e-5),
    ("Asinh", {}, np.arcsinh, wide, 2e-6),
    ("Acosh", {}, np.arccosh, np.concatenate([np.linspace(1, 100, 34), [0.5, inf, nan]]), 2e-6),
    ("Atanh", {}, np.arctanh, unit, 2e-6),
    ("Softplus", {}, softplus, wide, 1e-5),
    ("Softsign", {}, lambda x: x / (1 + np.abs(x)), wide, 2e-6),
    ("HardSigmoid", {}, hard_sigmoid, wide, 2e-6),
    ("HardSigmoid", {"alpha": 0.5, "beta": 0.25}, lambda x: hard_sigmoid(x, 0.5, 0.25), wide, 2e-6),
    ("HardSwish", {}, lambda x: x * hard_sigmoid(x, 1 / 6, 0.5), wide, 2e-6),
    ("Elu", {}, elu, wide, 1e-5),
    ("Elu", {"alpha": 0.3}, lambda x: elu(x, 0.3), wide, 1e-5),
    ("Selu", {}, lambda x: SELU_GAMMA * elu(x, SELU_ALPHA), wide, 1e-5),
    ("Selu", {"alpha": 2.0, "gamma": 0.5}, lambda x: 0.5 * elu(x, 2.0), wide, 1e-5),
    ("Celu", {}, celu, wide, 1e-5),
    ("Celu", {"alpha": 2.5}, lambda x: celu(x, 2.5), wide, 1e-5),
    ("ThresholdedRelu", {}, lambda x: np.where(x > 1.0, x, 0.0), wide, 2e-6),
    ("ThresholdedRelu", {"alpha": -2.0}, lambda x: np.where(x > -2.0, x, 0.0), wide, 2e-6),
    ("Mish", {}, lambda x: x * np.tanh(softplus(x)), wide, 1e-5),
]
OPSETS = {"HardSwish": 14, "Celu": 12, "Mish": 18}
for op, attrs, ref, values, rtol in cases:
    x = values.astype(np.float32)
    opset = max(OPSETS.get(op, 13), 13)
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(x)])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = os.path.join(work, "%s.onnx" % op)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    got = run_model(work, path, {"x": x})
    name = "%s %s" % (op, attrs or "defaults")
    if isinstance(got, str):
        print("FAIL %s: %s" % (name, got))
        continue
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64))
        # Beyond the f32 range the f32 result is an infinity (sinh(100)).
        want = np.where(np.abs(want) > np.finfo(np.float32).max, np.sign(want) * inf, want)
    y = got[0].astype(np.float64)
    same_nan = np.array_equal(np.isnan(y), np.isnan(want))
    finite = ~np.isnan(want)
    close = np.allclose(y[finite], want[finite], rtol=rtol, atol=1e-6)
    bad = np.flatnonzero(~np.isclose(y, want, rtol=rtol, atol=1e-6, equal_nan=True))
    print("%s %s" % ("ok" if same_nan and close else "FAIL", name),
          "" if same_nan and close else
          "at x = %s: %s, want %s" % (x[bad[:3]], y[bad[:3]], want[bad[:3]]))
# CHECK: ok Tan defaults
# CHECK: ok Asin defaults
# CHECK: ok Acosh defaults
# CHECK: ok Softplus defaults
# CHECK: ok HardSigmoid {'alpha': 0.5, 'beta': 0.25}
# CHECK: ok Selu defaults
# CHECK: ok Celu {'alpha': 2.5}
# CHECK: ok Mish defaults

# PRelu: a slope per channel of [N, C, L] ([C, 1], unidirectional
# broadcast) and a scalar one; NaN stays NaN, -0 stays -0.
x = rng.standard_normal((2, 3, 7)).astype(np.float32)
x[0, 0, :3] = [nan, -0.0, -inf]
for slope in (np.array([[0.1], [-0.5], [2.0]], np.float32), np.array(0.25, np.float32)):
    graph = helper.make_graph(
        [helper.make_node("PRelu", ["x", "slope"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 7]),
         helper.make_tensor_value_info("slope", TensorProto.FLOAT, list(slope.shape))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = os.path.join(work, "prelu.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)]), path)
    got = run_model(work, path, {"x": x, "slope": slope})
    want = np.where(x < 0, slope * x, x)
    ok = not isinstance(got, str) and got[0].shape == want.shape and \
        np.array_equal(got[0].view(np.uint32)[~np.isnan(want)], want.view(np.uint32)[~np.isnan(want)]) \
        and np.isnan(got[0][np.isnan(want)]).all()
    print("%s PRelu slope %s" % ("ok" if ok else "FAIL", list(slope.shape)), "" if ok else got)
# CHECK: ok PRelu slope [3, 1]
# CHECK: ok PRelu slope []

# IsNaN and IsInf: bool outputs.
x = np.array([0.0, -0.0, 1.0, -1.0, inf, -inf, nan, 3e38, -3e38, 1e-45], np.float32)
checks = [("IsNaN", {}, np.isnan(x)),
          ("IsInf", {}, np.isinf(x)),
          ("IsInf", {"detect_negative": 0}, np.isposinf(x)),
          ("IsInf", {"detect_positive": 0}, np.isneginf(x)),
          ("IsInf", {"detect_negative": 0, "detect_positive": 0}, np.zeros_like(x, bool))]
for op, attrs, want in checks:
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(x)])],
                              [helper.make_tensor_value_info("y", TensorProto.BOOL, None)])
    path = os.path.join(work, "predicate.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), path)
    got = run_model(work, path, {"x": x})
    ok = not isinstance(got, str) and got[0].dtype == np.bool_ and np.array_equal(got[0], want)
    print("%s %s %s" % ("ok" if ok else "FAIL", op, attrs or "defaults"), "" if ok else got)
# CHECK: ok IsNaN defaults
# CHECK: ok IsInf defaults
# CHECK: ok IsInf {'detect_negative': 0}
# CHECK: ok IsInf {'detect_positive': 0}
# CHECK: ok IsInf {'detect_negative': 0, 'detect_positive': 0}

# f16 inputs: computed in f32 and rounded (rtol 2e-3).
for op, ref in (("Softplus", softplus), ("Elu", elu), ("HardSwish", lambda x: x * hard_sigmoid(x, 1 / 6, 0.5)),
                ("Atan", np.arctan)):
    x = np.linspace(-8, 8, 33).astype(np.float16)
    graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [33])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT16, None)])
    path = os.path.join(work, "half.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]), path)
    got = run_model(work, path, {"x": x})
    want = ref(x.astype(np.float64))
    ok = not isinstance(got, str) and got[0].dtype == np.float16 and \
        np.allclose(got[0].astype(np.float64), want, rtol=2e-3, atol=1e-3)
    print("%s %s float16" % ("ok" if ok else "FAIL", op), "" if ok else got)
# CHECK: ok Softplus float16
# CHECK: ok Elu float16
# CHECK: ok HardSwish float16
# CHECK: ok Atan float16

# Refusals, each a precise error and no output.
refusals = [
    ("Mish at opset 17", "Mish", 17, TensorProto.FLOAT, [4], None),
    ("Softplus on int32", "Softplus", 13, TensorProto.INT32, [4], None),
    ("PRelu slope [4] for X [3, 2]", "PRelu", 16, TensorProto.FLOAT, [3, 2], [4]),
    ("PRelu slope [S] for X [2, 1]", "PRelu", 16, TensorProto.FLOAT, [2, 1], ["S"]),
]
for what, op, opset, dtype, shape, slope_shape in refusals:
    inputs = [helper.make_tensor_value_info("x", dtype, shape)]
    names = ["x"]
    feeds = {"x": np.zeros(shape, np.float32 if dtype == TensorProto.FLOAT else np.int32)}
    if slope_shape:
        inputs.append(helper.make_tensor_value_info("slope", TensorProto.FLOAT, slope_shape))
        names.append("slope")
        feeds["slope"] = np.zeros([3 if d == "S" else d for d in slope_shape], np.float32)
    graph = helper.make_graph([helper.make_node(op, names, ["y"])], "g", inputs,
                              [helper.make_tensor_value_info("y", dtype, None)])
    path = os.path.join(work, "refused.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    got = run_model(work, path, feeds)
    print("%s refused %s: %s" % ("ok" if isinstance(got, str) else "FAIL", what,
                                  got if isinstance(got, str) else "ran"))
# CHECK: ok refused Mish at opset 17: {{.*}}error: {{.*}}Mish exists from opset 18; the model imports opset 17
# CHECK: ok refused Softplus on int32: {{.*}}error: {{.*}}expects float tensors, got 'i32'
# CHECK: ok refused PRelu slope [4] for X [3, 2]: {{.*}}error: {{.*}}slope 'tensor<4xf32>' does not broadcast to X 'tensor<3x2xf32>'
# CHECK: ok refused PRelu slope [S] for X [2, 1]: {{.*}}error: {{.*}}slope 'tensor<?xf32>' does not broadcast to X 'tensor<2x1xf32>'
print("%d failed" % len(failures))
# CHECK: 0 failed
