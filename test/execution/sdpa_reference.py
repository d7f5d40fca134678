# RUN: %python %s %t | FileCheck %s
#
# attn.sdpa against the float64 NumPy reference over a grid of
# configurations: causal alignments with Tq != Tk, grouped/multi-query
# attention, every mask kind with NumPy-broadcast shapes, fully masked rows,
# head sizes, operand ranks, f16/bf16 and dynamic dimensions.
#
# Many cases share one function (each case is one attn.sdpa with its own
# arguments and result) so that a group costs one attention-run process. When
# a group fails to run, its cases are rerun one function each to name the
# failing ones. All failures are collected and reported before exiting.

import os
import sys
import traceback

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_exec  # noqa: E402

# Low-precision results are rounded to 8 (f16: 11) significant bits after an
# f32 computation; the reference is exact on the same rounded inputs.
TOLERANCE = {"f32": (1e-5, 1e-5), "f16": (1e-2, 1e-2), "bf16": (2e-2, 2e-2)}
NPY_DTYPE = {"f32": np.float32, "f16": np.float16, "bf16": np.float32}

rng = np.random.default_rng(20240601)


class Case:
    """One attn.sdpa: operands (already rounded to `dtype`), attributes and
    the MLIR types (static unless `types` gives shapes with None dims)."""

    def __init__(self, name, q, k, v, mask=None, mask_kind="masked_where_true",
                 causal=None, scale=None, dtype="f32", types=None):
        self.name = name
        self.dtype = dtype
        self.q = attn_exec.round_to(q, dtype)
        self.k = attn_exec.round_to(k, dtype)
        self.v = attn_exec.round_to(v, dtype)
        self.mask_kind = mask_kind
        if mask is None:
            self.mask = None
        elif mask_kind == "additive":
            self.mask = attn_exec.round_to(mask, dtype)
        else:
            self.mask = np.asarray(mask, dtype=np.bool_)
        self.causal = causal
        self.scale = scale
        out_shape = self.q.shape[:-1] + self.v.shape[-1:]
        shapes = {"q": self.q.shape, "k": self.k.shape, "v": self.v.shape,
                  "out": out_shape}
        if self.mask is not None:
            shapes["mask"] = self.mask.shape
        shapes.update(types or {})
        mask_elem = dtype if mask_kind == "additive" else "i1"
        self.types = {key: attn_exec.tensor_type(s, mask_elem if key == "mask" else dtype)
                      for key, s in shapes.items()}

    def inputs(self):
        arrays = [self.q, self.k, self.v]
        if self.mask is not None:
            arrays.append(self.mask)
        return arrays

    def arg_decls(self, i):
        decls = ["%%q%d: %s" % (i, self.types["q"]), "%%k%d: %s" % (i, self.types["k"]),
                 "%%v%d: %s" % (i, self.types["v"])]
        if self.mask is not None:
            decls.append("%%m%d: %s" % (i, self.types["mask"]))
        return decls

    def op_text(self, i):
        parts = ["%%r%d = attn.sdpa %%q%d, %%k%d, %%v%d" % (i, i, i, i)]
        if self.mask is not None:
            parts.append("mask(%%m%d : %s)" % (i, self.mask_kind))
        if self.causal is not None:
            parts.append("causal(%s)" % self.causal)
        if self.scale is not None:
            parts.append("{scale = %r : f32}" % float(self.scale))
        types = [self.types["q"], self.types["k"], self.types["v"]]
        if self.mask is not None:
            types.append(self.types["mask"])
        return "%s : %s -> %s" % (" ".join(parts), ", ".join(types), self.types["out"])

    def reference(self):
        scale = None if self.scale is None else float(np.float32(self.scale))
        mask = None if self.mask is None else self.mask
        if mask is not None and self.mask_kind == "additive":
            mask = mask.astype(np.float64)
        return attn_exec.ref_sdpa(self.q, self.k, self.v, mask=mask,
                                  mask_kind=self.mask_kind, causal=self.causal,
                                  scale=scale, return_weights=True)


def module_text(entry, cases):
    decls, ops, results, rtypes = [], [], [], []
    for i, c in enumerate(cases):
        decls += c.arg_decls(i)
        ops.append("  " + c.op_text(i))
        results.append("%%r%d" % i)
        rtypes.append(c.types["out"])
    return "func.func @%s(%s) -> (%s) {\n%s\n  return %s : %s\n}\n" % (
        entry, ", ".join(decls), ", ".join(rtypes), "\n".join(ops),
        ", ".join(results), ", ".join(rtypes))


