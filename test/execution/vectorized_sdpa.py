# RUN: %python %s %t core | FileCheck %s
#
# (vectorized_sdpa_band.py runs the window, softcap and dropout cases of
# this file, `band`, as a second lit test: the two halves run in parallel.)
#
# attn-vectorize-sdpa (the register-blocked vector flash attention of the CPU
# pipeline) against the float64 NumPy reference, atol/rtol 1e-5: causal of
# both alignments with Tq < Tk, Tq > Tk (rows that see no key are 0) and
# sequence lengths that divide no block; full attention with dv != d; GQA and
# MQA; the seq_major layout; ranks 2 and 3; dynamic batch and sequence
# lengths; short query blocks (Tq = 8, 20: items shrink to 16 or 32 rows); a
# custom scale; logits of +-1e4; an inf and a NaN value under keys of weight 0
# (they must add nothing) and a NaN value under a visible key (it must
# propagate); an inf in one key block of one batch and K/V head among many
# (the per-call table of guarded blocks); sliding windows (left, right, both,
# under causal, with masks), soft-capped scores and dropout (the Philox
# keep-mask of every other form). Each case runs with the default
# tiles, with the other host's tiles (AVX-512: 64 x 128 blocks and 24
# accumulators; AVX2: 32 x 64 and 4; the host's own are the default),
# and with two sets of small, odd tiles (16-row items,
# 5- and 3-key blocks, other register tiles), so that partial key tiles,
# partial blocks and the diagonal predicate are all exercised. The odd sets
# also take the exp options off their defaults, one each: 2^n built in the
# exponent bits (avx512-scalef=false; vscalefps is the default on AVX-512
# hosts) with the 16-row set, libm's exp (fast-exp=false) instead of the
# inline polynomial with the 3-key set. (The exp code does not depend on the
# tiles; each took a compile of every case of its own before.)
# Each module is first checked to be taken by the pass (no attn.sdpa
# left, vector FMAs present). bf16 cases are checked in both of the pass's
# forms (vdpbf16ps with bf16-dot, f32 FMAs on widened loads with bf16-widen)
# and run in the host's form, plus the widened one (bf16-dot=false) on hosts
# with avx512_bf16; f16 cases in the f16-widen form. Each case also runs compiled for other CPUs than the
# host (--target-cpu): x86-64-v3, the whole AVX2 form in ymm code (32 x 64
# blocks, 4 accumulators, 2^n from the exponent bits, bf16 widened with
# its conversions expanded), and the bf16 cases for x86-64-v4 (AVX-512
# without avx512_bf16) on hosts that run it; the test prints which ran.
#
# In the sanitizer run of the suite (ATTN_SANITIZED=1, set by lit for the
# ASan+UBSan build) only the variants that reach different code run: the
# default and the widened bf16 form on every case, and one of both odd tile
# sets and x86-64-v3 in turn (attn_exec.SanitizerTurns); the host tile sets
# and x86-64-v4 differ from those only in option values and run in the
# release suite. The test prints what ran.
# (Instrumented, the full loop was this suite's longest test at 12.5
# minutes.)
#
# CHECK-NOT: FAIL
# CHECK: vectorized_sdpa: all {{[0-9]+}} checks OK

import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_exec  # noqa: E402

ATTENTION_OPT = os.path.join(os.path.dirname(attn_exec.ATTENTION_RUN), "attention-opt")

SANITIZER_VARIANTS = {"default", "q16-kv5-exp2-bits", "q32-kv3-libm-exp", "x86-64-v3", "widen"}

VARIANTS = [
    ("default", ""),
    # Both hosts' tile sets on any host (the host's own, its default, is
    # skipped in main()).
    ("avx512-tiles", "sdpa-block-q=64 sdpa-block-kv=128 sdpa-accumulators=24"),
    ("avx2-tiles", "sdpa-block-q=32 sdpa-block-kv=64 sdpa-accumulators=4"),
    # Odd tiles, each with one exp option off its default: 2^n from the
    # exponent bits (the AVX2 form, also on AVX-512 hosts, where the
    # default takes vscalefps), and libm's exp.
    ("q16-kv5-exp2-bits", "sdpa-block-q=16 sdpa-block-kv=5 sdpa-register-keys=8 "
     "sdpa-register-rows=2 avx512-scalef=false"),
    ("q32-kv3-libm-exp", "sdpa-block-q=32 sdpa-block-kv=3 sdpa-register-keys=3 "
     "sdpa-register-rows=8 fast-exp=false"),
]


