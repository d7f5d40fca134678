# RUN: %python %s %t | FileCheck %s
#
# The optimizing CPU pipeline (attn-decompose, attn-fuse-heads,
# attn-fold-mask, attn-fold-head-transposes, attn-vectorize-sdpa,
# attn-fuse-softmax) against the
# plain, unfused lowering (`optimize=false`) and against the float64 NumPy
# reference, on the same modules and inputs. Every case runs in three
# variants:
#
#   optimized   the default attn-lower-to-cpu-pipeline (f32 cores without
#               masks or dropout go through attn-vectorize-sdpa)
#   flash16x32  every core through attn-fuse-softmax (vectorize-sdpa=false)
#               with flash blocks of 16 queries x 32 keys, so that several
#               tiles, partial tiles and diagonal tiles are exercised even
#               at small T
#   plain       --pipeline-options=optimize=false
#
# and each result is compared with the float64 reference, each optimized
# result also with the plain one (f32: atol = rtol = 1e-5), and query rows
# whose every key is masked must be exactly 0 in every variant. (In the
# sanitizer run, ATTN_SANITIZED=1, the unmasked groups leave the plain
# variant out; see SANITIZER_PLAIN_GROUPS.)
#
# The grid: causal none/top_left/bottom_right at T in {1, 7, 64, 100, 1024}
# and Tq != Tk (with the fully masked rows of bottom_right, Tq > Tk); head
# dims 16/40/64/80/128; GQA 8/2 and MQA 8/1; bool masks of both kinds and
# additive masks (-inf, -1e4, finite biases) with broadcast shapes and fully
# masked rows; constant causal masks that attn-fold-mask folds into the
# `causal` attribute (and constants that are not causal and must stay
# masks); dropout (the Philox keep-mask on the flat score index must not
# depend on the tiling); attn.multi_head_attention and
# attn.causal_attention against a NumPy float64 version; a dynamic sequence
# length.
#
# Cases are grouped into functions of several ops (one attention-run process
# per group and variant). When a group fails to run in a variant, its cases
# are rerun one function each in that variant to name the failing ones.
# Every failure is reported (case, variant, module and inputs, expected vs
# got) before exiting 1.
#
# Time: LLVM code generation dominates, most of all for flash16x32 on static
# sizes that are multiples of 16 with causality (several seconds per op), so
# those sizes appear only where the grid needs them (T = 64, 1024) and two
# attention-run processes run at a time (JOBS).

import concurrent.futures
import contextlib
import glob
import io
import os
import sys
import time
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_exec  # noqa: E402

ATOL = 1e-5
RTOL = 1e-5

PLAIN = "plain"
VARIANTS = [
    ("optimized", []),
    ("flash16x32", ["--pipeline-options=vectorize-sdpa=false "
                    "flash-block-q=16 flash-block-kv=32"]),
    (PLAIN, ["--pipeline-options=optimize=false"]),
]
# In the sanitizer run of the suite the plain variant runs only for the
# groups whose plain lowering no other test compiles under the sanitizers
# (masks, constant masks, dropout, GQA/MQA, dynamic sizes, the attn ops
# with projections); unmasked cores of plain attention compile there in
# edge_shapes.py and numerics.py. Every variant that runs is still checked
# against the float64 reference.
SANITIZER_PLAIN_GROUPS = {"gqa", "masks", "const_masks", "dropout", "dynamic", "projections"}


def variants_for(group):
    """The variants `group` runs in: all but the plain one for the groups
    outside SANITIZER_PLAIN_GROUPS in the sanitizer run."""
    if attn_exec.SANITIZED and group not in SANITIZER_PLAIN_GROUPS:
        return [v for v in VARIANTS if v[0] != PLAIN]
    return VARIANTS

# attention-run processes at a time: compiling dominates and is single-threaded.
JOBS = 2

rng = np.random.default_rng(20261130)

NEG_INF_F32 = "0xFF800000"


# ----------------------------------------------------------------------------
# Cases.

class Case:
    """One op of a group function: its arguments (arrays and MLIR types), the
    lines computing `%r<i>` from `%a<i>_<n>`, the result type, the float64
    expected result and the query rows that must be exactly 0."""

    def __init__(self, name, inputs, arg_types, body, out_type, want, empty_rows=None):
        self.name = name
        self.inputs = inputs
        self.arg_types = arg_types
        self.body = body  # callable(i, args) -> list of lines defining %r<i>
        self.out_type = out_type
        self.want = want
        self.empty_rows = empty_rows  # bool array over want.shape[:-1], or None


def dense_literal(a, fmt):
    """dense<...> element list of an array, nested like its shape."""
    if a.ndim == 0:
        return fmt(a[()])
    return "[" + ", ".join(dense_literal(x, fmt) for x in a) + "]"


