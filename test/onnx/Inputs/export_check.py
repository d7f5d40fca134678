"""Exports a torch module to ONNX, runs the file with attention-run at
other sizes and compares with torch: the check the torch-export tests share.
"""
import os
import subprocess

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.environ.get("ATTENTION_RUN", os.path.join(HERE, "..", "..", "..", "build", "bin",
                                                   "attention-run"))


def check_export(work, name, module, opset, inputs, examples=None, names=("x", "z"),
                 tolerance=1e-5):
    """Exports `module` at `opset` (dynamic batch and sequence axes traced
    with `examples`, or static at the run's shapes when None), runs it on
    `inputs` and prints "ok NAME opset N: raised to ..., max_abs_err=..."
    (or "FAIL: ..."). Returns whether the output matched within
    `tolerance`."""
    names = list(names)[:len(inputs)]
    path = os.path.join(work, "%s_%d.onnx" % (name.replace(" ", "_"), opset))
    dyn = {n: {0: "batch", 1: "seq"} for n in names + ["y"]}
    torch.onnx.export(module, tuple(examples if examples is not None else inputs), path,
                      opset_version=opset, input_names=names, output_names=["y"],
                      dynamic_axes=dyn if examples is not None else None)
    out = os.path.join(work, "%s_%d_y.npy" % (name.replace(" ", "_"), opset))
    cmd = [RUN, path, "--output", out]
    for n, a in zip(names, inputs):
        p = os.path.join(work, n + ".npy")
        np.save(p, a.numpy())
        cmd += ["--input", "%s=%s" % (n, p)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        print("FAIL: %s opset %d: %s" % (name, opset, proc.stderr))
        return False
    raised = [l.split(" to ")[1].split(":")[0] for l in proc.stderr.splitlines()
              if "remark: raised" in l]
    with torch.no_grad():
        want = module(*inputs).numpy()
    got = np.load(out)
    err = float(np.abs(got - want).max()) if got.shape == want.shape else float("inf")
    ok = err <= tolerance
    print("%s %s opset %d: raised to %s, max_abs_err=%.1e" % (
        "ok" if ok else "FAIL:", name, opset, ",".join(raised) or "nothing", err))
    return ok
