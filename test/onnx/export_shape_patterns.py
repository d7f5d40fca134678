# RUN: %python %s %t | FileCheck %s
#
# Shape arithmetic torch.onnx.export writes for common code, imported and
# run against torch's own output (1e-5), with dynamic axes at two lengths:
# - repeat_interleave (grouped-query K/V): the repeat count is a scalar
#   Expanded to [n] and Split, which must stay known integers for the
#   Expand that repeats the heads (it was "the target shape must be
#   known");
# - x[:, 1:] - x[:, :-1] on a dynamic axis: a start of 1 and an end of -1
#   give one length, max(T - 1, 0) (it was "cannot tell whether dim 1
#   broadcasts");
# - pe[-T:] of a static table with T = x.shape[1]: Neg of a known size,
#   and the slice keeps T itself, T accepted up to the table's rows (a
#   longer T is refused before the call, as torch would fail);
# - BART/Whisper-style attention: heads reshaped to [B * H, -1, d] for
#   torch.bmm, the key length read back with k.size(1) and the mask added
#   on the [B, H, T, S] view: the -1 is T itself, the product B * H
#   cancelling against the input's B and H (it was an opaque quotient,
#   and the mask's add could not tell whether T broadcasts);
# - a KV cache step's positions, wpe(arange(P, P + T)): Range counts
#   (P + T) - P = T elements (it was an opaque size); positions past the
#   table fail the call at the Gather's index check;
# - the rows of a KV step's positions in a static table, cos[P:P + T]
#   (rotary embeddings): the end is a sum of sizes, which the signature
#   bounds by the table's rows (checked before the call), and the start P
#   one of its terms, so the slice has T rows (it was "cannot tell whether
#   dim 1 broadcasts").

import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

RUN = os.environ["ATTENTION_RUN"]


class RepeatInterleave(nn.Module):
    def forward(self, q, k, v):
        k = k.repeat_interleave(2, dim=1)
        v = v.repeat_interleave(2, dim=1)
        return F.softmax(q @ k.transpose(-2, -1) * 0.35, dim=-1) @ v


class Shift(nn.Module):
    def forward(self, x):
        return x[:, 1:] - x[:, :-1]


