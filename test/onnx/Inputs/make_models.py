"""Writes the small ONNX models the importer tests use (python3-onnx).

usage: make_models.py DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

d = sys.argv[1]
os.makedirs(d, exist_ok=True)
F = TensorProto.FLOAT


def save(name, nodes, inputs, outputs, inits=(), opset=23):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.save(model, os.path.join(d, name + ".onnx"))


vi = helper.make_tensor_value_info
# Attention on 4-D inputs with a bool mask, a scale and dynamic sequence dims.
save("attention_mask",
     [helper.make_node("Attention", ["Q", "K", "V", "M"], ["Y"], scale=0.25, name="attn")],
     [vi("Q", F, [2, 3, "T", 8]), vi("K", F, [2, 3, "S", 8]), vi("V", F, [2, 3, "S", 8]),
      vi("M", TensorProto.BOOL, [1, 1, "T", "S"])],
     [vi("Y", F, [2, 3, "T", 8])])
# 3-D GQA with causal and an opset-25 window.
save("attention_3d_window",
     [helper.make_node("Attention", ["Q", "K", "V"], ["Y"], q_num_heads=4, kv_num_heads=2,
                       is_causal=1, left_window_size=2, name="attn")],
     [vi("Q", F, [1, 5, 32]), vi("K", F, [1, 5, 16]), vi("V", F, [1, 5, 16])],
     [vi("Y", F, [1, 5, 32])], opset=25)
# A KV cache step: past_key/past_value in, present_key/present_value out.
save("attention_kv_cache",
     [helper.make_node("Attention", ["Q", "K", "V", "", "PK", "PV"], ["Y", "NK", "NV"],
                       is_causal=1, name="attn")],
     [vi("Q", F, [1, 2, 3, 8]), vi("K", F, [1, 2, 3, 8]), vi("V", F, [1, 2, 3, 8]),
      vi("PK", F, [1, 2, 5, 8]), vi("PV", F, [1, 2, 5, 8])],
     [vi("Y", F, [1, 2, 3, 8]), vi("NK", F, [1, 2, 8, 8]), vi("NV", F, [1, 2, 8, 8])])
# The same step with dynamic batch, new-token and past lengths (dim_params
# T for the query and the new keys, P for the cache), as exports with
# dynamic axes declare them; with the new keys on their own length S
# (the past then is not Tk - Tq); a window without is_causal.
save("attention_kv_cache_dynamic",
     [helper.make_node("Attention", ["Q", "K", "V", "", "PK", "PV"], ["Y", "NK", "NV"],
                       is_causal=1, name="attn")],
     [vi("Q", F, ["B", 2, "T", 8]), vi("K", F, ["B", 2, "T", 8]), vi("V", F, ["B", 2, "T", 8]),
      vi("PK", F, ["B", 2, "P", 8]), vi("PV", F, ["B", 2, "P", 8])],
     [vi("Y", F, ["B", 2, "T", 8]), vi("NK", F, ["B", 2, "N", 8]), vi("NV", F, ["B", 2, "N", 8])])
save("attention_kv_cache_dynamic_other_length",
     [helper.make_node("Attention", ["Q", "K", "V", "", "PK", "PV"], ["Y", "NK", "NV"],
                       is_causal=1, name="attn")],
     [vi("Q", F, [1, 2, "T", 8]), vi("K", F, [1, 2, "S", 8]), vi("V", F, [1, 2, "S", 8]),
      vi("PK", F, [1, 2, "P", 8]), vi("PV", F, [1, 2, "P", 8])],
     [vi("Y", F, [1, 2, "T", 8]), vi("NK", F, [1, 2, "N", 8]), vi("NV", F, [1, 2, "N", 8])])
save("attention_kv_cache_dynamic_window",
     [helper.make_node("Attention", ["Q", "K", "V", "", "PK", "PV"], ["Y", "NK", "NV"],
                       left_window_size=2, name="attn")],
     [vi("Q", F, [1, 2, "T", 8]), vi("K", F, [1, 2, "T", 8]), vi("V", F, [1, 2, "T", 8]),
      vi("PK", F, [1, 2, "P", 8]), vi("PV", F, [1, 2, "P", 8])],
     [vi("Y", F, [1, 2, "T", 8]), vi("NK", F, [1, 2, "N", 8]), vi("NV", F, [1, 2, "N", 8])],
     opset=25)
# A declared output shape that contradicts what the graph computes.
save("wrong_output_shape",
     [helper.make_node("Attention", ["Q", "K", "V"], ["Y"], name="attn")],
     [vi("Q", F, [2, 3, 4, 8]), vi("K", F, [2, 3, 6, 8]), vi("V", F, [2, 3, 6, 8])],
     [vi("Y", F, [61, 3, 4, 8])])
# A node missing a required input.
save("missing_input",
     [helper.make_node("Identity", [], ["Y"], name="copy")],
     [vi("X", F, [2, 4])], [vi("Y", F, [2, 4])])
# An op the importer does not know.
save("unsupported_op",
     [helper.make_node("Hardmax", ["X"], ["Y"], name="act")],
     [vi("X", F, [2, 4])], [vi("Y", F, [2, 4])], opset=20)
# A graph input declared twice.
save("input_twice",
     [helper.make_node("Relu", ["X"], ["Y"], name="act")],
     [vi("X", F, [2]), vi("X", F, [2])], [vi("Y", F, [2])], opset=17)
# Where on bool data, and a Dropout whose mask output is used.
save("where_bool_data",
     [helper.make_node("Where", ["C", "X", "Y"], ["Z"], name="pick")],
     [vi("C", TensorProto.BOOL, [2]), vi("X", TensorProto.BOOL, [2]),
      vi("Y", TensorProto.BOOL, [2])], [vi("Z", TensorProto.BOOL, [2])], opset=17)
save("dropout_mask",
     [helper.make_node("Dropout", ["X"], ["Y", "M"], name="drop")],
     [vi("X", F, [2, 4])], [vi("Y", F, [2, 4]), vi("M", TensorProto.BOOL, [2, 4])],
     opset=17)
# Uses a value nothing defines.
save("undefined_value",
     [helper.make_node("Identity", ["nowhere"], ["Y"], name="copy")],
     [vi("X", F, [2, 4])], [vi("Y", F, [2, 4])])
# Values assigned twice through initializers: two initializers of one
# name (the last one was read), an initializer a node also writes (the
# node's value was read), and an overridable initializer whose graph input
# declares another shape.
one, hundred = (numpy_helper.from_array(np.full(3, v, np.float32), "W") for v in (1, 100))
save("initializer_twice",
     [helper.make_node("Add", ["X", "W"], ["Y"], name="add")],
     [vi("X", F, [3])], [vi("Y", F, [3])], inits=[one, hundred], opset=17)
save("initializer_written",
     [helper.make_node("Relu", ["X"], ["W"], name="relu"),
      helper.make_node("Add", ["X", "W"], ["Y"], name="add")],
     [vi("X", F, [3])], [vi("Y", F, [3])], inits=[one], opset=17)
save("initializer_declared_otherwise",
     [helper.make_node("Add", ["X", "W"], ["Y"], name="add")],
     [vi("X", F, [3]), vi("W", F, [5])], [vi("Y", F, [3])], inits=[one], opset=17)
# The default domain imported at two opsets (Softmax's axis means other
# things at 11 and 13).
graph = helper.make_graph([helper.make_node("Softmax", ["X"], ["Y"], axis=1)], "two_opsets",
                          [vi("X", F, [2, 3, 4])], [vi("Y", F, [2, 3, 4])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11),
                                                  helper.make_opsetid("", 13)]),
          os.path.join(d, "two_opsets.onnx"))
# An unsupported (too old) opset.
save("old_opset",
     [helper.make_node("Identity", ["X"], ["Y"], name="copy")],
     [vi("X", F, [2, 4])], [vi("Y", F, [2, 4])], opset=8)
# An initializer whose data does not match its shape.
bad = numpy_helper.from_array(np.zeros((2, 2), np.float32), "W")
bad.raw_data = bad.raw_data[:8]
save("bad_initializer",
     [helper.make_node("Identity", ["W"], ["Y"], name="copy")],
     [vi("X", F, [2, 2])], [vi("Y", F, [2, 2])], inits=[bad])
# Weights: a 32x32 float initializer (4 KiB) becomes a dense resource blob,
# the 32-float bias stays an inline constant.
w = np.random.default_rng(7).standard_normal((32, 32)).astype(np.float32)
bias = np.linspace(-1, 1, 32).astype(np.float32)
save("weights",
     [helper.make_node("MatMul", ["X", "W"], ["XW"], name="proj"),
      helper.make_node("Add", ["XW", "B"], ["Y"], name="bias")],
     [vi("X", F, [2, 32])], [vi("Y", F, [2, 32])],
     inits=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(bias, "B")])
np.save(os.path.join(d, "weights_W.npy"), w)
np.save(os.path.join(d, "weights_B.npy"), bias)

# Half-precision weights in the typed field: each value's 16 bits in an
# int32 (onnx.helper.make_tensor without raw=True), f16 and bf16; and one
# whose int32_data holds more than 16 bits.
for name, onnx_type, bits in [
        ("typed_f16_weights", TensorProto.FLOAT16,
         w.astype(np.float16).view(np.uint16)),
        ("typed_bf16_weights", TensorProto.BFLOAT16,
         (w.view(np.uint32) >> 16).astype(np.uint16))]:
    t = TensorProto(name="W", data_type=onnx_type, dims=w.shape)
    t.int32_data.extend(int(v) for v in bits.ravel())
    save(name, [helper.make_node("MatMul", ["X", "W"], ["Y"], name="proj")],
         [vi("X", onnx_type, [2, 32])], [vi("Y", onnx_type, [2, 32])], inits=[t])
    np.save(os.path.join(d, name + "_W.npy"),
            bits.view(np.float16).astype(np.float32) if onnx_type == TensorProto.FLOAT16
            else (bits.astype(np.uint32) << 16).view(np.float32))
bad16 = TensorProto(name="W", data_type=TensorProto.FLOAT16, dims=[2])
bad16.int32_data.extend([0x3C00, 0x10000])
save("typed_f16_out_of_range",
     [helper.make_node("Identity", ["W"], ["Y"], name="copy")],
     [vi("X", TensorProto.FLOAT16, [2])], [vi("Y", TensorProto.FLOAT16, [2])],
     inits=[bad16])


def external(name, location, offset=0):
    """The weights model with W stored in an external data file."""
    t = numpy_helper.from_array(w, "W")
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)),
                 ("length", str(w.nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    save(name,
         [helper.make_node("MatMul", ["X", "W"], ["XW"], name="proj"),
          helper.make_node("Add", ["XW", "B"], ["Y"], name="bias")],
         [vi("X", F, [2, 32])], [vi("Y", F, [2, 32])],
         inits=[t, numpy_helper.from_array(bias, "B")])


with open(os.path.join(d, "weights.bin"), "wb") as f:
    f.write(b"\0" * 16 + w.tobytes())
external("external_data", "weights.bin", offset=16)
external("external_missing", "missing.bin")
external("external_short", "weights.bin", offset=1024)
external("external_escapes", "../weights.bin")
# Locations that bad-onnx.test makes a FIFO (it blocked the import) and a
# symbolic link out of the model's directory.
external("external_fifo", "fifo.bin")
external("external_link", "link.bin")
# A cycle: a -> b -> a.
save("cycle",
     [helper.make_node("Identity", ["X"], ["x0"], name="start"),
      helper.make_node("Add", ["x0", "b"], ["a"], name="a"),
      helper.make_node("Identity", ["a"], ["b"], name="b"),
      helper.make_node("Identity", ["a"], ["Y"], name="out")],
     [vi("X", F, [2, 4])], [vi("Y", F, [2, 4])])
# 1-D MatMul operands (numpy.matmul's rules): x[B, T, 8] @ w[8] scores each
# position against one learned vector (attention pooling), v[8] @ m[8, 5]
# a row times a matrix, v @ w a dot product (a 0-d result); and a 1-D
# operand whose length does not match.
save("matmul_vectors",
     [helper.make_node("MatMul", ["x", "w"], ["s"], name="pool_scores"),
      helper.make_node("MatMul", ["v", "m"], ["r"], name="row"),
      helper.make_node("MatMul", ["v", "w"], ["d"], name="dot")],
     [vi("x", F, ["B", "T", 8]), vi("v", F, [8]), vi("m", F, [8, 5])],
     [vi("s", F, ["B", "T"]), vi("r", F, [5]), vi("d", F, [])],
     [numpy_helper.from_array(np.linspace(-1, 1, 8, dtype=np.float32), "w")])
save("matmul_vector_mismatch",
     [helper.make_node("MatMul", ["v", "m"], ["r"], name="row")],
     [vi("v", F, [8]), vi("m", F, [4, 5])], [vi("r", F, [5])])
# Inconsistent shapes: a MatMul whose inner dims differ; static dims whose
# element count overflows.
save("matmul_mismatch",
     [helper.make_node("MatMul", ["A", "B"], ["Y"], name="mm")],
     [vi("A", F, [2, 3]), vi("B", F, [4, 5])], [vi("Y", F, [2, 5])])
# Attention nodes whose heads or attributes do not fit: one error each,
# naming the node and what is wrong.
for name, q_heads, kv_heads, width, attrs in [
        ("attention_heads_not_dividing", 5, 5, 12, {}),
        ("attention_dynamic_hidden", 2, 2, "h", {}),
        ("attention_head_sizes_differ", 4, 3, 12, {}),
        ("attention_negative_softcap", 2, 2, 12, {"softcap": -1.0}),
        ("attention_infinite_scale", 2, 2, 12, {"scale": float("inf")})]:
    save(name,
         [helper.make_node("Attention", ["Q", "K", "V"], ["Y"], q_num_heads=q_heads,
                           kv_num_heads=kv_heads, name="attn", **attrs)],
         [vi("Q", F, [1, 4, width]), vi("K", F, [1, 3, width]), vi("V", F, [1, 3, width])],
         [vi("Y", F, [1, 4, width])])
save("huge_dims",
     [helper.make_node("Identity", ["A"], ["Y"], name="copy")],
     [vi("A", F, [1 << 40, 1 << 40])], [vi("Y", F, [1 << 40, 1 << 40])])
# Dynamic dims that might broadcast at run time (size 1) or mismatch.
save("broadcast_unknown",
     [helper.make_node("Add", ["X", "Y"], ["Z"], name="add")],
     [vi("X", F, [1, "n"]), vi("Y", F, [1, 3])], [vi("Z", F, [1, 3])])
# Inner dims that may differ at run time (different dim_param names), and
# operands of two element types (A and B, or C).
save("matmul_dynamic_inner",
     [helper.make_node("MatMul", ["A", "B"], ["Y"], name="mm")],
     [vi("A", F, [2, "K"]), vi("B", F, ["N", 5])], [vi("Y", F, [2, 5])])
save("matmul_mixed_types",
     [helper.make_node("MatMul", ["A", "B"], ["Y"], name="mm")],
     [vi("A", F, [2, 3]), vi("B", TensorProto.FLOAT16, [3, 5])], [vi("Y", F, [2, 5])])
save("gemm_dynamic_inner",
     [helper.make_node("Gemm", ["A", "B"], ["Y"], name="gemm", transB=1)],
     [vi("A", F, [3, "K"]), vi("B", F, [5, "N"])], [vi("Y", F, [3, 5])])
save("gemm_mixed_types",
     [helper.make_node("Gemm", ["A", "B"], ["Y"], name="gemm")],
     [vi("A", F, [3, 4]), vi("B", TensorProto.FLOAT16, [4, 5])], [vi("Y", F, [3, 5])])
save("gemm_c_type",
     [helper.make_node("Gemm", ["A", "B", "C"], ["Y"], name="gemm")],
     [vi("A", F, [3, 4]), vi("B", F, [4, 5]), vi("C", TensorProto.FLOAT16, [5])],
     [vi("Y", F, [3, 5])])
# A value written by two nodes, and a graph input written by a node.
save("written_twice",
     [helper.make_node("Relu", ["x"], ["z"], name="first"),
      helper.make_node("Neg", ["x"], ["z"], name="second")],
     [vi("x", F, [3])], [vi("z", F, [3])])
save("input_overwritten",
     [helper.make_node("Relu", ["y"], ["x"])],
     [vi("x", F, [3]), vi("y", F, [3])], [vi("x", F, [3])])
# Gemm whose C has a rank above 2.
save("gemm_bad_c",
     [helper.make_node("Gemm", ["A", "B", "C"], ["Y"], name="gemm")],
     [vi("A", F, [3, 4]), vi("B", F, [4, 5])], [vi("Y", F, [3, 5])],
     inits=[numpy_helper.from_array(np.zeros((2, 3, 5), np.float32), "C")])
# Explicit split lengths on a dynamic axis.
save("split_dynamic",
     [helper.make_node("Split", ["X", "lens"], ["Y0", "Y1"], name="split", axis=1)],
     [vi("X", F, [1, "n"])], [vi("Y0", F, [1, 3]), vi("Y1", F, [1, 3])],
     inits=[numpy_helper.from_array(np.array([3, 3], np.int64), "lens")])
# A bias added before the scale: softmax((Q K^T + bias) / 2) V, raised with
# the bias scaled too.
rng_b = np.random.default_rng(11)
save("bias_before_scale",
     [helper.make_node("Transpose", ["K"], ["KT"], perm=[0, 1, 3, 2], name="kt"),
      helper.make_node("MatMul", ["Q", "KT"], ["S"], name="qk"),
      helper.make_node("Add", ["S", "bias"], ["SB"], name="bias_add"),
      helper.make_node("Div", ["SB", "two"], ["SC"], name="scale"),
      helper.make_node("Softmax", ["SC"], ["P"], axis=-1, name="softmax"),
      helper.make_node("MatMul", ["P", "V"], ["O"], name="pv")],
     [vi("Q", F, [1, 2, 4, 8]), vi("K", F, [1, 2, 4, 8]), vi("V", F, [1, 2, 4, 8])],
     [vi("O", F, [1, 2, 4, 8])],
     inits=[numpy_helper.from_array((rng_b.standard_normal((4, 4)) * 3).astype(np.float32), "bias"),
            numpy_helper.from_array(np.array(2.0, np.float32), "two")], opset=17)
# Per-head 3-D Q/K/V [H, T, d] with nanoGPT's 4-D causal buffer [1, 1, T, T]
# (as torch exports masked_fill: a bool constant), or a [1, 1, 1, 1]
# temperature: both broadcast the scores, and so the result, to rank 4;
# the second output flattens it. Raising would keep Q's rank 3 (attn.sdpa
# does not broadcast to a higher rank): it must not.
hidden = np.triu(np.ones((4, 4), bool), 1).reshape(1, 1, 4, 4)
for name, scale_node, scale_init in (
        ("rank_broadcast_mask", helper.make_node("Mul", ["S", "c"], ["SC"], name="scale"),
         numpy_helper.from_array(np.array(0.3, np.float32), "c")),
        ("rank_broadcast_scale", helper.make_node("Div", ["S", "c"], ["SC"], name="scale"),
         numpy_helper.from_array(np.full((1, 1, 1, 1), 1 / 0.3, np.float32), "c"))):
    masked = name.endswith("mask")
    save(name,
         [helper.make_node("Transpose", ["K"], ["KT"], perm=[0, 2, 1], name="kt"),
          helper.make_node("MatMul", ["Q", "KT"], ["S"], name="qk"), scale_node]
         + ([helper.make_node("Where", ["hidden", "ninf", "SC"], ["SM"], name="mask")]
            if masked else [helper.make_node("Identity", ["SC"], ["SM"], name="id")])
         + [helper.make_node("Softmax", ["SM"], ["P"], axis=-1, name="softmax"),
            helper.make_node("MatMul", ["P", "V"], ["O"], name="pv"),
            helper.make_node("Reshape", ["O", "flat"], ["Y"], name="flatten")],
         [vi("Q", F, [2, 4, 8]), vi("K", F, [2, 4, 8]), vi("V", F, [2, 4, 8])],
         [vi("O", F, [1, 2, 4, 8]), vi("Y", F, [64])],
         inits=[scale_init, numpy_helper.from_array(hidden, "hidden"),
                numpy_helper.from_array(np.array(-np.inf, np.float32), "ninf"),
                numpy_helper.from_array(np.array([-1], np.int64), "flat")], opset=17)
# A causal buffer sliced at the origin to one row (or one column): the
# [1, 4] row broadcasts over every query (key 0 only), the [4, 1] column
# masks nothing. Neither is the triangle of its source.
for name, ends in (("sliced_row_mask", [1, 4]), ("sliced_column_mask", [4, 1])):
    save(name,
         [helper.make_node("Transpose", ["K"], ["KT"], perm=[0, 1, 3, 2], name="kt"),
          helper.make_node("MatMul", ["Q", "KT"], ["S"], name="qk"),
          helper.make_node("Mul", ["S", "c"], ["SC"], name="scale"),
          helper.make_node("Slice", ["buffer", "starts", "ends", "axes"], ["hidden"],
                           name="slice"),
          helper.make_node("Where", ["hidden", "ninf", "SC"], ["SM"], name="mask"),
          helper.make_node("Softmax", ["SM"], ["P"], axis=-1, name="softmax"),
          helper.make_node("MatMul", ["P", "V"], ["O"], name="pv")],
         [vi("Q", F, [1, 2, 4, 8]), vi("K", F, [1, 2, 4, 8]), vi("V", F, [1, 2, 4, 8])],
         [vi("O", F, [1, 2, 4, 8])],
         inits=[numpy_helper.from_array(np.array(0.3, np.float32), "c"),
                numpy_helper.from_array(np.triu(np.ones((4, 4), bool), 1), "buffer"),
                numpy_helper.from_array(np.array([0, 0], np.int64), "starts"),
                numpy_helper.from_array(np.array(ends, np.int64), "ends"),
                numpy_helper.from_array(np.array([0, 1], np.int64), "axes"),
                numpy_helper.from_array(np.array(-np.inf, np.float32), "ninf")],
         opset=17)
# A constant bottom-right triangle with more queries (4) than keys (2),
# added as a finite -1e4: the top two rows hide every key, which leaves
# softmax(s) there (a uniform shift), not the zeros of causal(bottom_right).
br = np.where(np.arange(2)[None, :] > np.arange(4)[:, None] - 2, -1e4, 0).astype(np.float32)
save("bottom_right_finite_rows",
     [helper.make_node("Transpose", ["K"], ["KT"], perm=[0, 1, 3, 2], name="kt"),
      helper.make_node("MatMul", ["Q", "KT"], ["S"], name="qk"),
      helper.make_node("Mul", ["S", "c"], ["SC"], name="scale"),
      helper.make_node("Add", ["SC", "m"], ["SM"], name="mask"),
      helper.make_node("Softmax", ["SM"], ["P"], axis=-1, name="softmax"),
      helper.make_node("MatMul", ["P", "V"], ["O"], name="pv")],
     [vi("Q", F, [1, 2, 4, 8]), vi("K", F, [1, 2, 2, 8]), vi("V", F, [1, 2, 2, 8])],
     [vi("O", F, [1, 2, 4, 8])],
     inits=[numpy_helper.from_array(np.array(0.3, np.float32), "c"),
            numpy_helper.from_array(br, "m")], opset=17)
# Truncated and non-ONNX files.
with open(os.path.join(d, "attention_mask.onnx"), "rb") as f:
    whole = f.read()
with open(os.path.join(d, "truncated.onnx"), "wb") as f:
    f.write(whole[: len(whole) // 2])
with open(os.path.join(d, "not_onnx.onnx"), "wb") as f:
    f.write(b"\x93NUMPY this is not a protobuf at all \xff\xff\xff\xff")
# Shape arithmetic with a constant condition: torch's x.expand(-1, 3, -1, -1)
# writes its target shape as Where(Equal(c, ConstantOfShape(1) * -1),
# ConstantOfShape(1), c), and expand_as-like graphs pick a Shape's dims where
# the constant is -1. Both must be known while importing (Expand needs them).
I64 = TensorProto.INT64


def ints(name, values):
    return helper.make_node("Constant", [], [name],
                            value=numpy_helper.from_array(np.array(values, np.int64)))


save("expand_where_shape",
     [ints("c", [-1, 3, -1, -1]), ints("four", [4]), ints("minus1", [-1]),
      helper.make_node("ConstantOfShape", ["four"], ["ones"],
                       value=numpy_helper.from_array(np.array([1], np.int64))),
      helper.make_node("Mul", ["ones", "minus1"], ["m"]),
      helper.make_node("Equal", ["c", "m"], ["e"]),
      helper.make_node("Where", ["e", "ones", "c"], ["s"]),
      helper.make_node("Expand", ["x", "s"], ["y"], name="expand"),
      helper.make_node("Shape", ["x"], ["xs"]),
      helper.make_node("Where", ["e", "xs", "c"], ["s2"]),
      helper.make_node("Expand", ["x", "s2"], ["y2"], name="expand_as")],
     [vi("x", F, ["B", 1, 1, 7])],
     [vi("y", F, ["B", 3, 1, 7]), vi("y2", F, ["B", 3, 1, 7])], opset=17)
# A Shape returned as a graph output (known integers while importing,
# materialized for the result), next to an ordinary output.
save("shape_output",
     [helper.make_node("Identity", ["x"], ["y"]), helper.make_node("Shape", ["x"], ["s"])],
     [vi("x", F, ["B", 3, 5])], [vi("y", F, ["B", 3, 5]), vi("s", I64, [3])], opset=17)
# LayerNormalization (opset 17): over the last dim with a bias, and over the
# last two dims without one (Scale [3, 4]); the training outputs refused.
ln_scale = numpy_helper.from_array(np.linspace(0.5, 1.5, 8).astype(np.float32), "g")
ln_bias = numpy_helper.from_array(np.linspace(-1, 1, 8).astype(np.float32), "beta")
ln_scale2 = numpy_helper.from_array(np.linspace(0.5, 1.5, 12).astype(np.float32).reshape(3, 4),
                                    "g2")
save("layer_norm",
     [helper.make_node("LayerNormalization", ["x", "g", "beta"], ["y"], epsilon=1e-3, name="ln"),
      helper.make_node("LayerNormalization", ["x2", "g2"], ["y2"], axis=1, name="ln2")],
     [vi("x", F, ["B", 5, 8]), vi("x2", F, [2, 3, 4])],
     [vi("y", F, ["B", 5, 8]), vi("y2", F, [2, 3, 4])], [ln_scale, ln_bias, ln_scale2], opset=17)
save("layer_norm_mean_output",
     [helper.make_node("LayerNormalization", ["x", "g"], ["y", "mean"], name="ln")],
     [vi("x", F, [2, 8])], [vi("y", F, [2, 8]), vi("mean", F, [2, 1])], [ln_scale], opset=17)
# Graph outputs declared with an element type only (no shape), as hand-built
# graphs often declare them: they take the computed types.
save("shapeless_outputs",
     [helper.make_node("Softmax", ["x"], ["y"], axis=-1),
      helper.make_node("Shape", ["x"], ["s"])],
     [vi("x", F, ["B", 6])], [vi("y", F, None), vi("s", I64, None)], opset=17)
# LayerNormalization over a dim that is dynamic while Scale fixes its size:
# refused (nothing would check the size at run time).
save("layer_norm_dynamic_dim",
     [helper.make_node("LayerNormalization", ["x", "g"], ["y"], name="ln")],
     [vi("x", F, [2, "D"])], [vi("y", F, [2, "D"])], [ln_scale], opset=17)
# Equal of an empty known tensor and a scalar: empty, as NumPy broadcasts.
save("equal_empty",
     [ints("none", np.zeros((0,), np.int64)), ints("three", 3),
      helper.make_node("Equal", ["none", "three"], ["e"])],
     [], [vi("e", TensorProto.BOOL, [0])], opset=17)
# ReduceMean: axes as an attribute (opset 17, as torch 1.13 exports
# x.mean(-1, keepdim=True)) and as an input (opset 18); a mean over the
# dynamic dim divides by its run-time size.
save("reduce_mean",
     [helper.make_node("ReduceMean", ["x"], ["y"], axes=[-1], name="mean_last"),
      helper.make_node("ReduceMean", ["x"], ["y2"], axes=[0], keepdims=0, name="mean_batch")],
     [vi("x", F, ["B", 5, 8])], [vi("y", F, ["B", 5, 1]), vi("y2", F, [5, 8])], opset=17)
save("reduce_mean_18",
     [ints("axes", [1, 2]), helper.make_node("ReduceMean", ["x", "axes"], ["y"], name="mean")],
     [vi("x", F, ["B", 5, 8])], [vi("y", F, ["B", 1, 1])], opset=18)
# Range: torch.arange(T) of a dynamic sequence length as an embedding's
# position ids (GPT-2's wpe), next to token ids from a graph input (wte);
# a short constant range and a float one.
wte = numpy_helper.from_array(np.arange(40, dtype=np.float32).reshape(10, 4), "wte")
wpe = numpy_helper.from_array((np.arange(64, dtype=np.float32) / 100).reshape(16, 4), "wpe")
save("range_positions",
     [helper.make_node("Shape", ["idx"], ["s"]), ints("one", 1), ints("zero", 0),
      helper.make_node("Gather", ["s", "one"], ["t"]),
      helper.make_node("Range", ["zero", "t", "one"], ["pos"], name="arange"),
      helper.make_node("Gather", ["wpe", "pos"], ["pe"], name="wpe_gather"),
      helper.make_node("Gather", ["wte", "idx"], ["te"], name="wte_gather"),
      helper.make_node("Add", ["te", "pe"], ["y"]),
      ints("two", 2), ints("seven", 7),
      helper.make_node("Range", ["one", "seven", "two"], ["odd"], name="odd"),
      helper.make_node("Constant", [], ["f0"], value=numpy_helper.from_array(np.array(0.5, np.float32))),
      helper.make_node("Constant", [], ["f1"], value=numpy_helper.from_array(np.array(2.0, np.float32))),
      helper.make_node("Range", ["f0", "f1", "f0"], ["fr"], name="float_range")],
     [vi("idx", I64, ["B", "T"])],
     [vi("y", F, ["B", "T", 4]), vi("pos", I64, ["T"]), vi("odd", I64, [3]), vi("fr", F, [3])],
     [wte, wpe], opset=17)
# Token ids cast to int32 and unsqueezed before the Gather (how some
# exporters feed an embedding): the range is still checked on the input.
save("ids_through_cast",
     [helper.make_node("Cast", ["idx"], ["idx32"], to=TensorProto.INT32),
      ints("axis0", [0]),
      helper.make_node("Unsqueeze", ["idx32", "axis0"], ["idx3"]),
      helper.make_node("Gather", ["wte", "idx3"], ["te"], name="wte_gather")],
     [vi("idx", I64, ["B", "T"])], [vi("te", F, [1, "B", "T", 4])], [wte], opset=17)
# Range refusals: a zero step, a step that is not a constant, a float range
# with a bound that is not one, an empty range.
save("range_zero_delta",
     [ints("zero", 0), ints("five", 5), helper.make_node("Range", ["zero", "five", "zero"], ["r"],
                                                          name="arange")],
     [], [vi("r", I64, [None])], opset=17)
save("range_input_delta",
     [ints("zero", 0), ints("five", 5), helper.make_node("Range", ["zero", "five", "d"], ["r"],
                                                          name="arange")],
     [vi("d", I64, [])], [vi("r", I64, [None])], opset=17)
save("range_float_input",
     [helper.make_node("Constant", [], ["f0"], value=numpy_helper.from_array(np.array(0.5, np.float32))),
      helper.make_node("Range", ["f0", "lim", "f0"], ["r"], name="arange")],
     [vi("lim", F, [])], [vi("r", F, [None])], opset=17)
save("range_empty",
     [ints("zero", 0), ints("five", 5), ints("one", 1),
      helper.make_node("Range", ["five", "zero", "one"], ["r"], name="arange")],
     [], [vi("r", I64, [None])], opset=17)
# Gelu (opset 20): exact and tanh-approximated; an unknown approximation.
save("gelu",
     [helper.make_node("Gelu", ["x"], ["y"], name="gelu"),
      helper.make_node("Gelu", ["x"], ["y2"], approximate="tanh", name="gelu_tanh")],
     [vi("x", F, ["B", "C"])], [vi("y", F, ["B", "C"]), vi("y2", F, ["B", "C"])], opset=20)
save("gelu_bad_approximate",
     [helper.make_node("Gelu", ["x"], ["y"], approximate="fast", name="gelu")],
     [vi("x", F, [2, 8])], [vi("y", F, [2, 8])], opset=20)
# Range: a float range of 1e30 elements, and one from a dynamic size to
# itself (empty whatever the size).
save("range_huge",
     [helper.make_node("Constant", [], ["f0"], value=numpy_helper.from_array(np.array(0.0, np.float32))),
      helper.make_node("Constant", [], ["f1"], value=numpy_helper.from_array(np.array(1e30, np.float32))),
      helper.make_node("Constant", [], ["fd"], value=numpy_helper.from_array(np.array(1.0, np.float32))),
      helper.make_node("Range", ["f0", "f1", "fd"], ["r"], name="arange")],
     [], [vi("r", F, [None])], opset=17)
save("range_same_size",
     [helper.make_node("Shape", ["x"], ["s"]), ints("zero", 0), ints("one", 1),
      helper.make_node("Gather", ["s", "zero"], ["t"]),
      helper.make_node("Range", ["t", "t", "one"], ["r"], name="arange")],
     [vi("x", F, ["T"])], [vi("r", I64, [None])], opset=17)
# Opsets before 13: Softmax normalizes the flattened dims from `axis` on
# (default 1); Unsqueeze/Squeeze axes and Split lengths are attributes.
save("opset11_forms",
     [helper.make_node("Softmax", ["x"], ["flat"], axis=1, name="sm_axis1"),
      helper.make_node("Softmax", ["x"], ["dflt"], name="sm_default"),
      helper.make_node("Softmax", ["x"], ["last"], axis=-1, name="sm_last"),
      helper.make_node("Unsqueeze", ["x"], ["u"], axes=[1, 3], name="unsq"),
      helper.make_node("Squeeze", ["u"], ["sq"], axes=[1], name="sq"),
      helper.make_node("Split", ["x"], ["p0", "p1"], axis=2, split=[1, 3], name="split"),
      helper.make_node("Squeeze", ["u"], ["sqall"], name="sq_all"),
      helper.make_node("Split", ["x"], ["h0", "h1"], axis=2, name="split_halves")],
     [vi("x", F, ["B", 3, 4])],
     [vi("flat", F, ["B", 3, 4]), vi("dflt", F, ["B", 3, 4]), vi("last", F, ["B", 3, 4]),
      vi("sq", F, ["B", 3, 1, 4]), vi("p0", F, ["B", 3, 1]), vi("p1", F, ["B", 3, 3]),
      vi("sqall", F, ["B", 3, 4]), vi("h0", F, ["B", 3, 2]), vi("h1", F, ["B", 3, 2])],
     opset=11)
# Attention-shaped, but opset 11's Softmax without an axis normalizes over
# dims 1 to 3 of the [1, 2, 3, 5] scores together: not attention, not raised.
save("opset11_softmax_not_attention",
     [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
      helper.make_node("MatMul", ["q", "kt"], ["s"]),
      helper.make_node("Softmax", ["s"], ["w"], name="sm"),
      helper.make_node("MatMul", ["w", "v"], ["y"])],
     [vi("q", F, [1, 2, 3, 4]), vi("k", F, [1, 2, 5, 4]), vi("v", F, [1, 2, 5, 4])],
     [vi("y", F, [1, 2, 3, 4])], opset=11)
# Opset 9: Slice's starts/ends/axes are attributes; a Dropout (ratio an
# attribute) passes data through.
save("opset9_slice",
     [helper.make_node("Slice", ["x"], ["s"], starts=[1, -3], ends=[3, 100], axes=[2, 1],
                       name="slice"),
      helper.make_node("Dropout", ["s"], ["y"], ratio=0.3, name="drop")],
     [vi("x", F, [2, 3, 4])], [vi("y", F, [2, 3, 2])], opset=9)
# Dropout from opset 12: training_mode false (or ratio 0) is the identity.
save("dropout_inference",
     [helper.make_node("Constant", [], ["r"], value=numpy_helper.from_array(np.array(0.2, np.float32))),
      helper.make_node("Constant", [], ["off"], value=numpy_helper.from_array(np.array(False))),
      helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array(0.0, np.float32))),
      helper.make_node("Constant", [], ["on"], value=numpy_helper.from_array(np.array(True))),
      helper.make_node("Dropout", ["x", "r", "off"], ["y"], name="drop_eval"),
      helper.make_node("Dropout", ["y", "zero", "on"], ["z"], name="drop_ratio0")],
     [vi("x", F, [2, 4])], [vi("z", F, [2, 4])], opset=13)
# Refused: lists given in the other opset's form, an op newer than the
# model's opset, Dropout in training mode.
save("unsqueeze_axes_input_opset11",
     [ints("ax", [0]), helper.make_node("Unsqueeze", ["x", "ax"], ["y"], name="unsq")],
     [vi("x", F, [2, 4])], [vi("y", F, [1, 2, 4])], opset=11)
save("slice_no_starts_opset9",
     [helper.make_node("Slice", ["x"], ["y"], ends=[1], name="slice")],
     [vi("x", F, [2, 4])], [vi("y", F, [1, 4])], opset=9)
save("trilu_opset13",
     [helper.make_node("Trilu", ["x"], ["y"], name="tri")],
     [vi("x", F, [4, 4])], [vi("y", F, [4, 4])], opset=13)
save("dropout_training",
     [helper.make_node("Constant", [], ["r"], value=numpy_helper.from_array(np.array(0.1, np.float32))),
      helper.make_node("Constant", [], ["on"], value=numpy_helper.from_array(np.array(True))),
      helper.make_node("Dropout", ["x", "r", "on"], ["y"], name="drop")],
     [vi("x", F, [2, 4])], [vi("y", F, [2, 4])], opset=13)
save("dropout_training_input",
     [helper.make_node("Dropout", ["x", "", "mode"], ["y"], name="drop")],
     [vi("x", F, [2, 4]), vi("mode", TensorProto.BOOL, [])], [vi("y", F, [2, 4])], opset=13)
# Variadic Max/Min with broadcasting, Clip with only an upper bound (the
# lower input left empty), with lo > hi (all hi), with a [1] bound and no
# upper one (the largest finite float), integer Max, Neg, Abs and Clip;
# and Clip bounds that are not scalars (refused).
save("extrema_clip",
     [helper.make_node("Constant", [], ["hi"], value=numpy_helper.from_array(np.array(0.25, np.float32))),
      helper.make_node("Constant", [], ["lo"], value=numpy_helper.from_array(np.array(0.5, np.float32))),
      helper.make_node("Constant", [], ["lo1"], value=numpy_helper.from_array(np.array([-0.5], np.float32))),
      helper.make_node("Constant", [], ["ilo"], value=numpy_helper.from_array(np.array(-2, np.int64))),
      helper.make_node("Max", ["x", "r", "c"], ["mx"], name="max3"),
      helper.make_node("Min", ["x", "hi"], ["mn"], name="min2"),
      helper.make_node("Clip", ["x", "", "hi"], ["cl"], name="clip_hi"),
      helper.make_node("Clip", ["x", "lo", "hi"], ["cl2"], name="clip_crossed"),
      helper.make_node("Clip", ["x", "lo1"], ["cl3"], name="clip_lo1"),
      helper.make_node("Max", ["i", "j"], ["imx"], name="max_int"),
      helper.make_node("Neg", ["i"], ["ineg"], name="neg_int"),
      helper.make_node("Abs", ["i"], ["iabs"], name="abs_int"),
      helper.make_node("Clip", ["i", "ilo"], ["icl"], name="clip_int")],
     [vi("x", F, ["B", 5]), vi("r", F, [1, 5]), vi("c", F, ["B", 1]),
      vi("i", I64, [4]), vi("j", I64, [4])],
     [vi("mx", F, ["B", 5]), vi("mn", F, ["B", 5]), vi("cl", F, ["B", 5]),
      vi("cl2", F, ["B", 5]), vi("cl3", F, ["B", 5]), vi("imx", I64, [4]),
      vi("ineg", I64, [4]), vi("iabs", I64, [4]), vi("icl", I64, [4])],
     opset=13)
save("clip_bad_bounds",
     [helper.make_node("Clip", ["x", "lo"], ["y"], name="clip")],
     [vi("x", F, [2, 4]), vi("lo", F, [4])], [vi("y", F, [2, 4])], opset=13)
# Gather indices computed in the graph, which the runtime cannot check
# before the call: the last token id (a Slice of the ids), ids plus an
# offset (one Gather reads both), a constant index into a table of dynamic
# size (x[:, -2] of a [B, S, 4] input). Two more results alias others (x
# itself, te twice), for the runtime's error path. Position ids arange(T)
# unsqueezed over the batch keep the check before the call. Constant
# indices out of range (2, and 100 of them) are refused while importing.
save("gather_computed_ids",
     [ints("starts", [-1]), ints("ends", [2 ** 62]), ints("axes", [1]),
      helper.make_node("Slice", ["idx", "starts", "ends", "axes"], ["last"], name="last_token"),
      helper.make_node("Gather", ["wte", "last"], ["te"], name="wte_last"),
      ints("offset", 4),
      helper.make_node("Add", ["idx", "offset"], ["shifted"], name="shift"),
      helper.make_node("Gather", ["wte", "shifted"], ["se"], name="wte_shifted"),
      ints("minus2", -2),
      helper.make_node("Gather", ["x", "minus2"], ["xm"], axis=1, name="second_last"),
      helper.make_node("Identity", ["x"], ["xsame"]),
      helper.make_node("Identity", ["te"], ["tesame"])],
     [vi("idx", I64, ["B", "T"]), vi("x", F, ["B", "S", 4])],
     [vi("te", F, ["B", 1, 4]), vi("se", F, ["B", "T", 4]), vi("xm", F, ["B", 4]),
      vi("xsame", F, ["B", "S", 4]), vi("tesame", F, ["B", 1, 4])],
     [wte], opset=17)
save("gather_positions_unsqueezed",
     [helper.make_node("Shape", ["idx"], ["s"]), ints("one", 1), ints("zero", 0),
      helper.make_node("Gather", ["s", "one"], ["t"]),
      helper.make_node("Range", ["zero", "t", "one"], ["pos"], name="arange"),
      ints("axis0", [0]),
      helper.make_node("Unsqueeze", ["pos", "axis0"], ["pos2"]),
      helper.make_node("Gather", ["wpe", "pos2"], ["pe"], name="wpe_gather")],
     [vi("idx", I64, ["B", "T"])], [vi("pe", F, [1, "T", 4])], [wpe], opset=17)
save("gather_constant_out_of_range",
     [ints("eleven", [0, 11]),
      helper.make_node("Gather", ["wte", "eleven"], ["te"], name="wte_const")],
     [], [vi("te", F, [2, 4])], [wte], opset=17)
save("gather_constant_out_of_range_100",
     [ints("many", [i % 10 for i in range(99)] + [-11]),
      helper.make_node("Gather", ["wte", "many"], ["te"], name="wte_const100")],
     [], [vi("te", F, [100, 4])], [wte], opset=17)
# Comparisons (floats with a NaN, signed integers, bools for Equal; NumPy
# broadcasting), logical ops, and a comparison of known shape integers
# (folded to a constant).
B = TensorProto.BOOL
save("compare_logical",
     [helper.make_node("Less", ["a", "b"], ["lt"]),
      helper.make_node("Greater", ["a", "b"], ["gt"]),
      helper.make_node("LessOrEqual", ["i", "j"], ["le"]),
      helper.make_node("GreaterOrEqual", ["i", "j"], ["ge"]),
      helper.make_node("Equal", ["m", "m2"], ["eqb"]),
      helper.make_node("And", ["m", "m2"], ["and"]),
      helper.make_node("Or", ["m", "m2"], ["or"]),
      helper.make_node("Xor", ["m", "m2"], ["xor"]),
      helper.make_node("Shape", ["a"], ["sh"]), ints("three", [3]),
      helper.make_node("Greater", ["sh", "three"], ["big"]),
      helper.make_node("LessOrEqual", ["sh", "three"], ["small"])],
     [vi("a", F, [3, 4]), vi("b", F, [4]), vi("i", I64, [3, 4]), vi("j", I64, [1, 4]),
      vi("m", B, [3, 4]), vi("m2", B, [4])],
     [vi("lt", B, [3, 4]), vi("gt", B, [3, 4]), vi("le", B, [3, 4]), vi("ge", B, [3, 4]),
      vi("eqb", B, [3, 4]), vi("and", B, [3, 4]), vi("or", B, [3, 4]), vi("xor", B, [3, 4]),
      vi("big", B, [2]), vi("small", B, [2])], opset=13)
# Comparisons of sizes known only at run time: a size is never -1 and
# equals itself, so these fold (either operand order, each predicate, after
# a Cast to int32); a size minus 5 may be -1 and does not.
# repeat_kv's expand target, Where(Equal(r, -1), 1, r) over
# r = Reshape(Concat(N, 3, T, 4), [-1]), stays known and expands.
def gather_dim(out, i):
    return [ints(out + "_i", i), helper.make_node("Gather", ["sh", out + "_i"], [out], axis=0)]
save("compare_sizes",
     [helper.make_node("Shape", ["x"], ["sh"]), ints("neg", [-1, -1, -1]),
      ints("five", [5, 5, 5]),
      helper.make_node("Equal", ["sh", "neg"], ["eqneg"]),
      helper.make_node("Less", ["neg", "sh"], ["ltneg"]),
      helper.make_node("GreaterOrEqual", ["sh", "sh"], ["geself"]),
      helper.make_node("Greater", ["sh", "neg"], ["gtneg"]),
      helper.make_node("LessOrEqual", ["sh", "neg"], ["leneg"]),
      helper.make_node("GreaterOrEqual", ["neg", "sh"], ["genegsh"]),
      helper.make_node("Less", ["sh", "sh"], ["ltself"]),
      helper.make_node("Cast", ["sh"], ["sh32"], to=TensorProto.INT32),
      helper.make_node("Cast", ["neg"], ["neg32"], to=TensorProto.INT32),
      helper.make_node("Equal", ["sh32", "neg32"], ["eqneg32"]),
      helper.make_node("Sub", ["sh", "five"], ["shm5"]),
      helper.make_node("Equal", ["shm5", "neg"], ["eqm5"])]
     + gather_dim("n", [0]) + gather_dim("t", [1])
     + [ints("three", [3]), ints("four", [4]), ints("flat", [-1]),
        helper.make_node("Concat", ["n", "three", "t", "four"], ["cat"], axis=0),
        helper.make_node("Reshape", ["cat", "flat"], ["r"]),
        helper.make_node("Shape", ["r"], ["rsh"]),
        helper.make_node("ConstantOfShape", ["rsh"], ["ones"],
                         value=numpy_helper.from_array(np.array([1], np.int64))),
        ints("m1", [-1]), helper.make_node("Mul", ["ones", "m1"], ["negs"]),
        helper.make_node("Equal", ["r", "negs"], ["isneg"]),
        helper.make_node("Where", ["isneg", "ones", "r"], ["target"]),
        ints("ax1", [1]), helper.make_node("Unsqueeze", ["x", "ax1"], ["xu"]),
        helper.make_node("Expand", ["xu", "target"], ["e"])],
     [vi("x", F, ["N", "T", 4])],
     [vi("eqneg", B, [3]), vi("ltneg", B, [3]), vi("geself", B, [3]), vi("gtneg", B, [3]),
      vi("leneg", B, [3]), vi("genegsh", B, [3]), vi("ltself", B, [3]), vi("eqneg32", B, [3]),
      vi("eqm5", B, [3]), vi("e", F, ["N", 3, "T", 4])], opset=17)
# Slice ends computed from a size: T + 1 is never negative, so only
# min(end, T) is emitted; T + 2^40 might wrap, so it keeps the clamp of a
# possibly negative end (select, max) as any unknown value does.
for name, extra in (("slice_end_sum", 1), ("slice_end_huge", 1 << 40)):
    save(name,
         [helper.make_node("Shape", ["x"], ["sh"]), ints("i0", [0]),
          helper.make_node("Gather", ["sh", "i0"], ["t"], axis=0),
          ints("extra", [extra]), helper.make_node("Add", ["t", "extra"], ["end"]),
          ints("start", [0]), ints("axis", [0]),
          helper.make_node("Slice", ["x", "start", "end", "axis"], ["y"])],
         [vi("x", F, ["T", 4])], [vi("y", F, ["T", 4])], opset=17)
# Meta's causal mask, torch.full((Tq, Tk), fill).triu(k), added to the
# scores: k = 1 with a fill of -inf is top-left causal, k = Tk - Tq + 1
# (Tq = 2, Tk = 4) bottom-right; k = 0 also hides the diagonal and a
# positive fill hides nothing: those stay masks.
def triu_chain(out, q, k, fill, tq):
    f = out + "_"
    return [ints(f + "shape", [tq, 4]), ints(f + "k", [k]),
            helper.make_node("ConstantOfShape", [f + "shape"], [f + "full"],
                             value=numpy_helper.from_array(np.array([fill], np.float32))),
            helper.make_node("Trilu", [f + "full", f + "k"], [f + "mask"], upper=1),
            helper.make_node("Transpose", ["K"], [f + "kt"], perm=[0, 1, 3, 2]),
            helper.make_node("MatMul", [q, f + "kt"], [f + "s"]),
            helper.make_node("Mul", [f + "s", "scale"], [f + "ss"]),
            helper.make_node("Add", [f + "ss", f + "mask"], [f + "sm"]),
            helper.make_node("Softmax", [f + "sm"], [f + "p"], axis=-1),
            helper.make_node("MatMul", [f + "p", "V"], [out])]
save("triu_masks",
     triu_chain("top_left", "Q", 1, -np.inf, 4) + triu_chain("bottom_right", "Qs", 3, -np.inf, 2)
     + triu_chain("diag0", "Q", 0, -np.inf, 4) + triu_chain("positive", "Q", 1, 3.0, 4),
     [vi("Q", F, [1, 2, 4, 8]), vi("Qs", F, [1, 2, 2, 8]), vi("K", F, [1, 2, 4, 8]),
      vi("V", F, [1, 2, 4, 8])],
     [vi("top_left", F, [1, 2, 4, 8]), vi("bottom_right", F, [1, 2, 2, 8]),
      vi("diag0", F, [1, 2, 4, 8]), vi("positive", F, [1, 2, 4, 8])],
     inits=[numpy_helper.from_array(np.array(8 ** -0.5, np.float32), "scale")], opset=17)
# One K/V head broadcast by the MatMuls: K and V [1, 1, T, d] against 4
# query heads is multi-query attention (raised, Hkv = 1), and so is rank 3
# (K, V [1, T, d] against Q [4, T, d]); K with one head and V with four is
# not attention of either kind and stays op by op.
def mqa_chain(out, q, k, v):
    f = out + "_"
    return [helper.make_node("Transpose", [k], [f + "kt"], perm=[0, 1, 3, 2] if out != "rank3" else [0, 2, 1]),
            helper.make_node("MatMul", [q, f + "kt"], [f + "s"]),
            helper.make_node("Mul", [f + "s", "scale"], [f + "ss"]),
            helper.make_node("Softmax", [f + "ss"], [f + "p"], axis=-1),
            helper.make_node("MatMul", [f + "p", v], [out])]
save("mqa_broadcast",
     mqa_chain("mqa", "Q", "K1", "V1") + mqa_chain("rank3", "Q3", "K3", "V3")
     + mqa_chain("mixed", "Q", "K1", "V4"),
     [vi("Q", F, [1, 4, 8, 16]), vi("K1", F, [1, 1, 8, 16]), vi("V1", F, [1, 1, 8, 16]),
      vi("Q3", F, [4, 8, 16]), vi("K3", F, [1, 8, 16]), vi("V3", F, [1, 8, 16]),
      vi("V4", F, [1, 4, 8, 16])],
     [vi("mqa", F, [1, 4, 8, 16]), vi("rank3", F, [4, 8, 16]), vi("mixed", F, [1, 4, 8, 16])],
     inits=[numpy_helper.from_array(np.array(0.25, np.float32), "scale")], opset=17)
# ReduceMax/ReduceMin (axes as an input from opset 18; an empty reduction
# is -inf / +inf), integer ReduceSum and ReduceMax, ArgMax (ties to the last
# index) and ArgMin, ArgMax over a leading axis (the first NaN taken).
save("reduce_extrema",
     [ints("axis0", [0]), ints("axisl", [-1]), ints("axis1", [1]),
      helper.make_node("ReduceMax", ["x", "axis0"], ["rmax"], keepdims=0),
      helper.make_node("ReduceMin", ["x", "axisl"], ["rmin"]),
      helper.make_node("ReduceSum", ["i", "axis1"], ["isum"], keepdims=0),
      helper.make_node("ReduceMax", ["i"], ["imax"], keepdims=0),
      helper.make_node("ArgMax", ["x"], ["amax"], axis=1, select_last_index=1),
      helper.make_node("ArgMin", ["i"], ["amin"], axis=0, keepdims=0),
      helper.make_node("ArgMax", ["x"], ["amaxfirst"], axis=0, keepdims=0)],
     [vi("x", F, ["N", 4]), vi("i", I64, [3, 4])],
     [vi("rmax", F, [4]), vi("rmin", F, ["N", 1]), vi("isum", I64, [3]),
      vi("imax", I64, []), vi("amax", I64, ["N", 1]), vi("amin", I64, [4]),
      vi("amaxfirst", I64, [4])], opset=18)
# CumSum along a constant axis: plain, exclusive, reverse, both, and of
# integers along a negative axis; an axis that is a graph input is refused.
def cumsum(out, data, axis, **attrs):
    return [ints(out + "_axis", axis),
            helper.make_node("CumSum", [data, out + "_axis"], [out], name=out, **attrs)]
save("cumsum",
     cumsum("plain", "x", 1) + cumsum("excl", "x", 1, exclusive=1)
     + cumsum("rev", "x", 1, reverse=1) + cumsum("both", "x", 1, exclusive=1, reverse=1)
     + cumsum("ints", "i", -2),
     [vi("x", F, ["B", "T"]), vi("i", I64, [3, 4])],
     [vi(o, F, ["B", "T"]) for o in ("plain", "excl", "rev", "both")] + [vi("ints", I64, [3, 4])],
     opset=14)
save("cumsum_axis_input",
     [helper.make_node("CumSum", ["x", "axis"], ["y"], name="cs")],
     [vi("x", F, [3]), vi("axis", I64, [])], [vi("y", F, [3])], opset=14)
save("less_bool",
     [helper.make_node("Less", ["m", "m"], ["y"], name="lt")],
     [vi("m", B, [3])], [vi("y", B, [3])], opset=13)
save("argmax_empty",
     [helper.make_node("ArgMax", ["x"], ["y"], name="am")],
     [vi("x", F, [0, 3])], [vi("y", I64, [1, 3])], opset=13)
# Slices with negative steps: the whole axis backwards (torch.flip: -1 to
# INT64_MIN), a part of one and every other element of another, bounds
# past the ends (clamped), an empty result, positive and negative steps in
# one node, a whole reversal beside a whole forward axis, INT64_MAX as a
# backward end (ONNX Runtime: through the first element), an empty forward
# slice (x[..., 4:] of 4), a shape reversed (known integers); and on
# dynamic axes.
LOW = -(2 ** 63) + 1
def neg_slice(out, starts, ends, axes, steps, tag, data="x"):
    return [ints(tag + "_s", starts), ints(tag + "_e", ends), ints(tag + "_a", axes),
            ints(tag + "_t", steps),
            helper.make_node("Slice", [data, tag + "_s", tag + "_e", tag + "_a", tag + "_t"],
                             [out], name=tag)]


HIGH = 2 ** 63 - 1
save("slice_negative_steps",
     neg_slice("flip", [-1], [LOW], [0], [-1], "flip")
     + neg_slice("part", [4, -1], [1, LOW], [0, 2], [-1, -2], "part")
     + neg_slice("clamped", [10], [-10], [1], [-3], "clamped")
     + neg_slice("empty", [1], [3], [0], [-1], "empty")
     + neg_slice("mixed", [0, -1], [6, LOW], [0, 2], [2, -1], "mixed")
     + neg_slice("wholepos", [0, -1], [HIGH, LOW], [0, 1], [1, -1], "wholepos")
     + neg_slice("maxend", [-1], [HIGH], [2], [-1], "maxend")
     + neg_slice("emptypos", [4], [HIGH], [2], [1], "emptypos")
     + [helper.make_node("Shape", ["x"], ["shape"])]
     + neg_slice("backshape", [-1], [LOW], [0], [-1], "backshape", data="shape")
     + [helper.make_node("Reshape", ["x", "backshape"], ["reshaped"])],
     [vi("x", F, [6, 5, 4])],
     [vi("flip", F, [6, 5, 4]), vi("part", F, [3, 5, 2]), vi("clamped", F, [6, 2, 4]),
      vi("empty", F, [0, 5, 4]), vi("mixed", F, [3, 5, 4]), vi("wholepos", F, [6, 5, 4]),
      vi("maxend", F, [6, 5, 4]), vi("emptypos", F, [6, 5, 0]),
      vi("reshaped", F, [4, 5, 6])], opset=13)
save("slice_negative_steps_dynamic",
     neg_slice("flip", [-1], [LOW], [1], [-1], "flip")
     + neg_slice("odd", [-2], [LOW], [1], [-2], "odd")
     + [helper.make_node("Add", ["x", "flip"], ["sum"])],
     [vi("x", F, ["B", "T", 4])],
     [vi("sum", F, ["B", "T", 4]), vi("odd", F, ["B", None, 4])], opset=13)
save("slice_step_zero", neg_slice("y", [0], [2], [0], [0], "zero"),
     [vi("x", F, [6])], [vi("y", F, [2])], opset=13)
save("slice_negative_step_computed",
     [helper.make_node("Shape", ["x"], ["shape"]), ints("zero", [0]), ints("one", [1]),
      ints("low", [LOW]), ints("minus1", [-1]),
      helper.make_node("Slice", ["shape", "zero", "one"], ["n"]),
      helper.make_node("Slice", ["x", "n", "low", "zero", "minus1"], ["y"], name="back")],
     [vi("x", F, ["T"])], [vi("y", F, [None])], opset=13)
# Einsum (opset 12): a batched matmul, attention scores and their weighted
# sum with dynamic dims, an outer product, a diagonal, a sum of all
# elements (0-d), the implicit output ("ij,jk" is "ik"), "..." broadcast
# numpy's way ([2, 1] against [5]), three operands, integers; and refusals.
save("einsum_zoo",
     [helper.make_node("Einsum", ["a", "b"], ["bmm"], equation="bij,bjk->bik", name="bmm"),
      helper.make_node("Einsum", ["q", "k"], ["s"], equation="bhqd, bhkd -> bhqk", name="scores"),
      helper.make_node("Einsum", ["s", "k"], ["o"], equation="bhqk,bhkd->bhqd", name="weighted"),
      helper.make_node("Einsum", ["u", "v"], ["outer"], equation="i,j->ij", name="outer"),
      helper.make_node("Einsum", ["m"], ["diag"], equation="ii->i", name="diag"),
      helper.make_node("Einsum", ["m"], ["total"], equation="ij->", name="total"),
      helper.make_node("Einsum", ["m", "p"], ["implicit"], equation="ij,jk", name="implicit"),
      helper.make_node("Einsum", ["e", "f"], ["ell"], equation="...ij,...jk->...ik", name="ellipsis"),
      helper.make_node("Einsum", ["u", "m", "u"], ["three"], equation="i,ij,j->", name="three"),
      helper.make_node("Einsum", ["ia", "ib"], ["ints"], equation="ij,j->i", name="ints")],
     [vi("a", F, [2, 3, 4]), vi("b", F, [2, 4, 5]), vi("q", F, ["B", 2, "T", 8]),
      vi("k", F, ["B", 2, "S", 8]), vi("u", F, [3]), vi("v", F, [4]), vi("m", F, [3, 3]),
      vi("p", F, [3, 4]), vi("e", F, [2, 1, 3, 4]), vi("f", F, [5, 4, 2]),
      vi("ia", I64, [3, 4]), vi("ib", I64, [4])],
     [vi("bmm", F, [2, 3, 5]), vi("s", F, ["B", 2, "T", "S"]), vi("o", F, ["B", 2, "T", 8]),
      vi("outer", F, [3, 4]), vi("diag", F, [3]), vi("total", F, []),
      vi("implicit", F, [3, 4]), vi("ell", F, [2, 5, 3, 2]), vi("three", F, []),
      vi("ints", I64, [3])], opset=12)
# Einsums of a matrix product's form up to the order of their dims (read as
# MatMul with transposes when the raise is on): seq-major scores and their
# weighted sum, a transposed result, the implicit output of "ba,ca" ("bc"),
# a labelled batch dim of size 1 against 2 (NumPy broadcasts it), integers,
# a summed letter of size 1 against 3 (NumPy broadcasts it, MatMul cannot:
# the generic Einsum then), a diagonal of a 1 x 1 against 3 (NumPy
# broadcasts it too), and a MatMul node of integers.
save("einsum_matmul_forms",
     [helper.make_node("Einsum", ["q", "k"], ["s"], equation="bqhd,bkhd->bhqk", name="scores"),
      helper.make_node("Einsum", ["w", "k"], ["o"], equation="bhqk,bkhd->bqhd", name="weighted"),
      helper.make_node("Einsum", ["m", "p"], ["mt"], equation="ij,jk->ki", name="transposed"),
      helper.make_node("Einsum", ["p", "x"], ["imp"], equation="ba,ca", name="implicit"),
      helper.make_node("Einsum", ["a1", "b2"], ["bc"], equation="bij,bjk->bik", name="broadcast"),
      helper.make_node("Einsum", ["ia", "ib"], ["ints"], equation="ij,kj->ik", name="ints"),
      helper.make_node("Einsum", ["s1", "p"], ["sum1"], equation="ij,jk->ik", name="summed1"),
      helper.make_node("Einsum", ["d1", "u"], ["diag1"], equation="ii,i->i", name="diag1"),
      helper.make_node("MatMul", ["ia", "ic"], ["imm"], name="int_matmul")],
     [vi("q", F, ["B", "T", 2, 8]), vi("k", F, ["B", "S", 2, 8]), vi("w", F, ["B", 2, "T", "S"]),
      vi("m", F, [3, 3]), vi("p", F, [3, 4]), vi("x", F, [5, 4]),
      vi("a1", F, [1, 3, 4]), vi("b2", F, [2, 4, 5]),
      vi("ia", I64, [3, 4]), vi("ib", I64, [2, 4]), vi("s1", F, [2, 1]), vi("d1", F, [1, 1]),
      vi("u", F, [3]), vi("ic", I64, [4, 2])],
     [vi("s", F, ["B", 2, "T", "S"]), vi("o", F, ["B", "T", 2, 8]), vi("mt", F, [4, 3]),
      vi("imp", F, [3, 5]), vi("bc", F, [2, 3, 5]), vi("ints", I64, [3, 2]),
      vi("sum1", F, [2, 4]), vi("diag1", F, [3]), vi("imm", I64, [3, 2])], opset=12)
save("einsum_seq_major_bad_head",
     [helper.make_node("Einsum", ["q", "k"], ["s"], equation="bqhd,bkhd->bhqk", name="scores")],
     [vi("q", F, [2, 5, 3, 8]), vi("k", F, [2, 7, 3, 9])], [vi("s", F, [2, 3, 5, 7])], opset=12)
# Attention over seq-major [B, T, H, d] tensors written with einsum: raised
# to attn.sdpa whose transposes fold into its seq_major layout.
save("einsum_attention_seq_major",
     [helper.make_node("Einsum", ["q", "k"], ["s"], equation="bqhd,bkhd->bhqk", name="scores"),
      helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(np.array(8 ** 0.5, np.float32))),
      helper.make_node("Div", ["s", "c"], ["ss"]),
      helper.make_node("Softmax", ["ss"], ["w"], axis=-1),
      helper.make_node("Einsum", ["w", "v"], ["o"], equation="bhqk,bkhd->bqhd", name="weighted")],
     [vi("q", F, ["B", "T", 2, 8]), vi("k", F, ["B", "S", 2, 8]), vi("v", F, ["B", "S", 2, 8])],
     [vi("o", F, ["B", "T", 2, 8])], opset=13)
# Operands whose rank is not their term's letter count: one read by MatMul
# directly, one transposed first.
save("einsum_rank_mismatch",
     [helper.make_node("Einsum", ["x", "y"], ["z"], equation="bij,bjk->bik", name="mm")],
     [vi("x", F, [3, 4]), vi("y", F, [2, 4, 5])], [vi("z", F, [2, 3, 5])], opset=12)
save("einsum_rank_mismatch_transposed",
     [helper.make_node("Einsum", ["x", "y"], ["z"], equation="bij,bkj->bik", name="mm")],
     [vi("x", F, [2, 3, 4]), vi("y", F, [5, 4])], [vi("z", F, [2, 3, 5])], opset=12)
save("einsum_bad_sizes",
     [helper.make_node("Einsum", ["x", "y"], ["z"], equation="ij,jk->ik", name="mm")],
     [vi("x", F, [3, 4]), vi("y", F, [5, 2])], [vi("z", F, [3, 2])], opset=12)
save("einsum_bad_char",
     [helper.make_node("Einsum", ["x", "y"], ["z"], equation="ij,j1->i", name="mm")],
     [vi("x", F, [3, 4]), vi("y", F, [4, 1])], [vi("z", F, [3])], opset=12)
save("einsum_dots_dropped",
     [helper.make_node("Einsum", ["x"], ["z"], equation="...ij->ij", name="drop")],
     [vi("x", F, [2, 3, 3])], [vi("z", F, [3, 3])], opset=12)
save("einsum_opset11",
     [helper.make_node("Einsum", ["x", "x"], ["z"], equation="i,i->", name="dot")],
     [vi("x", F, [3])], [vi("z", F, [])], opset=11)
# A float Range of a size (torch.arange(T, dtype=torch.float32)): Range(0.0,
# Cast(T), 1.0) added to x[B, T]; a start that is not whole is refused.
def float_range(name, start):
    save(name,
         [helper.make_node("Shape", ["x"], ["s"]), ints("one", 1),
          helper.make_node("Gather", ["s", "one"], ["t"]),
          helper.make_node("Cast", ["t"], ["tf"], to=TensorProto.FLOAT),
          helper.make_node("Constant", [], ["f0"], value=numpy_helper.from_array(np.array(start, np.float32))),
          helper.make_node("Constant", [], ["f1"], value=numpy_helper.from_array(np.array(1.0, np.float32))),
          helper.make_node("Range", ["f0", "tf", "f1"], ["pos"], name="arange"),
          helper.make_node("Add", ["x", "pos"], ["y"])],
         [vi("x", F, ["B", "T"])], [vi("y", F, ["B", "T"])], opset=17)


float_range("range_float_size", 0.0)
float_range("range_float_half", 0.5)
# Einsum refusals and NumPy's '...' of no dims: a missing input name, a
# static against a dynamic size of one letter; "...ij->ij" on a matrix.
save("einsum_missing_input",
     [helper.make_node("Einsum", ["x", ""], ["z"], equation="i,i->", name="dot")],
     [vi("x", F, [3])], [vi("z", F, [])], opset=12)
save("einsum_dynamic_size",
     [helper.make_node("Einsum", ["x", "y"], ["z"], equation="ij,jk->ik", name="mm")],
     [vi("x", F, [3, 4]), vi("y", F, ["K", 2])], [vi("z", F, [3, 2])], opset=12)
save("einsum_empty_dots",
     [helper.make_node("Einsum", ["x"], ["z"], equation="...ij->ji", name="t")],
     [vi("x", F, [2, 3])], [vi("z", F, [3, 2])], opset=12)
