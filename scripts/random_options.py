#!/usr/bin/env python3
"""Randomized differential test of the CPU pipeline's options.

Each case draws a module (an attn.multi_head_attention block or an
attn.sdpa core: random sizes, static or dynamic T; the cores also GQA,
explicit masks of the three kinds and broadcast shapes (rank 0 and
broadcast along the keys too), sliding windows, softcap, scales, dropout,
f16 and bf16), random pipeline options (register and cache tiles of
attn-vectorize-sdpa and attn-vectorize-contractions, packing, N splitting,
flash blocks, the vectorized core on or off) and a thread count, runs it
with attention-run and compares the result with a float64 NumPy reference
(|got - want| <= tol + tol |want|, tol 1e-4 for f32, 1e-2 for f16, 2e-2
for bf16). An error that names one of the drawn options (its pass's check
of the values) counts as rejected; a crash, any other error, a missing
output or wrong numbers are failures, reported with the module, the options
and the command to rerun them. Cases are reproducible from --seed and the case
number.

  /usr/bin/python3 scripts/random_options.py [--cases N] [--seconds S]
      [--seed S] [--build build] [--keep DIR]

Exit status 1 if any case failed. The test suite runs the fixed grids of
test/execution/; this sweep samples their cross products, for as long as
it is given.
"""

import argparse
import contextlib
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test", "execution"))
import attn_exec  # noqa: E402

# Absolute and relative tolerance by element type (inputs rounded to it,
# the reference computed from the rounded values in float64).
TOLERANCE = {"f32": 1e-4, "f16": 1e-2, "bf16": 2e-2}


def pick(rng, values):
    return values[int(rng.integers(len(values)))]


def random_options(rng):
    """A random subset of the CPU pipeline's tiling options."""
    choices = {
        "vectorize-sdpa": ["true", "true", "false"],
        "sdpa-block-q": ["0", "16", "32", "48", "64", "128"],
        "sdpa-block-kv": ["0", "16", "32", "64", "128"],
        "sdpa-register-keys": ["1", "2", "3", "4"],
        "sdpa-register-rows": ["1", "2", "3", "4"],
        "sdpa-accumulators": ["0", "4", "8", "16", "24"],
        "flash-block-q": ["16", "32", "64"],
        "flash-block-kv": ["16", "32", "128"],
        "contraction-cache-m": ["8", "16", "32", "64", "96"],
        "contraction-cache-k": ["16", "64", "100", "256"],
        "contraction-cache-n": ["0", "16", "32", "64", "100"],
        "contraction-register-m": ["0", "1", "2", "3", "4", "6", "8"],
        "contraction-register-n": ["0", "8", "16", "32"],
        "contraction-pack-b": ["true", "false"],
        "contraction-pack-b-once": ["true", "false"],
        "contraction-pack-b-once-blocks": ["1", "2", "8"],
        "contraction-split-n-items": ["0", "2", "3", "4"],
    }
    opts = []
    for name, values in choices.items():
        if rng.random() < 0.5:
            opts.append("%s=%s" % (name, pick(rng, values)))
    return " ".join(opts)


def tensor(shape, dynamic_axis=None, elem="f32"):
    dims = ["?" if i == dynamic_axis else str(s) for i, s in enumerate(shape)]
    return "tensor<%s>" % "x".join(dims + [elem])


def mha_case(rng):
    heads = int(rng.integers(1, 5))
    head_dim = pick(rng, [8, 16, 24, 32, 64])
    d_model = heads * head_dim
    b = int(rng.integers(1, 4))
    t = pick(rng, [1, 2, 5, 7, 16, 31, 64, 65, 100, 129, 200])
    causal = bool(rng.random() < 0.5)
    qkv_bias = bool(rng.random() < 0.3)
    dynamic = bool(rng.random() < 0.3)
    bound = 1 / np.sqrt(d_model)
    x = rng.standard_normal((b, t, d_model)).astype(np.float32)
    ws = [rng.uniform(-bound, bound, (d_model, d_model)).astype(np.float32)
          for _ in range(4)]
    biases = [rng.uniform(-bound, bound, d_model).astype(np.float32)
              for _ in range(3)] if qkv_bias else []
    bo = rng.uniform(-bound, bound, d_model).astype(np.float32)
    tx = tensor((b, t, d_model), 1 if dynamic else None)
    tw, tb = tensor((d_model, d_model)), tensor((d_model,))
    arg_types = [tx, tw, tw, tw] + [tb] * len(biases) + [tw, tb]
    names = ["%x", "%wq", "%wk", "%wv"] + ["%bq", "%bk", "%bv"][:len(biases)] + ["%wo", "%bo"]
    bias = " bias(%bq, %bk, %bv)" if qkv_bias else ""
    text = ("func.func @main(%s) -> %s {\n"
            "  %%y = attn.multi_head_attention %%x weights(%%wq, %%wk, %%wv)%s "
            "out_proj(%%wo, %%bo) %s{num_heads = %d : i64} : (%s) -> %s\n"
            "  return %%y : %s\n}\n") % (
                ", ".join("%s: %s" % nt for nt in zip(names, arg_types)), tx, bias,
                "causal " if causal else "", heads, ", ".join(arg_types), tx, tx)
    f = lambda a: a.astype(np.float64)  # noqa: E731
    q, k, v = (f(x) @ f(w) for w in ws[:3])
    if qkv_bias:
        q, k, v = q + f(biases[0]), k + f(biases[1]), v + f(biases[2])
    split = lambda a: a.reshape(b, t, heads, head_dim).transpose(0, 2, 1, 3)  # noqa: E731
    o = attn_exec.ref_sdpa(split(q), split(k), split(v),
                           causal="top_left" if causal else None)
    want = o.transpose(0, 2, 1, 3).reshape(b, t, d_model) @ f(ws[3]) + f(bo)
    name = "mha d_model=%d heads=%d B=%d T=%d%s%s%s" % (
        d_model, heads, b, t, " causal" if causal else "", " qkv_bias" if qkv_bias else "",
        " dynamic-T" if dynamic else "")
    return name, text, [x] + ws[:3] + biases + [ws[3], bo], want, TOLERANCE["f32"]