def bool_elem(x):
    return "true" if bool(x) else "false"


def f32_elem(x):
    x = float(np.float32(x))
    if np.isneginf(x):
        return NEG_INF_F32
    if not np.isfinite(x):
        raise ValueError("unsupported constant %r" % x)
    return repr(x)


def sdpa_case(name, q, k, v, mask=None, mask_kind="masked_where_true", causal=None,
              scale=None, dropout_p=0.0, seed=0, types=None, const_mask=False):
    """An attn.sdpa case; `const_mask` puts the mask in the function as an
    arith.constant instead of an argument."""
    q = np.asarray(q, dtype=np.float32)
    k = np.asarray(k, dtype=np.float32)
    v = np.asarray(v, dtype=np.float32)
    if mask is not None:
        mask = (np.asarray(mask, dtype=np.float32) if mask_kind == "additive"
                else np.asarray(mask, dtype=np.bool_))
    out_shape = q.shape[:-1] + v.shape[-1:]
    shapes = {"q": q.shape, "k": k.shape, "v": v.shape, "out": out_shape}
    if mask is not None:
        shapes["mask"] = mask.shape
    shapes.update(types or {})
    mask_elem = "f32" if mask_kind == "additive" else "i1"
    t = {key: attn_exec.tensor_type(s, mask_elem if key == "mask" else "f32")
         for key, s in shapes.items()}

    inputs = [q, k, v]
    arg_types = [t["q"], t["k"], t["v"]]
    if mask is not None and not const_mask:
        inputs.append(mask)
        arg_types.append(t["mask"])

    attrs = []
    if scale is not None:
        attrs.append("scale = %r : f32" % float(scale))
    if dropout_p:
        attrs.append("dropout_p = %r : f32" % float(dropout_p))
        attrs.append("seed = %d : i64" % seed)

    def body(i, args):
        lines = []
        operand_types = [t["q"], t["k"], t["v"]]
        parts = ["%%r%d = attn.sdpa %s, %s, %s" % (i, args[0], args[1], args[2])]
        if mask is not None:
            if const_mask:
                fmt = f32_elem if mask_kind == "additive" else bool_elem
                lines.append("%%c%d = arith.constant dense<%s> : %s"
                             % (i, dense_literal(mask, fmt), t["mask"]))
                m = "%%c%d" % i
            else:
                m = args[3]
            parts.append("mask(%s : %s)" % (m, mask_kind))
            operand_types.append(t["mask"])
        if causal is not None:
            parts.append("causal(%s)" % causal)
        if attrs:
            parts.append("{%s}" % ", ".join(attrs))
        lines.append("%s : %s -> %s" % (" ".join(parts), ", ".join(operand_types), t["out"]))
        return lines

    ref_scale = None if scale is None else float(np.float32(scale))
    ref_mask = None if mask is None else (mask.astype(np.float64) if mask_kind == "additive"
                                          else mask)
    want = attn_exec.ref_sdpa(q, k, v, mask=ref_mask, mask_kind=mask_kind, causal=causal,
                              scale=ref_scale, dropout_p=dropout_p, seed=seed)
    # Rows with no visible key, before dropout (dropout may zero more rows).
    _, w = attn_exec.ref_sdpa(q, k, v, mask=ref_mask, mask_kind=mask_kind, causal=causal,
                              scale=ref_scale, return_weights=True)
    empty = w.sum(axis=-1) == 0
    return Case(name, inputs, arg_types, body, t["out"], want, empty)


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def qkv(b, hq, hkv, tq, tk, d, dv=None):
    dv = d if dv is None else dv
    return normal(b, hq, tq, d), normal(b, hkv, tk, d), normal(b, hkv, tk, dv)


def bool_mask(shape, p_true, force):
    """Random mask; along the last axis one random position is set to
    `force`, so that no broadcast row is accidentally fully masked."""
    m = rng.random(shape) < p_true
    flat = m.reshape(-1, shape[-1])
    flat[np.arange(flat.shape[0]), rng.integers(0, shape[-1], flat.shape[0])] = force
    return flat.reshape(shape)


def additive_mask(shape, fill):
    """0 where attended and `fill` where masked, one attended key per row."""
    return np.where(bool_mask(shape, 0.4, False), np.float32(fill), np.float32(0))


# ----------------------------------------------------------------------------
# The grid.

def causal_square_cases():
    cases = []
    for t in (1, 7, 64, 100):
        for causal in (None, "top_left", "bottom_right"):
            b = 2 if t <= 64 else 1
            cases.append(sdpa_case("causal=%s T=%d B=%d H=2 d=64" % (causal, t, b),
                                   *qkv(b, 2, 2, t, t, 64), causal=causal))
    return cases


