#!/usr/bin/env python3
"""GPU benchmark and correctness run of the attention compiler's CUDA path.

Two phases, so that compiling (needs the compiler, LLVM/MLIR 22 and the CUDA
toolkit) and running (needs a GPU and only the runtime) can happen on
different machines:

  run.py prepare --out DIR   compile every case to DIR/<case>.so
  run.py run --out DIR       run them on the GPU: check each against an
                             independent reference, time the benchmark
                             cases, print and write DIR/gpu-results.md

Correctness cases (test/execution/gpu_cases.py) compare every element with
a float64 NumPy reference. Benchmark cases compare with PyTorch's float32
math on the GPU (explicit scores, softmax, P V; not a fused kernel) when
PyTorch is present, else with float64 NumPy on 64 sampled query rows. Times
are medians of `--repeat` calls of the compiled entry point with inputs
resident on the GPU (launch and synchronization included, transfers not).
PyTorch's own scaled_dot_product_attention is timed on the same inputs as
a peer.
"""

import argparse
import datetime
import os
import re
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "test", "execution"))
import gpu_cases  # noqa: E402
from gpu_cases import Case  # noqa: E402

BENCH = []
for dtype in ("f16", "bf16"):
    for causal in ("top_left", "none"):
        BENCH.append(Case("gpt2_small_%s_%s" % ("causal" if causal != "none" else "full", dtype),
                          1, 12, 1024, 64, dtype, causal))
    BENCH.append(Case("gpt2_xl_causal_%s" % dtype, 1, 25, 1024, 64, dtype, "top_left"))
    for d in (64, 128):
        for causal in ("top_left", "none"):
            BENCH.append(Case("b8_h16_t4096_d%d_%s_%s"
                              % (d, "causal" if causal != "none" else "full", dtype),
                              8, 16, 4096, d, dtype, causal))

# Fragment loads without ldmatrix, checked on two cases.
VARIANTS = [("gpt2_causal_f16", "ldmatrix=false"), ("gqa_causal_bf16", "ldmatrix=false")]
# Synchronous staging (stages=1), the fallback of the cp.async pipeline.
VARIANTS += [(n, "stages=1") for n in ("gpt2_causal_f16", "gqa_causal_bf16", "tails_full_f16",
                                       "rows_without_keys_f16", "decode_step_f16")]

# Tile shapes tried on three benchmark cases (checked and timed like the
# defaults, reported in their own table).
TUNING_CASES = ("gpt2_small_causal_f16", "b8_h16_t4096_d64_causal_f16",
                "b8_h16_t4096_d128_causal_bf16")
TUNING_OPTIONS = ("stages=1", "warps=8", "block-kv=32", "warps=8 block-kv=128", "block-kv=128",
                  "stages=1 warps=8")


def all_builds():
    """(case, pipeline options, artifact name) of every module to build."""
    out = [(c, "", c.name) for c in gpu_cases.CORRECTNESS]
    by_name = {c.name: c for c in gpu_cases.CORRECTNESS}
    out += [(by_name[n], o, tuned_name(by_name[n], o)) for n, o in VARIANTS]
    out += [(c, "", c.name) for c in BENCH]
    out += [(c, o, tuned_name(c, o)) for c in BENCH if c.name in TUNING_CASES
            for o in TUNING_OPTIONS]
    return out


def tuned_name(case, options):
    return case.name + "__" + options.replace("=", "").replace(" ", "_")


def prepare(args):
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    for case, options, name in all_builds():
        mlir = os.path.join(args.out, name + ".mlir")
        so = os.path.join(args.out, name + ".so")
        with open(mlir, "w") as f:
            f.write(case.module())
        cmd = [args.attention_run, mlir, "--target", "cuda", "--compile-only",
               "--emit-shared-object", so]
        if options:
            cmd += ["--pipeline-options", options]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)
        if proc.returncode != 0:
            sys.exit("prepare: %s failed:\n%s" % (" ".join(cmd), proc.stdout))
        print("compiled %-40s %s" % (name, proc.stdout.strip().splitlines()[-1]
                                     if proc.stdout.strip() else ""))
    print("prepared %d modules in %.1f s" % (len(all_builds()), time.time() - t0))


