# RUN: %python %s %t | FileCheck %s
#
# The ONNX `Attention` conformance cases (../shared/conformance/onnx_attention,
# expected outputs from ONNX's reference implementation): each model is
# imported and run with attention-run on the stored inputs, and every output
# is compared with the reference (float32: |d| <= 1e-5 + 1e-4 |ref|; float16:
# 1e-2 + 1e-3 |ref|; infinities and NaN exactly). A case the importer does not
# support yet must be refused with a precise "not supported" diagnostic; it is
# listed by name with that reason. Any other error or any mismatch fails.

import glob
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
RUN = os.environ.get("ATTENTION_RUN", os.path.join(ROOT, "build", "bin", "attention-run"))


def find_cases():
    for base in (os.path.join(ROOT, "..", "shared"), os.path.join(ROOT, "shared"),
                 "/work/shared"):
        d = os.path.join(base, "conformance", "onnx_attention")
        if os.path.isdir(d):
            return d
    sys.exit("FAIL: conformance data (shared/conformance/onnx_attention) not found")


def close(got, want):
    if got.shape != want.shape:
        return False, "shape %s, want %s" % (got.shape, want.shape)
    g, w = got.astype(np.float64), want.astype(np.float64)
    if not np.array_equal(np.isnan(g), np.isnan(w)):
        return False, "NaN positions differ"
    inf = np.isinf(w) | np.isinf(g)
    if not np.array_equal(g[inf], w[inf]):
        return False, "infinities differ"
    ok = ~(np.isnan(w) | inf)
    atol, rtol = (1e-2, 1e-3) if want.dtype == np.float16 else (1e-5, 1e-4)
    d = np.abs(g[ok] - w[ok])
    bad = d > atol + rtol * np.abs(w[ok])
    err = float(d.max()) if d.size else 0.0
    return (not bad.any()), "max_abs_err=%.2e" % err


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    cases_dir = find_cases()
    passed, unsupported, failed = [], [], []
    for case in sorted(os.listdir(cases_dir)):
        cdir = os.path.join(cases_dir, case)
        model = os.path.join(cdir, "model.onnx")
        if not os.path.isfile(model):
            continue
        inputs = sorted(glob.glob(os.path.join(cdir, "input_*.npy")))
        outputs = sorted(glob.glob(os.path.join(cdir, "output_*.npy")))
        cmd = [RUN, model]
        for p in inputs:
            name = re.match(r"input_\d+_(.*)\.npy", os.path.basename(p)).group(1)
            cmd += ["--input", "%s=%s" % (name, p)]
        outs = [os.path.join(work, "%s_%d.npy" % (case, i)) for i in range(len(outputs))]
        for o in outs:
            cmd += ["--output", o]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            reason = [l for l in proc.stderr.splitlines() if "not supported" in l]
            if reason:
                msg = reason[0].split("error: ", 1)[-1]
                unsupported.append((case, msg))
            else:
                failed.append((case, proc.stderr.strip().splitlines()[-1] if proc.stderr else "exit %d" % proc.returncode))
            continue
        ok_all, notes = True, []
        for o, w in zip(outs, outputs):
            ok, note = close(np.load(o), np.load(w))
            ok_all &= ok
            notes.append(note)
        (passed if ok_all else failed).append((case, ", ".join(notes)))
    for case, note in passed:
        print("PASS %s: %s" % (case, note))
    for case, why in unsupported:
        print("UNSUPPORTED %s: %s" % (case, why))
    for case, why in failed:
        print("FAIL: %s: %s" % (case, why))
    total = len(passed) + len(unsupported) + len(failed)
    print("conformance: %d cases, %d passed, %d not supported yet, %d failed"
          % (total, len(passed), len(unsupported), len(failed)))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()

# CHECK-NOT: FAIL:
# CHECK: conformance: 87 cases, 87 passed, 0 not supported yet, 0 failed
