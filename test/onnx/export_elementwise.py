# RUN: %python %s %t | FileCheck %s
#
# The elementwise ops of LLaMA-style blocks and their neighbours, from real
# torch exports: Relu, Sigmoid (SiLU), Abs, Neg, Exp, Log, Reciprocal,
# Sin, Cos, Max/Min (torch.maximum/minimum), Clip (torch.clamp: bounds as
# attributes before opset 11, as optional inputs from 11), torch.flip (a
# Slice with step -1, on dynamic axes here): one graph of all of them at
# opsets 10, 11 and 17 with dynamic axes; comparisons, logical ops,
# amax/amin, max(dim).values and argmax (Less, Greater, LessOrEqual,
# GreaterOrEqual, And, Or, Xor, Not, ReduceMax, ReduceMin, ArgMax) in one
# graph at opsets 11 and 17 with dynamic axes; Floor, Ceil, Round, Sign and
# LeakyRelu in another; torch.flatten (Flatten) at three axes; positions counted from an
# attention mask (CumSum, as HF models do) at opsets 11 and 17; then a LLaMA-style
# block (RMSNorm, rotary embeddings whose cos/sin the graph computes from
# the positions, causal attention with masked_fill, a SiLU-gated MLP),
# and the same block with GPT-NeoX's rotary table (float positions
# torch.arange(T, dtype=float32), a Range of the sequence length cast to
# float, and einsum("i,j->ij") with the inverse frequencies, an Einsum),
# and causal attention written with einsum ("bhqd,bhkd->bhqk" scores,
# "bhqk,bhkd->bhqd" weighted values: MatMul forms, raised to attn.sdpa as
# torch's matmul form is), the same over seq-major [B, T, H, d] tensors
# ("bqhd,bkhd->bhqk", "bhqk,bkhd->bqhd": MatMul with transposes, also
# raised), each run at a size other than the export's (static for the
# einsum attention) and compared with torch within 1e-5.
#
# CHECK-NOT: FAIL
# CHECK: ok zoo opset 10
# CHECK: ok zoo opset 11
# CHECK: ok zoo opset 17
# CHECK: ok mask zoo opset 11
# CHECK: ok mask zoo opset 17
# CHECK: ok rounding opset 11
# CHECK: ok rounding opset 17
# CHECK: ok flatten opset 11
# CHECK: ok flatten opset 17
# CHECK: ok position ids opset 11
# CHECK: ok position ids opset 17
# CHECK: ok llama block opset 17: raised to attn.sdpa
# CHECK: ok neox rotary block opset 17: raised to attn.sdpa
# CHECK: ok einsum attention opset 17: raised to attn.sdpa
# CHECK: ok seq-major einsum attention opset 17: raised to attn.sdpa
# CHECK: export_elementwise: all OK

import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from export_check import check_export  # noqa: E402


class Zoo(nn.Module):
    def forward(self, x, z):
        return (F.relu(x) + torch.sigmoid(x) - x.abs() * torch.exp(-x * x)
                + torch.log(x.abs() + 1) + 2 * torch.maximum(x, z) + torch.minimum(x, z)
                + x.clamp(-0.5, 0.5) + x.clamp(min=0.1) + torch.reciprocal(x * x + 1)
                + torch.sin(x) * torch.cos(z) + (-x) + torch.flip(x, [1])
                + 0.5 * torch.flip(z, [0, 1]))


class Rounding(nn.Module):
    """Floor, Ceil, Round (halves to even), Sign (also of +-inf and of
    integers) and LeakyRelu."""

    def forward(self, x, z):
        return (torch.floor(3 * x) + torch.ceil(3 * z) + torch.round(4 * x)
                + torch.round(0 * x + 2.5) + torch.round(0 * z - 0.5)
                + torch.sign(x - z) + F.leaky_relu(x, 0.2) + F.leaky_relu(z)
                + torch.sign(x * float("inf")) + torch.sign((3 * z).long()).float())


class Flatten(nn.Module):
    """torch.flatten at the start, the middle and the end (Flatten)."""

    def forward(self, x):
        return (torch.flatten(x, 1).sum(-1, keepdim=True)
                + torch.flatten(x, 0, 1)[: x.shape[0]].sum(-1)[:, None]
                + torch.flatten(x).sum() + nn.Flatten(2)(x).sum((1, 2))[:, None])


class MaskZoo(nn.Module):
    """Comparisons, logical ops, max/min reductions and argmax."""

    def forward(self, x, z):
        m = (x < z) & (x > 0) | ~(x >= z) ^ (x <= 0.5)
        return (torch.where(m, x - x.amax(-1, keepdim=True), z.amin(0))
                + x.argmax(-1, keepdim=True).float() + x.max(dim=-1, keepdim=True).values)


