"""The main job: the seed's GPT-2-small causal multi-head attention.

Compiles bench/models/gpt2_small_causal_mha.mlir, runs it on random inputs and
weights (fixed seed) at T=1024, checks the result against a float64 numpy
reference of the seed's MultiHeadAttention, and prints the median time and
GFLOP/s. Usage: gpt2_main.py BUILD_DIR [--tokens T] [--repeat N] [--threads N]
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

D, HEADS = 768, 12


def reference(x, wq, wk, wv, wo, bo):
    """The seed's MultiHeadAttention.forward in float64 (eval mode)."""
    b, t, _ = x.shape
    hd = D // HEADS
    split = lambda m: (x @ m).reshape(b, t, HEADS, hd).transpose(0, 2, 1, 3)
    q, k, v = split(wq), split(wk), split(wv)
    scores = q @ k.transpose(0, 1, 3, 2)
    scores[..., np.triu(np.ones((t, t), bool), 1)] = -np.inf
    scores /= np.sqrt(hd)
    w = np.exp(scores - scores.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    ctx = (w @ v).transpose(0, 2, 1, 3).reshape(b, t, D)
    return ctx @ wo + bo


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--threads", type=int, default=0)
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    model = os.path.join(root, "bench", "models", "gpt2_small_causal_mha.mlir")
    run = os.path.join(args.build, "bin", "attention-run")

    rng = np.random.default_rng(2024)
    t = args.tokens
    # nn.Linear's default init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
    bound = 1 / np.sqrt(D)
    x = rng.standard_normal((1, t, D)).astype(np.float32)
    ws = [rng.uniform(-bound, bound, (D, D)).astype(np.float32) for _ in range(4)]
    bo = rng.uniform(-bound, bound, D).astype(np.float32)
    inputs = [x, *ws, bo]

    with tempfile.TemporaryDirectory() as work:
        cmd = [run, model, "--entry", "main", "--repeat", str(args.repeat),
               "--output", os.path.join(work, "y.npy")]
        if args.threads:
            cmd += ["--threads", str(args.threads)]
        for i, a in enumerate(inputs):
            path = os.path.join(work, f"in{i}.npy")
            np.save(path, a)
            cmd += ["--input", path]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"attention-run failed:\n{proc.stderr}")
        y = np.load(os.path.join(work, "y.npy"))
    timing = dict(kv.split("=") for kv in proc.stdout.split() if "=" in kv)
    compile_line = [l for l in proc.stderr.splitlines() if l.startswith("compiled")]

    want = reference(*(a.astype(np.float64) for a in inputs))
    err = np.abs(y - want).max()
    tol = 1e-5  # f32 (atol) against float64, the project-wide f32 tolerance
    ok = np.isfinite(y).all() and err <= tol
    hd = D // HEADS
    flops = 8 * t * D * D + 2 * HEADS * t * t * hd  # projections + causal core
    ms = float(timing["median_ms"])
    print(f"GPT-2 small causal MHA: B=1 T={t} d_model={D} heads={HEADS}")
    if compile_line:
        print(compile_line[0])
    print(f"result check vs float64 numpy reference: max_abs_err={err:.2e} "
          f"(tolerance {tol:.0e}) {'OK' if ok else 'FAILED'}")
    print(f"median {ms:.2f} ms (min {float(timing['min_ms']):.2f}, "
          f"max {float(timing['max_ms']):.2f}, {args.repeat} runs), "
          f"{flops / ms / 1e6:.1f} GFLOP/s ({flops / 1e9:.2f} GFLOP)")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