def check_case(c, got):
    want, weights = c.reference()
    atol, rtol = TOLERANCE[c.dtype]
    if got.dtype != NPY_DTYPE[c.dtype]:
        raise AssertionError("%s: result dtype %s, want %s"
                             % (c.name, got.dtype, np.dtype(NPY_DTYPE[c.dtype])))
    attn_exec.assert_close(c.name, got, want, atol=atol, rtol=rtol)
    # Query rows with no visible key must be exactly 0 (not NaN, not a
    # uniform average).
    empty = weights.sum(axis=-1) == 0
    if empty.any():
        rows = got[empty]
        if not np.all(rows == 0):
            idx = np.argwhere(empty)[np.argmax(np.any(rows != 0, axis=-1))]
            raise AssertionError("%s: fully masked row %s is %r, want exact 0"
                                 % (c.name, tuple(int(i) for i in idx),
                                    got[tuple(idx)]))
        print("%s: %d fully masked rows exactly 0" % (c.name, int(empty.sum())))


def run_group(work, group, cases, failures):
    def attempt(entry, subset):
        outs = attn_exec.run(module_text(entry, subset), entry,
                             [a for c in subset for a in c.inputs()], work,
                             num_outputs=len(subset))
        for c, got in zip(subset, outs):
            try:
                check_case(c, got)
            except AssertionError as e:
                print("FAIL: %s" % e)
                failures.append((c, str(e)))

    try:
        attempt(group, cases)
    except attn_exec.AttentionRunError as e:
        print("group %s failed to run; running its cases one by one:\n%s" % (group, e))
        for i, c in enumerate(cases):
            try:
                attempt("%s_case%d" % (group, i), [c])
            except attn_exec.AttentionRunError as e1:
                print("FAIL: %s: %s" % (c.name, e1))
                failures.append((c, str(e1)))


# ----------------------------------------------------------------------------
# Case construction.

def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def bool_mask(shape, p_true, force):
    """Random mask; along the last axis one random position is set to
    `force` so that no broadcast row is accidentally fully masked."""
    m = rng.random(shape) < p_true
    flat = m.reshape(-1, shape[-1])
    flat[np.arange(flat.shape[0]), rng.integers(0, shape[-1], flat.shape[0])] = force
    return flat.reshape(shape)


def additive_mask(shape, fill):
    """0 where attended and `fill` (-inf, -1e9) where masked, with one
    attended position per row."""
    return np.where(bool_mask(shape, 0.35, False), np.float32(fill), np.float32(0))


def qkv(batch, hq, hkv, tq, tk, d, dv=None):
    dv = d if dv is None else dv
    return (normal(*batch, hq, tq, d), normal(*batch, hkv, tk, d),
            normal(*batch, hkv, tk, dv))


def causal_cases():
    cases = []
    for tq, tk in [(5, 9), (9, 5), (7, 7)]:
        for causal in (None, "top_left", "bottom_right"):
            cases.append(Case("causal=%s Tq=%d Tk=%d" % (causal, tq, tk),
                              *qkv([2], 3, 3, tq, tk, 16), causal=causal))
    return cases


def gqa_cases():
    b, tq, tk = 2, 6, 10
    pad = bool_mask((b, 1, 1, tk), 0.7, True)
    return [
        Case("gqa 8/2", *qkv([b], 8, 2, tq, tk, 16)),
        Case("gqa 8/2 causal=bottom_right", *qkv([b], 8, 2, tq, tk, 16), causal="bottom_right"),
        Case("mqa 8/1 causal=top_left", *qkv([b], 8, 1, tq, tk, 16), causal="top_left"),
        Case("mqa 8/1 Tq=Tk=7", *qkv([b], 8, 1, 7, 7, 16)),
        Case("gqa 8/2 padding mask [B,1,1,Tk] attend_where_true causal=bottom_right",
             *qkv([b], 8, 2, tq, tk, 16), mask=pad, mask_kind="attend_where_true",
             causal="bottom_right"),
        Case("gqa 6/3 d=40 dv=24", *qkv([b], 6, 3, tq, tk, 40, 24)),
        Case("gqa 4/2 rank-3 (no batch)", *qkv([], 4, 2, tq, tk, 16), causal="top_left"),
    ]


