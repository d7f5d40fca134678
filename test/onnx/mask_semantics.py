# RUN: %python %s %t | FileCheck %s
#
# Masks whose meaning depends on sizes or rows known only while running:
# - Attention's attn_mask with a dynamic key dim (declared [None, None]) is
#   padded to the keys while running; its other dims are now tied to the
#   scores' (a [1, 5] mask for 3 queries is refused before the call: a
#   dynamic mask dim does not broadcast, and it was read as 3 rows: NaN,
#   wrong numbers, a segfault at T = 2048); a [3, 5] mask runs; so with
#   the mask computed in the graph (the trace follows an elementwise op
#   to its init, sized by the input);
# - Where(m, scores, fill) with a finite fill (-1e4, finfo.min) replaces
#   the masked scores, so a row whose keys are all masked averages V: a
#   mask known only while running is not raised to attn.sdpa (whose mask
#   gives such a row 0), a constant one that keeps a key in every row is;
# - a constant sliced to [:T, :T] while running is raised when every row
#   keeps a key at or left of its diagonal (a band), else not;
# - nonpad_kv_seqlen does not exist at opset 23; an integer attn_mask is
#   refused as such.
# Outputs against a float64 NumPy reference, absolute 1e-5.

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
rng = np.random.default_rng(23)
F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64
vi = helper.make_tensor_value_info


