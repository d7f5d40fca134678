"""GPU attention cases shared by the CUDA execution test (gpu_sdpa.py) and
the GPU benchmark (bench/gpu/run.py): the module text of each case, its
seeded inputs, an independent reference and the tolerance.

The reference is float64 NumPy (every element) for cases up to ~10^9 score
elements; the benchmark's large cases compare with PyTorch's float32 math
on the GPU (scores, softmax and P V written out, no fused kernel)."""

import math

import numpy as np

import attn_exec

# Tolerances on |out - ref| (inputs of unit scale, outputs of size ~0.1):
# f16 and bf16 round the probabilities fed to the P V product.
TOLERANCE = {"f16": 1e-2, "bf16": 2e-2, "f32": 2e-2}


class Case:
    def __init__(self, name, B, Hq, Tq, d, dtype, causal="none", Hk=None,
                 Tk=None, dv=None, layout="heads_major", rank=4, scale=None,
                 window=(None, None), softcap=None, dropout=None, mask=None,
                 padding=None):
        self.name, self.B, self.Hq, self.Tq, self.d = name, B, Hq, Tq, d
        self.dtype, self.causal = dtype, causal
        self.Hk = Hq if Hk is None else Hk
        self.Tk = Tq if Tk is None else Tk
        self.dv = d if dv is None else dv
        self.layout, self.rank, self.scale = layout, rank, scale
        self.window = window  # (window_left, window_right), either None
        self.softcap = softcap
        self.dropout = dropout  # (dropout_p, seed) or None
        # (kind, shape): an explicit mask operand of kind
        # "attend_where_true", "masked_where_true" (i1) or "additive" whose
        # dims align with the trailing dims of the scores [B, Hq, Tq, Tk].
        self.mask = mask
        # (value, n): an additive mask that is 0 but for `value` on its
        # first n keys (a padding mask) instead of random values.
        self.padding = padding

    # Shapes of q, k, v and the result as the module declares them.
    def _shape(self, H, T, width):
        if self.rank == 2:
            return [T, width]
        if self.layout == "packed":
            return [self.B, T, H * width]
        if self.layout == "seq_major":
            return [self.B, T, H, width]
        return [self.B, H, T, width]

    def shapes(self):
        return (self._shape(self.Hq, self.Tq, self.d), self._shape(self.Hk, self.Tk, self.d),
                self._shape(self.Hk, self.Tk, self.dv), self._shape(self.Hq, self.Tq, self.dv))

    def module(self, entry="main"):
        q, k, v, o = ("tensor<%sx%s>" % ("x".join(map(str, s)), self.dtype)
                      for s in self.shapes())
        # layout "packed": [B, T, H * width] arguments and result, expanded
        # to seq_major [B, T, H, width] around the attn.sdpa.
        reshapes = ""
        names = ("%q", "%k", "%v")
        outer = (q, k, v, o)
        if self.layout == "packed":
            inner = ["tensor<%dx%dx%dx%dx%s>" % (self.B, T, H, w, self.dtype)
                     for H, T, w in ((self.Hq, self.Tq, self.d), (self.Hk, self.Tk, self.d),
                                     (self.Hk, self.Tk, self.dv), (self.Hq, self.Tq, self.dv))]
            for n, H, T, w, t_out, t_in in zip(
                    names, (self.Hq, self.Hk, self.Hk), (self.Tq, self.Tk, self.Tk),
                    (self.d, self.d, self.dv), outer, inner):
                reshapes += ("  %s4 = tensor.expand_shape %s [[0], [1], [2, 3]] output_shape "
                             "[%d, %d, %d, %d] : %s into %s\n"
                             % (n, n, self.B, T, H, w, t_out, t_in))
            names = tuple(n + "4" for n in names)
            q, k, v, o = inner
        attrs = []
        marg = mtype = ""
        if self.mask is not None:
            kind, shape = self.mask
            mt = "tensor<%sx%s>" % ("x".join(map(str, shape)),
                                    self.dtype if kind == "additive" else "i1")
            marg, mtype = ", %%m: %s" % mt, ", " + mt
            attrs.append(" mask(%%m : %s)" % kind)
        if self.causal != "none":
            attrs.append(" causal(%s)" % self.causal)
        if self.layout != "heads_major":
            attrs.append(" layout(%s)" % ("seq_major" if self.layout == "packed"
                                          else self.layout))
        named = ["scale = %r : f32" % self.scale] if self.scale else []
        named += ["window_%s = %d : i64" % (side, reach)
                  for side, reach in zip(("left", "right"), self.window) if reach is not None]
        if self.softcap is not None:
            named.append("softcap = %r : f32" % self.softcap)
        if self.dropout is not None:
            named.append("dropout_p = %r : f32, seed = %d : i64" % self.dropout)
        scale = " {%s}" % ", ".join(named) if named else ""
        result = "%o"
        if self.layout == "packed":
            reshapes_out = ("  %%o3 = tensor.collapse_shape %%o [[0], [1], [2, 3]] : %s into %s\n"
                            % (o, outer[3]))
            result = "%o3"
        else:
            reshapes_out = ""
        return ("func.func @%s(%%q: %s, %%k: %s, %%v: %s%s) -> %s {\n%s"
                "  %%o = attn.sdpa %s, %s, %s%s%s : %s, %s, %s%s -> %s\n%s"
                "  return %s : %s\n}\n"
                % (entry, outer[0], outer[1], outer[2], marg, outer[3], reshapes,
                   names[0], names[1], names[2], "".join(attrs), scale,
                   q, k, v, mtype, o, reshapes_out, result, outer[3]))

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
        """q, k, v (and the mask, if any) as float32 arrays holding exactly
        representable values of the case's dtype (f16 cases are returned as
        float16); a bool mask is true for about one key in five, an
        additive one adds N(0, 2), and -inf to about one in ten."""
        rng = np.random.default_rng(seed)
        out = []
        for s in self.shapes()[:3]:
            out.append(self._round(rng.standard_normal(s, dtype=np.float32)))
        if self.mask is not None:
            kind, shape = self.mask
            if kind != "additive":
                out.append(rng.random(shape) < 0.2)
            elif self.padding is not None:
                a = np.zeros(shape, np.float32)
                a[..., :self.padding[1]] = self.padding[0]
                out.append(self._round(a))
            else:
                a = rng.standard_normal(shape, dtype=np.float32) * 2
                a[rng.random(shape) < 0.1] = -np.inf
                out.append(self._round(a))
        return out

    def _round(self, a):
        if self.dtype == "f16":
            return a.astype(np.float16)
        if self.dtype == "bf16":
            return round_bf16(a)
        return a

    def to_bhtd(self, a, H=None):
        """An operand or result in [B, H, T, width] order; H (the query
        heads by default) splits a packed one."""
        a = np.asarray(a)
        if self.rank == 2:
            return a[None, None]
        if self.layout == "packed":
            H = self.Hq if H is None else H
            return a.reshape(a.shape[0], a.shape[1], H, -1).transpose(0, 2, 1, 3)
        if self.layout == "seq_major":
            return a.transpose(0, 2, 1, 3)
        return a

    def reference(self, q, k, v, mask=None, rows=None):
        """float64 attention in [B, H, Tq, dv]; `rows` restricts the query
        rows (all if None)."""
        q, k, v = (self.to_bhtd(x, H).astype(np.float64)
                   for x, H in ((q, self.Hq), (k, self.Hk), (v, self.Hk)))
        if rows is not None:
            q = q[:, :, rows]
        else:
            rows = np.arange(self.Tq)
        group = self.Hq // self.Hk
        k = np.repeat(k, group, axis=1)
        v = np.repeat(v, group, axis=1)
        scale = self.scale if self.scale else 1.0 / math.sqrt(self.d)
        s = np.matmul(q, k.swapaxes(-1, -2)) * scale
        if self.softcap is not None:  # before the mask
            s = self.softcap * np.tanh(s / self.softcap)
        if mask is not None:
            m = np.asarray(mask)
            m = m.reshape((1,) * (4 - m.ndim) + m.shape)
            m = np.broadcast_to(m, (s.shape[0], self.Hq, self.Tq, self.Tk))[:, :, rows]
            if self.mask[0] == "additive":
                # Added in f32, as the kernels do: a score plus
                # finfo(f32).min rounds to finfo(f32).min.
                s = (s.astype(np.float32) + m.astype(np.float32)).astype(np.float64)
            else:
                s = np.where(m == (self.mask[0] == "attend_where_true"), s, -np.inf)
        s = np.where(self.visible(rows), s, -np.inf)
        m = s.max(axis=-1, keepdims=True)
        m = np.where(np.isfinite(m), m, 0.0)
        p = np.exp(s - m)
        l = p.sum(axis=-1, keepdims=True)
        if self.dropout is not None:
            # After the row sums: weight (b, h, row, key) is kept, times
            # 1 / (1 - p), iff the Philox uniform of its flat index in
            # [B, Hq, Tq, Tk] is >= p (the f32 attribute value).
            drop_p = float(np.float32(self.dropout[0]))
            B = q.shape[0]
            flat = ((np.arange(B)[:, None, None, None] * self.Hq
                     + np.arange(self.Hq)[None, :, None, None]) * self.Tq
                    + np.asarray(rows)[None, None, :, None]) * self.Tk \
                + np.arange(self.Tk)[None, None, None, :]
            u = attn_exec.philox_uniform(flat.astype(np.uint64), self.dropout[1])
            p = np.where(u >= drop_p, p / (1.0 - drop_p), 0.0)
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
    # Softcaps small enough to bend most scores (tanh saturates), with a
    # window, and with scale 1 (scores of size 8 against a cap of 3).
    Case("softcap_causal_bf16", 1, 4, 200, 64, "bf16", "top_left", softcap=2.0),
    Case("softcap_window_f16", 2, 2, 150, 32, "f16", "bottom_right", Tk=190, scale=1.0,
         window=(60, None), softcap=3.0),
    # Dropout: Philox keep-masks on the flat [B, Hq, Tq, Tk] index (GQA
    # heads, seq_major rows, a 64-bit seed, tails, a softcap and a window).
    Case("dropout_causal_f16", 2, 3, 130, 64, "f16", "top_left", dropout=(0.2, 7)),
    Case("dropout_gqa_bf16", 1, 6, 100, 32, "bf16", "bottom_right", Hk=2, Tk=170,
         dropout=(0.5, 2**40 + 12345)),
    Case("dropout_seq_major_softcap_f16", 2, 2, 90, 64, "f16", layout="seq_major",
         window=(30, 30), softcap=5.0, dropout=(0.1, 99)),
    # Head dims of 16 n + 8 end in a half step of Q K^T (d = 8, 24, 40; a
    # value head dim of 72).
    Case("head_dim_40_f16", 1, 4, 150, 40, "f16", "top_left"),
    Case("head_dim_24_dv_72_bf16", 2, 2, 90, 24, "bf16", Tk=130, dv=72),
    Case("head_dim_8_f32", 1, 3, 70, 8, "f32", "bottom_right", Tk=100),
    # Head dims that are not multiples of 8 (computed padded with zeros,
    # staged by element, stored by element): 10, 33 with dv 6, and 1.
    Case("head_dim_10_f16", 2, 3, 77, 10, "f16", "top_left"),
    Case("head_dim_33_dv_6_bf16", 1, 4, 100, 33, "bf16", Hk=2, Tk=150, dv=6),
    Case("head_dim_1_f32", 1, 2, 40, 1, "f32", "bottom_right", Tk=60),
    # Packed heads [B, T, H * width] (ONNX's 3-D attention), reshaped to
    # seq_major around the attn.sdpa: views of the caller's buffers.
    Case("packed_gqa_causal_f16", 2, 6, 100, 64, "f16", "bottom_right", Hk=2, Tk=130,
         dv=32, layout="packed"),
    Case("packed_head_dim_40_mask_bf16", 1, 4, 80, 40, "bf16", layout="packed",
         mask=("attend_where_true", (1, 1, 1, 80))),
    # Explicit masks (dims of size 1 broadcast): key padding, a full
    # additive mask with -inf entries under GQA, a rank-2 mask with causal
    # and a window, rows hidden whole by a mask without a key dim (they
    # give 0), and an additive mask with a softcap and dropout.
    Case("mask_key_padding_f16", 2, 4, 150, 64, "f16",
         mask=("masked_where_true", (2, 1, 1, 150))),
    Case("mask_additive_gqa_bf16", 1, 4, 100, 64, "bf16", "bottom_right", Hk=2, Tk=130,
         mask=("additive", (1, 4, 100, 130))),
    Case("mask_rank2_window_f16", 1, 1, 77, 32, "f16", "top_left", rank=2,
         window=(40, None), mask=("masked_where_true", (77, 77))),
    Case("mask_hidden_rows_f32", 2, 2, 90, 64, "f32", layout="seq_major",
         mask=("attend_where_true", (90, 1))),
    Case("mask_additive_softcap_dropout_f16", 2, 2, 64, 32, "f16", Tk=96, softcap=5.0,
         dropout=(0.15, 3), mask=("additive", (2, 1, 64, 96))),
    # Hugging Face's padding mask of finfo(f32).min on the first 20 keys,
    # causal: rows 0-19 see only padded keys, whose equal scores weigh
    # uniformly (finfo.min times log2(e) overflowed to -inf: rows of 0).
    Case("mask_finfo_min_padding_f32", 1, 2, 70, 64, "f32", "top_left",
         mask=("additive", (1, 1, 1, 70)),
         padding=(float(np.finfo(np.float32).min), 20)),
]


def check(case, out, q, k, v, mask=None, rows=None):
    """Max |out - ref| and whether it is within the case's tolerance."""
    ref = case.reference(q, k, v, mask, rows)
    got = case.to_bhtd(np.asarray(out, dtype=np.float64))
    if rows is not None:
        got = got[:, :, rows]
    if not np.all(np.isfinite(got)):
        return float("inf"), False
    err = float(np.max(np.abs(got - ref)))
    return err, err <= TOLERANCE[case.dtype]