class PositionIds(nn.Module):
    """Positions counted from an attention mask, as HF models do."""

    def forward(self, x, mask):
        pos = (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 1)
        return x.cumsum(1) + pos.float()


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


class LlamaBlock(nn.Module):
    def __init__(self, d=32, heads=4, hidden=64, einsum_rotary=False):
        super().__init__()
        self.einsum_rotary = einsum_rotary
        self.h, self.hd = heads, d // heads
        self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.gate, self.up = nn.Linear(d, hidden, bias=False), nn.Linear(d, hidden, bias=False)
        self.down = nn.Linear(hidden, d, bias=False)
        inv = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        self.register_buffer("inv_freq", inv)

    def forward(self, x):
        b, t, d = x.shape
        h = self.norm1(x)
        q, k, v = (p(h).view(b, t, self.h, self.hd).transpose(1, 2)
                   for p in (self.q, self.k, self.v))
        if self.einsum_rotary:
            # GPT-NeoX: float positions, an outer product by einsum.
            freqs = torch.einsum("i,j->ij", torch.arange(t, dtype=torch.float32),
                                 self.inv_freq)
        else:
            # (int64 positions cast to float, as Hugging Face LLaMA writes them)
            freqs = torch.arange(t).float()[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        s = q @ k.transpose(2, 3) / (self.hd ** 0.5)
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)
        s = s.masked_fill(mask, float("-inf"))
        a = torch.softmax(s, dim=-1) @ v
        x = x + self.o(a.transpose(1, 2).reshape(b, t, d))
        h = self.norm2(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


class EinsumAttention(nn.Module):
    """Causal attention written with einsum, over [B, H, T, d] tensors or
    (seq_major) [B, T, H, d] ones."""

    def __init__(self, seq_major=False):
        super().__init__()
        self.seq_major = seq_major

    def forward(self, q, k, v):
        t = q.shape[1 if self.seq_major else 2]
        qkv = "bqhd,bkhd" if self.seq_major else "bhqd,bhkd"
        s = torch.einsum(qkv + "->bhqk", q, k) / (q.shape[-1] ** 0.5)
        s = s.masked_fill(torch.ones(t, t, dtype=torch.bool).triu(1), float("-inf"))
        o = "bkhd->bqhd" if self.seq_major else "bhkd->bhqd"
        return torch.einsum("bhqk," + o, torch.softmax(s, dim=-1), v)


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(3)
    ok = True
    zoo = Zoo()
    run = [torch.randn(3, 7), torch.randn(3, 7)]
    example = [torch.randn(2, 5), torch.randn(2, 5)]
    for opset in (10, 11, 17):
        ok &= check_export(work, "zoo", zoo, opset, run, example)
    for opset in (11, 17):
        ok &= check_export(work, "mask zoo", MaskZoo(), opset, run, example)
    for opset in (11, 17):
        ok &= check_export(work, "rounding", Rounding(), opset, run, example)
    for opset in (11, 17):
        ok &= check_export(work, "flatten", Flatten(), opset, [torch.randn(3, 4, 5, 2)],
                           [torch.randn(2, 3, 5, 2)], names=("x",))
    mask_run = [torch.randn(3, 7), (torch.rand(3, 7) > 0.3).long()]
    mask_example = [torch.randn(2, 5), torch.ones(2, 5, dtype=torch.long)]
    for opset in (11, 17):
        ok &= check_export(work, "position ids", PositionIds(), opset, mask_run, mask_example,
                           names=("x", "mask"))
    block = LlamaBlock().eval()
    ok &= check_export(work, "llama block", block, 17, [torch.randn(2, 9, 32)],
                       [torch.randn(1, 6, 32)])
    neox = LlamaBlock(einsum_rotary=True).eval()
    ok &= check_export(work, "neox rotary block", neox, 17, [torch.randn(2, 9, 32)],
                       [torch.randn(1, 6, 32)])
    qkv = [torch.randn(2, 3, 10, 8) for _ in range(3)]
    ok &= check_export(work, "einsum attention", EinsumAttention(), 17, qkv,
                       names=("q", "k", "v"))
    qkv = [torch.randn(2, 10, 3, 8) for _ in range(3)]
    ok &= check_export(work, "seq-major einsum attention", EinsumAttention(seq_major=True), 17,
                       qkv, names=("q", "k", "v"))
    print("export_elementwise: %s" % ("all OK" if ok else "FAILED"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
