# RUN: %python %s %t | FileCheck %s
#
# Empty tensors: a dynamic dim may be 0 (a prompt of no tokens, a batch of
# none, the empty past of a cache's first step). Each graph runs with
# attention-run and is compared with NumPy (or torch):
# - ops on empty inputs: reductions over an empty axis give ONNX's (opset
#   18) values (ReduceSum, L1, L2, SumSquare 0; Prod 1; Max -inf; Min +inf;
#   LogSumExp -inf; Mean NaN, as NumPy's mean); over a non-empty axis of an
#   empty tensor an empty result; Softmax, LogSoftmax, LayerNormalization,
#   Concat, Gather (empty indices), MatMul over an empty contraction (zeros)
#   and MatMul of no rows;
# - run-time errors instead of a trap or a silent wrong shape: ArgMax over
#   an empty axis (no extreme), Gather of an index from an empty table, and
#   a Reshape whose target has sizes known only while running: -1 beside
#   sizes that do not divide the element count (a silent short read
#   before), or beside sizes whose product is 0 (a division by zero: the
#   process died of SIGFPE), a target without -1 of another count (one
#   larger than the input, read after the failed check, crashed), negative
#   sizes (a negative shape was written); a factor common to both sides
#   that is 0 makes both counts 0 (valid);
# - whole exported models (the seed's MultiHeadAttention, a GPT-2 block,
#   the book's GPT from token ids, exported with dynamic batch and
#   sequence) run at sequence 0 and at batch 0 against torch's output
#   shapes.

import os
import sys

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from run_model import counting_print, run_model  # noqa: E402
import pattern_models  # noqa: E402

print, failures = counting_print()
work = sys.argv[1]
os.makedirs(work, exist_ok=True)
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def graph_file(name, nodes, inputs, out_type=F, inits=(), opset=18, n_out=1):
    """`inputs`: (name, elem type, dims) with strings for dynamic dims."""
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                          [helper.make_tensor_value_info("y%d" % i if n_out > 1 else "y",
                                                         out_type, None)
                           for i in range(n_out)], list(inits))
    path = os.path.join(work, name + ".onnx")
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def check(label, got, want):
    if isinstance(got, str):
        print("FAIL %s: %s" % (label, got))
        return
    got = got[0]
    same = (got.shape == want.shape and got.dtype == want.dtype and
            np.allclose(got, want, rtol=1e-5, atol=1e-6, equal_nan=True))
    print("%s %s: %s %s" % ("ok" if same else "FAIL", label, got.dtype,
                            list(got.shape) if got.size == 0 else got.ravel().tolist()))


def expect_error(label, got):
    print("%s %s: %s" % ("FAIL" if not isinstance(got, str) else "error", label,
                         got if isinstance(got, str) else "ran"))


XY = [("x", F, ["a", "b"])]
x30 = np.zeros((3, 0), np.float32)
x04 = np.zeros((0, 4), np.float32)

# Reductions: over the empty axis, and over the other axis of an empty x.
REDUCE = {"ReduceSum": 0.0, "ReduceL1": 0.0, "ReduceL2": 0.0, "ReduceSumSquare": 0.0,
          "ReduceProd": 1.0, "ReduceMax": -np.inf, "ReduceMin": np.inf,
          "ReduceLogSumExp": -np.inf, "ReduceMean": np.nan}
axes = helper.make_tensor("axes", I64, [1], [1])
for op, value in REDUCE.items():
    path = graph_file(op, [helper.make_node(op, ["x", "axes"], ["y"], keepdims=1)], XY,
                      inits=[axes])
    check("%s over an empty axis" % op, run_model(work, path, {"x": x30}),
          np.full((3, 1), value, np.float32))
    check("%s of no rows" % op, run_model(work, path, {"x": x04}),
          np.zeros((0, 1), np.float32))
