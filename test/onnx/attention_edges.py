# RUN: %python %s %t | FileCheck %s
#
# Edges of ONNX Attention and com.microsoft.MultiHeadAttention, against a
# float64 NumPy reference:
# - present_key/present_value on the first (prefill) step, without a past:
#   the new keys and values in [B, Hkv, S, D] (they were refused), 4-D and
#   3-D inputs;
# - MultiHeadAttention with unidirectional=1 and one query token over five
#   keys attends every key, as ONNX Runtime's kernel does (the importer
#   hid all but the first); and with a dynamic past length (it was
#   refused), run at two past lengths and an empty past (the first step
#   of a cache); ONNX Attention with a dynamic past, empty and not;
# - errors naming the node: opset 25's window attributes at opset 24 (they
#   were dropped: full attention), a past_key whose head count is not the
#   new keys', a nonpad_kv_seqlen of another batch.

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from run_model import run_model  # noqa: E402

work = sys.argv[1]
os.makedirs(work, exist_ok=True)
F = TensorProto.FLOAT
rng = np.random.default_rng(29)
rn = lambda *s: rng.standard_normal(s).astype(np.float32)


def save(name, node, inputs, outputs, opset, ms=False):
    imports = [helper.make_opsetid("", opset)]
    if ms:
        imports.append(helper.make_opsetid("com.microsoft", 1))
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, F, s)
                                            for n, s in inputs],
                              [helper.make_tensor_value_info(n, F, None) for n in outputs])
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 10 if opset >= 23 else 8
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    return path


def run(path, feeds, n_out):
    return run_model(work, path, feeds, n_out)

def sdpa(q, k, v, causal_offset=None):
    s = np.einsum("bhqd,bhkd->bhqk", q, k) / np.sqrt(q.shape[-1])
    if causal_offset is not None:
        i, j = np.arange(q.shape[2])[:, None], np.arange(k.shape[2])[None, :]
        s = np.where(j > i + causal_offset, -np.inf, s)
    w = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bhqk,bhkd->bhqd", w / w.sum(-1, keepdims=True), v)


def report(label, got, wants):
    ok = not isinstance(got, str) and all(
        g.shape == w.shape and np.allclose(g, w, rtol=1e-5, atol=1e-5) for g, w in zip(got, wants))
    print("%s %s" % ("ok" if ok else "FAIL", label), "" if ok else got)


# Prefill with present outputs, 4-D and 3-D (2 query heads, 1 kv head).
q, k, v = rn(2, 2, 5, 8), rn(2, 1, 5, 8), rn(2, 1, 5, 8)
node = helper.make_node("Attention", ["Q", "K", "V"], ["Y", "present_key", "present_value"],
                        is_causal=1)
path = save("prefill4", node, [("Q", q.shape), ("K", k.shape), ("V", v.shape)],
            ["Y", "present_key", "present_value"], 23)
want = sdpa(q.astype(float), np.repeat(k, 2, 1).astype(float), np.repeat(v, 2, 1).astype(float), 0)
report("prefill 4-D present", run(path, {"Q": q, "K": k, "V": v}, 3), [want, k, v])
q3, k3, v3 = (a.transpose(0, 2, 1, 3).reshape(2, 5, -1) for a in (q, k, v))
node = helper.make_node("Attention", ["Q", "K", "V"], ["Y", "present_key", "present_value"],
                        is_causal=1, q_num_heads=2, kv_num_heads=1)
path = save("prefill3", node, [("Q", q3.shape), ("K", k3.shape), ("V", v3.shape)],
            ["Y", "present_key", "present_value"], 23)
report("prefill 3-D present", run(path, {"Q": q3, "K": k3, "V": v3}, 3),
       [want.transpose(0, 2, 1, 3).reshape(2, 5, -1), k, v])

# MultiHeadAttention: one query token, unidirectional, five keys.
query, key, value = rn(2, 1, 8), rn(2, 5, 8), rn(2, 5, 8)
node = helper.make_node("MultiHeadAttention", ["query", "key", "value"], ["output"],
                        domain="com.microsoft", num_heads=2, unidirectional=1)
path = save("ms_one_token", node, [("query", [2, 1, 8]), ("key", [2, 5, 8]),
                                   ("value", [2, 5, 8])], ["output"], 17, ms=True)
split = lambda a: a.reshape(a.shape[0], a.shape[1], 2, 4).transpose(0, 2, 1, 3).astype(float)
want = sdpa(split(query), split(key), split(value)).transpose(0, 2, 1, 3).reshape(2, 1, 8)
report("MultiHeadAttention unidirectional, one token over 5 keys",
       run(path, {"query": query, "key": key, "value": value}, 1), [want])
# MultiHeadAttention with a dynamic past length, unidirectional.
node = helper.make_node("MultiHeadAttention",
                        ["query", "key", "value", "", "", "", "past_key", "past_value"],
                        ["output", "present_key", "present_value"], domain="com.microsoft",
                        num_heads=2, unidirectional=1)
