# RUN: %python %s %t | FileCheck %s
#
# Causal attention at T=8192 (B=1, H=12, d=64) runs in bounded memory: the
# flash lowering never materialises a Tq x Tk buffer (that alone would be
# 12 * 8192 * 8192 * 4 bytes = 3 GiB). One module with a dynamic sequence
# dim runs at T=512 and at T=8192; the peak RSS of the second run may exceed
# the first only by the larger inputs and output plus 64 MiB. The result is
# checked against a float64 reference on a sample of query rows.

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
MIB = 1 << 20


def run(work, t, rng):
    """Runs the module at sequence length t; returns (q, k, v, out, peak RSS
    in bytes of the children so far)."""
    qkv = [rng.standard_normal((1, H, t, D), dtype=np.float32) for _ in range(3)]
    paths = [os.path.join(work, "%s%d.npy" % (n, t)) for n in "qkv"]
    for p, a in zip(paths, qkv):
        np.save(p, a)
    out = os.path.join(work, "o%d.npy" % t)
    cmd = [attn_exec.ATTENTION_RUN, os.path.join(work, "causal.mlir"), "--output", out]
    for p in paths:
        cmd += ["--input", p]
    # Under AddressSanitizer (the sanitizer run of the suite) freed memory
    # is quarantined, which would count in the RSS: measure without it.
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS", ""),
                                                 "quarantine_size_mb=0"]))
    subprocess.run(cmd, check=True, env=env)
    # ru_maxrss is in KiB on Linux: the largest child waited for so far.
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    return qkv, np.load(out), rss


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    with open(os.path.join(work, "causal.mlir"), "w") as f:
        f.write(MODULE)
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
    print("long_sequence_memory: %s" % ("OK" if ok else "FAILED"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

# CHECK-NOT: FAIL
# CHECK: long_sequence_memory: OK
