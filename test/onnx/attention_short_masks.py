# RUN: %python %s %t | FileCheck %s
#
# ONNX Attention's attn_mask against the keys it covers (past and new):
# opset 24 pads a mask shorter than the keys with masked columns (false, or
# -inf for a float mask), also a mask of one column, as the ONNX reference
# does; opset 23 wants them equal, or one column that broadcasts (static
# lengths only). Static lengths are padded or refused at import; lengths
# known only while running (a dim_param past length) are padded while
# running, and a mask longer than
# the keys stops the call with an error and no output (it had been read
# past its end). At opset 23 a short mask of static length is an error.
# Also opset 25 windows of INT64_MAX over a static cache (shifted by the
# past length at import, where the sum overflowed). Outputs against a
# float64 NumPy reference of the ONNX formula, relative 1e-5.

import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

RUN = os.environ["ATTENTION_RUN"]
F = TensorProto.FLOAT
B = TensorProto.BOOL


def model(path, opset, shapes, mask_type, causal, past, **attrs):
    names = ["Q", "K", "V", "attn_mask"] + (["past_key", "past_value"] if past else [])
    outputs = ["Y"] + (["present_key", "present_value"] if past else [])
    node = helper.make_node("Attention", names, outputs, is_causal=int(causal), name="attn",
                            **attrs)
    inputs = [helper.make_tensor_value_info(n, mask_type if n == "attn_mask" else F, shapes[n])
              for n in names]
    outs = [helper.make_tensor_value_info(n, F, None) for n in outputs]
    graph = helper.make_graph([node], "g", inputs, outs)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)


def reference(q, k, v, mask, causal, pk=None, pv=None):
    past = 0  # ONNX's causal diagonal: key j <= query i + past length
    if pk is not None:
        past = pk.shape[2]
        k = np.concatenate([pk, k], axis=2)
        v = np.concatenate([pv, v], axis=2)
    tq, tk = q.shape[2], k.shape[2]
    s = q.astype(float) @ np.swapaxes(k.astype(float), -1, -2) / np.sqrt(q.shape[-1])
    full = np.zeros((tq, tk), bool if mask.dtype == bool else float)
    if mask.dtype == bool:
        full[:, :mask.shape[-1]] = mask
        s = np.where(full, s, -np.inf)
    else:
        full[:, mask.shape[-1]:] = -np.inf
        full[:, :mask.shape[-1]] = mask
        s = s + full
    if causal:
        s = np.where(np.arange(tk)[None, :] <= np.arange(tq)[:, None] + past, s, -np.inf)
    w = np.exp(s - s.max(-1, keepdims=True))
    return (w / w.sum(-1, keepdims=True)) @ v.astype(float)


