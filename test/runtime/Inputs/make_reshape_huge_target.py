"""Writes DIR/reshape_huge_target.onnx, x[n] reshaped to [1000000, 1000000]
and summed (its check fails for n = 1, and the stand-in of the target's
10^12 floats cannot be allocated), and DIR/x1.npy, one float."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"], name="view"),
         helper.make_node("ReduceSum", ["r"], ["y"], keepdims=0)]
graph = helper.make_graph(
    nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
    initializer=[helper.make_tensor("shape", TensorProto.INT64, [2], [1000000, 1000000])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(model, os.path.join(out, "reshape_huge_target.onnx"))
np.save(os.path.join(out, "x1.npy"), np.ones(1, np.float32))