def module(qshape, kshape, vshape, causal=None, layout=None, scale=None, elem="f32",
           mask=None, window=None, softcap=None, dropout=None):
    """`mask`: (shape, kind) of an explicit mask operand (i1, or `elem` for
    additive); `window`: (left, right), either None; `dropout`: (p, seed)."""
    ty = lambda s: attn_exec.tensor_type(s, elem)
    oshape = tuple(qshape[:-1]) + (vshape[-1],)
    parts = []
    if scale is not None:
        parts.append("scale = %r : f32" % scale)
    for side, reach in zip(("left", "right"), window or (None, None)):
        if reach is not None:
            parts.append("window_%s = %d : i64" % (side, reach))
    if softcap is not None:
        parts.append("softcap = %r : f32" % softcap)
    if dropout is not None:
        parts.append("dropout_p = %r : f32, seed = %d : i64" % dropout)
    attrs = "{%s} " % ", ".join(parts) if parts else ""
    marg = mclause = mtype = slice_op = ""
    if mask:
        # An additive mask has the operands' element type.
        mel = elem if mask[1] == "additive" else "i1"
        mty = attn_exec.tensor_type(mask[0], mel)
        marg, mclause, mtype = ", %%m: %s" % mty, "mask(%%m : %s) " % mask[1], ", " + mty
        if len(mask) > 2:
            # A window of a larger argument (full shape, offsets; leading
            # dims of size 1 dropped): the mask is read through a strided
            # view with an offset.
            full, offsets = mask[2]
            fty = attn_exec.tensor_type(full, mel)
            marg = ", %%mfull: %s" % fty
            slice_op = "  %%m = tensor.extract_slice %%mfull[%s] [%s] [%s] : %s to %s\n" % (
                ", ".join(map(str, offsets)),
                ", ".join(map(str, (1,) * (len(full) - len(mask[0])) + tuple(mask[0]))),
                ", ".join("1" for _ in offsets), fty, mty)
    return ("func.func @main(%%q: %s, %%k: %s, %%v: %s%s) -> %s {\n%s"
            "  %%0 = attn.sdpa %%q, %%k, %%v %s%s%s%s: %s, %s, %s%s -> %s\n"
            "  return %%0 : %s\n}\n") % (
        ty(qshape), ty(kshape), ty(vshape), marg, ty(oshape), slice_op, mclause,
        "causal(%s) " % causal if causal else "",
        "layout(%s) " % layout if layout else "", attrs,
        ty(qshape), ty(kshape), ty(vshape), mtype, ty(oshape), ty(oshape))


