# RUN: %python %s %t | FileCheck %s
#
# Causal attention at T=8192 (B=1, H=12, d=64) runs in bounded memory: the
# flash lowering never materialises a Tq x Tk buffer (that alone would be
# 12 * 8192 * 8192 * 4 bytes = 3 GiB). One module with a dynamic sequence
# dim runs at T=512 and at T=8192; the peak RSS of the second run may exceed
# the first only by the larger inputs and output plus 64 MiB. The result is
# checked against a float64 reference on a sample of query rows.
#
# The same core under an explicit bool mask [1, 1, T, T] that varies along
# the query rows (64 MiB at T=8192): the core transposes such a mask once
# per call into panels of one byte per element, so the run may use that
# much more (the mask's own size again) plus the same 64 MiB; panels of
# f32 would take 256 MiB.

import os
import resource
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_exec  # noqa: E402

H, D = 12, 64
TYPE = attn_exec.tensor_type((1, H, None, D), "f32")
MODULE = ("func.func @main(%%q: %s, %%k: %s, %%v: %s) -> %s {\n"
          "  %%0 = attn.sdpa %%q, %%k, %%v causal(top_left) : %s, %s, %s -> %s\n"
          "  return %%0 : %s\n}\n") % ((TYPE,) * 9)
MASK_TYPE = attn_exec.tensor_type((1, 1, None, None), "i1")
MASKED_MODULE = (
    "func.func @main(%%q: %s, %%k: %s, %%v: %s, %%m: %s) -> %s {\n"
    "  %%0 = attn.sdpa %%q, %%k, %%v mask(%%m : masked_where_true) causal(top_left)"
    " : %s, %s, %s, %s -> %s\n"
    "  return %%0 : %s\n}\n") % ((TYPE,) * 3 + (MASK_TYPE, TYPE) + (TYPE,) * 3 +
                                  (MASK_TYPE, TYPE, TYPE))
MIB = 1 << 20


def hidden_keys(rows, t):
    """The bool mask's rows (True = hidden): key j of row i is hidden where
    (7 j + 3 i) % 11 == 0, a different pattern per row, but never the
    diagonal key, so every row sees one. Computed in int8 (an int64 [T, T]
    would take 512 MiB at T=8192)."""
    rows = np.asarray(rows)
    by_key = (7 * np.arange(t) % 11).astype(np.int8)
    by_row = (3 * rows % 11).astype(np.int8)
    hidden = (by_row[:, None] + by_key[None, :]) % 11 == 0
    hidden[np.arange(len(rows)), rows] = False
    return hidden


# Runs a command and prints its peak RSS in KiB: the test measures through
# this small process because Linux carries a process's peak RSS across
# exec, so a child started straight from this test would report this
# test's own peak (its numpy arrays) when that is the larger.
PEAK_RSS = ("import resource, subprocess, sys\n"
            "r = subprocess.run(sys.argv[1:])\n"
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
            "sys.exit(r.returncode)\n")


def run(work, t, rng, masked=False):
    """Runs the module (with masked, MASKED_MODULE) at sequence length t;
    returns (q, k, v, out, the run's peak RSS in bytes)."""
    qkv = [rng.standard_normal((1, H, t, D), dtype=np.float32) for _ in range(3)]
    paths = [os.path.join(work, "%s%d.npy" % (n, t)) for n in "qkv"]
    for p, a in zip(paths, qkv):
        np.save(p, a)
    out = os.path.join(work, "o%d.npy" % t)
    module = "masked.mlir" if masked else "causal.mlir"
    cmd = [attn_exec.ATTENTION_RUN, os.path.join(work, module), "--output", out]
    for p in paths:
        cmd += ["--input", p]
    if masked:
        mask_path = os.path.join(work, "m%d.npy" % t)
        np.save(mask_path, hidden_keys(np.arange(t), t)[None, None])
        cmd += ["--input", mask_path]
    # Under AddressSanitizer (the sanitizer run of the suite) freed memory
    # is quarantined, which would count in the RSS: measure without it.
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS", ""),
                                                 "quarantine_size_mb=0"]))
    res = subprocess.run([sys.executable, "-c", PEAK_RSS] + cmd, check=True, env=env,
                         stdout=subprocess.PIPE, text=True)
    rss = int(res.stdout.strip().splitlines()[-1]) * 1024  # ru_maxrss is in KiB
    return qkv, np.load(out), rss


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    with open(os.path.join(work, "causal.mlir"), "w") as f:
        f.write(MODULE)
    with open(os.path.join(work, "masked.mlir"), "w") as f:
        f.write(MASKED_MODULE)
    rng = np.random.default_rng(8192)
    _, _, small_rss = run(work, 512, rng)
    (q, k, v), out, big_rss = run(work, 8192, rng)
    io_growth = 4 * H * D * 4 * (8192 - 512)  # q, k, v and the output
    growth = big_rss - small_rss
    print("peak RSS T=512: %.1f MiB, T=8192: %.1f MiB, growth %.1f MiB, "
          "of which inputs/output %.1f MiB" % (small_rss / MIB, big_rss / MIB,
                                               growth / MIB, io_growth / MIB))
    extra = growth - io_growth
    ok = True
    if extra >= 64 * MIB:
        print("FAIL: %.1f MiB beyond inputs and output (bound 64 MiB)" % (extra / MIB))
        ok = False
    # Rows spread over the sequence, every head: against float64.
    rows = np.array([0, 1, 63, 64, 1000, 4095, 4096, 8000, 8191])
    want = attn_exec.ref_sdpa(q[:, :, rows], k, v, mask=np.arange(8192)[None, :] > rows[:, None])
    err = float(np.abs(out[:, :, rows] - want).max())
    print("%s sampled rows: max_abs_err=%.2e" % ("ok" if err <= 1e-5 else "FAIL:", err))
    ok &= err <= 1e-5

    (q, k, v), out, masked_rss = run(work, 8192, rng, masked=True)
    mask_bytes = 8192 * 8192
    extra = masked_rss - small_rss - io_growth - mask_bytes
    print("bool mask [1, 1, 8192, 8192] (%.1f MiB): peak RSS %.1f MiB, %.1f MiB "
          "beyond inputs/output" % (mask_bytes / MIB, masked_rss / MIB, extra / MIB))
    if extra >= mask_bytes + 64 * MIB:
        print("FAIL: %.1f MiB beyond inputs and output (bound: the mask's size "
              "again plus 64 MiB, %.1f MiB)" % (extra / MIB, (mask_bytes + 64 * MIB) / MIB))
        ok = False
    hidden = hidden_keys(rows, 8192) | (np.arange(8192)[None, :] > rows[:, None])
    want = attn_exec.ref_sdpa(q[:, :, rows], k, v, mask=hidden)
    err = float(np.abs(out[:, :, rows] - want).max())
    print("%s masked, sampled rows: max_abs_err=%.2e" % ("ok" if err <= 1e-5 else "FAIL:", err))
    ok &= err <= 1e-5
    print("long_sequence_memory: %s" % ("OK" if ok else "FAILED"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

# CHECK-NOT: FAIL
# CHECK: long_sequence_memory: OK