def save_inputs(case, arrays, prefix):
    paths = []
    for i, a in enumerate(arrays):
        p = "%s_in%d.npy" % (prefix, i)
        # bf16 travels as float32 .npy (the runtime rounds to nearest even;
        # the values are already bf16-exact).
        np.save(p, a if a.dtype in (np.float16, np.bool_) else a.astype(np.float32))
        paths.append(p)
    return paths


def run_module(args, so, inputs, out_path, repeat):
    cmd = [args.attention_run, so]
    for p in inputs:
        cmd += ["--input", p]
    cmd += ["--output", out_path]
    if repeat:
        cmd += ["--repeat", str(repeat)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if proc.returncode != 0:
        return None, "exit %d: %s" % (proc.returncode, proc.stderr.strip()[-800:])
    m = re.search(r"median_ms=([0-9.]+)", proc.stdout)
    return (float(m.group(1)) if m else None), None


def torch_check_and_time(case, q, k, v, out, repeat):
    """(max error vs PyTorch float32 math, PyTorch SDPA ms) or None."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    dev = torch.device("cuda")
    tq, tk, tv = (torch.from_numpy(case.to_bhtd(np.asarray(x, np.float32), H).copy()).to(dev)
                  for x, H in ((q, case.Hq), (k, case.Hk), (v, case.Hk)))
    group = case.Hq // case.Hk
    scale = case.scale or 1.0 / case.d ** 0.5
    err = 0.0
    got = torch.from_numpy(case.to_bhtd(np.asarray(out, np.float32)).copy()).to(dev)
    for b in range(case.B):
        kk = tk[b].repeat_interleave(group, 0)
        vv = tv[b].repeat_interleave(group, 0)
        s = torch.matmul(tq[b], kk.transpose(-1, -2)) * scale
        if case.causal != "none":
            off = case.Tk - case.Tq if case.causal == "bottom_right" else 0
            rows = torch.arange(case.Tq, device=dev)[:, None]
            keys = torch.arange(case.Tk, device=dev)[None, :]
            s = s.masked_fill(keys > rows + off, float("-inf"))
        ref = torch.matmul(torch.softmax(s, dim=-1), vv)
        err = max(err, float((got[b] - ref).abs().max()))
        del s, ref
    # The peer: PyTorch's fused SDPA on the same data and dtype.
    dt = torch.float16 if case.dtype == "f16" else torch.bfloat16
    pq, pk, pv = (x.to(dt) for x in (tq, tk, tv))
    causal = case.causal == "top_left"
    ms = []
    with torch.no_grad():
        for i in range(repeat + 3):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            torch.nn.functional.scaled_dot_product_attention(pq, pk, pv, is_causal=causal)
            end.record()
            torch.cuda.synchronize()
            if i >= 3:
                ms.append(start.elapsed_time(end))
    return err, float(np.median(ms))


def run(args):
    work = os.path.join(args.out, "work")
    os.makedirs(work, exist_ok=True)
    rows, failures = [], 0
    device = "GPU"
    try:
        device = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                                 "--format=csv,noheader"], stdout=subprocess.PIPE,
                                universal_newlines=True).stdout.strip() or device
    except OSError:
        pass
    print("device: %s" % device)
    # Correctness: every element against float64 NumPy.
    for case, options, name in all_builds():
        if any(case is c for c in BENCH):
            continue
        ins = case.inputs(seed=1)
        prefix = os.path.join(work, name)
        out_path = prefix + "_out.npy"
        _, error = run_module(args, os.path.join(args.out, name + ".so"),
                              save_inputs(case, ins, prefix), out_path, 0)
        if error:
            print("FAIL %-40s %s" % (name, error))
            failures += 1
            continue
        err, ok = gpu_cases.check(case, np.load(out_path), *ins)
        failures += not ok
        print("%s %-40s max_abs_err=%.3g (tolerance %g, float64 reference)"
              % ("PASS" if ok else "FAIL", name, err, gpu_cases.TOLERANCE[case.dtype]))
    # Benchmarks.
    cache = {}
    for case, options, name in all_builds():
        if not any(case is c for c in BENCH):
            continue
        key = (case.B, case.Hq, case.Tq, case.d, case.dtype)
        if key not in cache:
            cache.clear()
            q, k, v = case.inputs(seed=2)
            prefix = os.path.join(work, "bench_%d_%d_%d_%d_%s" % key)
            cache[key] = (q, k, v, save_inputs(case, (q, k, v), prefix))
        q, k, v, paths = cache[key]
        out_path = os.path.join(work, name + "_out.npy")
        ms, error = run_module(args, os.path.join(args.out, name + ".so"), paths,
                               out_path, args.repeat)
        if error:
            print("FAIL %-40s %s" % (name, error))
            failures += 1
            continue
        out = np.load(out_path)
        peer = torch_check_and_time(case, q, k, v, out, args.repeat)
        if peer is not None:
            err, torch_ms = peer
            how = "PyTorch f32 math"
        else:
            sample = np.random.default_rng(0).choice(case.Tq, 64, replace=False)
            err, _ = gpu_cases.check(case, out, q, k, v, rows=np.sort(sample))
            torch_ms, how = None, "float64, 64 rows"
        ok = err <= gpu_cases.TOLERANCE[case.dtype]
        failures += not ok
        tflops = case.flops() / (ms * 1e-3) / 1e12
        torch_tflops = case.flops() / (torch_ms * 1e-3) / 1e12 if torch_ms else None
        rows.append((case, options, ms, tflops, torch_ms, torch_tflops, err, ok, how))
        print("%s %-40s %8.3f ms %7.1f TFLOP/s  torch sdpa %s  max_abs_err=%.3g (%s)"
              % ("PASS" if ok else "FAIL", name, ms, tflops,
                 "%.3f ms %.1f TFLOP/s" % (torch_ms, torch_tflops) if torch_ms else "n/a",
                 err, how))
    write_table(args, rows, device)
    print("gpu bench: %d failed" % failures)
    return 1 if failures else 0


def write_table(args, rows, device):
    lines = ["# GPU attention benchmark, %s" % datetime.date.today().isoformat(), "",
             "Device: %s. Median of %d calls of the compiled entry point (inputs on "
             "the GPU, launch + synchronization included). Useful FLOPs: "
             "4·B·H·Tq·Tk·d, halved for causal. Peer: PyTorch's "
             "scaled_dot_product_attention, same inputs and dtype, CUDA events."
             % (device, args.repeat), "",
             "| case | B | H | T | d | dtype | causal | ms | TFLOP/s | PyTorch SDPA ms | PyTorch TFLOP/s | ours / PyTorch | max abs err |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    tuned = [r for r in rows if r[1]]
    for case, options, ms, tflops, tms, ttf, err, ok, how in rows:
        if options:
            continue
        lines.append("| %s | %d | %d | %d | %d | %s | %s | %.3f | %.1f | %s | %s | %s | %.2g%s |"
                     % (case.name, case.B, case.Hq, case.Tq, case.d, case.dtype,
                        "yes" if case.causal != "none" else "no", ms, tflops,
                        "%.3f" % tms if tms else "n/a", "%.1f" % ttf if ttf else "n/a",
                        "%.2fx" % (tms / ms) if tms else "n/a", err, "" if ok else " FAIL"))
    if tuned:
        lines += ["", "Tile shapes (pipeline options of attn-lower-to-nvvm-pipeline; "
                  "default: warps=4 block-kv=64):", "",
                  "| case | options | ms | TFLOP/s | max abs err |", "|---|---|---|---|---|"]
        for case, options, ms, tflops, tms, ttf, err, ok, how in tuned:
            lines.append("| %s | %s | %.3f | %.1f | %.2g%s |"
                         % (case.name, options, ms, tflops, err, "" if ok else " FAIL"))
    path = os.path.join(args.out, "gpu-results.md")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %s" % path)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("phase", choices=["prepare", "run"])
    p.add_argument("--out", required=True, help="folder of the compiled modules")
    p.add_argument("--attention-run", required=True)
    p.add_argument("--repeat", type=int, default=20)
    args = p.parse_args()
    if args.phase == "prepare":
        prepare(args)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
