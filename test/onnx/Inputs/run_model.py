"""Runs an ONNX model with attention-run ($ATTENTION_RUN) on named NumPy
inputs, for the Python tests: the outputs as arrays, or, if the run
failed, the first line of its stderr that says "error:"."""
import builtins
import os
import subprocess

import numpy as np


def run_model(work, path, feeds, n_out=1):
    cmd = [os.environ["ATTENTION_RUN"], path]
    for name, a in feeds.items():
        p = os.path.join(work, "in_%s.npy" % name.replace("/", "_").replace(":", "_"))
        np.save(p, a)
        cmd += ["--input", "%s=%s" % (name, p)]
    outs = [os.path.join(work, "out%d.npy" % i) for i in range(n_out)]
    for p in outs:
        if os.path.exists(p):
            os.remove(p)
        cmd += ["--output", p]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        errors = [l for l in proc.stderr.splitlines() if "error:" in l]
        return errors[0] if errors else proc.stderr.strip()
    return [np.load(p) for p in outs]


def counting_print():
    """(print, failures): the builtin print, also collecting the lines that
    report a FAIL, so that a test can close its output with the count (a
    CHECK-NOT after the last CHECK sees no earlier line)."""
    failures = []

    def print_(*args, **kwargs):
        if " ".join(str(a) for a in args).startswith("FAIL"):
            failures.append(args)
        builtins.print(*args, **kwargs)

    return print_, failures