def mask_for(rng, b, hq, tq, tk, elem):
    """A random explicit mask broadcastable to [b, hq, tq, tk]: its kind,
    the array (i1 as bool, additive in `elem` with some -inf) and the MLIR
    element type."""
    kind = pick(rng, ["masked_where_true", "attend_where_true", "additive"])
    shape = pick(rng, [(tk,), (tq, tk), (1, 1, tq, tk), (b, 1, tq, tk),
                       (b, hq, tq, tk), (1, hq, 1, tk), (b, 1, 1, 1),
                       (tq, 1), (b, 1, tq, 1), ()])
    if kind == "additive":
        m = np.array(rng.standard_normal(shape))
        m[np.asarray(rng.random(shape) < 0.2)] = -np.inf
        return kind, attn_exec.round_to(m, elem), elem
    m = np.asarray(rng.random(shape) < (0.3 if kind == "masked_where_true" else 0.7))
    return kind, m, "i1"


def sdpa_case(rng):
    b = int(rng.integers(1, 3))
    hkv = int(rng.integers(1, 4))
    hq = hkv * pick(rng, [1, 1, 2, 3])
    d = pick(rng, [8, 16, 32, 40, 64, 80, 128])
    dv = d if rng.random() < 0.8 else pick(rng, [16, 32, 64])
    tq = pick(rng, [1, 3, 16, 17, 33, 64, 100, 128, 130, 257])
    tk = tq if rng.random() < 0.6 else pick(rng, [1, 5, 16, 63, 64, 65, 200, 256])
    causal = pick(rng, [None, None, "top_left", "bottom_right"])
    dynamic = bool(rng.random() < 0.3)
    elem = pick(rng, ["f32"] * 8 + ["f16", "bf16"])
    q = rng.standard_normal((b, hq, tq, d))
    k = rng.standard_normal((b, hkv, tk, d))
    v = rng.standard_normal((b, hkv, tk, dv))
    q, k, v = (attn_exec.round_to(a, elem) for a in (q, k, v))
    mask = mask_for(rng, b, hq, tq, tk, elem) if not dynamic and rng.random() < 0.3 else None
    scale = float(np.float32(rng.uniform(0.05, 0.5))) if rng.random() < 0.3 else None
    dropout = (pick(rng, [0.1, 0.5]), int(rng.integers(0, 1000))) if rng.random() < 0.15 else None
    window = (None, None)
    if rng.random() < 0.25:
        reach = lambda: pick(rng, [None, 0, 1, 7, 16, 40, 100, 300])  # noqa: E731
        window = (reach(), None if causal else reach())
    softcap = pick(rng, [2.0, 5.0, 30.0]) if rng.random() < 0.15 else None
    ty = lambda shape, dyn=None, e=elem: tensor(shape, dyn, e)  # noqa: E731
    tt = [ty(a.shape, 2 if dynamic else None) for a in (q, k, v)]
    tout = ty((b, hq, tq, dv), 2 if dynamic else None)
    params, types, inputs = ["%q", "%k", "%v"], list(tt), [q, k, v]
    op = "attn.sdpa %q, %k, %v"
    if mask is not None:
        kind, m, mask_elem = mask
        params.append("%m")
        types.append(ty(m.shape, None, mask_elem))
        inputs.append(m)
        op += " mask(%%m : %s)" % kind
    if causal:
        op += " causal(%s)" % causal
    attrs = []
    if scale is not None:
        attrs.append("scale = %r : f32" % scale)
    if dropout:
        attrs.append("dropout_p = %r : f32, seed = %d : i64" % dropout)
    for side, reach in zip(("left", "right"), window):
        if reach is not None:
            attrs.append("window_%s = %d : i64" % (side, reach))
    if softcap is not None:
        attrs.append("softcap = %r : f32" % softcap)
    if attrs:
        op += " {%s}" % ", ".join(attrs)
    text = ("func.func @main(%s) -> %s {\n  %%o = %s : %s -> %s\n  return %%o : %s\n}\n") % (
        ", ".join("%s: %s" % pt for pt in zip(params, types)), tout, op, ", ".join(types),
        tout, tout)
    want = attn_exec.ref_sdpa(
        q, k, v, mask=None if mask is None else mask[1].astype(np.float64)
        if mask[0] == "additive" else mask[1],
        mask_kind="masked_where_true" if mask is None else mask[0], causal=causal,
        scale=scale, dropout_p=dropout[0] if dropout else 0.0,
        seed=dropout[1] if dropout else 0, window_left=window[0], window_right=window[1],
        softcap=softcap)
    name = "sdpa %s B=%d Hq=%d Hkv=%d Tq=%d Tk=%d d=%d dv=%d%s%s%s%s%s%s%s" % (
        elem, b, hq, hkv, tq, tk, d, dv, " causal(%s)" % causal if causal else "",
        " window(%s, %s)" % window if window != (None, None) else "",
        " softcap=%g" % softcap if softcap is not None else "",
        " mask(%s %s)" % (mask[0], "x".join(map(str, mask[1].shape))) if mask else "",
        " scale=%g" % scale if scale is not None else "",
        " dropout p=%g seed=%d" % dropout if dropout else "",
        " dynamic-T" if dynamic else "")
    return name, text, inputs, want, TOLERANCE[elem]