def mask_cases():
    b, h, tq, tk, d = 2, 4, 5, 9, 16
    cases = []
    shapes = [(tq, tk), (1, 1, tq, tk), (b, 1, 1, tk), (tk,), (h, 1, tk), (b, h, tq, tk)]
    for kind, force in (("masked_where_true", False), ("attend_where_true", True)):
        for shape in shapes:
            cases.append(Case("mask %s %s" % (kind, list(shape)), *qkv([b], h, h, tq, tk, d),
                              mask=bool_mask(shape, 0.4 if force is False else 0.6, force),
                              mask_kind=kind))
    for fill in (-np.inf, -1e9):
        for shape in [(tq, tk), (1, 1, tq, tk), (b, 1, 1, tk)]:
            cases.append(Case("mask additive %g %s" % (fill, list(shape)),
                              *qkv([b], h, h, tq, tk, d), mask=additive_mask(shape, fill),
                              mask_kind="additive"))
    # A finite additive bias (ALiBi-like) changes the weights, not only which
    # keys are visible.
    cases.append(Case("mask additive bias [H,Tq,Tk]", *qkv([b], h, h, tq, tk, d),
                      mask=normal(h, tq, tk), mask_kind="additive"))
    cases.append(Case("mask additive bias+-inf [B,H,Tq,Tk] causal=bottom_right",
                      *qkv([b], h, h, tq, tk, d),
                      mask=normal(b, h, tq, tk) + additive_mask((b, h, tq, tk), -np.inf),
                      mask_kind="additive", causal="bottom_right"))
    cases.append(Case("mask masked_where_true [Tq,Tk] causal=top_left Tq=Tk=7",
                      *qkv([b], h, h, 7, 7, d), mask=bool_mask((7, 7), 0.3, False),
                      causal="top_left"))
    return cases


def fully_masked_cases():
    b, h, tq, tk, d = 2, 3, 6, 8, 16
    m1 = bool_mask((b, 1, tq, tk), 0.3, False)
    m1[:, :, 0, :] = True
    m1[1, :, 3, :] = True
    m2 = bool_mask((tq, tk), 0.6, True)
    m2[2, :] = False
    m3 = additive_mask((1, 1, tq, tk), -np.inf)
    m3[0, 0, 1, :] = -np.inf
    m4 = np.zeros((tq, tk), dtype=bool)
    m4[0, 0] = True  # hides the only key row 0 sees under top-left causality
    pad = np.ones((b, 1, 1, tk), dtype=bool)
    pad[1] = False  # the whole second sequence is padding
    return [
        Case("fully masked rows masked_where_true [B,1,Tq,Tk]", *qkv([b], h, h, tq, tk, d),
             mask=m1, mask_kind="masked_where_true"),
        Case("fully masked row attend_where_true [Tq,Tk]", *qkv([b], h, h, tq, tk, d),
             mask=m2, mask_kind="attend_where_true"),
        Case("fully masked row additive -inf [1,1,Tq,Tk]", *qkv([b], h, h, tq, tk, d),
             mask=m3, mask_kind="additive"),
        Case("fully masked row mask+causal=top_left", *qkv([b], h, h, tq, tk, d),
             mask=m4, causal="top_left"),
        Case("fully masked batch padding [B,1,1,Tk]", *qkv([b], h, h, tq, tk, d),
             mask=pad, mask_kind="attend_where_true"),
        Case("fully masked rows causal=bottom_right Tq=12 Tk=4", *qkv([1], 2, 2, 12, 4, d),
             causal="bottom_right"),
    ]


def head_dim_cases():
    cases = []
    for d in (16, 40, 64):
        cases.append(Case("head_dim=%d" % d, *qkv([1], 2, 2, 8, 11, d)))
        cases.append(Case("head_dim=%d causal=top_left" % d, *qkv([1], 2, 2, 11, 11, d),
                          causal="top_left"))
    cases.append(Case("head_dim=40 dv=24", *qkv([1], 2, 2, 8, 11, 40, 24)))
    cases.append(Case("head_dim=64 dv=16 causal=bottom_right", *qkv([1], 2, 2, 5, 11, 64, 16),
                      causal="bottom_right"))
    cases.append(Case("scale=0.3", *qkv([1], 2, 2, 8, 11, 16), scale=0.3))
    cases.append(Case("scale=1.0 head_dim=64", *qkv([1], 2, 2, 8, 11, 64), scale=1.0))
    return cases


def rank_cases():
    return [
        Case("rank-2", normal(7, 16), normal(9, 16), normal(9, 8)),
        Case("rank-2 mask [Tq,Tk] causal=bottom_right", normal(7, 16), normal(9, 16),
             normal(9, 8), mask=bool_mask((7, 9), 0.3, False), causal="bottom_right"),
        Case("rank-2 additive [Tk]", normal(7, 16), normal(9, 16), normal(9, 8),
             mask=normal(9), mask_kind="additive"),
        Case("rank-5 gqa 4/2 mask [2,1,1,1,Tk]", *qkv([2, 3], 4, 2, 6, 7, 16),
             mask=bool_mask((2, 1, 1, 1, 7), 0.3, False)),
    ]


