"""Shared helpers for the execution tests: run a module with attention-run,
compare arrays, and a float64 NumPy reference of attn.sdpa (masks, causal
alignment, GQA, fully masked rows and the Philox dropout)."""

import itertools
import os
import subprocess
import sys

import numpy as np

ATTENTION_RUN = os.environ.get(
    "ATTENTION_RUN",
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "bin",
                 "attention-run"))

# The sanitizer run of the suite (lit sets ATTN_SANITIZED=1 for the
# ASan+UBSan build).
SANITIZED = os.environ.get("ATTN_SANITIZED") == "1"

# Distinguishes the files of successive run() calls sharing one workdir.
_run_counter = itertools.count()


class AttentionRunError(RuntimeError):
    pass


class Compiled:
    """A module compiled once into a shared object (compile_module()), which
    run() takes in place of MLIR text: every entry point and input size then runs
    the same machine code without compiling it again."""

    def __init__(self, path):
        self.path = path


def _write_module(mlir_text, workdir, tag):
    """`mlir_text` as workdir/tag.mlir; its path."""
    path = os.path.join(workdir, tag + ".mlir")
    with open(path, "w") as f:
        f.write(mlir_text)
    return path


def _attention_run(cmd, what):
    """Runs attention-run; a non-zero exit raises AttentionRunError."""
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)
    if proc.returncode != 0:
        raise AttentionRunError(
            "attention-run failed (exit %d) for %s\ncommand: %s\nstderr:\n%s"
            % (proc.returncode, what, " ".join(cmd), proc.stderr))
    return proc


def compile_module(mlir_text, workdir, extra_args=()):
    """Compiles `mlir_text` with attention-run's pipeline (the options in
    `extra_args`, as for run()) into a shared object in `workdir`."""
    os.makedirs(workdir, exist_ok=True)
    tag = "module_%d" % next(_run_counter)
    so_path = os.path.join(workdir, tag + ".so")
    cmd = [ATTENTION_RUN, _write_module(mlir_text, workdir, tag), "--compile-only",
           "--emit-shared-object", so_path] + list(extra_args)
    proc = _attention_run(cmd, "compiling " + tag)
    if not os.path.exists(so_path):
        raise AttentionRunError("attention-run exited 0 but did not write %s\n"
                                "stderr:\n%s" % (so_path, proc.stderr))
    return Compiled(so_path)


def run(mlir_text, entry, inputs, workdir, num_outputs=1, extra_args=()):
    """Writes `mlir_text` and `inputs` (in function-argument order) into
    `workdir`, runs `entry` with attention-run and returns its results as a
    list of arrays. `mlir_text` may instead be a Compiled module (then
    `extra_args` holds run options only, such as --threads)."""
    os.makedirs(workdir, exist_ok=True)
    tag = "%s_%d" % (entry, next(_run_counter))
    module_path = (mlir_text.path if isinstance(mlir_text, Compiled)
                   else _write_module(mlir_text, workdir, tag))
    cmd = [ATTENTION_RUN, module_path, "--entry", entry]
    for i, a in enumerate(inputs):
        p = os.path.join(workdir, "%s_in%d.npy" % (tag, i))
        np.save(p, np.asarray(a))
        cmd += ["--input", p]
    out_paths = [os.path.join(workdir, "%s_out%d.npy" % (tag, i))
                 for i in range(num_outputs)]
    for p in out_paths:
        if os.path.exists(p):
            os.remove(p)
        cmd += ["--output", p]
    cmd += list(extra_args)
    proc = _attention_run(cmd, "entry " + entry)
    outs = []
    for p in out_paths:
        if not os.path.exists(p):
            raise AttentionRunError("attention-run exited 0 but did not write %s\n"
                                    "stderr:\n%s" % (p, proc.stderr))
        outs.append(np.load(p))
    return outs


def max_abs_err(got, want):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.size == 0:
        return 0.0
    return float(np.max(np.abs(got - want)))


