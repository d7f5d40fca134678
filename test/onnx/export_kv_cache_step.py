# RUN: %python %s %t | FileCheck %s
#
# A cached attention step written as PyTorch code (GPT-2's layout: fused
# QKV projection, heads split by view/transpose, torch.cat onto the past
# keys and values, the causal mask built as ones(T, Tk).tril(diagonal=Tk -
# T) and applied with masked_fill(~mask, -inf)), exported by
# torch.onnx.export with the new-token and past lengths as dynamic axes
# (opset 17). The diagonal is computed from shapes (Trilu with a dynamic
# k) and the mask negated with Not; the scores-to-weights chain is raised to
# one attn.sdpa (the concatenated lengths are one symbolic size, past + T,
# on K and V). That mask hides key j of row i where j > i + (Tk - T): it
# is the bottom-right causal triangle, so the sdpa is causal(bottom_right)
# with no mask operand and the mask's ops are gone. The same step with the
# diagonal one further left (Tk - T - 1, a window no causal alignment
# describes) keeps its mask as an explicit operand. One compiled file per
# model runs a decode step (past 10, one token) and a chunk (past 33, three
# tokens); the output and both presents are compared with torch within
# 1e-5 (the past part of the presents exactly); each dynamic model also runs
# the first step of a cache, past 0 (empty past_key and past_value, as
# ONNX Runtime GenAI feeds them), where present is the new keys and values.
#
# CHECK-LABEL: model diagonal=Tk-T
# CHECK: import: attn.sdpa causal(bottom_right), no mask operand, no Trilu ops left
# CHECK: remark: raised 5 ONNX nodes to attn.sdpa: MatMul '/MatMul', Div '/Div', Where '/Where', Softmax '/Softmax', MatMul '/MatMul_1'
# CHECK: step past=10 T=1: y max_abs_err {{.*}} ok, present_key ok, present_value ok
# CHECK: step past=0 T=3: y max_abs_err {{.*}} ok, present_key ok, present_value ok
# CHECK: step past=33 T=3: y max_abs_err {{.*}} ok, present_key ok, present_value ok
# CHECK-LABEL: model diagonal=Tk-T-1
# CHECK: import: attn.sdpa with an explicit mask operand, not causal
# CHECK: remark: raised 5 ONNX nodes to attn.sdpa
# CHECK: step past=10 T=1: y max_abs_err {{.*}} ok, present_key ok, present_value ok
# CHECK: step past=0 T=3: y max_abs_err {{.*}} ok, 1 row(s) seeing no key: 0 attention (torch NaN) ok, present_key ok, present_value ok
# CHECK: step past=33 T=3: y max_abs_err {{.*}} ok, present_key ok, present_value ok
# CHECK-LABEL: model diagonal=Tk-T static
# CHECK: import: attn.sdpa causal(bottom_right), no mask operand, no Trilu ops left
# CHECK: step past=33 T=3: y max_abs_err {{.*}} ok, present_key ok, present_value ok
# Hugging Face GPT-2's form: a bool tril buffer of n_positions rows,
# sliced bias[:, :, Tk - T:Tk, :Tk] (the rows of the past + new positions)
# and applied by torch.where with finfo.min. The slice's ends are past + T,
# which the signature bounds by the buffer's 64 rows (checked before the
# call); its rows start at Tk - T, so it is the bottom-right triangle.
# CHECK-LABEL: model hf-bias-slice
# CHECK: import: attn.sdpa causal(bottom_right), no mask operand, no Trilu ops left
# CHECK: remark: raised 5 ONNX nodes to attn.sdpa
# CHECK: step past=10 T=1: y max_abs_err {{.*}} ok, present_key ok, present_value ok
# CHECK: step past=0 T=4: y max_abs_err {{.*}} ok, present_key ok, present_value ok
# CHECK: step past=33 T=3: y max_abs_err {{.*}} ok, present_key ok, present_value ok
# CHECK: step past=60 T=4: y max_abs_err {{.*}} ok, present_key ok, present_value ok
# CHECK: step past=61 T=4: attention-run exit 1: attention-run: error: @main: input 1 (past_key) dim 2 + input 0 (x) dim 1 <= 64 is needed, but the inputs give 61 + 4 = 65
# CHECK-LABEL: model hf-bias-slice static
# CHECK: import: attn.sdpa causal(bottom_right), no mask operand, no Trilu ops left
# CHECK: step past=33 T=3: y max_abs_err {{.*}} ok, present_key ok, present_value ok
# CHECK-NOT: FAIL