# CHECK: ok ReduceSum over an empty axis: float32 [0.0, 0.0, 0.0]
# CHECK: ok ReduceSum of no rows: float32 [0, 1]
# CHECK: ok ReduceL1 over an empty axis: float32 [0.0, 0.0, 0.0]
# CHECK: ok ReduceL2 over an empty axis: float32 [0.0, 0.0, 0.0]
# CHECK: ok ReduceSumSquare over an empty axis: float32 [0.0, 0.0, 0.0]
# CHECK: ok ReduceProd over an empty axis: float32 [1.0, 1.0, 1.0]
# CHECK: ok ReduceMax over an empty axis: float32 [-inf, -inf, -inf]
# CHECK: ok ReduceMin over an empty axis: float32 [inf, inf, inf]
# CHECK: ok ReduceLogSumExp over an empty axis: float32 [-inf, -inf, -inf]
# CHECK: ok ReduceMean over an empty axis: float32 [nan, nan, nan]
# CHECK: ok ReduceMean of no rows: float32 [0, 1]

path = graph_file("argmax", [helper.make_node("ArgMax", ["x"], ["y"], axis=1)], XY,
                  out_type=I64, opset=13)
check("ArgMax of no rows", run_model(work, path, {"x": x04}), np.zeros((0, 1), np.int64))
expect_error("ArgMax over an empty axis", run_model(work, path, {"x": x30}))
# CHECK: ok ArgMax of no rows: int64 [0, 1]
# CHECK: error ArgMax over an empty axis: attention-run: error: @main: argmax.onnx: node #0 (ArgMax, the axis it reduces): axis 1 is empty: it has no extreme; the call returned no result

for op in ("Softmax", "LogSoftmax"):
    path = graph_file(op, [helper.make_node(op, ["x"], ["y"], axis=1)], XY, opset=13)
    check("%s over an empty axis" % op, run_model(work, path, {"x": x30}), x30)
    check("%s of no rows" % op, run_model(work, path, {"x": x04}), x04)
# CHECK: ok Softmax over an empty axis: float32 [3, 0]
# CHECK: ok Softmax of no rows: float32 [0, 4]
# CHECK: ok LogSoftmax over an empty axis: float32 [3, 0]
# CHECK: ok LogSoftmax of no rows: float32 [0, 4]

scale = helper.make_tensor("scale", F, [4], [1.0, 2.0, 3.0, 4.0])
path = graph_file("layernorm", [helper.make_node("LayerNormalization", ["x", "scale"], ["y"],
                                                 axis=-1)],
                  [("x", F, ["a", 4])], inits=[scale], opset=17)
check("LayerNormalization of no rows", run_model(work, path, {"x": x04}), x04)
# CHECK: ok LayerNormalization of no rows: float32 [0, 4]

path = graph_file("concat", [helper.make_node("Concat", ["x", "z"], ["y"], axis=1)],
                  [("x", F, [2, "a"]), ("z", F, [2, "b"])])
z = np.arange(6, dtype=np.float32).reshape(2, 3)
check("Concat of an empty and a full part", run_model(
    work, path, {"x": np.zeros((2, 0), np.float32), "z": z}), z)
check("Concat of two empty parts", run_model(
    work, path, {"x": np.zeros((2, 0), np.float32), "z": np.zeros((2, 0), np.float32)}),
    np.zeros((2, 0), np.float32))
# CHECK: ok Concat of an empty and a full part: float32 [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
# CHECK: ok Concat of two empty parts: float32 [2, 0]

path = graph_file("gather", [helper.make_node("Gather", ["table", "ids"], ["y"], axis=0)],
                  [("table", F, ["n", 3]), ("ids", I64, [1, "t"])])
table = np.arange(12, dtype=np.float32).reshape(4, 3)
check("Gather of no ids", run_model(work, path, {"table": table,
                                                 "ids": np.zeros((1, 0), np.int64)}),
      np.zeros((1, 0, 3), np.float32))
expect_error("Gather from an empty table", run_model(
    work, path, {"table": np.zeros((0, 3), np.float32), "ids": np.zeros((1, 1), np.int64)}))
# CHECK: ok Gather of no ids: float32 [1, 0, 3]
# CHECK: error Gather from an empty table: attention-run: error: @main: gather.onnx: node #0 (Gather, indices 'ids'): index 0 is outside [0, 0) for an axis of size 0; the call returned no result

path = graph_file("matmul", [helper.make_node("MatMul", ["x", "w"], ["y"])],
                  [("x", F, ["a", "k"]), ("w", F, ["k", 5])])
check("MatMul over an empty contraction", run_model(
    work, path, {"x": np.zeros((3, 0), np.float32), "w": np.zeros((0, 5), np.float32)}),
    np.zeros((3, 5), np.float32))