def assert_close(name, got, want, atol, rtol):
    """np.allclose-style check, |got - want| <= atol + rtol * |want|, that also
    requires identical shapes; a non-finite `want` must be matched exactly."""
    got = np.asarray(got)
    want = np.asarray(want)
    if got.shape != want.shape:
        raise AssertionError("%s: shape mismatch: got %s, want %s"
                             % (name, got.shape, want.shape))
    g = got.astype(np.float64)
    w = want.astype(np.float64)
    finite = np.isfinite(w)
    with np.errstate(invalid="ignore"):
        err = np.where(finite, np.abs(g - np.where(finite, w, 0.0)), 0.0)
    err = np.where(finite & ~np.isfinite(g), np.inf, err)
    same_nonfinite = (g == w) | (np.isnan(g) & np.isnan(w))
    tol = atol + rtol * np.abs(np.where(finite, w, 0.0))
    bad = np.where(finite, err > tol, ~same_nonfinite)
    mae = float(err.max()) if err.size else 0.0
    if bad.any():
        idx = np.argwhere(bad)
        first = tuple(int(i) for i in idx[0])
        raise AssertionError(
            "%s: max_abs_err=%.3g exceeds atol=%g rtol=%g at %d of %d elements; "
            "first at index %s: got %r, want %r"
            % (name, mae, atol, rtol, len(idx), bad.size, first, g[first], w[first]))
    print("%s: max_abs_err=%.3g OK" % (name, mae))
    return mae


# ----------------------------------------------------------------------------
# Low-precision rounding (what attention-run does to f32 data of bf16 args).

def round_to_bf16(x):
    """Rounds float32 values to the nearest bfloat16 (ties to even), returned
    as float32."""
    x = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    bits = x.view(np.uint32).astype(np.uint64)
    nan = np.isnan(x)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    out = rounded.view(np.float32).copy()
    out[nan] = np.nan
    # ascontiguousarray makes a 0-d array 1-d: keep the shape (rank-0 masks).
    return out.reshape(np.shape(x))


def round_to(x, dtype):
    """Rounds to `dtype` ('f32', 'f16', 'bf16') and returns the values as the
    array that attention-run expects for that argument type."""
    if dtype == "f32":
        return np.asarray(x, dtype=np.float32)
    if dtype == "f16":
        return np.asarray(x, dtype=np.float32).astype(np.float16)
    if dtype == "bf16":
        return round_to_bf16(x)
    raise ValueError(dtype)


# ----------------------------------------------------------------------------
# Philox-4x32-10 dropout.

_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_MASK32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)


def philox_uniform(counter, seed):
    """u in [0, 1) for each flat counter (uint64 array) under `seed`: Philox
    4x32-10 on (ctr_lo, ctr_hi, 0, 0) with key (seed_lo, seed_hi), top 24
    bits of the first output word."""
    n = np.asarray(counter, dtype=np.uint64)
    c0 = n & _MASK32
    c1 = n >> _S32
    c2 = np.zeros_like(c0)
    c3 = np.zeros_like(c0)
    seed = int(seed) & 0xFFFFFFFFFFFFFFFF
    k0 = seed & 0xFFFFFFFF
    k1 = seed >> 32
    for _ in range(10):
        p0 = _M0 * c0  # < 2^64: both factors < 2^32
        p1 = _M1 * c2
        hi0, lo0 = p0 >> _S32, p0 & _MASK32
        hi1, lo1 = p1 >> _S32, p1 & _MASK32
        c0, c1, c2, c3 = (hi1 ^ c1 ^ np.uint64(k0), lo1,
                          hi0 ^ c3 ^ np.uint64(k1), lo0)
        k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
        k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return (c0 >> np.uint64(8)).astype(np.float64) * (2.0 ** -24)


def dropout_keep_mask(score_shape, dropout_p, seed):
    """Boolean keep-mask over the row-major score tensor `score_shape`."""
    total = int(np.prod(score_shape, dtype=np.int64))
    u = philox_uniform(np.arange(total, dtype=np.uint64), seed)
    # The compiler compares against the f32 attribute value.
    return (u >= float(np.float32(dropout_p))).reshape(score_shape)


# ----------------------------------------------------------------------------
# attn.sdpa reference.