def causal_rect_cases():
    # bottom_right with Tq > Tk leaves the first Tq - Tk rows without keys.
    cases = []
    for tq, tk in ((7, 100), (100, 7), (64, 1)):
        for causal in (None, "top_left", "bottom_right"):
            cases.append(sdpa_case("causal=%s Tq=%d Tk=%d B=2 H=2 d=64" % (causal, tq, tk),
                                   *qkv(2, 2, 2, tq, tk, 64), causal=causal))
    return cases


def head_dim_cases():
    return [
        sdpa_case("d=16 causal=top_left T=100 B=1 H=2", *qkv(1, 2, 2, 100, 100, 16),
                  causal="top_left"),
        sdpa_case("d=40 causal=none Tq=7 Tk=100 B=2 H=2", *qkv(2, 2, 2, 7, 100, 40)),
        sdpa_case("d=40 causal=bottom_right T=50 B=1 H=2", *qkv(1, 2, 2, 50, 50, 40),
                  causal="bottom_right"),
        sdpa_case("d=80 causal=top_left T=100 B=1 H=2", *qkv(1, 2, 2, 100, 100, 80),
                  causal="top_left"),
        sdpa_case("d=80 dv=40 causal=bottom_right Tq=37 Tk=64 B=1 H=2",
                  *qkv(1, 2, 2, 37, 64, 80, 40), causal="bottom_right"),
        sdpa_case("d=128 scale=0.3 causal=top_left T=72 B=1 H=2", *qkv(1, 2, 2, 72, 72, 128),
                  causal="top_left", scale=0.3),
        sdpa_case("d=128 causal=none Tq=100 Tk=7 B=1 H=2", *qkv(1, 2, 2, 100, 7, 128)),
    ]


def gqa_cases():
    pad = bool_mask((2, 1, 1, 100), 0.7, True)
    return [
        sdpa_case("gqa Hq=8 Hkv=2 causal=top_left T=50 B=2 d=64", *qkv(2, 8, 2, 50, 50, 64),
                  causal="top_left"),
        sdpa_case("gqa Hq=8 Hkv=2 causal=bottom_right Tq=7 Tk=100 B=1 d=40",
                  *qkv(1, 8, 2, 7, 100, 40), causal="bottom_right"),
        sdpa_case("mqa Hq=8 Hkv=1 causal=none T=64 B=2 d=64", *qkv(2, 8, 1, 64, 64, 64)),
        sdpa_case("mqa Hq=8 Hkv=1 causal=bottom_right Tq=100 Tk=7 B=1 d=16",
                  *qkv(1, 8, 1, 100, 7, 16), causal="bottom_right"),
        sdpa_case("gqa Hq=8 Hkv=2 attend_where_true [B,1,1,Tk] causal=bottom_right "
                  "Tq=50 Tk=100 B=2 d=64", *qkv(2, 8, 2, 50, 100, 64), mask=pad,
                  mask_kind="attend_where_true", causal="bottom_right"),
    ]