import math
import os
import subprocess
import sys

import numpy as np
import torch

RUN = os.environ["ATTENTION_RUN"]
TRANSLATE = os.path.join(os.path.dirname(RUN), "attention-translate")


class Step(torch.nn.Module):
    def __init__(self, d=128, h=4, shift=0):
        super().__init__()
        self.h, self.d, self.shift = h, d, shift
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.out = torch.nn.Linear(d, d)
        # shift None: Hugging Face's mask, n_positions = 64.
        self.register_buffer("bias", torch.tril(torch.ones((64, 64), dtype=torch.bool))
                             .view(1, 1, 64, 64))

    def forward(self, x, pk, pv):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).split(self.d, dim=2)
        split = lambda a: a.view(b, t, self.h, self.d // self.h).transpose(1, 2)
        q, k, v = split(q), split(k), split(v)
        k = torch.cat([pk, k], dim=2)
        v = torch.cat([pv, v], dim=2)
        if self.shift is None:
            # transformers' GPT2Attention._attn (eager).
            w = q @ k.transpose(-1, -2) / math.sqrt(self.d // self.h)
            ql, kl = q.size(-2), k.size(-2)
            visible = self.bias[:, :, kl - ql:kl, :kl]
            w = torch.where(visible, w, torch.tensor(torch.finfo(w.dtype).min))
            y = (w.softmax(-1) @ v).transpose(1, 2).reshape(b, t, self.d)
            return self.out(y), k, v
        tk = k.shape[2]
        att = q @ k.transpose(-2, -1) / math.sqrt(self.d // self.h)
        mask = torch.ones(t, tk, dtype=torch.bool).tril(diagonal=tk - t + self.shift)
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, self.d)
        return self.out(y), k, v


def describe_import(path):
    """What the importer made of the attention: its sdpa's causal alignment
    and mask operand."""
    proc = subprocess.run([TRANSLATE, "--import-onnx", path], capture_output=True,
                          text=True)
    if proc.returncode:
        return "FAIL: attention-translate exit %d\n%s" % (proc.returncode, proc.stderr)
    sdpa = [l for l in proc.stdout.splitlines() if "attn.sdpa" in l]
    if len(sdpa) != 1:
        return "FAIL: %d attn.sdpa ops" % len(sdpa)
    masked = " mask(" in sdpa[0]
    if "causal(bottom_right)" in sdpa[0] and not masked:
        trilu = "linalg.index" in proc.stdout or "arith.cmpi sle" in proc.stdout
        return ("attn.sdpa causal(bottom_right), no mask operand, %s" %
                ("FAIL: mask ops left" if trilu else "no Trilu ops left"))
    if masked and "causal(" not in sdpa[0]:
        return "attn.sdpa with an explicit mask operand, not causal"
    return "FAIL: unexpected sdpa: " + sdpa[0].strip()


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    for shift, label in ((0, "Tk-T"), (-1, "Tk-T-1")):
        print("model diagonal=%s" % label)
        check_model(work, shift, ((10, 1), (0, 3), (33, 3)))
    # Exported without dynamic axes, the diagonal is a constant (33).
    print("model diagonal=Tk-T static")
    check_model(work, 0, ((33, 3),), dynamic=False)
    print("model hf-bias-slice")
    check_model(work, None, ((10, 1), (0, 4), (33, 3), (60, 4), (61, 4)))
    print("model hf-bias-slice static")
    check_model(work, None, ((33, 3),), dynamic=False)


def check_model(work, shift, steps, dynamic=True):
    """Exports the step (with `dynamic`, T and the past length as dynamic
    axes; else at the first of `steps`), checks its import and runs each
    (past, T) of `steps` against torch."""
    torch.manual_seed(0)
    m = Step(shift=shift).eval()
    path = os.path.join(work, "step%s%s.onnx" % ("hf" if shift is None else shift,
                                                 "" if dynamic else "_static"))
    hd = m.d // m.h
    past0, t0 = steps[0]
    axes = {"x": {1: "T"}, "past_key": {2: "P"}, "past_value": {2: "P"}}
    torch.onnx.export(m, (torch.randn(1, t0, m.d), torch.randn(1, m.h, past0, hd),
                          torch.randn(1, m.h, past0, hd)), path,
                      input_names=["x", "past_key", "past_value"],
                      output_names=["y", "present_key", "present_value"],
                      dynamic_axes=axes if dynamic else None, opset_version=17)
    print("import: " + describe_import(path))
    for past, t in steps:
        x = torch.randn(1, t, m.d)
        pk, pv = torch.randn(1, m.h, past, hd), torch.randn(1, m.h, past, hd)
        try:
            with torch.no_grad():
                want = [a.numpy() for a in m(x, pk, pv)]
        except RuntimeError:
            want = None  # torch cannot run it either (past + T > 64)
        cmd = [RUN, path]
        for name, a in (("x", x), ("past_key", pk), ("past_value", pv)):
            p = os.path.join(work, "%s_%d.npy" % (name, past))
            np.save(p, a.numpy())
            cmd += ["--input", "%s=%s" % (name, p)]
        outs = [os.path.join(work, "out%d_%d.npy" % (i, past)) for i in range(3)]
        for o in outs:
            cmd += ["--output", o]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode:
            # Beyond the model's positions: the message, for FileCheck.
            print("step past=%d T=%d: attention-run exit %d: %s" % (
                past, t, proc.returncode, proc.stderr.strip().splitlines()[-1]))
            continue
        if want is None:
            print("FAIL step past=%d T=%d: torch fails, attention-run ran" % (past, t))
            continue
        if (past, t) == steps[0]:
            print("\n".join(l for l in proc.stderr.splitlines() if "remark" in l))
        got = [np.load(o) for o in outs]
        # A query row that sees no key (the shifted diagonal's first row
        # when there is no past) is NaN in torch; the raised attn.sdpa
        # gives 0 there (the README's one semantic choice of raising).
        # Its attention output is out_proj's bias alone.
        blind = np.isnan(want[0]).all(axis=-1)
        with torch.no_grad():
            bias_only = m.out.bias.numpy()
        blind_ok = np.allclose(got[0][blind], bias_only, atol=1e-6, rtol=0)
        err = float(np.abs(got[0] - want[0])[~blind].max())
        notes = ["y max_abs_err %.2g %s" % (err, "ok" if err < 1e-5 and not
                                            np.isnan(want[0][~blind]).any() else "FAIL")]
        if blind.any():
            notes.append("%d row(s) seeing no key: 0 attention (torch NaN) %s" % (
                blind.sum(), "ok" if blind_ok else "FAIL"))
        # The presents hold the past exactly and the new keys/values as
        # projected here (within 1e-5 of torch's projection).
        for name, g, w in zip(("present_key", "present_value"), got[1:], want[1:]):
            same = (g.shape == w.shape and np.array_equal(g[:, :, :past], w[:, :, :past])
                    and float(np.abs(g - w).max()) < 1e-5)
            notes.append("%s %s" % (name, "ok" if same else "FAIL"))
        print("step past=%d T=%d: %s" % (past, t, ", ".join(notes)))


if __name__ == "__main__":
    main()
