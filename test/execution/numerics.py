# RUN: %python %s %t | FileCheck %s
#
# Numerical edge cases of attn.sdpa through the plain lowering, the flash
# lowering (attn-fuse-softmax) and attn-vectorize-sdpa (the head dim 16
# cases with at least 8 query rows), each with default and small blocks: logits of +-1e4 (exp would overflow
# without max subtraction), -inf inside Q/K, NaN propagation, fully masked
# rows, T = 1 and Tk = 1, additive padding masks of finfo(f32).min, -1e30
# and -1e10 (rows that see only padded keys: uniform weights), a scale of
# 1e10. Compared with a float64 reference of the defined
# semantics: NaN anywhere in a query row's visible scores makes that row NaN;
# a key whose weight is exactly 0 (masked, fully skipped) contributes nothing
# even when its value is NaN or inf. In the sanitizer run of the suite each
# case runs the default (vector) variant and one other in turn
# (attn_exec.SanitizerTurns; the test prints what ran).

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_exec  # noqa: E402

VARIANTS = [("plain", "optimize=false"), ("flash", "vectorize-sdpa=false"),
            ("flash-small-blocks",
             "vectorize-sdpa=false flash-block-q=2 flash-block-kv=3"),
            ("vector", ""),
            ("vector-small-blocks", "sdpa-block-q=16 sdpa-block-kv=3")]


def module(tq, tk, d, causal=None, scale=None, softcap=None, mask=False):
    ty = lambda t: attn_exec.tensor_type((1, 2, t, d), "f32")
    mty = attn_exec.tensor_type((1, 1, 1, tk), "f32")
    parts = []
    if scale is not None:
        parts.append("scale = %r : f32" % scale)
    if softcap is not None:
        parts.append("softcap = %r : f32" % softcap)
    attrs = "{%s}" % ", ".join(parts) if parts else ""
    return ("func.func @main(%%q: %s, %%k: %s, %%v: %s%s) -> %s {\n"
            "  %%0 = attn.sdpa %%q, %%k, %%v %s%s%s : %s, %s, %s%s -> %s\n"
            "  return %%0 : %s\n}\n") % (
        ty(tq), ty(tk), ty(tk), ", %%m: %s" % mty if mask else "", ty(tq),
        "mask(%m : additive) " if mask else "",
        "causal(%s) " % causal if causal else "", attrs,
        ty(tq), ty(tk), ty(tk), ", " + mty if mask else "", ty(tq), ty(tq))