def mask_cases():
    b, h, d = 2, 2, 64
    cases = [
        sdpa_case("mask masked_where_true [Tq,Tk] causal=top_left T=50",
                  *qkv(b, h, h, 50, 50, d), mask=bool_mask((50, 50), 0.4, False),
                  causal="top_left"),
        sdpa_case("mask masked_where_true [B,1,1,Tk] T=100", *qkv(b, h, h, 100, 100, d),
                  mask=bool_mask((b, 1, 1, 100), 0.4, False)),
        sdpa_case("mask attend_where_true [Tq,Tk] Tq=7 Tk=100", *qkv(b, h, h, 7, 100, d),
                  mask=bool_mask((7, 100), 0.6, True), mask_kind="attend_where_true"),
        sdpa_case("mask attend_where_true [B,1,1,Tk] causal=bottom_right Tq=50 Tk=100",
                  *qkv(b, h, h, 50, 100, d), mask=bool_mask((b, 1, 1, 100), 0.6, True),
                  mask_kind="attend_where_true", causal="bottom_right"),
        sdpa_case("mask additive -inf [Tq,Tk] T=100", *qkv(b, h, h, 100, 100, d),
                  mask=additive_mask((100, 100), -np.inf), mask_kind="additive"),
        sdpa_case("mask additive -inf [B,1,1,Tk] causal=bottom_right Tq=37 Tk=100",
                  *qkv(b, h, h, 37, 100, d), mask=additive_mask((b, 1, 1, 100), -np.inf),
                  mask_kind="additive", causal="bottom_right"),
        sdpa_case("mask additive -1e4 [Tq,Tk] causal=top_left T=100",
                  *qkv(b, h, h, 100, 100, d), mask=additive_mask((100, 100), -1e4),
                  mask_kind="additive", causal="top_left"),
        sdpa_case("mask additive -1e4 [B,1,1,Tk] T=64", *qkv(b, h, h, 64, 64, d),
                  mask=additive_mask((b, 1, 1, 64), -1e4), mask_kind="additive"),
        sdpa_case("mask additive bias+-inf [H,Tq,Tk] causal=top_left T=50",
                  *qkv(b, h, h, 50, 50, d),
                  mask=normal(h, 50, 50) + additive_mask((h, 50, 50), -np.inf),
                  mask_kind="additive", causal="top_left"),
    ]

    # Rows that the mask hides completely (in the first tile, across tile
    # boundaries, in the last partial tile) and a whole padded sequence.
    m1 = bool_mask((b, 1, 100, 100), 0.3, False)
    m1[:, :, 0, :] = True
    m1[1, :, 17, :] = True
    m1[0, :, 40:50, :] = True
    m1[:, :, 99, :] = True
    cases.append(sdpa_case("fully masked rows masked_where_true [B,1,Tq,Tk] T=100",
                           *qkv(b, h, h, 100, 100, d), mask=m1))
    m2 = bool_mask((50, 50), 0.6, True)
    m2[[3, 31, 32, 49], :] = False
    cases.append(sdpa_case("fully masked rows attend_where_true [Tq,Tk] causal=top_left T=50",
                           *qkv(b, h, h, 50, 50, d), mask=m2, mask_kind="attend_where_true",
                           causal="top_left"))
    m3 = additive_mask((1, 1, 100, 100), -np.inf)
    m3[0, 0, [5, 16, 70], :] = -np.inf
    cases.append(sdpa_case("fully masked rows additive -inf [1,1,Tq,Tk] T=100",
                           *qkv(b, h, h, 100, 100, d), mask=m3, mask_kind="additive"))
    m4 = np.zeros((50, 50), dtype=bool)
    m4[0, 0] = True  # hides the only key that row 0 sees under top-left causality
    m4[20, :21] = True
    cases.append(sdpa_case("fully masked rows mask+causal=top_left T=50",
                           *qkv(b, h, h, 50, 50, d), mask=m4, causal="top_left"))
    pad = np.ones((b, 1, 1, 64), dtype=bool)
    pad[1] = False  # the whole second sequence is padding
    cases.append(sdpa_case("fully masked batch padding attend_where_true [B,1,1,Tk] T=64",
                           *qkv(b, h, h, 64, 64, d), mask=pad, mask_kind="attend_where_true"))
    return cases


def const_mask_cases():
    b, h, d = 1, 2, 64
    upper = lambda t, k=1: np.triu(np.ones((t, t), bool), k)  # noqa: E731
    i5, j9 = np.arange(5)[:, None], np.arange(9)[None, :]
    i9, j5 = np.arange(9)[:, None], np.arange(5)[None, :]
    hole = upper(7)
    hole[4, 6] = False  # one hole above the diagonal
    return [
        # The seed's mask, triu(ones(T, T), 1).bool(), as a constant.
        sdpa_case("const triu(ones(7,7),1) masked_where_true", *qkv(b, h, h, 7, 7, d),
                  mask=upper(7), const_mask=True),
        sdpa_case("const [1,1,T,T] triu(ones(64,64),1) masked_where_true B=2",
                  *qkv(2, h, h, 64, 64, d), mask=upper(64).reshape(1, 1, 64, 64),
                  const_mask=True),
        sdpa_case("const tril(ones(50,50)) attend_where_true", *qkv(b, h, h, 50, 50, d),
                  mask=np.tril(np.ones((50, 50), bool)), mask_kind="attend_where_true",
                  const_mask=True),
        sdpa_case("const additive -inf above the diagonal T=7", *qkv(b, h, h, 7, 7, d),
                  mask=np.where(upper(7), -np.inf, 0.0), mask_kind="additive",
                  const_mask=True),
        # Bottom-right triangles: key j visible iff j <= i + Tk - Tq.
        sdpa_case("const bottom-right triangle masked_where_true Tq=5 Tk=9",
                  *qkv(b, h, h, 5, 9, d), mask=j9 > i5 + 4, const_mask=True),
        sdpa_case("const bottom-right triangle masked_where_true Tq=9 Tk=5 "
                  "(rows 0-3 fully masked)", *qkv(b, h, h, 9, 5, d), mask=j5 > i9 - 4,
                  const_mask=True),
        # Not causal: these must stay masks.
        sdpa_case("const NON-causal triu(ones(7,7),2) masked_where_true",
                  *qkv(b, h, h, 7, 7, d), mask=upper(7, 2), const_mask=True),
        sdpa_case("const NON-causal triu(ones(50,50),2) masked_where_true",
                  *qkv(b, h, h, 50, 50, d), mask=upper(50, 2), const_mask=True),
        sdpa_case("const NON-causal tril(ones(7,7),-1) attend_where_true (row 0 fully masked)",
                  *qkv(b, h, h, 7, 7, d), mask=np.tril(np.ones((7, 7), bool), -1),
                  mask_kind="attend_where_true", const_mask=True),
        sdpa_case("const NON-causal triu(ones(7,7),1) with a hole at (4,6)",
                  *qkv(b, h, h, 7, 7, d), mask=hole, const_mask=True),
    ]