path = save("ms_dynamic_past", node,
            [("query", [2, "S", 8]), ("key", [2, "S", 8]), ("value", [2, "S", 8]),
             ("past_key", [2, 2, "P", 4]), ("past_value", [2, 2, "P", 4])],
            ["output", "present_key", "present_value"], 17, ms=True)
for P, S in ((3, 2), (6, 1), (0, 4)):
    query, key, value = rn(2, S, 8), rn(2, S, 8), rn(2, S, 8)
    pk, pv = rn(2, 2, P, 4), rn(2, 2, P, 4)
    K = np.concatenate([pk, split(key)], 2)
    V = np.concatenate([pv, split(value)], 2)
    want = sdpa(split(query), K, V, P if S > 1 else None).transpose(0, 2, 1, 3).reshape(2, S, 8)
    report("MultiHeadAttention dynamic past %d, %d new" % (P, S),
           run(path, {"query": query, "key": key, "value": value, "past_key": pk,
                      "past_value": pv}, 3), [want, K, V])

# ONNX Attention with a dynamic past, causal, 2 query heads over 1 kv
# head: the first step of a cache has an empty past (past 0, as ONNX
# Runtime GenAI feeds it), then past 3.
node = helper.make_node("Attention", ["Q", "K", "V", "", "past_key", "past_value"],
                        ["Y", "present_key", "present_value"], is_causal=1)
path = save("attention_dynamic_past", node,
            [("Q", [2, 2, "S", 8]), ("K", [2, 1, "S", 8]), ("V", [2, 1, "S", 8]),
             ("past_key", [2, 1, "P", 8]), ("past_value", [2, 1, "P", 8])],
            ["Y", "present_key", "present_value"], 23)
for P, S in ((0, 4), (3, 2)):
    q, k, v, pk, pv = rn(2, 2, S, 8), rn(2, 1, S, 8), rn(2, 1, S, 8), rn(2, 1, P, 8), rn(2, 1, P, 8)
    K, V = np.concatenate([pk, k], 2), np.concatenate([pv, v], 2)
    want = sdpa(q.astype(float), np.repeat(K, 2, 1).astype(float),
                np.repeat(V, 2, 1).astype(float), P)
    report("Attention dynamic past %d, %d new" % (P, S),
           run(path, {"Q": q, "K": k, "V": v, "past_key": pk, "past_value": pv}, 3),
           [want, K, V])

# Errors.
node = helper.make_node("Attention", ["Q", "K", "V"], ["Y"], left_window_size=1, name="win")
print(run(save("window24", node, [("Q", q.shape), ("K", k.shape), ("V", v.shape)], ["Y"], 24),
          {"Q": q, "K": k, "V": v}, 1))
node = helper.make_node("Attention", ["Q", "K", "V", "", "past_key", "past_value"],
                        ["Y", "present_key", "present_value"], name="cache")
print(run(save("past_heads", node, [("Q", q.shape), ("K", k.shape), ("V", v.shape),
                                    ("past_key", [2, 2, 3, 8]), ("past_value", [2, 2, 3, 8])],
               ["Y", "present_key", "present_value"], 23),
          {"Q": q, "K": k, "V": v, "past_key": rn(2, 2, 3, 8), "past_value": rn(2, 2, 3, 8)}, 3))
node = helper.make_node("Attention", ["Q", "K", "V", "", "", "", "lens"], ["Y"], name="pad")
graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("Q", F, q.shape),
                                        helper.make_tensor_value_info("K", F, k.shape),
                                        helper.make_tensor_value_info("V", F, v.shape),
                                        helper.make_tensor_value_info("lens", TensorProto.INT64,
                                                                      [1])],
                          [helper.make_tensor_value_info("Y", F, None)])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])
model.ir_version = 10
onnx.save(model, os.path.join(work, "nonpad.onnx"))
print(run(os.path.join(work, "nonpad.onnx"),
          {"Q": q, "K": k, "V": v, "lens": np.array([3], np.int64)}, 1))

# CHECK: ok prefill 4-D present
# CHECK: ok prefill 3-D present
# CHECK: ok MultiHeadAttention unidirectional, one token over 5 keys
# CHECK: ok MultiHeadAttention dynamic past 3, 2 new
# CHECK: ok MultiHeadAttention dynamic past 6, 1 new
# CHECK: ok MultiHeadAttention dynamic past 0, 4 new
# CHECK: ok Attention dynamic past 0, 4 new
# CHECK: ok Attention dynamic past 3, 2 new
# CHECK: error: ONNX node 'win' (Attention, opset 24): left_window_size exists from opset 25; the model imports opset 24
# CHECK: error: ONNX node 'cache' (Attention, opset 23): past_key has kv heads 2, the new keys 1
# CHECK: error: ONNX node 'pad' (Attention, opset 24): nonpad_kv_seqlen must be [batch] = [2], got 'tensor<1xi64>'
# CHECK-NOT: FAIL