def run_case(build, work, index, text, inputs, want, tol, options, threads):
    tag = os.path.join(work, "case%d" % index)
    with open(tag + ".mlir", "w") as f:
        f.write(text)
    cmd = [os.path.join(build, "bin", "attention-run"), tag + ".mlir",
           "--threads", str(threads), "--output", tag + ".out.npy"]
    if options:
        cmd += ["--pipeline-options=" + options]
    for i, a in enumerate(inputs):
        np.save("%s.in%d.npy" % (tag, i), a)
        cmd += ["--input", "%s.in%d.npy" % (tag, i)]
    np.save(tag + ".want.npy", want)
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if proc.returncode < 0:
        return "failed", "killed by %s" % signal.Signals(-proc.returncode).name, cmd
    if proc.returncode != 0:
        # Only an error that names a drawn option (as its pass does: `cache-m=`
        # for contraction-cache-m) is the options' check; any other error on
        # these valid modules is a defect.
        names = [o.split("=")[0] for o in options.split()]
        names = [n.split("-", 1)[1] if n.startswith(("contraction-", "sdpa-", "flash-"))
                 else n for n in names]
        if "bad pipeline options" in proc.stderr or any(n + "=" in proc.stderr
                                                        for n in names):
            return "rejected", next(line for line in proc.stderr.splitlines()
                                    if "error" in line), cmd
        return "failed", "exit %d: %s" % (proc.returncode, proc.stderr.strip()), cmd
    if not os.path.exists(tag + ".out.npy"):
        return "failed", "exit 0 without an output", cmd
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # its per-case OK line
            attn_exec.assert_close("output", np.load(tag + ".out.npy"), want, tol, tol)
    except AssertionError as e:
        return "failed", str(e), cmd
    return "passed", "", cmd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", type=int, default=200, help="most cases to run")
    ap.add_argument("--seconds", type=float, default=0,
                    help="stop starting new cases after this long (0: no limit)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--first", type=int, default=0, help="first case number")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--keep", help="keep every case's files in this directory")
    args = ap.parse_args()
    tool = os.path.join(args.build, "bin", "attention-run")
    if not os.access(tool, os.X_OK):
        ap.error("%s not found: build the project first (or pass --build)" % tool)
    work = args.keep or tempfile.mkdtemp(prefix="attn-random-options-")
    os.makedirs(work, exist_ok=True)
    counts = {"passed": 0, "rejected": 0, "failed": 0}
    start = time.monotonic()
    for index in range(args.first, args.first + args.cases):
        if args.seconds and time.monotonic() - start > args.seconds:
            break
        rng = np.random.default_rng([args.seed, index])
        name, text, inputs, want, tol = (mha_case if rng.random() < 0.5 else sdpa_case)(rng)
        options = random_options(rng)
        threads = pick(rng, [1, 2])
        status, detail, cmd = run_case(args.build, work, index, text, inputs, want, tol,
                                       options, threads)
        counts[status] += 1
        if status != "passed":
            print("case %d %s: %s [%s] threads=%d: %s" % (
                index, status.upper(), name, options, threads, detail), flush=True)
        if status == "failed":
            print("  rerun: %s" % " ".join(cmd), flush=True)
            print("  module and inputs kept in %s (case%d.*)" % (work, index), flush=True)
    print("random_options (seed %d): %d passed, %d failed, %d rejected by the options' "
          "checks" % (args.seed, counts["passed"], counts["failed"], counts["rejected"]))
    if not counts["failed"] and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