def low_precision_cases(dtype):
    cases = [
        Case("%s rank-2" % dtype, normal(7, 16), normal(9, 16), normal(9, 8), dtype=dtype),
        Case("%s causal=bottom_right Tq=9 Tk=5 d=64" % dtype, *qkv([1], 2, 2, 9, 5, 64),
             causal="bottom_right", dtype=dtype),
        Case("%s gqa 8/2 causal=top_left d=40" % dtype, *qkv([2], 8, 2, 6, 6, 40),
             causal="top_left", dtype=dtype),
        Case("%s mask additive bias+-inf [1,1,Tq,Tk]" % dtype, *qkv([2], 2, 2, 5, 9, 16),
             mask=normal(1, 1, 5, 9) + additive_mask((1, 1, 5, 9), -np.inf),
             mask_kind="additive", dtype=dtype),
        Case("%s mask masked_where_true [B,1,1,Tk]" % dtype, *qkv([2], 2, 2, 5, 9, 16),
             mask=bool_mask((2, 1, 1, 9), 0.4, False), dtype=dtype),
        Case("%s mask attend_where_true [Tq,Tk] with empty row" % dtype,
             *qkv([2], 2, 2, 5, 9, 16),
             mask=np.vstack([bool_mask((4, 9), 0.6, True), np.zeros((1, 9), bool)]),
             mask_kind="attend_where_true", dtype=dtype),
        Case("%s head_dim=64 scale=0.2" % dtype, *qkv([1], 2, 2, 8, 8, 64), scale=0.2,
             dtype=dtype),
    ]
    if dtype == "bf16":
        # -1e9 is representable in bf16 (not in f16, where it is -inf).
        cases.append(Case("bf16 mask additive -1e9 [B,1,1,Tk]", *qkv([2], 2, 2, 5, 9, 16),
                          mask=additive_mask((2, 1, 1, 9), -1e9), mask_kind="additive",
                          dtype=dtype))
    return cases


def dynamic_cases(b, tq, tk):
    """The same dynamic signatures, instantiated at runtime sizes (b, tq, tk)."""
    return [
        Case("dynamic gqa 4/2 padding mask causal=bottom_right B=%d Tq=%d Tk=%d" % (b, tq, tk),
             *qkv([b], 4, 2, tq, tk, 16), mask=bool_mask((b, 1, 1, tk), 0.7, True),
             mask_kind="attend_where_true", causal="bottom_right",
             types={"q": [None, 4, None, 16], "k": [None, 2, None, 16],
                    "v": [None, 2, None, 16], "mask": [None, 1, 1, None],
                    "out": [None, 4, None, 16]}),
        Case("dynamic rank-2 additive causal=top_left Tq=%d Tk=%d" % (tq, tk),
             normal(tq, 32), normal(tk, 32), normal(tk, 24),
             mask=normal(tq, tk), mask_kind="additive", causal="top_left",
             types={"q": [None, 32], "k": [None, 32], "v": [None, 24],
                    "mask": [None, None], "out": [None, 24]}),
        Case("dynamic 2x8x?x16 mask [1,Tq,Tk] causal=bottom_right scale=0.125 Tq=%d Tk=%d"
             % (tq, tk),
             *qkv([2], 8, 2, tq, tk, 16), mask=bool_mask((1, tq, tk), 0.6, True),
             mask_kind="attend_where_true", causal="bottom_right", scale=0.125,
             types={"q": [2, 8, None, 16], "k": [2, 2, None, 16], "v": [2, 2, None, 16],
                    "mask": [1, None, None], "out": [2, 8, None, 16]}),
        Case("dynamic f16 causal=top_left Tq=%d Tk=%d" % (tq, tk),
             *qkv([1], 2, 2, tq, tk, 64), causal="top_left", dtype="f16",
             types={"q": [1, 2, None, 64], "k": [1, 2, None, 64], "v": [1, 2, None, 64],
                    "out": [1, 2, None, 64]}),
    ]


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    groups = [
        ("causal", causal_cases()),
        ("gqa", gqa_cases()),
        ("masks", mask_cases()),
        ("fully_masked", fully_masked_cases()),
        ("head_dim", head_dim_cases()),
        ("ranks", rank_cases()),
        ("f16", low_precision_cases("f16")),
        ("bf16", low_precision_cases("bf16")),
        ("dynamic_a", dynamic_cases(2, 5, 9)),
        ("dynamic_b", dynamic_cases(3, 9, 5)),
    ]
    failures = []
    total = 0
    for group, cases in groups:
        total += len(cases)
        try:
            run_group(work, group, cases, failures)
        except Exception:  # a harness error must not hide the other groups
            traceback.print_exc()
            failures.append((None, "group %s: %s" % (group, traceback.format_exc())))
    if failures:
        print("%d of %d cases FAILED:" % (len(failures), total))
        for c, msg in failures:
            print("  - %s%s" % ("" if c is None else c.name + ": ", msg.splitlines()[0]))
        sys.exit(1)
    print("sdpa_reference: all %d cases OK" % total)


# CHECK-NOT: FAIL
# CHECK: sdpa_reference: all {{[0-9]+}} cases OK

if __name__ == "__main__":
    main()
