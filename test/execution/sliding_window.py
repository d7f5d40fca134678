# RUN: %python %s %t | FileCheck %s
#
# Sliding windows (window_left / window_right, alone and with causal, both
# alignments) through the plain lowering, the default pipeline (the
# vectorized core at d = 16), the flash lowering with default blocks and
# with small blocks (windows cross block edges), against the float64
# reference given the same band as an explicit bool mask. Windows up to
# INT64_MAX hide nothing: the lowerings add them to row and block indices,
# where they once overflowed into all-zero outputs.

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_exec  # noqa: E402

VARIANTS = [("plain", "optimize=false"), ("default", ""),
            ("flash", "vectorize-sdpa=false"),
            ("flash-small-blocks",
             "vectorize-sdpa=false flash-block-q=4 flash-block-kv=8")]

INT64_MAX = 2**63 - 1

CASES = [  # (Tq, Tk, left, right, causal)
    (9, 9, 2, None, "top_left"),
    (9, 9, 3, 1, None),
    (40, 40, 7, 3, None),
    (40, 40, None, 4, None),
    (33, 33, 5, None, "top_left"),
    (5, 9, 2, None, "bottom_right"),
    (9, 5, 1, None, "bottom_right"),  # rows 0-3 see nothing: exact zeros
    (64, 64, 0, 0, None),             # each query sees only itself
    (5, 9, None, INT64_MAX, None),    # windows that hide nothing
    (5, 9, INT64_MAX, INT64_MAX - 4, None),
    (9, 5, INT64_MAX, None, "bottom_right"),
    (40, 33, INT64_MAX - 100, 2, "top_left"),
    (33, 40, 3, INT64_MAX, None),
]


def band_mask(tq, tk, left, right, causal):
    off = tk - tq if causal == "bottom_right" else 0
    d = np.arange(tk)[None, :] - (np.arange(tq)[:, None] + off)
    masked = np.zeros((tq, tk), bool)
    if causal:
        masked |= d > 0
    if right is not None:
        masked |= d > right
    if left is not None:
        masked |= d < -left
    return masked


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    rng = np.random.default_rng(11)
    checks = attn_exec.Checks()
    for n, (tq, tk, left, right, causal) in enumerate(CASES):
        q = rng.standard_normal((2, tq, 16)).astype(np.float32)
        k = rng.standard_normal((2, tk, 16)).astype(np.float32)
        v = rng.standard_normal((2, tk, 16)).astype(np.float32)
        attrs = []
        if left is not None:
            attrs.append("window_left = %d : i64" % left)
        if right is not None:
            attrs.append("window_right = %d : i64" % right)
        ty = lambda t: attn_exec.tensor_type((2, t, 16), "f32")
        module = ("func.func @main(%%q: %s, %%k: %s, %%v: %s) -> %s {\n"
                  "  %%0 = attn.sdpa %%q, %%k, %%v %s{%s} : %s, %s, %s -> %s\n"
                  "  return %%0 : %s\n}\n") % (
            ty(tq), ty(tk), ty(tk), ty(tq),
            "causal(%s) " % causal if causal else "", ", ".join(attrs),
            ty(tq), ty(tk), ty(tk), ty(tq), ty(tq))
        masked = band_mask(tq, tk, left, right, causal)
        want = attn_exec.ref_sdpa(q, k, v, mask=masked, mask_kind="masked_where_true")
        dead = masked.all(axis=1)
        for name, opts in VARIANTS:
            label = "window %d (Tq=%d Tk=%d L=%s R=%s %s) %s" % (
                n, tq, tk, left, right, causal, name)
            with checks(label):
                (got,) = attn_exec.run(module, "main", [q, k, v], work,
                                       extra_args=["--pipeline-options=" + opts])
                attn_exec.assert_close(label, got, want, atol=1e-5, rtol=1e-5)
                if dead.any():
                    assert (got[:, dead] == 0).all(), "fully masked rows are not 0"
    checks.finish("sliding_window")


if __name__ == "__main__":
    main()

# CHECK-NOT: FAIL
# CHECK: sliding_window: all {{[0-9]+}} checks OK