def run(work, path, arrays, n_out):
    cmd = [RUN, path]
    for name, a in arrays.items():
        p = os.path.join(work, name + ".npy")
        np.save(p, a)
        cmd += ["--input", "%s=%s" % (name, p)]
    outs = [os.path.join(work, "out%d.npy" % i) for i in range(n_out)]
    for p in outs:
        if os.path.exists(p):
            os.remove(p)
        cmd += ["--output", p]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc, outs


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(5)
    f = lambda *s: rng.standard_normal(s).astype(np.float32)
    q, k, v = f(1, 2, 3, 8), f(1, 2, 6, 8), f(1, 2, 6, 8)
    pk, pv = f(1, 2, 4, 8), f(1, 2, 4, 8)
    # Static lengths: 4 of 6 keys, bool and float, causal or not.
    for mask_type, causal in [(B, False), (B, True), (F, False), (F, True)]:
        mask = (rng.random((3, 4)) < 0.7) if mask_type == B else f(3, 4)
        mask[:, 0] = True if mask_type == B else mask[:, 0]
        label = "static %s%s" % ("bool" if mask_type == B else "float",
                                 " causal" if causal else "")
        path = os.path.join(work, "static.onnx")
        model(path, 24, {"Q": [1, 2, 3, 8], "K": [1, 2, 6, 8], "V": [1, 2, 6, 8],
                         "attn_mask": [3, 4]}, mask_type, causal, past=False)
        proc, (out,) = run(work, path, {"Q": q, "K": k, "V": v, "attn_mask": mask}, 1)
        want = reference(q, k, v, mask, causal)
        err = abs(np.load(out) - want).max() / abs(want).max() if proc.returncode == 0 else None
        print(label, "ok" if err is not None and err < 1e-5 else "FAIL %s" % proc.stderr)
    # One column for 6 keys: opset 24 pads it like any shorter mask (the
    # ONNX reference: only the first key keeps its value); at opset 23 it
    # broadcasts along the keys.
    for opset, mask_type in [(24, B), (24, F), (23, B), (23, F)]:
        mask = np.ones((3, 1), bool) if mask_type == B else f(3, 1)
        path = os.path.join(work, "column.onnx")
        model(path, opset, {"Q": [1, 2, 3, 8], "K": [1, 2, 6, 8], "V": [1, 2, 6, 8],
                            "attn_mask": [3, 1]}, mask_type, False, past=False)
        proc, (out,) = run(work, path, {"Q": q, "K": k, "V": v, "attn_mask": mask}, 1)
        full = mask if opset >= 24 else np.broadcast_to(mask, (3, 6))
        want = reference(q, k, v, full, False)
        err = abs(np.load(out) - want).max() / abs(want).max() if proc.returncode == 0 else None
        print("opset %d %s column %s" % (opset, "bool" if mask_type == B else "float",
                                         "padded" if opset >= 24 else "broadcast"),
              "ok" if err is not None and err < 1e-5 else "FAIL %s" % proc.stderr)
    # Opset 23: the same short mask is an error.
    path = os.path.join(work, "static23.onnx")
    model(path, 23, {"Q": [1, 2, 3, 8], "K": [1, 2, 6, 8], "V": [1, 2, 6, 8],
                     "attn_mask": [3, 4]}, B, False, past=False)
    proc, (out,) = run(work, path, {"Q": q, "K": k, "V": v,
                                    "attn_mask": np.ones((3, 4), bool)}, 1)
    print("opset 23 short: rc", proc.returncode, "output", os.path.exists(out))
    print(proc.stderr.strip().splitlines()[0])
    # Dynamic past length P: the mask [T, M] covers P + T keys or fewer.
    path = os.path.join(work, "dynamic.onnx")
    dyn = {"Q": [1, 2, "T", 8], "K": [1, 2, "T", 8], "V": [1, 2, "T", 8],
           "attn_mask": ["T", "M"], "past_key": [1, 2, "P", 8], "past_value": [1, 2, "P", 8]}
    q3, k3, v3 = q, k[:, :, :3], v[:, :, :3]
    for mask_type in (B, F):
        model(path, 24, dyn, mask_type, False, past=True)
        for m in (7, 5):  # all 4 + 3 keys, then 2 short
            mask = (rng.random((3, m)) < 0.7) if mask_type == B else f(3, m)
            if mask_type == B:
                mask[:, 0] = True
            proc, outs = run(work, path, {"Q": q3, "K": k3, "V": v3, "attn_mask": mask,
                                          "past_key": pk, "past_value": pv}, 3)
            want = reference(q3, k3, v3, mask, False, pk, pv)
            err = (abs(np.load(outs[0]) - want).max() / abs(want).max()
                   if proc.returncode == 0 else None)
            print("dynamic %s mask of %d keys for 7" % ("bool" if mask_type == B else "float", m),
                  "ok" if err is not None and err < 1e-5 else "FAIL %s" % proc.stderr)
    # Longer than the keys: an error while running, no output.
    proc, outs = run(work, path, {"Q": q3, "K": k3, "V": v3, "attn_mask": f(3, 9),
                                  "past_key": pk, "past_value": pv}, 3)
    print("dynamic long: rc", proc.returncode, "outputs", any(os.path.exists(p) for p in outs))
    print(proc.stderr.strip().splitlines()[-1])
    # Opset 25 windows of INT64_MAX over a static cache hide nothing (the
    # importer shifts a window by the past length, which overflowed).
    path = os.path.join(work, "window.onnx")
    static_past = {"Q": [1, 2, 3, 8], "K": [1, 2, 3, 8], "V": [1, 2, 3, 8],
                   "attn_mask": [3, 7], "past_key": [1, 2, 4, 8], "past_value": [1, 2, 4, 8]}
    mask = np.ones((3, 7), bool)
    for causal in (False, True):
        model(path, 25, static_past, B, causal, past=True,
              left_window_size=2**63 - 1, right_window_size=2**63 - 1)
        proc, outs = run(work, path, {"Q": q3, "K": k3, "V": v3, "attn_mask": mask,
                                      "past_key": pk, "past_value": pv}, 3)
        want = reference(q3, k3, v3, mask, causal, pk, pv)
        err = (abs(np.load(outs[0]) - want).max() / abs(want).max()
               if proc.returncode == 0 else None)
        print("INT64_MAX windows%s" % (" causal" if causal else ""),
              "ok" if err is not None and err < 1e-5 else "FAIL %s" % proc.stderr)


if __name__ == "__main__":
    main()

# CHECK: static bool ok
# CHECK: static bool causal ok
# CHECK: static float ok
# CHECK: static float causal ok
# CHECK: opset 24 bool column padded ok
# CHECK: opset 24 float column padded ok
# CHECK: opset 23 bool column broadcast ok
# CHECK: opset 23 float column broadcast ok
# CHECK: opset 23 short: rc 1 output False
# CHECK: static23.onnx:0:0: error: ONNX node 'attn' (Attention, opset 23): attn_mask covers 4 keys, the attention has 6 (past and new); opset 24 pads shorter masks
# CHECK: dynamic bool mask of 7 keys for 7 ok
# CHECK: dynamic bool mask of 5 keys for 7 ok
# CHECK: dynamic float mask of 7 keys for 7 ok
# CHECK: dynamic float mask of 5 keys for 7 ok
# CHECK: dynamic long: rc 1 outputs False
# CHECK: attention-run: error: @main: dynamic.onnx: 'attn' (Attention, attn_mask 'attn_mask': the keys it covers against the past and new keys): 9, more than 7; the call returned no result
# CHECK: INT64_MAX windows ok
# CHECK: INT64_MAX windows causal ok