def dropout_cases():
    return [
        sdpa_case("dropout p=0.1 seed=1234 causal=top_left T=64 B=2 H=2 d=64",
                  *qkv(2, 2, 2, 64, 64, 64), causal="top_left", dropout_p=0.1, seed=1234),
        sdpa_case("dropout p=0.5 seed=4321 causal=none Tq=7 Tk=100 B=2 H=2 d=40",
                  *qkv(2, 2, 2, 7, 100, 40), dropout_p=0.5, seed=4321),
        sdpa_case("dropout p=0.5 seed=4321 causal=bottom_right Tq=100 Tk=64 B=1 H=2 d=64",
                  *qkv(1, 2, 2, 100, 64, 64), causal="bottom_right", dropout_p=0.5,
                  seed=4321),
        sdpa_case("dropout p=0.1 seed=5 gqa 8/2 attend_where_true [1,Tq,Tk] "
                  "causal=bottom_right Tq=50 Tk=100 B=2 d=64",
                  *qkv(2, 8, 2, 50, 100, 64), mask=bool_mask((1, 50, 100), 0.7, True),
                  mask_kind="attend_where_true", causal="bottom_right", dropout_p=0.1,
                  seed=5),
        sdpa_case("dropout p=0.1 seed=0x123456789ABCDEF0 causal=top_left T=100 B=1 H=2 d=64",
                  *qkv(1, 2, 2, 100, 100, 64), causal="top_left", dropout_p=0.1,
                  seed=0x123456789ABCDEF0),
    ]


def t1024_cases():
    return [
        sdpa_case("causal=top_left T=1024 B=1 H=2 d=64", *qkv(1, 2, 2, 1024, 1024, 64),
                  causal="top_left"),
        sdpa_case("causal=none T=1024 B=1 H=1 d=64", *qkv(1, 1, 1, 1024, 1024, 64)),
    ]


def dynamic_cases():
    dyn = [1, 2, None, 64]
    types = {"q": dyn, "k": dyn, "v": dyn, "out": dyn}
    return [
        sdpa_case("dynamic tensor<1x2x?x64xf32> causal=top_left T=100",
                  *qkv(1, 2, 2, 100, 100, 64), causal="top_left", types=types),
        sdpa_case("dynamic tensor<1x2x?x64xf32> causal=bottom_right Tq=100 Tk=7",
                  *qkv(1, 2, 2, 100, 7, 64), causal="bottom_right", types=types),
    ]


# Projection attention ops against NumPy float64.

def linear_weight(d_in, d_out):
    """nn.Linear-style init, as [d_in, d_out] (x @ W)."""
    bound = 1.0 / np.sqrt(d_in)
    return rng.uniform(-bound, bound, (d_in, d_out)).astype(np.float32)


def linear_bias(d_in, d_out):
    bound = 1.0 / np.sqrt(d_in)
    return rng.uniform(-bound, bound, (d_out,)).astype(np.float32)