def reference(q, k, v, causal=None, layout=None, scale=None, mask=None, window=None,
              softcap=None, dropout=None):
    """float64 reference; zero-weight keys add nothing even for inf/NaN values.
    `mask`: (values, kind), broadcast to the scores [B..., Hq, Tq, Tk] (in
    either layout): additive values are added to the scaled (and soft-capped:
    c tanh(s / c)) scores, an i1 mask hides keys (-inf) before the causal
    predicate. `window`: (left, right), key j visible to row i iff -left <=
    j - (i + off) <= right (off = Tk - Tq for bottom_right, else 0).
    `dropout`: (p, seed), attn_exec's Philox keep-mask over the scores
    [B..., Hq, Tq, Tk] (either layout), kept weights times 1 / (1 - p)."""
    if layout == "seq_major":  # [B, T, H, d] -> [B, H, T, d] and back
        q, k, v = (np.swapaxes(a, -2, -3) for a in (q, k, v))
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    if q.ndim == 2:
        q, k, v = q[None], k[None], v[None]
    hq, tq, d = q.shape[-3:]
    hk, tk = k.shape[-3], k.shape[-2]
    k = np.take(k, np.arange(hq) // (hq // hk), axis=-3)
    v = np.take(v, np.arange(hq) // (hq // hk), axis=-3)
    scale = 1 / np.sqrt(d) if scale is None else scale
    with np.errstate(invalid="ignore", over="ignore"):
        s = scale * (q @ np.swapaxes(k, -1, -2))
        if softcap is not None:
            s = softcap * np.tanh(s / softcap)
        if mask is not None:
            m, kind = mask
            m = np.asarray(m)
            m = m.reshape((1,) * max(0, s.ndim - m.ndim) + m.shape)
            if kind == "additive":
                s = s + m.astype(np.float64)
            else:
                hidden = m if kind == "masked_where_true" else ~m
                s = np.where(hidden, -np.inf, s)
        off = tk - tq if causal == "bottom_right" else 0
        diag = np.arange(tk)[None, :] - (np.arange(tq)[:, None] + off)
        if causal:
            s = np.where(diag > 0, -np.inf, s)
        left, right = window or (None, None)
        if left is not None:
            s = np.where(diag < -left, -np.inf, s)
        if right is not None:
            s = np.where(diag > right, -np.inf, s)
        m = s.max(-1, keepdims=True)
        dead = m == -np.inf
        e = np.where(dead, 0.0, np.exp(s - np.where(dead, 0.0, m)))
        l = e.sum(-1, keepdims=True)
        p = np.where(l == 0, 0.0, e / np.where(l == 0, 1.0, l))
        if dropout is not None:
            keep = attn_exec.dropout_keep_mask(p.shape, dropout[0], dropout[1])
            p = np.where(keep, p / (1.0 - float(np.float32(dropout[0]))), 0.0)
        out = np.where(p[..., None] == 0, 0.0, p[..., None] * v[..., None, :, :]).sum(-2)
    if layout == "seq_major":
        out = np.swapaxes(out, -2, -3)
    return out


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    # "core", "band" (windows, softcap, dropout) or both. Every case draws
    # its inputs either way, so each half sees the inputs of a whole run.
    part = sys.argv[2] if len(sys.argv) > 2 else "all"
    assert part in ("all", "core", "band"), part
    rng = np.random.default_rng(2026)
    checks = attn_exec.Checks()
    normal = lambda *s: rng.standard_normal(s).astype(np.float32)

    bf16_dot = attn_exec.host_has_avx512_bf16()
    cpu_variants = [(name, args[0]) for name, args in attn_exec.cpu_variants()]
    print("other target CPUs: %s" % ", ".join(name for name, _ in cpu_variants))
    if attn_exec.SANITIZED:
        left_out = [n for n, _ in VARIANTS + cpu_variants if n not in SANITIZER_VARIANTS]
        print("sanitizer run: variants %s left out (the release run has them)"
              % ", ".join(left_out))
    turns = attn_exec.SanitizerTurns(always={"default", "widen"})
    host_tiles = "avx512-tiles" if "avx512f" in attn_exec.host_cpu_flags() else "avx2-tiles"
    print("host tiles: %s (the default; not run again)" % host_tiles)
    print("host avx512_bf16: %s (bf16 cases %s)" % (
        bf16_dot, "use vdpbf16ps, and widened to f32 with bf16-dot=false" if bf16_dot
        else "are widened to f32"))

    def case(name, q, k, v, causal=None, layout=None, scale=None, shapes=None, elem="f32",
             mask=None, window=None, softcap=None, tol=None, dropout=None, mask_in=None,
             extra_variants=()):
        """Runs one module; `shapes` overrides the static types (dynamic dims;
        with a mask, a fourth entry for its type). bf16: inputs rounded to
        bf16, tolerance 2e-2 (atol and rtol). `mask`: (values, kind).
        `mask_in`: (larger array, offsets): the module's argument, of which
        the mask is the window at `offsets` (sliced in the module).
        `extra_variants`: (name, pipeline options) run besides the usual
        ones (the sanitizer run too)."""
        band = window is not None or softcap is not None or dropout is not None
        if part == ("core" if band else "band"):
            return
        qs, ks, vs = shapes[:3] if shapes else (q.shape, k.shape, v.shape)
        mask_type = None
        if mask is not None:
            mask_type = (shapes[3] if shapes and len(shapes) > 3 else mask[0].shape, mask[1])
        if mask_in is not None:
            mask_type += ((mask_in[0].shape, mask_in[1]),)
        text = module(qs, ks, vs, causal, layout, scale, elem, mask_type, window, softcap,
                      dropout)
        tol = tol or 1e-5
        if elem == "bf16":
            q, k, v = (attn_exec.round_to_bf16(a) for a in (q, k, v))
            if mask is not None and mask[1] == "additive":
                mask = (attn_exec.round_to_bf16(mask[0]), mask[1])
            tol = 2e-2
        if elem == "f16":
            # f16 arrays, passed as such (<f2 .npy); the reference takes
            # the same values. The output is rounded to f16 (half an ulp:
            # 4.9e-4 relative).
            q, k, v = (a.astype(np.float16) for a in (q, k, v))
            if mask is not None and mask[1] == "additive":
                mask = (mask[0].astype(np.float16), mask[1])
            tol = 2e-3
        want = reference(q, k, v, causal, layout, scale, mask, window, softcap, dropout)
        if q.ndim == 2:
            want = want[0]
        # bf16: both forms of the kernel, vdpbf16ps dot products and f32
        # FMAs on widened loads.
        forms = ([("bf16-dot", "x86vector.avx512.dot"), ("bf16-widen", "vector.fma")]
                 if elem == "bf16" else [("f16-widen", "vector.fma")] if elem == "f16"
                 else [("bf16-dot", "vector.fma")])
        for option, kernel in forms:
            with checks("%s: taken by attn-vectorize-sdpa (%s)" % (name, option)):
                ir = subprocess.run([ATTENTION_OPT, "--attn-vectorize-sdpa=" + option, "-"],
                                    input=text, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    universal_newlines=True, check=True).stdout
                assert "attn.sdpa" not in ir and kernel in ir, "the pass did not take it"
                if option in ("bf16-widen", "f16-widen"):
                    assert "x86vector" not in ir, "a dot product in the widened form"
        # The pipeline picks the dot products where the host has them; the
        # widened form then runs too (bf16-dot=false).
        variants = VARIANTS + ([("widen", "bf16-dot=false")] if elem == "bf16" and bf16_dot
                               else []) + cpu_variants
        # The host's own tile set is the default, option for option. For
        # x86-64-v4 the pipeline makes the same f32 code as on an AVX-512
        # host (it differs only in avx512_bf16); only LLVM's tuning for the
        # generic CPU would differ, which these runs leave out.
        variants = [x for x in variants if x[0] != host_tiles and
                    (x[0] != "x86-64-v4" or elem == "bf16")]
        if attn_exec.SANITIZED:
            variants = [x for x in variants if x[0] in SANITIZER_VARIANTS]
        variants = turns.pick(variants) + list(extra_variants)
        for vname, opts in variants:
            label = "%s %s" % (name, vname)
            with checks(label):
                inputs = [q, k, v] + ([mask[0] if mask_in is None else mask_in[0]]
                                      if mask is not None else [])
                (got,) = attn_exec.run(text, "main", inputs, work,
                                       extra_args=[opts if opts.startswith("--")
                                                   else "--pipeline-options=" + opts])
                assert got.shape == want.shape, (got.shape, want.shape)
                nan_want = np.isnan(want)
                assert np.array_equal(np.isnan(got), nan_want), (
                    "NaN pattern differs: got %d NaN, want %d" % (np.isnan(got).sum(), nan_want.sum()))
                inf_want = np.isinf(want)
                assert np.array_equal(got[inf_want], want[inf_want]), "inf entries differ"
                ok = np.isfinite(want)
                attn_exec.assert_close(label, got[ok], want[ok], atol=tol, rtol=tol)

    case("causal top_left T=200 d=64", normal(1, 2, 200, 64), normal(1, 2, 200, 64),
         normal(1, 2, 200, 64), causal="top_left")
    case("causal bottom_right Tq=70 Tk=150 d=32", normal(2, 2, 70, 32), normal(2, 2, 150, 32),
         normal(2, 2, 150, 32), causal="bottom_right")
    case("causal bottom_right Tq=150 Tk=70 d=16 (rows without keys)", normal(1, 2, 150, 16),
         normal(1, 2, 70, 16), normal(1, 2, 70, 16), causal="bottom_right")
    case("full Tq=33 Tk=300 d=128 dv=64", normal(1, 3, 33, 128), normal(1, 3, 300, 128),
         normal(1, 3, 300, 64))
    case("GQA 8/2 causal T=100 d=64", normal(1, 8, 100, 64), normal(1, 2, 100, 64),
         normal(1, 2, 100, 64), causal="top_left")
    case("MQA 4/1 full T=65 d=32", normal(2, 4, 65, 32), normal(2, 1, 65, 32), normal(2, 1, 65, 32))
    case("seq_major B=2 T=130 H=3 d=64 causal", normal(2, 130, 3, 64), normal(2, 130, 3, 64),
         normal(2, 130, 3, 64), causal="top_left", layout="seq_major")
    # seq_major K/V are copied head-major first: GQA heads, dynamic sizes and
    # rank 3 ([T, H, d]) read the right copy.
    case("seq_major GQA 6/2 full B=2 T=150 d=32 dynamic", normal(2, 150, 6, 32),
         normal(2, 150, 2, 32), normal(2, 150, 2, 32), layout="seq_major",
         shapes=((None, None, 6, 32), (None, None, 2, 32), (None, None, 2, 32)))
    case("seq_major rank 3 Tq=70 Tk=90 H=2 d=16 bottom_right", normal(70, 2, 16),
         normal(90, 2, 16), normal(90, 2, 16), causal="bottom_right", layout="seq_major")
    # One query block per head: K and V are read in place (the copy's other
    # branch, chosen at run time for dynamic Tq).
    case("seq_major Tq=40 Tk=200 H=3 d=32 dynamic, read in place", normal(1, 40, 3, 32),
         normal(1, 200, 3, 32), normal(1, 200, 3, 32), causal="bottom_right",
         layout="seq_major", shapes=((1, None, 3, 32),) * 3)
    case("rank 2 T=77 d=48 causal", normal(77, 48), normal(77, 48), normal(77, 48),
         causal="top_left")
    case("rank 3 H=2 T=40 d=256 full", normal(2, 40, 256), normal(2, 40, 256), normal(2, 40, 256))
    dyn = ((None, 2, None, 64),) * 3
    for b, t in ((1, 1), (3, 129)):
        case("dynamic B=%d T=%d causal" % (b, t), normal(b, 2, t, 64), normal(b, 2, t, 64),
             normal(b, 2, t, 64), causal="top_left", shapes=dyn)
    case("short query block Tq=8 Tk=300 bottom_right", normal(1, 4, 8, 64),
         normal(1, 4, 300, 64), normal(1, 4, 300, 64), causal="bottom_right")
    case("Tq=20 Tk=20 full", normal(2, 3, 20, 32), normal(2, 3, 20, 32), normal(2, 3, 20, 32))
    case("scale 0.3 full T=50 d=16", normal(1, 2, 50, 16), normal(1, 2, 50, 16),
         normal(1, 2, 50, 16), scale=0.3)
    # Scores spread over [-100, 100] (scale 1): every exponent range of the
    # inline exp, down to the clamp at -88 and the flush to 0.
    case("wide logits d=16", normal(1, 2, 60, 16) * 2.5, normal(1, 2, 60, 16) * 2.5,
         normal(1, 2, 60, 16), scale=1.0)
    sign = lambda *s: rng.choice([-1.0, 1.0], s).astype(np.float32) * 25.0
    case("logits +-1e4 causal d=16", sign(1, 2, 40, 16), sign(1, 2, 40, 16), normal(1, 2, 40, 16),
         causal="top_left", scale=1.0)
    def weight_zero_case(name, t, d, elem):
        """Values of weight 0: key 5 (inf) and key 9 (NaN) are invisible to
        rows 0-4 and 0-8 (causal); key 12's K row is -inf, so its weight is 0
        for every row with q > 0; the last key (inf) is seen by the last row
        only. Rows from 9 on see the NaN and are NaN."""
        q = np.abs(normal(1, 1, t, d)) + 0.1
        k, v = normal(1, 1, t, d), normal(1, 1, t, d)
        v[0, 0, 5, 3] = np.inf
        v[0, 0, 9, 0] = np.nan
        k[0, 0, 12, :] = -np.inf
        v[0, 0, 12, :] = np.inf
        v[0, 0, t - 1, 1] = np.inf
        case(name, q, k, v, causal="top_left", elem=elem)

    weight_zero_case("inf/NaN values of weight 0", 20, 16, "f32")
    # A +inf score (K row of +inf, q > 0) in a block whose values hold an inf
    # (the guarded P V): its weight is inf - inf = NaN, and the rows that see
    # it must be NaN, not 0.
    q = np.abs(normal(1, 1, 20, 16)) + 0.1
    k, v = normal(1, 1, 20, 16), normal(1, 1, 20, 16)
    k[0, 0, 15, :] = np.inf
    v[0, 0, 3, 2] = np.inf
    case("+inf score in a guarded block", q, k, v, causal="top_left")
    # V's key blocks are checked for non-finite values once per call, into a
    # table by batch, K/V head and key block: an inf in one of them (batch 1,
    # K/V head 1, key 141) must send that block to the guarded path. Row 140
    # of query heads 3-5 shares its output register tile with row 141 but
    # does not see key 141; a wrong entry would give it 0 * inf = NaN.
    def guarded_block_case(name, elem):
        q, k, v = normal(2, 150, 6, 32), normal(2, 150, 2, 32), normal(2, 150, 2, 32)
        v[1, 141, 1, 3] = np.inf
        case(name, q, k, v, causal="top_left", layout="seq_major", elem=elem)

    guarded_block_case("seq_major GQA 6/2 B=2 T=150, one non-finite key block", "f32")

    # Explicit masks. The same for every query row (key padding): one value
    # per key, broadcast over the lanes; i1 masks select, additive ones add.
    # Varying along the rows: an f32 mask of its own per (batch, head) is
    # read per key block through a transposed copy; one shared by several
    # batches or heads, and any i1 or bf16 mask (bf16 as its 16 bits, i1 as
    # bytes, 1 where hidden), is transposed once per call into the items'
    # row blocks, except a shared f32 mask above sdpa-mask-copy-limit-mib,
    # which takes the per-block copies (run with the limit 0). Tails
    # of Tq and Tk (keys past a multiple of 16, rows past a multiple of the
    # item), GQA heads, both layouts, dynamic sizes, a mask of one key
    # (Tk = 1), rows whose every key is hidden (0), and inf values and a
    # +inf score under hidden keys (weight 0).
    pad = np.ones((2, 1, 1, 200), bool)
    pad[1, ..., 150:] = False
    case("mask key padding attend_where_true [B,1,1,Tk] causal T=200", normal(2, 2, 200, 64),
         normal(2, 2, 200, 64), normal(2, 2, 200, 64), causal="top_left",
         mask=(pad, "attend_where_true"))
    kbias = normal(300)
    kbias[rng.random(300) < 0.2] = -np.inf
    case("mask additive [Tk] full Tq=33 Tk=300 d=128 dv=64", normal(1, 3, 33, 128),
         normal(1, 3, 300, 128), normal(1, 3, 300, 64), mask=(kbias, "additive"))
    bias = normal(2, 2, 100, 100)
    bias[rng.random(bias.shape) < 0.1] = -np.inf
    case("mask additive bias [B,H,Tq,Tk] full T=100 d=32", normal(2, 2, 100, 32),
         normal(2, 2, 100, 32), normal(2, 2, 100, 32), mask=(bias, "additive"))
    hide = rng.random((70, 150)) < 0.4
    hide[5] = True  # a row that sees no key
    case("mask masked_where_true [Tq,Tk] bottom_right Tq=70 Tk=150 d=32", normal(2, 2, 70, 32),
         normal(2, 2, 150, 32), normal(2, 2, 150, 32), causal="bottom_right",
         mask=(hide, "masked_where_true"))
    case("mask GQA 8/2 additive [1,8,Tq,Tk] causal T=100", normal(1, 8, 100, 64),
         normal(1, 2, 100, 64), normal(1, 2, 100, 64), causal="top_left",
         mask=(normal(1, 8, 100, 100), "additive"))
    case("mask seq_major B=2 T=130 H=3 attend_where_true [B,1,Tq,Tk]", normal(2, 130, 3, 64),
         normal(2, 130, 3, 64), normal(2, 130, 3, 64), layout="seq_major",
         mask=(rng.random((2, 1, 130, 130)) < 0.8, "attend_where_true"))
    case("mask dynamic B=2 T=77 additive [?,1,?,?] causal", normal(2, 2, 77, 64),
         normal(2, 2, 77, 64), normal(2, 2, 77, 64), causal="top_left",
         shapes=dyn + ((None, 1, None, None),), mask=(normal(2, 1, 77, 77), "additive"))
    case("mask dynamic B=3 T=129 key padding [?,1,1,?]", normal(3, 2, 129, 64),
         normal(3, 2, 129, 64), normal(3, 2, 129, 64), shapes=dyn + ((None, 1, 1, None),),
         mask=(rng.random((3, 1, 1, 129)) < 0.7, "attend_where_true"))
    shared = normal(1, 1, 150, 131)
    shared[0, 0, :, 120:] = -np.inf
    case("mask additive shared [1,1,Tq,Tk] B=2 H=3 Tq=150 Tk=131 bottom_right",
         normal(2, 3, 150, 64), normal(2, 3, 131, 64), normal(2, 3, 131, 64),
         causal="bottom_right", mask=(shared, "additive"),
         extra_variants=[("no-mask-copy", "sdpa-mask-copy-limit-mib=0")])
    seen = rng.random((2, 1, 77, 77)) < 0.7
    seen[1, 0, 9] = False  # a row that sees no key
    case("mask dynamic B=2 T=77 attend_where_true [?,1,?,?]", normal(2, 2, 77, 64),
         normal(2, 2, 77, 64), normal(2, 2, 77, 64), shapes=dyn + ((None, 1, None, None),),
         mask=(seen, "attend_where_true"))
    case("mask additive [Tq,1] of one key, Tk=1 Tq=20", normal(1, 2, 20, 16),
         normal(1, 2, 1, 16), normal(1, 2, 1, 16), mask=(normal(20, 1), "additive"))
    q = np.abs(normal(1, 1, 40, 16)) + 0.1
    k, v = normal(1, 1, 40, 16), normal(1, 1, 40, 16)
    v[0, 0, 7, 3], v[0, 0, 20, 0] = np.inf, np.nan
    k[0, 0, 30, :] = np.inf  # a +inf score for every row
    keep = np.ones((1, 1, 1, 40), bool)
    keep[..., [7, 20, 30]] = False
    case("mask hides inf/NaN values and a +inf score (key padding)", q, k, v,
         mask=(keep, "attend_where_true"))
    hide = np.zeros((40, 40), bool)
    hide[:, [7, 20, 30]] = True
    case("mask hides inf/NaN values and a +inf score ([Tq,Tk], widened)", q, k, v,
         mask=(hide, "masked_where_true"))
    # An i1 mask read through a strided view with an offset (a window of a
    # larger argument): its rows of 16 keys are loaded as 16 bytes from the
    # buffer's address, which must follow the view's offset and row stride.
    wide = rng.random((3, 90, 70)) < 0.3
    window = wide[1, 7:7 + 66, 5:5 + 50]
    case("mask masked_where_true [Tq,Tk] window of a larger i1 argument, Tq=66 Tk=50",
         normal(2, 2, 66, 32), normal(2, 2, 50, 32), normal(2, 2, 50, 32),
         mask=(window, "masked_where_true"), mask_in=(wide, (1, 7, 5)))

    # Masks broadcast along the keys (one value per query row): widened to
    # f32 rows once per call, one vector per 16 rows loaded per work item.
    # Dynamic sizes with rows whose every key is hidden (0), an additive one
    # per query head with -inf rows under GQA heads, and rank-0 masks that
    # hide every key (all outputs 0) and none.
    rows = rng.random((2, 1, 77, 1)) < 0.7
    rows[0, 0, [0, 40, 76]] = False
    case("mask rows attend_where_true [?,1,?,1] dynamic B=2 T=77 causal", normal(2, 2, 77, 64),
         normal(2, 2, 77, 64), normal(2, 2, 77, 64), causal="top_left",
         shapes=dyn + ((None, 1, None, 1),), mask=(rows, "attend_where_true"))
    rbias = normal(1, 8, 70, 1)
    rbias[0, [1, 6], [3, 69]] = -np.inf
    case("mask rows additive [1,Hq,Tq,1] GQA 8/2 full Tq=70 Tk=150", normal(1, 8, 70, 32),
         normal(1, 2, 150, 32), normal(1, 2, 150, 32), mask=(rbias, "additive"))
    case("mask rank 0 masked_where_true (every key hidden)", normal(1, 2, 40, 16),
         normal(1, 2, 40, 16), normal(1, 2, 40, 16), mask=(np.array(True), "masked_where_true"))
    case("mask rank 0 attend_where_true (every key seen)", normal(1, 2, 40, 16),
         normal(1, 2, 40, 16), normal(1, 2, 40, 16), mask=(np.array(True), "attend_where_true"))

    # Sliding windows: blocks left of the window are skipped, blocks on its
    # left edge take the lane predicate like the diagonal's; right windows
    # without causal; windows narrower than a block or an item; with masks,
    # GQA, seq_major and dynamic sizes. Soft-capped scores (c tanh(s / c))
    # alone, under a window and under an additive mask.
    case("window causal L=70 T=300 d=64", normal(1, 2, 300, 64), normal(1, 2, 300, 64),
         normal(1, 2, 300, 64), causal="top_left", window=(70, None))
    case("window L=50 R=20 full Tq=200 Tk=260 d=32", normal(2, 2, 200, 32),
         normal(2, 2, 260, 32), normal(2, 2, 260, 32), window=(50, 20))
    # Rows 512-575 see keys 212-575: blocks 1-2 on the left edge, block 3
    # whole, block 4 on the diagonal (64 x 128 tiles).
    case("window causal L=300 T=600 d=32 (unmasked blocks between the edges)",
         normal(1, 1, 600, 32), normal(1, 1, 600, 32), normal(1, 1, 600, 32), causal="top_left",
         window=(300, None))
    case("window R=30 full T=150 d=16", normal(1, 2, 150, 16), normal(1, 2, 150, 16),
         normal(1, 2, 150, 16), window=(None, 30))
    case("window L=0 R=0 (each row sees itself) T=64 d=16", normal(1, 1, 64, 16),
         normal(1, 1, 64, 16), normal(1, 1, 64, 16), window=(0, 0))
    case("window L=10 bottom_right Tq=150 Tk=70 (rows without keys)", normal(1, 2, 150, 16),
         normal(1, 2, 70, 16), normal(1, 2, 70, 16), causal="bottom_right", window=(10, None))
    case("window L=300 R=4000 (wider than K) Tq=100 Tk=200 d=32", normal(1, 2, 100, 32),
         normal(1, 2, 200, 32), normal(1, 2, 200, 32), window=(300, 4000))
    wpad = rng.random((2, 1, 1, 300)) < 0.8
    case("window L=40 GQA 8/2 bottom_right Tq=70 Tk=300 key padding", normal(2, 8, 70, 64),
         normal(2, 2, 300, 64), normal(2, 2, 300, 64), causal="bottom_right", window=(40, None),
         mask=(wpad, "attend_where_true"))
    case("window L=100 seq_major B=2 T=260 H=3 d=32 causal", normal(2, 260, 3, 32),
         normal(2, 260, 3, 32), normal(2, 260, 3, 32), causal="top_left", layout="seq_major",
         window=(100, None))
    case("window L=33 R=9 dynamic B=3 T=129", normal(3, 2, 129, 64), normal(3, 2, 129, 64),
         normal(3, 2, 129, 64), window=(33, 9), shapes=dyn)
    case("softcap 5 causal T=200 d=64", normal(1, 2, 200, 64) * 3, normal(1, 2, 200, 64) * 3,
         normal(1, 2, 200, 64), causal="top_left", softcap=5.0)
    wbias = normal(1, 2, 90, 180)
    wbias[rng.random(wbias.shape) < 0.2] = -np.inf
    case("softcap 2 window L=64 additive mask Tq=90 Tk=180 d=32", normal(1, 2, 90, 32) * 3,
         normal(1, 2, 180, 32) * 3, normal(1, 2, 180, 32), causal="bottom_right",
         window=(64, None), softcap=2.0, mask=(wbias, "additive"))
    # Dropout: the weights' Philox keep-mask on their flat index in
    # [B, Hq, Tq, Tk], as every other form draws it.
    case("dropout 0.3 causal GQA 6/2 B=2 T=150 d=64", normal(2, 6, 150, 64),
         normal(2, 2, 150, 64), normal(2, 2, 150, 64), causal="top_left", dropout=(0.3, 1234))
    case("dropout 0.5 seq_major full B=2 Tq=70 Tk=130 H=3 d=32", normal(2, 70, 3, 32),
         normal(2, 130, 3, 32), normal(2, 130, 3, 32), layout="seq_major", dropout=(0.5, 99))
    case("dropout 0.1 rank 2 window L=20 softcap 4 T=90 d=16", normal(90, 16), normal(90, 16),
         normal(90, 16), causal="bottom_right", window=(20, None), softcap=4.0,
         dropout=(0.1, 2**40 + 3))
    case("dropout 0.25 key padding dynamic B=3 T=129", normal(3, 2, 129, 64),
         normal(3, 2, 129, 64), normal(3, 2, 129, 64), dropout=(0.25, 7),
         mask=(rng.random((3, 1, 1, 129)) < 0.8, "attend_where_true"),
         shapes=dyn + ((None, 1, 1, None),))

    # bf16 (vdpbf16ps for Q K^T and P V, f32 softmax and accumulation): odd
    # key counts (a key paired with zeros), diagonal blocks, GQA, seq_major,
    # dynamic sizes, and inf/NaN values under weight-0 keys.
    case("bf16 causal T=200 d=64", normal(1, 2, 200, 64), normal(1, 2, 200, 64),
         normal(1, 2, 200, 64), causal="top_left", elem="bf16")
    case("bf16 full Tq=33 Tk=301 d=128 dv=48", normal(1, 3, 33, 128), normal(1, 3, 301, 128),
         normal(1, 3, 301, 48), elem="bf16")
    case("bf16 GQA 8/2 bottom_right Tq=70 Tk=151 d=32", normal(1, 8, 70, 32),
         normal(1, 2, 151, 32), normal(1, 2, 151, 32), causal="bottom_right", elem="bf16")
    case("bf16 seq_major B=2 T=129 H=3 d=64 causal", normal(2, 129, 3, 64),
         normal(2, 129, 3, 64), normal(2, 129, 3, 64), causal="top_left",
         layout="seq_major", elem="bf16")
    case("bf16 dynamic B=2 T=77 causal", normal(2, 2, 77, 64), normal(2, 2, 77, 64),
         normal(2, 2, 77, 64), causal="top_left", shapes=dyn, elem="bf16")
    # A large scale (4.4x 1/sqrt(d)): the bf16 Q pairs are not scaled and
    # rounded again (the exponent takes the scale); that second rounding
    # gave errors of 0.03 here.
    case("bf16 GQA 6/2 d=128 scale=0.39", normal(1, 6, 100, 128), normal(1, 2, 100, 128),
         normal(1, 2, 100, 128), scale=0.3925904, elem="bf16")
    # 21 keys: the last one is paired with zeros.
    weight_zero_case("bf16 inf/NaN values of weight 0", 21, 32, "bf16")
    guarded_block_case("bf16 seq_major GQA 6/2 B=2 T=150, one non-finite key block", "bf16")
    # bf16 with masks: key padding (i1 per key), a varying i1 mask (bytes),
    # bf16 additive biases (bf16 panels, widened in the tile; of their own
    # per head with a tail of keys loaded as scalars, and one shared by
    # batches and heads whose keys are whole vector loads), odd key counts.
    case("bf16 mask key padding attend_where_true causal T=200", normal(2, 2, 200, 64),
         normal(2, 2, 200, 64), normal(2, 2, 200, 64), causal="top_left",
         mask=(pad, "attend_where_true"), elem="bf16")
    case("bf16 mask masked_where_true [Tq,Tk] bottom_right Tq=70 Tk=151", normal(1, 2, 70, 64),
         normal(1, 2, 151, 64), normal(1, 2, 151, 64), causal="bottom_right",
         mask=(rng.random((70, 151)) < 0.4, "masked_where_true"), elem="bf16")
    bias = normal(1, 3, 33, 301)
    bias[rng.random(bias.shape) < 0.1] = -np.inf
    case("bf16 mask additive [1,H,Tq,Tk] Tq=33 Tk=301", normal(1, 3, 33, 64),
         normal(1, 3, 301, 64), normal(1, 3, 301, 64), mask=(bias, "additive"), elem="bf16")
    shared_bias = normal(1, 1, 40, 160)
    shared_bias[rng.random(shared_bias.shape) < 0.2] = -np.inf
    case("bf16 mask additive shared [1,1,Tq,Tk] B=2 Tq=40 Tk=160 causal", normal(2, 3, 40, 64),
         normal(2, 3, 160, 64), normal(2, 3, 160, 64), causal="bottom_right",
         mask=(shared_bias, "additive"), elem="bf16")
    rbias = normal(2, 1, 33, 1)
    rbias[1, 0, 7] = -np.inf
    case("bf16 mask rows additive [B,1,Tq,1] Tq=33 Tk=151", normal(2, 3, 33, 64),
         normal(2, 3, 151, 64), normal(2, 3, 151, 64), mask=(rbias, "additive"), elem="bf16")
    case("bf16 dropout 0.2 causal T=100 d=64", normal(1, 2, 100, 64),
         normal(1, 2, 100, 64), normal(1, 2, 100, 64), causal="top_left", dropout=(0.2, 5),
         elem="bf16")
    # A right window without causal on the pair path, dropout with an odd
    # key count (the last key is paired with zeros).
    case("bf16 window L=30 R=50 dropout 0.2 full Tq=90 Tk=181 d=32", normal(1, 2, 90, 32),
         normal(1, 2, 181, 32), normal(1, 2, 181, 32), window=(30, 50), dropout=(0.2, 11),
         elem="bf16")
    case("bf16 window L=90 softcap 8 causal T=260 d=64", normal(1, 2, 260, 64) * 2,
         normal(1, 2, 260, 64) * 2, normal(1, 2, 260, 64), causal="top_left", window=(90, None),
         softcap=8.0, elem="bf16")
    # f16 (f16-widen: every operand load widened to f32 by vcvtph2ps, f32
    # softmax and accumulators, the output rounded to f16): causal of both
    # alignments with tails, GQA, seq_major with dynamic sizes, inf/NaN
    # values of weight 0, and the masks: key padding (i1), f16 additive
    # biases of their own per head and shared by batches and heads (widened
    # to f32 once per call, then taken as f32 masks), a row bias [B, 1, Tq,
    # 1], and dropout.
    case("f16 causal T=200 d=64", normal(1, 2, 200, 64), normal(1, 2, 200, 64),
         normal(1, 2, 200, 64), causal="top_left", elem="f16")
    case("f16 GQA 8/2 bottom_right Tq=70 Tk=151 d=32", normal(1, 8, 70, 32),
         normal(1, 2, 151, 32), normal(1, 2, 151, 32), causal="bottom_right", elem="f16")
    case("f16 seq_major GQA 6/2 full B=2 T=150 d=32 dynamic", normal(2, 150, 6, 32),
         normal(2, 150, 2, 32), normal(2, 150, 2, 32), layout="seq_major",
         shapes=((None, None, 6, 32), (None, None, 2, 32), (None, None, 2, 32)), elem="f16")
    weight_zero_case("f16 inf/NaN values of weight 0", 21, 32, "f16")
    case("f16 mask key padding attend_where_true causal T=200", normal(2, 2, 200, 64),
         normal(2, 2, 200, 64), normal(2, 2, 200, 64), causal="top_left",
         mask=(pad, "attend_where_true"), elem="f16")
    case("f16 mask additive [1,H,Tq,Tk] Tq=33 Tk=301", normal(1, 3, 33, 64),
         normal(1, 3, 301, 64), normal(1, 3, 301, 64), mask=(bias, "additive"), elem="f16")
    case("f16 mask additive shared [1,1,Tq,Tk] B=2 Tq=40 Tk=160 causal", normal(2, 3, 40, 64),
         normal(2, 3, 160, 64), normal(2, 3, 160, 64), causal="bottom_right",
         mask=(shared_bias, "additive"), elem="f16")
    case("f16 mask rows additive [B,1,Tq,1] Tq=33 Tk=151", normal(2, 3, 33, 64),
         normal(2, 3, 151, 64), normal(2, 3, 151, 64), mask=(rbias, "additive"), elem="f16")
    case("f16 dropout 0.2 causal T=100 d=64", normal(1, 2, 100, 64),
         normal(1, 2, 100, 64), normal(1, 2, 100, 64), causal="top_left", dropout=(0.2, 5),
         elem="f16")
    turns.report("vectorized_sdpa")
    checks.finish("vectorized_sdpa")


if __name__ == "__main__":
    main()