check("MatMul of no rows", run_model(
    work, path, {"x": np.zeros((0, 2), np.float32), "w": np.ones((2, 5), np.float32)}),
    np.zeros((0, 5), np.float32))
# CHECK: ok MatMul over an empty contraction: float32 [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
# CHECK: ok MatMul of no rows: float32 [0, 5]

# 32 columns and more take the register-tiled contractions, which start
# from the first k block instead of a zero fill unless K may be 0 (it
# returned garbage, NaN among it); then a bias add, which they fold.
nodes = [helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Add", ["m", "bias"], ["y"])]
bias = np.arange(32, dtype=np.float32)
path = graph_file("matmul_bias", nodes, [("x", F, ["b", "t", "k"]), ("w", F, ["k", 32])],
                  inits=[helper.make_tensor("bias", F, [32], bias.tolist())])
got = run_model(work, path, {"x": np.zeros((2, 100, 0), np.float32),
                             "w": np.zeros((0, 32), np.float32)})
want = np.broadcast_to(bias, (2, 100, 32))
print("%s MatMul [2, 100, 0] @ [0, 32] + bias: %s" % (
    "ok" if not isinstance(got, str) and np.array_equal(got[0], want) else "FAIL",
    got if isinstance(got, str) else "the bias in every row"))
# CHECK: ok MatMul [2, 100, 0] @ [0, 32] + bias: the bias in every row

# Reshape(x, Concat(Shape(y), [-1])): the -1 is only known while running.
nodes = [helper.make_node("Shape", ["s"], ["ss"]),
         helper.make_node("Concat", ["ss", "minus1"], ["shape"], axis=0),
         helper.make_node("Reshape", ["x", "shape"], ["y"], name="view")]
path = graph_file("reshape_infer", nodes, XY + [("s", F, ["c"])],
                  inits=[helper.make_tensor("minus1", I64, [1], [-1])])
for shape, c in (((2, 6), 3), ((0, 5), 2)):
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    check("Reshape %s to [%d, -1]" % (shape, c),
          run_model(work, path, {"x": x, "s": np.zeros(c, np.float32)}), x.reshape(c, -1))
for shape, c in (((2, 2), 3), ((0, 5), 0), ((2, 3), 0)):
    x = np.zeros(shape, np.float32)
    expect_error("Reshape %s to [%d, -1]" % (shape, c),
                 run_model(work, path, {"x": x, "s": np.zeros(c, np.float32)}))
# CHECK: ok Reshape (2, 6) to [3, -1]: float32 [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0]
# CHECK: ok Reshape (0, 5) to [2, -1]: float32 [2, 0]
# CHECK: error Reshape (2, 2) to [3, -1]: attention-run: error: @main: reshape_infer.onnx: 'view' (Reshape, the input's element count against the target shape): 4 elements are not a multiple of 3; the call returned no result
# CHECK: error Reshape (0, 5) to [0, -1]: {{.*}}: 0 elements for a -1 beside sizes that multiply to 0; the call returned no result
# CHECK: error Reshape (2, 3) to [0, -1]: {{.*}}: 6 elements for a -1 beside sizes that multiply to 0; the call returned no result

# Reshape(x, Concat(Shape(s), Shape(t))): no -1, the counts must agree.
nodes = [helper.make_node("Shape", ["s"], ["ss"]), helper.make_node("Shape", ["t"], ["ts"]),
         helper.make_node("Concat", ["ss", "ts"], ["shape"], axis=0),
         helper.make_node("Reshape", ["x", "shape"], ["y"], name="view")]
path = graph_file("reshape_sizes", nodes, XY + [("s", F, ["c"]), ("t", F, ["d"])])
x = np.arange(6, dtype=np.float32).reshape(2, 3)
check("Reshape (2, 3) to [3, 2]", run_model(
    work, path, {"x": x, "s": np.zeros(3, np.float32), "t": np.zeros(2, np.float32)}),
    x.reshape(3, 2))
check("Reshape (0, 3) to [2, 0]", run_model(
    work, path, {"x": np.zeros((0, 3), np.float32), "s": np.zeros(2, np.float32),
                 "t": np.zeros(0, np.float32)}), np.zeros((2, 0), np.float32))
expect_error("Reshape (2, 3) to [2, 2]", run_model(
    work, path, {"x": x, "s": np.zeros(2, np.float32), "t": np.zeros(2, np.float32)}))
# CHECK: ok Reshape (2, 3) to [3, 2]: float32 [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
# CHECK: ok Reshape (0, 3) to [2, 0]: float32 [2, 0]
# CHECK: error Reshape (2, 3) to [2, 2]: attention-run: error: @main: reshape_sizes.onnx: 'view' (Reshape, the input's element count against the target shape): 6 elements into 4; the call returned no result

# An empty tensor may carry any size beside its 0, but the runtime takes
# sizes up to 2^40 only (products of them in compiled code cannot wrap;
# the same check guards the C API's tensors).
print(run_model(work, graph_file("reduce_big", [helper.make_node("ReduceSum", ["x", "axes"], ["y"],
                                                                 keepdims=1)], XY,
                                 inits=[axes]),
                {"x": np.zeros((2 ** 41, 0), np.float32)}))
# CHECK: attention-run: error: {{.*}}in_x.npy: shape (2199023255552, 0): dim 0 is above the largest size supported, 2^40

# A static target larger than a dynamic input, read by a reduction after
# the failed check: the code after it runs on an empty stand-in, not past
# the input (this read 160 KB past 4 bytes: SIGSEGV).
nodes = [helper.make_node("Reshape", ["x", "shape"], ["r"], name="view"),
         helper.make_node("ReduceSum", ["r"], ["y"], keepdims=0)]
path = graph_file("reshape_static_target", nodes, [("x", F, ["n"])],
                  inits=[helper.make_tensor("shape", I64, [2], [200, 200])])
x = np.ones(40000, np.float32)
check("Reshape [40000] to [200, 200], summed", run_model(work, path, {"x": x}),
      np.array(40000.0, np.float32))
expect_error("Reshape [1] to [200, 200], summed",
             run_model(work, path, {"x": np.ones(1, np.float32)}))
# CHECK: ok Reshape [40000] to [200, 200], summed: float32 [40000.0]
# CHECK: error Reshape [1] to [200, 200], summed: {{.*}}: 1 elements into 40000; the call returned no result

# A factor that cancels (B) is compared whole: B = 0 is 0 elements into 0.
nodes = [helper.make_node("Shape", ["s"], ["ss"]),
         helper.make_node("Reshape", ["x", "ss"], ["y"], name="view")]
path = graph_file("reshape_cancel", nodes, [("x", F, ["B", "T"]), ("s", F, ["B", "S"])])
check("Reshape (0, 3) to Shape(s) = (0, 5)", run_model(
    work, path, {"x": np.zeros((0, 3), np.float32), "s": np.zeros((0, 5), np.float32)}),
    np.zeros((0, 5), np.float32))
expect_error("Reshape (2, 3) to Shape(s) = (2, 5)", run_model(
    work, path, {"x": np.zeros((2, 3), np.float32), "s": np.zeros((2, 5), np.float32)}))
# The result keeps the sizes it took (Shape(s)): multiplied with s, it
# broadcasts (with sizes replaced for a failed check, the import refused).
nodes.append(helper.make_node("Mul", ["y", "s"], ["z"]))
g = helper.make_graph(nodes, "reshape_then_mul",
                      [helper.make_tensor_value_info("x", F, ["B", "T"]),
                       helper.make_tensor_value_info("s", F, ["B", "S"])],
                      [helper.make_tensor_value_info("z", F, None)])
path = os.path.join(work, "reshape_then_mul.onnx")
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)]), path)
x = np.arange(6, dtype=np.float32).reshape(2, 3)
s2 = np.full((2, 3), 2.0, np.float32)
check("Reshape (2, 3) to Shape(s), times s", run_model(work, path, {"x": x, "s": s2}), x * 2)
# CHECK: ok Reshape (0, 3) to Shape(s) = (0, 5): float32 [0, 5]
# CHECK: error Reshape (2, 3) to Shape(s) = (2, 5): {{.*}}: 6 elements into 10; the call returned no result
# CHECK: ok Reshape (2, 3) to Shape(s), times s: float32 [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]

