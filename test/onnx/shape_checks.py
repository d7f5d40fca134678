# RUN: %python %s %t | FileCheck %s
#
# Sizes of shape ops known only while running, checked on each call as
# numpy and ONNX Runtime refuse them (each ran with exit 0 before):
# - Expand and ConstantOfShape to a target size that is negative (a
#   ConstantOfShape of [-3, 3] summed to 0, an Expand gave f32[-3, 3]);
# - Expand of a static dim to a run-time size other than 1 or its own
#   (x[2, 3] to [2, 5] returned x unchanged);
# - Squeeze without axes keeps a dynamic dim (the result's rank cannot
#   depend on the call), so a call where it is 1 fails (it returned
#   [1, 3] where numpy gives [3]); axes naming a dynamic dim are refused
#   while importing, now with a message that says so;
# and the same targets as constants are refused while importing.
# Results that pass against NumPy, exactly.

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
F, I64 = TensorProto.FLOAT, TensorProto.INT64
vi = helper.make_tensor_value_info


def save(name, nodes, inputs, opset=17, inits=()):
    graph = helper.make_graph(nodes, "g", [vi(*i) for i in inputs], [vi("Y", F, None)],
                              initializer=list(inits))
    path = os.path.join(work, name + ".onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def report(what, got, want=None):
    if isinstance(got, str):
        print("%s %s: %s" % ("error" if want is None else "FAIL", what, got))
    elif want is None:
        print("FAIL %s: ran, shape %s" % (what, list(got[0].shape)))
    else:
        same = got[0].shape == want.shape and (got[0] == want).all()
        print("%s %s: shape %s" % ("ok" if same else "FAIL", what, list(got[0].shape)))


# A target [len(y) - 5, 3]: negative for len(y) < 5.
target = [helper.make_node("Shape", ["y"], ["sy"]),
          helper.make_node("Sub", ["sy", "five"], ["n"]),
          helper.make_node("Concat", ["n", "three"], ["target"], axis=0)]
consts = [helper.make_tensor("five", I64, [1], [5]), helper.make_tensor("three", I64, [1], [3])]
cos = save("constant_of_shape", target + [helper.make_node(
    "ConstantOfShape", ["target"], ["Y"], value=helper.make_tensor("v", F, [1], [2.0]))],
    [("y", F, ["N"])], inits=consts)
expand = save("expand_unit", target + [helper.make_node("Expand", ["x", "target"], ["Y"])],
              [("x", F, [1, 3]), ("y", F, ["N"])], inits=consts)
x13 = np.float32([[1, 2, 3]])
for n in (7, 5, 2):
    y = np.zeros(n, np.float32)
    ok = n >= 5
    report("ConstantOfShape N=%d" % n, run_model(work, cos, {"y": y}),
           np.full((n - 5, 3), 2, np.float32) if ok else None)
    report("Expand [1, 3] N=%d" % n, run_model(work, expand, {"x": x13, "y": y}),
           np.broadcast_to(x13, (n - 5, 3)) if ok else None)
# CHECK: ok ConstantOfShape N=7: shape [2, 3]
# CHECK: ok Expand [1, 3] N=7: shape [2, 3]
# CHECK: ok ConstantOfShape N=5: shape [0, 3]
# CHECK: ok Expand [1, 3] N=5: shape [0, 3]
# CHECK: error ConstantOfShape N=2: attention-run: error: @main: constant_of_shape.onnx: node #3 (ConstantOfShape, the target shape): size -3 at position 0 of the target; the call returned no result
# CHECK: error Expand [1, 3] N=2: attention-run: error: @main: expand_unit.onnx: node #3 (Expand, the target shape): size -3 at position 0 of the target; the call returned no result

# Expand x[2, 3] to Shape(y): y's last dim must be 3 or 1.
path = save("expand_static", [helper.make_node("Shape", ["y"], ["s"]),
                              helper.make_node("Expand", ["x", "s"], ["Y"])],
            [("x", F, [2, 3]), ("y", F, ["A", "B"])])
x23 = np.arange(6, dtype=np.float32).reshape(2, 3)
for shape in ((2, 3), (2, 1), (2, 5)):
    want = x23 if shape[1] != 5 else None
    report("Expand [2, 3] to %s" % (list(shape),),
           run_model(work, path, {"x": x23, "y": np.zeros(shape, np.float32)}), want)
# CHECK: ok Expand [2, 3] to [2, 3]: shape [2, 3]
# CHECK: ok Expand [2, 3] to [2, 1]: shape [2, 3]
# CHECK: error Expand [2, 3] to [2, 5]: attention-run: error: @main: expand_static.onnx: node #1 (Expand, target size at position 1, which must be 1 or input dim 1's size): 5, expected 3; the call returned no result

# Squeeze without axes on x[A, 3, 1]; with axes [0] on x[A, 3].
noaxes = save("squeeze_all", [helper.make_node("Squeeze", ["x"], ["Y"])], [("x", F, ["A", 3, 1])])
axis0 = save("squeeze_axis", [helper.make_node("Squeeze", ["x", "axes"], ["Y"])],
             [("x", F, ["A", 3])], opset=13,
             inits=[helper.make_tensor("axes", I64, [1], [0])])
x = np.arange(6, dtype=np.float32).reshape(2, 3, 1)
report("Squeeze without axes, A=2", run_model(work, noaxes, {"x": x}), x.squeeze())
report("Squeeze without axes, A=1", run_model(work, noaxes, {"x": x[:1]}))
report("Squeeze axes [0] of [A, 3]", run_model(work, axis0, {"x": x[:1, :, 0]}))
# CHECK: ok Squeeze without axes, A=2: shape [2, 3]
# CHECK: error Squeeze without axes, A=1: attention-run: error: @main: squeeze_all.onnx: node #0 (Squeeze, without axes: dynamic dims are kept, so they must not be 1): dim 0 has size 1 while running; the call returned no result
# CHECK: error Squeeze axes [0] of [A, 3]: {{.*}}squeeze_axis.onnx:0:0: error: ONNX node #0 (Squeeze, opset 13): axis 0 is dynamic: Squeeze needs its size to be 1, which is known only while running (export it with a static size 1)

# Constant targets: refused while importing, naming the node.
path = save("expand_negative", [helper.make_node("Expand", ["x", "t"], ["Y"], name="e")],
            [("x", F, [1, 3])], inits=[helper.make_tensor("t", I64, [2], [-2, 3])])
report("Expand to [-2, 3]", run_model(work, path, {"x": x13}))
path = save("squeeze_static", [helper.make_node("Squeeze", ["x", "axes"], ["Y"], name="s")],
            [("x", F, [2, 3])], opset=13, inits=[helper.make_tensor("axes", I64, [1], [1])])
report("Squeeze axes [1] of [2, 3]", run_model(work, path, {"x": x23}))
path = save("squeeze_range", [helper.make_node("Squeeze", ["x", "axes"], ["Y"], name="s")],
            [("x", F, [2, 3])], opset=13, inits=[helper.make_tensor("axes", I64, [1], [2])])
report("Squeeze axes [2] of [2, 3]", run_model(work, path, {"x": x23}))
# CHECK: error Expand to [-2, 3]: {{.*}}expand_negative.onnx:0:0: error: ONNX node 'e' (Expand, opset 17): target size -2 at position 0 is negative
# CHECK: error Squeeze axes [1] of [2, 3]: {{.*}}squeeze_static.onnx:0:0: error: ONNX node 's' (Squeeze, opset 13): axis 1 has size 3, not 1
# CHECK: error Squeeze axes [2] of [2, 3]: {{.*}}squeeze_range.onnx:0:0: error: ONNX node 's' (Squeeze, opset 13): axis 2 is out of range for rank 2

print("%d failed" % len(failures))
# CHECK: 0 failed
