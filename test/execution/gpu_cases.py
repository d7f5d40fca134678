"""GPU attention cases shared by the CUDA execution test (gpu_sdpa.py) and
the GPU benchmark (bench/gpu/run.py): the module text of each case, its
seeded inputs, an independent reference and the tolerance.

The reference is float64 NumPy (every element) for cases up to ~10^9 score
elements; the benchmark's large cases compare with PyTorch's float32 math
on the GPU (scores, softmax and P V written out, no fused kernel)."""

import math

import numpy as np

# Tolerances on |out - ref| (inputs of unit scale, outputs of size ~0.1):
# f16 and bf16 round the probabilities fed to the P V product.
TOLERANCE = {"f16": 1e-2, "bf16": 2e-2, "f32": 2e-2}


class Case:
    def __init__(self, name, B, Hq, Tq, d, dtype, causal="none", Hk=None,
                 Tk=None, dv=None, layout="heads_major", rank=4, scale=None,
                 window=(None, None)):
        self.name, self.B, self.Hq, self.Tq, self.d = name, B, Hq, Tq, d
        self.dtype, self.causal = dtype, causal
        self.Hk = Hq if Hk is None else Hk
        self.Tk = Tq if Tk is None else Tk
        self.dv = d if dv is None else dv
        self.layout, self.rank, self.scale = layout, rank, scale
        self.window = window  # (window_left, window_right), either None

    # Shapes of q, k, v and the result as the module declares them.
    def _shape(self, H, T, width):
        if self.rank == 2:
            return [T, width]
        if self.layout == "seq_major":
            return [self.B, T, H, width]
        return [self.B, H, T, width]

    def shapes(self):
        return (self._shape(self.Hq, self.Tq, self.d), self._shape(self.Hk, self.Tk, self.d),
                self._shape(self.Hk, self.Tk, self.dv), self._shape(self.Hq, self.Tq, self.dv))

    def module(self, entry="main"):
        q, k, v, o = ("tensor<%sx%s>" % ("x".join(map(str, s)), self.dtype)
                      for s in self.shapes())
        attrs = []
        if self.causal != "none":
            attrs.append(" causal(%s)" % self.causal)
        if self.layout != "heads_major":
            attrs.append(" layout(%s)" % self.layout)
        named = ["scale = %r : f32" % self.scale] if self.scale else []
        named += ["window_%s = %d : i64" % (side, reach)
                  for side, reach in zip(("left", "right"), self.window) if reach is not None]
        scale = " {%s}" % ", ".join(named) if named else ""
        return ("func.func @%s(%%q: %s, %%k: %s, %%v: %s) -> %s {\n"
                "  %%o = attn.sdpa %%q, %%k, %%v%s%s : %s, %s, %s -> %s\n"
                "  return %%o : %s\n}\n" % (entry, q, k, v, o, "".join(attrs), scale,
                                            q, k, v, o, o))

    def flops(self):
        """Useful FLOPs: 2 (Q K^T) + 2 (P V) per visible score; causal counts
        the visible half (the FlashAttention convention)."""
        full = 2.0 * self.B * self.Hq * self.Tq * self.Tk * (self.d + self.dv)
        if self.window != (None, None):  # the visible pairs, counted
            return 2.0 * self.B * self.Hq * self.visible(np.arange(self.Tq)).sum() * (
                self.d + self.dv)
        return full / 2 if self.causal != "none" else full

    def visible(self, rows):
        """[len(rows), Tk]: which keys each query row sees (causal, window)."""
        off = self.Tk - self.Tq if self.causal == "bottom_right" else 0
        diag = np.arange(self.Tk)[None, :] - (np.asarray(rows)[:, None] + off)
        seen = np.ones(diag.shape, bool)
        if self.causal != "none":
            seen &= diag <= 0
        left, right = self.window
        if left is not None:
            seen &= diag >= -left
        if right is not None:
            seen &= diag <= right
        return seen

    def inputs(self, seed=0):
        """q, k, v as float32 arrays holding exactly representable values of
        the case's dtype (f16 cases are returned as float16)."""
        rng = np.random.default_rng(seed)
        out = []
        for s in self.shapes()[:3]:
            a = rng.standard_normal(s, dtype=np.float32)
            if self.dtype == "f16":
                a = a.astype(np.float16)
            elif self.dtype == "bf16":
                a = round_bf16(a)
            out.append(a)
        return out

    def to_bhtd(self, a):
        """An operand or result in [B, H, T, width] order."""
        a = np.asarray(a)
        if self.rank == 2:
            return a[None, None]
        if self.layout == "seq_major":
            return a.transpose(0, 2, 1, 3)
        return a

    def reference(self, q, k, v, rows=None):
        """float64 attention in [B, H, Tq, dv]; `rows` restricts the query
        rows (all if None)."""
        q, k, v = (self.to_bhtd(x).astype(np.float64) for x in (q, k, v))
        if rows is not None:
            q = q[:, :, rows]
        else:
            rows = np.arange(self.Tq)
        group = self.Hq // self.Hk
        k = np.repeat(k, group, axis=1)
        v = np.repeat(v, group, axis=1)
        scale = self.scale if self.scale else 1.0 / math.sqrt(self.d)
        s = np.matmul(q, k.swapaxes(-1, -2)) * scale
        s = np.where(self.visible(rows), s, -np.inf)
        m = s.max(axis=-1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        p = np.exp(s - m)
        l = p.sum(axis=-1, keepdims=True)
        # A query row that sees no key yields 0 (ONNX / PyTorch semantics).
        return np.matmul(p, v) / np.where(l > 0, l, np.inf)


def round_bf16(a):
    """float32 -> nearest-even bf16, returned as float32."""
    bits = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


# Correctness cases: every feature of the kernel (tails of both lengths,
# each causal alignment, rows without keys, GQA, both layouts, rank 2,
# head dims 32..256, dv != d, f32 operands, a one-token decode step).
CORRECTNESS = [
    Case("gpt2_causal_f16", 1, 12, 1024, 64, "f16", "top_left"),
    Case("gpt2_full_bf16", 1, 12, 1024, 64, "bf16"),
    Case("tails_full_f16", 2, 3, 100, 64, "f16", Tk=77),
    Case("bottom_right_bf16", 1, 2, 70, 32, "bf16", "bottom_right", Tk=200),
    Case("rows_without_keys_f16", 1, 2, 130, 64, "f16", "bottom_right", Tk=50),
    Case("gqa_causal_bf16", 2, 8, 256, 128, "bf16", "top_left", Hk=2),
    Case("seq_major_causal_f16", 2, 4, 96, 64, "f16", "top_left", layout="seq_major"),
    Case("single_head_f16", 1, 1, 333, 80, "f16", "top_left", rank=2),
    Case("head_dim_256_bf16", 1, 2, 128, 256, "bf16"),
    Case("f32_operands", 1, 4, 200, 64, "f32", "top_left"),
    Case("dv_128_f16", 1, 2, 192, 64, "f16", "top_left", dv=128, scale=0.2),
    Case("decode_step_f16", 1, 4, 1, 64, "f16", "bottom_right", Tk=1000),
    Case("xl_heads_causal_bf16", 1, 25, 1024, 64, "bf16", "top_left"),
    # Sliding windows: tiles left of the window skipped, its left edge
    # masked, two-sided, rows without keys.
    Case("window_causal_f16", 1, 4, 300, 64, "f16", "top_left", window=(100, None)),
    Case("window_two_sided_bf16", 1, 2, 200, 64, "bf16", window=(40, 17)),
    Case("window_rows_without_keys_f16", 1, 2, 130, 64, "f16", "bottom_right", Tk=50,
         window=(10, None)),
]


def check(case, out, q, k, v, rows=None):
    """Max |out - ref| and whether it is within the case's tolerance."""
    ref = case.reference(q, k, v, rows)
    got = case.to_bhtd(np.asarray(out, dtype=np.float64))
    if rows is not None:
        got = got[:, :, rows]
    if not np.all(np.isfinite(got)):
        return float("inf"), False
    err = float(np.max(np.abs(got - ref)))
    return err, err <= TOLERANCE[case.dtype]