# Negative sizes while running (Neg of a size; -1 * a size, which must not
# count as a factor of the element count) fail the call.
nodes = [helper.make_node("Shape", ["s"], ["ss"]), helper.make_node("Neg", ["ss"], ["ns"]),
         helper.make_node("Concat", ["ns", "minus1"], ["shape"], axis=0),
         helper.make_node("Reshape", ["x", "shape"], ["y"], name="view")]
path = graph_file("reshape_negative", nodes, [("x", F, ["n"]), ("s", F, ["c"])],
                  inits=[helper.make_tensor("minus1", I64, [1], [-1])])
expect_error("Reshape [8] to [-Shape(s), -1]", run_model(
    work, path, {"x": np.zeros(8, np.float32), "s": np.zeros(2, np.float32)}))
nodes = [helper.make_node("Shape", ["x"], ["xs"]),
         helper.make_node("Gather", ["xs", "zero"], ["b"], axis=0),
         helper.make_node("Mul", ["b", "minus1"], ["nb"]),
         helper.make_node("Concat", ["nb", "minus1"], ["shape"], axis=0),
         helper.make_node("Reshape", ["x", "shape"], ["y"], name="view")]
path = graph_file("reshape_mul_negative", nodes, [("x", F, ["B", 4])],
                  inits=[helper.make_tensor("minus1", I64, [1], [-1]),
                         helper.make_tensor("zero", I64, [1], [0])])