class Tail(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("pe", torch.randn(16, 4))

    def forward(self, x):
        return x + self.pe[-x.shape[1]:]


class BartAttention(nn.Module):
    def __init__(self, e=16, h=2):
        super().__init__()
        self.h, self.d = h, e // h
        self.q, self.k, self.v = nn.Linear(e, e), nn.Linear(e, e), nn.Linear(e, e)

    def forward(self, x, mask):
        b, t, e = x.size()
        split = lambda y: y.view(b, -1, self.h, self.d).transpose(1, 2).reshape(
            b * self.h, -1, self.d)
        q, k, v = split(self.q(x) * self.d ** -0.5), split(self.k(x)), split(self.v(x))
        s = k.size(1)
        w = (torch.bmm(q, k.transpose(1, 2)).view(b, self.h, t, s) + mask).view(
            b * self.h, t, s)
        o = torch.bmm(F.softmax(w, dim=-1), v)
        return o.view(b, self.h, t, self.d).transpose(1, 2).reshape(b, t, e)


class Positions(nn.Module):
    def __init__(self):
        super().__init__()
        self.wpe = nn.Embedding(32, 8)

    def forward(self, x, past):
        p, t = past.shape[2], x.shape[1]
        return x + self.wpe(torch.arange(p, p + t, dtype=torch.long))


class RotaryRows(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("cos", torch.randn(32, 8))

    def forward(self, x, past):
        p, t = past.shape[2], x.shape[1]
        return x * self.cos[p:p + t]


def export(work, name, model, args, names, dynamic):
    path = os.path.join(work, name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(model.eval(), args, path, opset_version=17, input_names=names,
                          output_names=["y"], dynamic_axes=dynamic)
    return path


def check(work, name, path, model, args, names):
    cmd = [RUN, path, "--output", os.path.join(work, name + "_y.npy")]
    for n, a in zip(names, args):
        p = os.path.join(work, "%s_%s.npy" % (name, n))
        np.save(p, a.numpy())
        cmd += ["--input", "%s=%s" % (n, p)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        print("FAIL %s: %s" % (name, proc.stderr.strip().splitlines()[-1]))
        return
    with torch.no_grad():
        want = model(*args).numpy()
    got = np.load(os.path.join(work, name + "_y.npy"))
    err = float(abs(got - want).max()) if got.shape == want.shape else float("inf")
    print("%s %s shape %s" % ("ok" if err < 1e-5 else "FAIL", name, list(got.shape)))


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(0)
    t = lambda *s: torch.randn(*s)
    m = RepeatInterleave()
    names = ["q", "k", "v"]
    path = export(work, "repeat_interleave", m, (t(2, 4, 7, 8), t(2, 2, 7, 8), t(2, 2, 7, 8)),
                  names, None)
    check(work, "repeat_interleave", path, m, (t(2, 4, 7, 8), t(2, 2, 7, 8), t(2, 2, 7, 8)),
          names)
    for name, m in (("shift", Shift()), ("tail", Tail())):
        path = export(work, name, m, (t(2, 5, 4),), ["x"],
                      {"x": {0: "b", 1: "t"}, "y": {0: "b", 1: "t"}})
        for T in (3, 9):
            check(work, "%s_T%d" % (name, T), path, m, (t(2, T, 4),), ["x"])
    m = BartAttention()
    path = export(work, "bart", m, (t(2, 6, 16), torch.zeros(2, 1, 6, 6)), ["x", "mask"],
                  {"x": {0: "b", 1: "t"}, "mask": {0: "b", 2: "t", 3: "t"},
                   "y": {0: "b", 1: "t"}})
    for B, T in ((1, 3), (3, 9)):
        mask = torch.zeros(B, 1, T, T)
        mask[..., :, :1] = -1e4  # the first key padded
        check(work, "bart_B%d_T%d" % (B, T), path, m, (t(B, T, 16), mask), ["x", "mask"])
    np.save(os.path.join(work, "x3.npy"), np.zeros((1, 3, 8), np.float32))
    np.save(os.path.join(work, "past30.npy"), np.zeros((1, 4, 30, 8), np.float32))
    # A KV step's positions: in range at three (T, P), then 30..32 of 32.
    for name, m in (("positions", Positions()), ("rotary", RotaryRows())):
        path = export(work, name, m, (t(2, 3, 8), t(2, 4, 5, 8)), ["x", "past"],
                      {"x": {0: "b", 1: "t"}, "past": {0: "b", 2: "p"},
                       "y": {0: "b", 1: "t"}})
        for T, P in ((3, 5), (1, 1), (4, 28)):
            check(work, "%s_T%d_P%d" % (name, T, P), path, m, (t(2, T, 8), t(2, 4, P, 8)),
                  ["x", "past"])
        proc = subprocess.run([RUN, path, "--input", "x=" + os.path.join(work, "x3.npy"),
                               "--input", "past=" + os.path.join(work, "past30.npy"),
                               "--output", os.path.join(work, name + "_late_y.npy")],
                              capture_output=True, text=True)
        print("%s 30..32: exit %d: %s" % (name, proc.returncode,
                                         proc.stderr.strip().splitlines()[-1]))
    # T = 17 rows of a 16-row table: refused before the call.
    np.save(os.path.join(work, "long.npy"), np.zeros((1, 17, 4), np.float32))
    proc = subprocess.run([RUN, os.path.join(work, "tail.onnx"), "--input",
                           "x=" + os.path.join(work, "long.npy"), "--output",
                           os.path.join(work, "long_y.npy")], capture_output=True, text=True)
    print("tail T=17: exit %d: %s" % (proc.returncode, proc.stderr.strip().splitlines()[-1]))


if __name__ == "__main__":
    main()

# CHECK: ok repeat_interleave shape [2, 4, 7, 8]
# CHECK: ok shift_T3 shape [2, 2, 4]
# CHECK: ok shift_T9 shape [2, 8, 4]
# CHECK: ok tail_T3 shape [2, 3, 4]
# CHECK: ok tail_T9 shape [2, 9, 4]
# CHECK: ok bart_B1_T3 shape [1, 3, 16]
# CHECK: ok bart_B3_T9 shape [3, 9, 16]
# CHECK: ok positions_T3_P5 shape [2, 3, 8]
# CHECK: ok positions_T1_P1 shape [2, 1, 8]
# CHECK: ok positions_T4_P28 shape [2, 4, 8]
# CHECK: positions 30..32: exit 1: {{.*}}(Gather, indices '/Range_output_0'): index 32 is outside [-32, 32)
# CHECK: ok rotary_T3_P5 shape [2, 3, 8]
# CHECK: ok rotary_T1_P1 shape [2, 1, 8]
# CHECK: ok rotary_T4_P28 shape [2, 4, 8]
# CHECK: rotary 30..32: exit 1: attention-run: error: @main: input 1 (past) dim 2 + input 0 (x) dim 1 <= 32 is needed, but the inputs give 30 + 3 = 33
# CHECK: tail T=17: exit 1: {{.*}}dim 1 is 17 but the module accepts at most 16
# CHECK-NOT: FAIL
