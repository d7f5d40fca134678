"""Runs one ONNX Attention conformance case: imports and runs model.onnx with
attention-run on the stored inputs and compares every output with the ONNX
reference (float32: |d| <= 1e-5 + 1e-4 |ref|; float16: 1e-2 + 1e-3 |ref|;
infinities and NaN exactly, as the suite's README prescribes).

usage: run_case.py CASE_DIR WORK_DIR   (exit 0 when every output matches)
"""
import glob
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.environ.get("ATTENTION_RUN",
                     os.path.join(HERE, "..", "..", "..", "build", "bin", "attention-run"))


def compare(got, want, f32_tol=(1e-5, 1e-4), f16_tol=(1e-2, 1e-3)):
    """(ok, note): |got - want| <= atol + rtol |want| with (atol, rtol) by
    want's dtype; NaN and infinities must match exactly."""
    if got.shape != want.shape:
        return False, "shape %s, want %s" % (got.shape, want.shape)
    g, w = got.astype(np.float64), want.astype(np.float64)
    if not np.array_equal(np.isnan(g), np.isnan(w)):
        return False, "NaN positions differ"
    inf = np.isinf(w) | np.isinf(g)
    if not np.array_equal(g[inf], w[inf]):
        return False, "infinities differ"
    ok = ~(np.isnan(w) | inf)
    atol, rtol = f16_tol if want.dtype == np.float16 else f32_tol
    d = np.abs(g[ok] - w[ok])
    err = float(d.max()) if d.size else 0.0
    return bool((d <= atol + rtol * np.abs(w[ok])).all()), "max_abs_err=%.2e" % err


def main():
    cdir, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    inputs = sorted(glob.glob(os.path.join(cdir, "input_*.npy")))
    outputs = sorted(glob.glob(os.path.join(cdir, "output_*.npy")))
    cmd = [RUN, os.path.join(cdir, "model.onnx")]
    for p in inputs:
        name = re.match(r"input_\d+_(.*)\.npy", os.path.basename(p)).group(1)
        cmd += ["--input", "%s=%s" % (name, p)]
    outs = [os.path.join(work, os.path.basename(w)) for w in outputs]
    for o in outs:
        cmd += ["--output", o]
    print(" ".join(cmd))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    if proc.returncode != 0:
        print(proc.stdout)
        print("FAIL: attention-run exited %d" % proc.returncode)
        return 1
    bad = 0
    for o, w in zip(outs, outputs):
        ok, note = compare(np.load(o), np.load(w))
        print("%s %s: %s" % ("ok" if ok else "FAIL", os.path.basename(w), note))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
