# RUN: %python %s %t | FileCheck %s
#
# torch.onnx.export writes the seed's classes differently per opset (13-17:
# Softmax axis semantics, Unsqueeze/Squeeze/Split axes as inputs, Trilu from
# 14, ...). Every opset the importer reads from a torch export: the
# MultiHeadAttention (dynamic batch and sequence) and CausalAttention are
# raised to one attn op and match torch within 1e-5 at a length other than
# the export's.

import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import seed_modules  # noqa: E402

RUN = os.environ.get("ATTENTION_RUN", os.path.join(HERE, "..", "..", "build", "bin",
                                                   "attention-run"))


def check(work, name, module, opset):
    path = os.path.join(work, "%s_%d.onnx" % (name, opset))
    dyn = {"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}}
    torch.onnx.export(module, torch.randn(2, 5, 16), path, opset_version=opset,
                      input_names=["x"], output_names=["y"], dynamic_axes=dyn)
    x = torch.randn(3, 7, 16)
    xp = os.path.join(work, "x.npy")
    np.save(xp, x.numpy())
    out = os.path.join(work, "%s_%d_y.npy" % (name, opset))
    proc = subprocess.run([RUN, path, "--input", "x=" + xp, "--output", out],
                          capture_output=True, text=True)
    if proc.returncode:
        print("FAIL: %s opset %d: %s" % (name, opset, proc.stderr))
        return False
    raised = [l.split(" to ")[1].split(":")[0] for l in proc.stderr.splitlines()
              if "remark: raised" in l]
    with torch.no_grad():
        want = module(x).numpy()
    err = float(np.abs(np.load(out) - want).max())
    ok = err <= 1e-5
    print("%s %s opset %d: raised to %s, max_abs_err=%.1e" % (
        "ok" if ok else "FAIL:", name, opset, ",".join(raised) or "nothing", err))
    return ok


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(7)
    mha = seed_modules.MultiHeadAttention(16, 16, 8, 0.0, num_heads=4).eval()
    causal = seed_modules.CausalAttention(16, 16, 8, 0.0).eval()
    ok = True
    for opset in (13, 14, 15, 16, 17):
        ok &= check(work, "mha", mha, opset)
        ok &= check(work, "causal", causal, opset)
    print("export_opsets: %s" % ("all OK" if ok else "FAILED"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

# CHECK-NOT: FAIL
# CHECK: ok mha opset 13: raised to attn.multi_head_attention
# CHECK: ok causal opset 13: raised to attn.causal_attention
# CHECK: ok mha opset 14: raised to attn.multi_head_attention
# CHECK: ok causal opset 14: raised to attn.causal_attention
# CHECK: ok mha opset 15: raised to attn.multi_head_attention
# CHECK: ok causal opset 15: raised to attn.causal_attention
# CHECK: ok mha opset 16: raised to attn.multi_head_attention
# CHECK: ok causal opset 16: raised to attn.causal_attention
# CHECK: ok mha opset 17: raised to attn.multi_head_attention
# CHECK: ok causal opset 17: raised to attn.causal_attention
# CHECK: export_opsets: all OK
