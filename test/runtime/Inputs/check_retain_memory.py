"""Repeated runs with retained memory reuse freed (dirty) buffers: the
results of the last of several runs must still match the float64 reference,
and be identical to those of runs that get fresh, zeroed pages.

usage: check_retain_memory.py WORKDIR   (ATTENTION_RUN names the tool)
"""
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from gpt2_main import D, reference  # noqa: E402

work = sys.argv[1]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(5)
t = 160  # not a multiple of the 64-row query blocks
bound = 1 / np.sqrt(D)
inputs = [rng.standard_normal((1, t, D)).astype(np.float32)]
inputs += [rng.uniform(-bound, bound, (D, D)).astype(np.float32) for _ in range(4)]
inputs.append(rng.uniform(-bound, bound, D).astype(np.float32))
args = []
for i, a in enumerate(inputs):
    path = os.path.join(work, "in%d.npy" % i)
    np.save(path, a)
    args += ["--input", path]
model = os.path.join(ROOT, "bench", "models", "gpt2_small_causal_mha.mlir")
want = reference(*(a.astype(np.float64) for a in inputs))
outs = {}
for flag in ("--retain-memory=true", "--retain-memory=false"):
    out = os.path.join(work, "y%s.npy" % flag.split("=")[1])
    subprocess.run([os.environ["ATTENTION_RUN"], model, "--repeat", "4",
                    "--threads", "2", flag, "--output", out] + args, check=True,
                   stdout=subprocess.DEVNULL)
    y = np.load(out)
    err = float(np.abs(y - want).max())
    print("%s: max_abs_err=%.2e %s" % (flag, err, "OK" if err <= 1e-5 else "FAIL"))
    outs[flag] = y
same = np.array_equal(outs["--retain-memory=true"], outs["--retain-memory=false"])
print("retained and fresh buffers give identical results:", same)