def reference(q, k, v, causal=None, scale=None, softcap=None, mask=None):
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    tq, tk, d = q.shape[-2], k.shape[-2], q.shape[-1]
    scale = 1 / np.sqrt(d) if scale is None else scale
    with np.errstate(invalid="ignore", over="ignore"):
        s = scale * (q @ np.swapaxes(k, -1, -2))
        if softcap is not None:
            s = softcap * np.tanh(s / softcap)
        if mask is not None:
            # The mask is added in f32, as every lowering does: a score
            # plus finfo(f32).min (or -1e10) rounds to the mask's value.
            s = (s.astype(np.float32) + mask.astype(np.float32)).astype(np.float64)
        if causal:
            off = tk - tq if causal == "bottom_right" else 0
            future = np.arange(tk)[None, :] > np.arange(tq)[:, None] + off
            s = np.where(future, -np.inf, s)
        m = s.max(-1, keepdims=True)
        dead = m == -np.inf
        e = np.where(dead, 0.0, np.exp(s - np.where(dead, 0.0, m)))
        l = e.sum(-1, keepdims=True)
        p = np.where(l == 0, 0.0, e / np.where(l == 0, 1.0, l))
        terms = np.where(p[..., :, :, None] == 0, 0.0,
                         p[..., :, :, None] * v[..., None, :, :])
    return terms.sum(-2)


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    rng = np.random.default_rng(21)
    checks = attn_exec.Checks()
    turns = attn_exec.SanitizerTurns(always={"vector"})

    def case(name, q, k, v, causal=None, scale=None, expect_nan=None, softcap=None,
             mask=None):
        want = reference(q, k, v, causal=causal, scale=scale, softcap=softcap, mask=mask)
        text = module(q.shape[-2], k.shape[-2], q.shape[-1], causal, scale, softcap,
                      mask is not None)
        args = [q, k, v] + ([mask] if mask is not None else [])
        for vname, opts in turns.pick(VARIANTS):
            label = "%s %s" % (name, vname)
            with checks(label):
                (got,) = attn_exec.run(text, "main", args, work,
                                       extra_args=["--pipeline-options=" + opts])
                nan_want = np.isnan(want)
                assert np.array_equal(np.isnan(got), nan_want), (
                    "NaN pattern differs: got %d NaN, want %d" %
                    (np.isnan(got).sum(), nan_want.sum()))
                if expect_nan is not None:
                    assert nan_want.any() == expect_nan
                ok = ~nan_want
                attn_exec.assert_close(label, got[ok], want[ok], atol=1e-5, rtol=1e-5)

    # Head dims 4 (8) and 16 (32): only the latter reach attn-vectorize-sdpa.
    for d in (4, 16):
        # Scores of +-1e4: q . k = +-1e4 with scale 1.
        q = rng.choice([-1.0, 1.0], (1, 2, 8, d)).astype(np.float32) * np.sqrt(1e4 / d)
        k = rng.choice([-1.0, 1.0], (1, 2, 8, d)).astype(np.float32) * np.sqrt(1e4 / d)
        v = rng.standard_normal((1, 2, 8, d)).astype(np.float32)
        case("d=%d " % d + "logits +-1e4", q, k, v, scale=1.0, expect_nan=False)
        case("d=%d " % d + "logits +-1e4 causal", q, k, v, causal="top_left", scale=1.0, expect_nan=False)

        # -inf in K: that key's score is -inf (q>0) or +inf/NaN like the reference.
        q = np.abs(rng.standard_normal((1, 2, 9, d))).astype(np.float32) + 0.1
        k = rng.standard_normal((1, 2, 9, d)).astype(np.float32)
        k[0, 0, 2, :] = -np.inf  # all-negative-infinite key: score -inf, weight 0
        v = rng.standard_normal((1, 2, 9, d)).astype(np.float32)
        case("d=%d " % d + "-inf key", q, k, v, expect_nan=False)

        # NaN in V propagates to every row that attends the NaN key.
        q = rng.standard_normal((1, 2, 10, d)).astype(np.float32)
        k = rng.standard_normal((1, 2, 10, d)).astype(np.float32)
        v = rng.standard_normal((1, 2, 10, d)).astype(np.float32)
        v[0, 1, 3, 0] = np.nan
        case("d=%d " % d + "NaN value causal", q, k, v, causal="top_left", expect_nan=True)
        q2 = q.copy()
        q2[0, 0, 4, 1] = np.nan
        case("d=%d " % d + "NaN query", q2, k, v, expect_nan=True)

        # T = 1 and Tk = 1; Tq > Tk bottom-right leaves fully masked rows (0).
        one = lambda t: rng.standard_normal((1, 2, t, 2 * d)).astype(np.float32)
        case("d=%d " % d + "T=1", one(1), one(1), one(1), causal="top_left")
        case("d=%d " % d + "Tk=1", one(7), one(1), one(1))
        case("d=%d " % d + "Tk=1 bottom_right", one(7), one(1), one(1), causal="bottom_right")
        # Additive key-padding masks of finfo(f32).min, -1e30 and -1e10
        # (Hugging Face's left padding): causal rows that see only padded
        # keys have equal scores, uniform weights over them (torch's
        # answer); the others ignore the padded keys. Their running max
        # times log2(e) overflows or rounds by more than 2^7, which the
        # vectorized lowering must not feed to its exponent. Then an
        # enormous scale (1e10: scores of +-1e10, one-hot weights).
        qm = rng.standard_normal((1, 2, 24, d)).astype(np.float32)
        km = rng.standard_normal((1, 2, 24, d)).astype(np.float32)
        vm = rng.standard_normal((1, 2, 24, d)).astype(np.float32)
        for big in (np.finfo(np.float32).min, -1e30, -1e10):
            pad = np.zeros((1, 1, 1, 24), np.float32)
            pad[..., :5] = big
            case("d=%d " % d + "padding mask %g causal" % big, qm, km, vm,
                 causal="top_left", mask=pad, expect_nan=False)
        case("d=%d " % d + "scale 1e10", qm, km, vm, scale=1e10, expect_nan=False)
        # A row whose max crosses the 2^26 bound between two key blocks (of
        # the vectorized lowering's 128 keys): block 0's weights took the
        # fast exponent, block 1's the exact one; its rescale must agree
        # with both (0.982, not 0.950).
        qx = np.zeros((1, 2, 16, d), np.float32)
        qx[..., 0] = 1
        kx = np.zeros((1, 2, 256, d), np.float32)
        kx[..., :128, 0] = 46516316
        kx[..., 128:, 0] = 46516320
        vx = np.zeros((1, 2, 256, d), np.float32)
        vx[..., 128:, :] = 1
        case("d=%d " % d + "max crossing 2^26", qx, kx, vx, scale=1.0, expect_nan=False)
    one = lambda t: rng.standard_normal((1, 2, t, 8)).astype(np.float32)
    # Soft-capped scores (c * tanh(s / c)), with and without causal masking.
    q, k, v = one(9), one(9), one(9)
    case("softcap 2", q * 4, k * 4, v, softcap=2.0)
    case("softcap 0.5 causal", q, k, v, causal="top_left", softcap=0.5)
    turns.report("numerics")
    checks.finish("numerics")


if __name__ == "__main__":
    main()

# CHECK-NOT: FAIL
# CHECK: numerics: all {{[0-9]+}} checks OK