def mha_reference(x, wq, wk, wv, bq, bk, bv, wo, bo, num_heads, dropout_p, seed):
    """The seed's MultiHeadAttention in float64: projections, view +
    transpose(1, 2) into heads, causal (triu(ones, 1)) softmax(QK^T/sqrt(hd)),
    dropout with the Philox keep-mask over [B, H, T, T], merge, out_proj."""
    f = lambda a: np.asarray(a, dtype=np.float64)  # noqa: E731
    x = f(x)
    b, t, _ = x.shape
    q, k, v = x @ f(wq), x @ f(wk), x @ f(wv)
    if bq is not None:
        q, k, v = q + f(bq), k + f(bk), v + f(bv)
    d_out = q.shape[-1]
    hd = d_out // num_heads

    def split(a):
        return a.reshape(b, t, num_heads, hd).transpose(0, 2, 1, 3)

    q, k, v = split(q), split(k), split(v)
    scores = q @ k.transpose(0, 1, 3, 2)
    scores = np.where(np.triu(np.ones((t, t), bool), 1), -np.inf, scores)
    scores = scores / np.sqrt(hd)
    w = np.exp(scores - scores.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    if dropout_p:
        keep = attn_exec.dropout_keep_mask(w.shape, dropout_p, seed)
        w = np.where(keep, w / (1.0 - float(np.float32(dropout_p))), 0.0)
    ctx = (w @ v).transpose(0, 2, 1, 3).reshape(b, t, d_out)
    return ctx @ f(wo) + f(bo)


def mha_case(b, t, d_model, num_heads, qkv_bias, dropout_p=0.0, seed=0):
    x = normal(b, t, d_model)
    wq, wk, wv, wo = (linear_weight(d_model, d_model) for _ in range(4))
    biases = [linear_bias(d_model, d_model) for _ in range(3)] if qkv_bias else [None] * 3
    bo = linear_bias(d_model, d_model)
    tx = attn_exec.tensor_type([b, t, d_model], "f32")
    tw = attn_exec.tensor_type([d_model, d_model], "f32")
    tb = attn_exec.tensor_type([d_model], "f32")
    inputs = [x, wq, wk, wv] + ([*biases] if qkv_bias else []) + [wo, bo]
    arg_types = [tx, tw, tw, tw] + ([tb] * 3 if qkv_bias else []) + [tw, tb]
    attrs = "num_heads = %d : i64" % num_heads
    if dropout_p:
        attrs += ", dropout_p = %r : f32, seed = %d : i64" % (dropout_p, seed)

    def body(i, args):
        bias = " bias(%s, %s, %s)" % tuple(args[4:7]) if qkv_bias else ""
        return ["%%r%d = attn.multi_head_attention %s weights(%s, %s, %s)%s out_proj(%s, %s) "
                "causal {%s} : (%s) -> %s"
                % (i, args[0], args[1], args[2], args[3], bias, args[-2], args[-1], attrs,
                   ", ".join(arg_types), tx)]

    want = mha_reference(x, wq, wk, wv, *biases, wo, bo, num_heads, dropout_p, seed)
    name = "multi_head_attention causal d_model=%d heads=%d B=%d T=%d qkv_bias=%s out_proj%s" % (
        d_model, num_heads, b, t, qkv_bias,
        " dropout p=%g seed=%d" % (dropout_p, seed) if dropout_p else "")
    return Case(name, inputs, arg_types, body, tx, want)


def causal_attention_reference(x, wq, wk, wv, bq, bk, bv, dropout_p, seed):
    """The seed's CausalAttention in float64 (score shape [B, T, T])."""
    f = lambda a: np.asarray(a, dtype=np.float64)  # noqa: E731
    x = f(x)
    q, k, v = x @ f(wq), x @ f(wk), x @ f(wv)
    if bq is not None:
        q, k, v = q + f(bq), k + f(bk), v + f(bv)
    t = x.shape[1]
    scores = q @ k.transpose(0, 2, 1)
    scores = np.where(np.triu(np.ones((t, t), bool), 1), -np.inf, scores)
    w = np.exp(scores / np.sqrt(k.shape[-1]) - (scores / np.sqrt(k.shape[-1])).max(
        axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    if dropout_p:
        keep = attn_exec.dropout_keep_mask(w.shape, dropout_p, seed)
        w = np.where(keep, w / (1.0 - float(np.float32(dropout_p))), 0.0)
    return w @ v


def causal_attention_case(b, t, d_in, d_out, qkv_bias, dropout_p=0.0, seed=0):
    x = normal(b, t, d_in)
    wq, wk, wv = (linear_weight(d_in, d_out) for _ in range(3))
    biases = [linear_bias(d_in, d_out) for _ in range(3)] if qkv_bias else [None] * 3
    tx = attn_exec.tensor_type([b, t, d_in], "f32")
    ty = attn_exec.tensor_type([b, t, d_out], "f32")
    tw = attn_exec.tensor_type([d_in, d_out], "f32")
    tb = attn_exec.tensor_type([d_out], "f32")
    inputs = [x, wq, wk, wv] + ([*biases] if qkv_bias else [])
    arg_types = [tx, tw, tw, tw] + ([tb] * 3 if qkv_bias else [])
    attrs = ""
    if dropout_p:
        attrs = " {dropout_p = %r : f32, seed = %d : i64}" % (dropout_p, seed)

    def body(i, args):
        bias = " bias(%s, %s, %s)" % tuple(args[4:7]) if qkv_bias else ""
        return ["%%r%d = attn.causal_attention %s weights(%s, %s, %s)%s%s : (%s) -> %s"
                % (i, args[0], args[1], args[2], args[3], bias, attrs, ", ".join(arg_types),
                   ty)]

    want = causal_attention_reference(x, wq, wk, wv, *biases, dropout_p, seed)
    name = "causal_attention d_in=%d d_out=%d B=%d T=%d qkv_bias=%s%s" % (
        d_in, d_out, b, t, qkv_bias, " dropout p=%g seed=%d" % (dropout_p, seed)
        if dropout_p else "")
    return Case(name, inputs, arg_types, body, ty, want)


def projection_cases():
    cases = []
    for t in (7, 64):
        for qkv_bias in (False, True):
            cases.append(mha_case(2, t, 32, 2, qkv_bias))
    cases.append(mha_case(2, 50, 32, 2, True, dropout_p=0.1, seed=77))
    cases.append(causal_attention_case(2, 7, 32, 16, False))
    cases.append(causal_attention_case(2, 50, 32, 16, True))
    cases.append(causal_attention_case(2, 50, 32, 16, False, dropout_p=0.5, seed=123))
    return cases


# ----------------------------------------------------------------------------
# Running and checking.

def module_text(entry, cases):
    decls, lines, results, rtypes = [], [], [], []
    for i, c in enumerate(cases):
        args = ["%%a%d_%d" % (i, n) for n in range(len(c.inputs))]
        decls += ["%s: %s" % (a, ty) for a, ty in zip(args, c.arg_types)]
        lines += ["  " + line for line in c.body(i, args)]
        results.append("%%r%d" % i)
        rtypes.append(c.out_type)
    return "func.func @%s(%s) -> (%s) {\n%s\n  return %s : %s\n}\n" % (
        entry, ", ".join(decls), ", ".join(rtypes), "\n".join(lines), ", ".join(results),
        ", ".join(rtypes))


def quiet_close(name, got, want):
    """attn_exec.assert_close without its OK line; returns the max error."""
    with contextlib.redirect_stdout(io.StringIO()):
        return attn_exec.assert_close(name, got, want, atol=ATOL, rtol=RTOL)


def check_empty_rows(name, got, empty):
    if empty is None or not empty.any():
        return 0
    rows = got[empty]
    if not np.all(rows == 0):
        bad = np.argwhere(empty)[np.any(rows != 0, axis=-1)]
        first = tuple(int(i) for i in bad[0])
        raise AssertionError("%s: %d fully masked rows are not exactly 0; first row %s = [%s ...]"
                             % (name, len(bad), first,
                                " ".join("%.6g" % x for x in got[first][:6])))
    return int(empty.sum())


def repro_command(work, entry, args):
    """The attention-run command line of the latest run of `entry` (the
    module and inputs that attn_exec.run wrote into `work`)."""
    runs = glob.glob(os.path.join(work, entry + "_*.mlir"))
    runs = [p for p in runs if os.path.basename(p)[len(entry) + 1:-5].isdigit()]
    if not runs:
        return "(no module written for %s)" % entry
    mlir = max(runs, key=lambda p: int(os.path.basename(p)[len(entry) + 1:-5]))
    ins = glob.glob(mlir[:-5] + "_in*.npy")
    ins.sort(key=lambda p: int(p[len(mlir) - 5 + 3:-4]))
    return "%s %s --entry %s %s %s" % (
        os.path.basename(attn_exec.ATTENTION_RUN), mlir, entry,
        " ".join("--input " + p for p in ins), " ".join("'%s'" % a for a in args))


def run_variant(work, group, cases, variant, args):
    """Runs a group as one function in `variant`; when that fails, runs its
    cases one function each. Returns [(output or None, repro, error)] per
    case and the log lines."""
    entry = "%s_%s" % (group, variant)
    inputs = [a for c in cases for a in c.inputs]
    try:
        outs = attn_exec.run(module_text(entry, cases), entry, inputs, work,
                             num_outputs=len(cases), extra_args=args)
        repro = repro_command(work, entry, args)
        return [(o, repro, None) for o in outs], []
    except attn_exec.AttentionRunError as e:
        log = ["group %s, variant %s failed to run; running its cases one by one:\n%s"
               % (group, variant, e)]
    results = []
    for i, c in enumerate(cases):
        entry_i = "%s_case%d" % (entry, i)
        try:
            (o,) = attn_exec.run(module_text(entry_i, [c]), entry_i, c.inputs, work,
                                 extra_args=args)
            results.append((o, repro_command(work, entry_i, args), None))
        except attn_exec.AttentionRunError as e1:
            errors = [ln for ln in str(e1).splitlines() if "error" in ln]
            results.append((None, repro_command(work, entry_i, args),
                            " | ".join(errors[:3] or str(e1).splitlines()[:1])))
    return results, log


def check_group(group, cases, results, failures):
    """Checks every case of a group in every variant; returns the number of
    failed checks."""
    nfail = 0

    def fail(msg, repro):
        """`msg` starts with "<case> [<variant>]"."""
        print("FAIL: [%s] %s\n    reproduce: %s" % (group, msg, repro))
        failures.append((group, msg))

    for i, c in enumerate(cases):
        errs = []
        empty_count = 0
        for variant, _ in variants_for(group):
            got, repro, error = results[variant][i]
            if got is None:
                nfail += 1
                fail("%s [%s]: does not run: %s" % (c.name, variant, error), repro)
                continue
            checks = [("ref", lambda g=got, v=variant: quiet_close(
                "%s [%s] vs float64 reference" % (c.name, v), g, c.want))]
            if variant != PLAIN and PLAIN in results:
                plain = results[PLAIN][i][0]

                def vs_plain(g=got, plain=plain, v=variant):
                    if plain is None:
                        raise AssertionError("%s [%s] vs plain: the plain lowering did not "
                                             "run, nothing to compare with" % (c.name, v))
                    return quiet_close("%s [%s] vs plain" % (c.name, v), g, plain)
                checks.append(("plain", vs_plain))
            checks.append(("empty", lambda g=got, v=variant: check_empty_rows(
                "%s [%s]" % (c.name, v), g, c.empty_rows)))
            for what, fn in checks:
                try:
                    r = fn()
                except AssertionError as e:
                    nfail += 1
                    fail(str(e), repro)
                    continue
                if what == "empty":
                    empty_count = r
                else:
                    errs.append("%s/%s=%.2g" % (variant, what, r))
        print("  %s: max_abs_err %s%s" % (
            c.name, " ".join(errs),
            "; %d fully masked rows exactly 0" % empty_count if empty_count else ""))
    return nfail


GROUPS = [
    ("causal_square", causal_square_cases),
    ("causal_rect", causal_rect_cases),
    ("head_dims", head_dim_cases),
    ("gqa", gqa_cases),
    ("masks", mask_cases),
    ("const_masks", const_mask_cases),
    ("dropout", dropout_cases),
    ("dynamic", dynamic_cases),
    ("projections", projection_cases),
    ("t1024", t1024_cases),
]


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    # Files of an earlier run would confuse the reproduce lines.
    for old in glob.glob(os.path.join(work, "*.mlir")) + glob.glob(os.path.join(work, "*.npy")):
        os.remove(old)
    start = time.time()
    failures = []
    groups = []
    for group, make in GROUPS:
        try:
            groups.append((group, make()))
        except Exception:  # a harness error must not hide the other groups
            traceback.print_exc()
            print("FAIL: group %s: harness error building the cases" % group)
            failures.append((group, "harness error: " + traceback.format_exc()))
    total = sum(len(cases) for _, cases in groups)

    # Compilation dominates and is single-threaded: JOBS processes at a time.
    jobs = [(group, cases, variant, args) for group, cases in groups
            for variant, args in variants_for(group)]

    def work_on(job):
        group, cases, variant, args = job
        t0 = time.time()
        try:
            res, log = run_variant(work, group, cases, variant, args)
            return res, log, time.time() - t0, None
        except Exception:
            return None, [], time.time() - t0, traceback.format_exc()

    with concurrent.futures.ThreadPoolExecutor(max_workers=JOBS) as pool:
        done = list(pool.map(work_on, jobs))

    by_group = {}
    for (group, cases, variant, _), (res, log, secs, exc) in zip(jobs, done):
        entry = by_group.setdefault(group, {"results": {}, "log": [], "secs": 0.0,
                                            "exc": []})
        entry["results"][variant] = res
        entry["log"] += log
        entry["secs"] += secs
        if exc:
            entry["exc"].append("%s: %s" % (variant, exc))

    for group, cases in groups:
        g = by_group[group]
        for line in g["log"]:
            print(line)
        if g["exc"]:
            for e in g["exc"]:
                print(e)
            print("FAIL: group %s: harness error" % group)
            failures.append((group, "harness error: " + g["exc"][0]))
            continue
        try:
            nfail = check_group(group, cases, g["results"], failures)
        except Exception:
            traceback.print_exc()
            print("FAIL: group %s: harness error while checking" % group)
            failures.append((group, "harness error: " + traceback.format_exc()))
            continue
        print("group %s: %d cases x %d variants: %s (attention-run %.1f s)"
              % (group, len(cases), len(variants_for(group)),
                 "OK" if nfail == 0 else "%d checks FAILED" % nfail, g["secs"]))
    sys.stdout.flush()
    print("wall time %.1f s" % (time.time() - start))
    if failures:
        print("optimized_vs_plain: %d checks FAILED over %d cases:" % (len(failures), total))
        for group, msg in failures:
            print("  - [%s] %s" % (group, msg.splitlines()[0]))
        sys.exit(1)
    if attn_exec.SANITIZED:
        print("sanitizer run: the plain variant left out for groups %s (the release run "
              "has it)" % ", ".join(g for g, _ in GROUPS if g not in SANITIZER_PLAIN_GROUPS))
    print("optimized_vs_plain: all %d cases OK" % total)


# CHECK-NOT: FAIL
# CHECK: optimized_vs_plain: all {{[0-9]+}} cases OK

if __name__ == "__main__":
    main()