def _softmax_rows(scores, allowed):
    """Softmax over the last axis of float64 `scores`, restricted to
    `allowed`; rows with nothing allowed (or all -inf) give 0."""
    s = np.where(allowed, scores, -np.inf)
    row_max = np.max(s, axis=-1, keepdims=True)
    empty = ~np.isfinite(row_max)  # only -inf (masked) entries in the row
    shifted = s - np.where(empty, 0.0, row_max)
    e = np.where(np.isfinite(s), np.exp(np.where(np.isfinite(s), shifted, 0.0)), 0.0)
    denom = np.sum(e, axis=-1, keepdims=True)
    return np.where(empty, 0.0, e / np.where(denom == 0, 1.0, denom))


def ref_sdpa(q, k, v, mask=None, mask_kind="masked_where_true", causal=None,
             scale=None, dropout_p=0.0, seed=0, return_weights=False,
             window_left=None, window_right=None, softcap=None):
    """float64 reference of attn.sdpa.

    q [B..., Hq, Tq, d], k [B..., Hkv, Tk, d], v [B..., Hkv, Tk, dv]; rank-2
    operands are one head. `window_left` L / `window_right` R: row i sees
    key j only if -L <= j - (i + off) <= R (off = Tk - Tq for bottom_right);
    `softcap` c: scaled scores become c tanh(s / c) before the mask.
    Returns the output (and the post-dropout weights when
    `return_weights`)."""
    q = np.asarray(q, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    rank2 = q.ndim == 2
    if rank2:
        q, k, v = q[None], k[None], v[None]
    hq, tq, d = q.shape[-3:]
    hkv, tk = k.shape[-3], k.shape[-2]
    assert hq % hkv == 0, "Hq must be a multiple of Hkv"
    # GQA: query head h reads kv head h // (Hq // Hkv).
    kv_index = np.arange(hq) // (hq // hkv)
    k = np.take(k, kv_index, axis=-3)
    v = np.take(v, kv_index, axis=-3)
    if scale is None:
        scale = 1.0 / np.sqrt(d)
    scores = float(scale) * np.matmul(q, np.swapaxes(k, -1, -2))
    if softcap is not None:
        scores = softcap * np.tanh(scores / softcap)
    score_shape = scores.shape
    allowed = np.ones(score_shape, dtype=bool)
    diag = np.arange(tk)[None, :] - np.arange(tq)[:, None] - (
        tk - tq if causal == "bottom_right" else 0)
    if window_left is not None:
        allowed &= diag >= -window_left
    if window_right is not None:
        allowed &= diag <= window_right
    if causal is not None:
        i = np.arange(tq)[:, None]
        j = np.arange(tk)[None, :]
        if causal == "top_left":
            allowed &= j <= i
        elif causal == "bottom_right":
            allowed &= j <= i + tk - tq
        else:
            raise ValueError(causal)
    if mask is not None:
        m = np.asarray(mask)
        if rank2 and m.ndim <= 2:
            m = m.reshape((1,) * (3 - m.ndim) + m.shape)
        if mask_kind == "masked_where_true":
            allowed &= ~np.broadcast_to(m.astype(bool), score_shape)
        elif mask_kind == "attend_where_true":
            allowed &= np.broadcast_to(m.astype(bool), score_shape)
        elif mask_kind == "additive":
            scores = scores + np.broadcast_to(m.astype(np.float64), score_shape)
            allowed &= ~np.isneginf(scores)
        else:
            raise ValueError(mask_kind)
    w = _softmax_rows(scores, allowed)
    if dropout_p > 0.0:
        keep = dropout_keep_mask(score_shape, dropout_p, seed)
        w = np.where(keep, w / (1.0 - float(np.float32(dropout_p))), 0.0)
    out = np.matmul(w, v)
    if rank2:
        out, w = out[0], w[0]
    return (out, w) if return_weights else out


# ----------------------------------------------------------------------------
# MLIR text helpers.

def host_cpu_flags():
    """The flags of this CPU as /proc/cpuinfo spells them (avx512_bf16)."""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def host_has_avx512_bf16():
    """Whether this CPU has avx512_bf16 (the CPU pipeline then lowers bf16
    attention cores to vdpbf16ps dot products)."""
    return "avx512_bf16" in host_cpu_flags()


def host_runs_x86_64_v4():
    """Whether this CPU runs code for --target-cpu=x86-64-v4 (AVX-512 F, BW,
    DQ, VL and CD)."""
    return {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"} <= host_cpu_flags()


def cpu_variants():
    """(name, attention-run arguments) compiling for another CPU than the
    host's: the whole AVX2 form, code generation included, on any host that
    runs x86-64-v3 (which every host of these tests does), and AVX-512
    without avx512_bf16 (x86-64-v4) where the host runs it."""
    variants = [("x86-64-v3", ["--target-cpu=x86-64-v3"])]
    if host_runs_x86_64_v4():
        variants.append(("x86-64-v4", ["--target-cpu=x86-64-v4"]))
    return variants


def tensor_type(shape, elem):
    """tensor<AxBx...xelem>; None in `shape` is a dynamic dimension."""
    dims = ["?" if s is None else str(int(s)) for s in shape]
    return "tensor<%s>" % "x".join(dims + [elem])


def workdir_from_argv(argv):
    """The test's scratch directory (lit's %t), created if needed."""
    if len(argv) < 2:
        raise SystemExit("usage: %s WORKDIR" % argv[0])
    d = argv[1]
    if os.path.isfile(d):
        os.remove(d)
    os.makedirs(d, exist_ok=True)
    return d


def fmt_row(values, digits=4):
    return " ".join("%.*f" % (digits, float(x)) for x in values)


class SanitizerTurns:
    """Which variants of a case run in the sanitizer run of the suite.

    ASan and UBSan instrument the compiler and the runtime, not the code they
    generate, and the instrumented compiler is two to three times slower. A
    case compiled with several option values runs much the same instrumented
    code each time, so in that run each case takes the variants named in
    `always` and one of the others, in turn from case to case: every variant
    still runs, on a share of the cases. Outside the sanitizer run pick()
    returns every variant. report() prints how often each ran, so the log
    says what the run left out.

        turns = SanitizerTurns(always={"default"})
        for name, options in turns.pick(variants): ...
        turns.report("vectorized_sdpa")
    """

    def __init__(self, always):
        self.always = set(always)
        self.turn = 0
        self.ran = {}
        self.offered = {}

    def pick(self, variants):
        """`variants`: (name, ...) tuples; the ones this case runs."""
        for v in variants:
            self.offered[v[0]] = self.offered.get(v[0], 0) + 1
        if SANITIZED:
            rest = [v for v in variants if v[0] not in self.always]
            chosen = [v for v in variants if v[0] in self.always]
            if rest:
                chosen.append(rest[self.turn % len(rest)])
                self.turn += 1
        else:
            chosen = list(variants)
        for v in chosen:
            self.ran[v[0]] = self.ran.get(v[0], 0) + 1
        return chosen

    def report(self, label):
        if SANITIZED:
            print("%s: sanitizer run, variants run on cases out of offered: %s" % (
                label, ", ".join("%s %d/%d" % (name, self.ran.get(name, 0), n)
                                 for name, n in self.offered.items())))


class Checks:
    """Runs named checks, reporting every failure instead of stopping at the
    first, so one defect does not hide the state of the others:

        checks = Checks()
        with checks("name"):
            ...assertions / run() calls...
        checks.finish("label")  # exits 1 when any check failed
    """

    def __init__(self):
        self.failures = []
        self.count = 0

    def __call__(self, name):
        return _Check(self, name)

    def finish(self, label):
        if self.failures:
            print("%s: %d of %d checks FAILED:" % (label, len(self.failures), self.count))
            for name, msg in self.failures:
                print("  - %s: %s" % (name, msg.splitlines()[0] if msg else ""))
            sys.stdout.flush()
            raise SystemExit(1)
        print("%s: all %d checks OK" % (label, self.count))


class _Check:
    def __init__(self, owner, name):
        self.owner = owner
        self.name = name

    def __enter__(self):
        self.owner.count += 1
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            return False
        if issubclass(exc_type, (AssertionError, AttentionRunError)):
            print("FAIL: %s: %s" % (self.name, exc))
            self.owner.failures.append((self.name, str(exc)))
            return True
        return False