expect_error("Reshape (2, 4) to [B * -1, -1]", run_model(
    work, path, {"x": np.zeros((2, 4), np.float32)}))
# CHECK: error Reshape [8] to [-Shape(s), -1]: {{.*}} (Reshape, the input's element count against the target shape): size -2 at position 0 of the target; the call returned no result
# CHECK: error Reshape (2, 4) to [B * -1, -1]: {{.*}}: size -2 at position 0 of the target; the call returned no result


# Whole models exported with dynamic batch and sequence, run empty.
def zero_axis(case, axis_name):
    """The case's model and its inputs and torch outputs at `axis_name`
    ("seq" or "batch") 0: pattern_models.export computes the outputs from
    the run inputs it is given."""
    export = pattern_models.export

    def empty_run(module, example, run, input_names, output_names, dynamic_axes=None):
        cut = []
        for name, t in zip(input_names, run):
            index = [slice(None)] * t.dim()
            for axis, what in dynamic_axes[name].items():
                if what == axis_name:
                    index[axis] = slice(0, 0)
            cut.append(t[tuple(index)].clone())
        return export(module, example, tuple(cut), input_names, output_names, dynamic_axes)

    pattern_models.export = empty_run
    try:
        rng = np.random.default_rng(pattern_models.seed_for(case))
        torch.manual_seed(pattern_models.seed_for(case))
        model, ins, outs, _ = pattern_models.CASES[case](rng)
    finally:
        pattern_models.export = export
    return model, ins, outs


for case in ("seed_mha_dynamic", "gpt2_block_dynamic", "book_gpt_dynamic"):
    for axis_name in ("seq", "batch"):
        model, ins, outs = zero_axis(case, axis_name)
        path = os.path.join(work, "%s_%s0.onnx" % (case, axis_name))
        onnx.save(model, path)
        got = run_model(work, path, dict(ins), len(outs))
        check("%s at %s 0, inputs %s" % (case, axis_name, [list(a.shape) for _, a in ins]),
              got, outs[0][1])
# CHECK: ok seed_mha_dynamic at seq 0, inputs {{\[}}[2, 0, 16]]: float32 [2, 0, 16]
# CHECK: ok seed_mha_dynamic at batch 0, inputs {{\[}}[0, 6, 16]]: float32 [0, 6, 16]
# CHECK: ok gpt2_block_dynamic at seq 0, inputs {{\[}}[2, 0, 32]]: float32 [2, 0, 32]
# CHECK: ok gpt2_block_dynamic at batch 0, inputs {{\[}}[0, 11, 32]]: float32 [0, 11, 32]
# CHECK: ok book_gpt_dynamic at seq 0, inputs {{\[}}[2, 0]]: float32 [2, 0, 50]
# CHECK: ok book_gpt_dynamic at batch 0, inputs {{\[}}[0, 11]]: float32 [0, 11, 50]
print("empty_inputs: %d failed" % len(failures))
# CHECK: empty_inputs: 0 failed