def save(name, nodes, inputs, opset, inits=()):
    graph = helper.make_graph(nodes, "g", [vi(*i) for i in inputs], [vi("Y", F, None)],
                              initializer=list(inits))
    path = os.path.join(work, name + ".onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def softmax_v(s, v):
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v


def check(what, got, want):
    if isinstance(got, str):
        print("FAIL %s: %s" % (what, got))
        return
    err = float(np.abs(got[0].astype(float) - want).max())
    print("%s %s: max abs error %s" % ("ok" if err < 1e-5 else "FAIL", what,
                                        "below 1e-5" if err < 1e-5 else err))


def expect_error(what, got):
    print("error %s: %s" % (what, got) if isinstance(got, str)
          else "FAIL %s: it ran" % what)


# Attention with a mask of dynamic key length.
q = rng.standard_normal((1, 2, 3, 8)).astype(np.float32)
k = rng.standard_normal((1, 2, 5, 8)).astype(np.float32)
v = rng.standard_normal((1, 2, 5, 8)).astype(np.float32)
for opset in (23, 24):
    path = save("dyn_mask_%d" % opset,
                [helper.make_node("Attention", ["Q", "K", "V", "attn_mask"], ["Y"], name="attn")],
                [("Q", F, [1, 2, 3, 8]), ("K", F, [1, 2, 5, 8]), ("V", F, [1, 2, 5, 8]),
                 ("attn_mask", F, [None, None])], opset)
    m = rng.standard_normal((3, 5)).astype(np.float32)
    s = q.astype(float) @ k.astype(float).transpose(0, 1, 3, 2) / np.sqrt(8) + m
    check("opset %d mask [3, 5]" % opset,
          run_model(work, path, {"Q": q, "K": k, "V": v, "attn_mask": m}), softmax_v(s, v))
    expect_error("opset %d mask [1, 5]" % opset, run_model(
        work, path, {"Q": q, "K": k, "V": v, "attn_mask": m[:1]}))
# CHECK: ok opset 23 mask [3, 5]: max abs error below 1e-5
# CHECK: error opset 23 mask [1, 5]: attention-run: error: input 3 ({{.*}}in_attn_mask.npy): dim 0 must be 3 (expected attn_mask: f32[3, ?], got f32[1, 5])
# CHECK: ok opset 24 mask [3, 5]: max abs error below 1e-5
# CHECK: error opset 24 mask [1, 5]: attention-run: error: input 3 ({{.*}}in_attn_mask.npy): dim 0 must be 3 (expected attn_mask: f32[3, ?], got f32[1, 5])

# The same mask computed in the graph (Mul by 1): the trace reaches the
# input through the elementwise op's init (it ran, reading 3 rows of 1).
path = save("computed_mask",
            [helper.make_node("Mul", ["attn_mask", "one"], ["m2"]),
             helper.make_node("Attention", ["Q", "K", "V", "m2"], ["Y"], name="attn")],
            [("Q", F, [1, 2, 3, 8]), ("K", F, [1, 2, 5, 8]), ("V", F, [1, 2, 5, 8]),
             ("attn_mask", F, [None, None])], 24, [helper.make_tensor("one", F, [], [1.0])])
check("computed mask [3, 5]", run_model(work, path, {"Q": q, "K": k, "V": v, "attn_mask": m}),
      softmax_v(s, v))
expect_error("computed mask [1, 5]", run_model(
    work, path, {"Q": q, "K": k, "V": v, "attn_mask": m[:1]}))
# CHECK: ok computed mask [3, 5]: max abs error below 1e-5
# CHECK: error computed mask [1, 5]: attention-run: error: input 3 ({{.*}}in_attn_mask.npy): dim 0 must be 3 (expected attn_mask: f32[3, ?], got f32[1, 5])

# Where(m, s, fill), m marking the kept scores, row 1 all masked.
qw = rng.standard_normal((1, 4, 8)).astype(np.float32)
kw = rng.standard_normal((1, 4, 8)).astype(np.float32)
vw = rng.standard_normal((1, 4, 8)).astype(np.float32)
keep = np.ones((4, 4), bool)
keep[1] = False
keep[2, :2] = False
for fill in (-1e4, float(np.finfo(np.float32).min)):
    nodes = [helper.make_node("Transpose", ["K"], ["kt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["Q", "kt"], ["s"]),
             helper.make_node("Where", ["M", "s", "fill"], ["sm"]),
             helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
             helper.make_node("MatMul", ["p", "V"], ["Y"])]
    inits = [helper.make_tensor("fill", F, [], [fill])]
    s = qw.astype(float) @ kw.astype(float).transpose(0, 2, 1)
    want = softmax_v(np.where(keep, s, np.float32(fill)), vw.astype(float))
    path = save("where_input", nodes, [("Q", F, [1, 4, 8]), ("K", F, [1, 4, 8]),
                                       ("V", F, [1, 4, 8]), ("M", B, [4, 4])], 17, inits)
    proc = subprocess.run([os.environ["ATTENTION_RUN"], path, "--compile-only"],
                          capture_output=True, text=True)
    print("input mask raised:", "raised" in proc.stderr)
    check("Where fill %g, mask an input, a row all masked" % fill,
          run_model(work, path, {"Q": qw, "K": kw, "V": vw, "M": keep}), want)
    # A constant mask that keeps a key in every row is raised.
    keep_c = keep.copy()
    keep_c[1, 3] = True
    want_c = softmax_v(np.where(keep_c, s, np.float32(fill)), vw.astype(float))
    path = save("where_const", nodes, [("Q", F, [1, 4, 8]), ("K", F, [1, 4, 8]),
                                       ("V", F, [1, 4, 8])], 17,
                inits + [helper.make_tensor("M", B, [4, 4], keep_c.flatten().tolist())])
    proc = subprocess.run([os.environ["ATTENTION_RUN"], path, "--compile-only"],
                          capture_output=True, text=True)
    print("constant mask raised:", "raised" in proc.stderr)
    check("Where fill %g, a constant mask" % fill,
          run_model(work, path, {"Q": qw, "K": kw, "V": vw}), want_c)
# CHECK: input mask raised: False
# CHECK: ok Where fill -10000, mask an input, a row all masked: max abs error below 1e-5
# CHECK: constant mask raised: True
# CHECK: ok Where fill -10000, a constant mask: max abs error below 1e-5
# CHECK: input mask raised: False
# CHECK: ok Where fill -3.40282e+38, mask an input, a row all masked: max abs error below 1e-5
# CHECK: constant mask raised: True
# CHECK: ok Where fill -3.40282e+38, a constant mask: max abs error below 1e-5

# A model-sized constant sliced to the sequence while running ([:T, :T],
# T from Shape(Q)), as sliding-window exports build their masks: raised
# when every row i of the constant keeps a key j <= i (a band of width 3,
# kept with Where(m, s, fill) or hidden with Where(Not(m), fill, s)),
# since the corner then keeps one whatever T is; op by op when a row can
# lose all its keys (keys j > i only: the last row of any corner).
N = 16
ii, jj = np.arange(N)[:, None], np.arange(N)[None, :]
for name, grid, negate in (("band", (jj <= ii) & (jj > ii - 3), False),
                           ("band under Not", (jj <= ii) & (jj > ii - 3), True),
                           ("future keys", jj > ii, False)):
    mask = "m"
    nodes = [helper.make_node("Shape", ["Q"], ["qs"]),
             helper.make_node("Gather", ["qs", "one"], ["t"], axis=0),
             helper.make_node("Unsqueeze", ["t", "zero"], ["t1"]),
             helper.make_node("Concat", ["t1", "t1"], ["ends"], axis=0),
             helper.make_node("Slice", ["grid", "zeros", "ends", "axes"], ["m"]),
             helper.make_node("Transpose", ["K"], ["kt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["Q", "kt"], ["s"])]
    if negate:
        nodes.append(helper.make_node("Not", ["m"], ["nm"]))
        nodes.append(helper.make_node("Where", ["nm", "fill", "s"], ["sm"]))
    else:
        nodes.append(helper.make_node("Where", ["m", "s", "fill"], ["sm"]))
    nodes += [helper.make_node("Softmax", ["sm"], ["p"], axis=-1),
              helper.make_node("MatMul", ["p", "V"], ["Y"])]
    inits = [helper.make_tensor("grid", B, [N, N], grid.flatten().tolist()),
             helper.make_tensor("one", I64, [], [1]), helper.make_tensor("zero", I64, [1], [0]),
             helper.make_tensor("zeros", I64, [2], [0, 0]),
             helper.make_tensor("axes", I64, [2], [0, 1]),
             helper.make_tensor("fill", F, [], [float(np.finfo(np.float32).min)])]
    path = save("sliced_" + name.replace(" ", "_"), nodes,
                [("Q", F, [1, "T", 8]), ("K", F, [1, "T", 8]), ("V", F, [1, "T", 8])], 17,
                inits)
    proc = subprocess.run([os.environ["ATTENTION_RUN"], path, "--compile-only"],
                          capture_output=True, text=True)
    print("%s raised: %s" % (name, "raised" in proc.stderr))
    for t in (1, 5, N):
        qs, ks, vs = (rng.standard_normal((1, t, 8)).astype(np.float32) for _ in range(3))
        s = qs.astype(float) @ ks.astype(float).transpose(0, 2, 1)
        want = softmax_v(np.where(grid[:t, :t], s, float(np.finfo(np.float32).min)),
                         vs.astype(float))
        check("%s T=%d" % (name, t), run_model(work, path, {"Q": qs, "K": ks, "V": vs}), want)
# CHECK: band raised: True
# CHECK: ok band T=1: max abs error below 1e-5
# CHECK: ok band T=5: max abs error below 1e-5
# CHECK: ok band T=16: max abs error below 1e-5
# CHECK: band under Not raised: True
# CHECK: ok band under Not T=1: max abs error below 1e-5
# CHECK: ok band under Not T=5: max abs error below 1e-5
# CHECK: ok band under Not T=16: max abs error below 1e-5
# CHECK: future keys raised: False
# CHECK: ok future keys T=1: max abs error below 1e-5
# CHECK: ok future keys T=5: max abs error below 1e-5
# CHECK: ok future keys T=16: max abs error below 1e-5

# Refused while importing.
shapes = [("Q", F, [1, 2, 3, 8]), ("K", F, [1, 2, 5, 8]), ("V", F, [1, 2, 5, 8])]
path = save("nonpad23", [helper.make_node("Attention", ["Q", "K", "V", "", "", "", "lens"],
                                          ["Y"], name="attn")],
            shapes + [("lens", I64, [1])], 23)
expect_error("nonpad_kv_seqlen at opset 23", run_model(
    work, path, {"Q": q, "K": k, "V": v, "lens": np.array([4], np.int64)}))
# CHECK: error nonpad_kv_seqlen at opset 23: {{.*}}nonpad23.onnx:0:0: error: ONNX node 'attn' (Attention, opset 23): nonpad_kv_seqlen exists from opset 24; the model imports opset 23
path = save("int_mask", [helper.make_node("Attention", ["Q", "K", "V", "attn_mask"], ["Y"],
                                          name="attn")],
            shapes + [("attn_mask", I64, [3, 5])], 23)
expect_error("an int64 attn_mask", run_model(
    work, path, {"Q": q, "K": k, "V": v, "attn_mask": np.zeros((3, 5), np.int64)}))
# CHECK: error an int64 attn_mask: {{.*}}int_mask.onnx:0:0: error: ONNX node 'attn' (Attention, opset 23): attn_mask must be bool or of Q's float type, got 'i64'

print("mask semantics: %d failed" % len(failures))
# CHECK: mask semantics: 0 failed
