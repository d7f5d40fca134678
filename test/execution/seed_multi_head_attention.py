# RUN: %python %s %t | FileCheck %s
#
# The chapter's efficient MultiHeadAttention (one projection per Q/K/V,
# head split, causal top-left attention, head merge, out_proj) as
# attn.multi_head_attention ... causal: the chapter's toy configuration and
# GPT-2 small's attention (768 wide, 12 heads) with and without qkv bias,
# static T=64 and a dynamic sequence length run at T=40.

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import attn_exec  # noqa: E402
import seed_modules  # noqa: E402


def mha_module(name, batch, tokens, d_in, d_out, num_heads, qkv_bias):
    """One function running multi_head_attention with the module's weights
    as arguments (x, wq, wk, wv, [bq, bk, bv], wo, bo); `tokens` None is a
    dynamic sequence length."""
    f32 = "f32"
    tx = attn_exec.tensor_type([batch, tokens, d_in], f32)
    ty = attn_exec.tensor_type([batch, tokens, d_out], f32)
    tw = attn_exec.tensor_type([d_in, d_out], f32)
    tb = attn_exec.tensor_type([d_out], f32)
    two = attn_exec.tensor_type([d_out, d_out], f32)
    args = ["%%x: %s" % tx, "%%wq: %s" % tw, "%%wk: %s" % tw, "%%wv: %s" % tw]
    types = [tx, tw, tw, tw]
    bias = ""
    if qkv_bias:
        args += ["%%bq: %s" % tb, "%%bk: %s" % tb, "%%bv: %s" % tb]
        types += [tb, tb, tb]
        bias = " bias(%bq, %bk, %bv)"
    args += ["%%wo: %s" % two, "%%bo: %s" % tb]
    types += [two, tb]
    return """
func.func @%s(%s) -> %s {
  %%y = attn.multi_head_attention %%x weights(%%wq, %%wk, %%wv)%s out_proj(%%wo, %%bo) causal {num_heads = %d : i64}
      : (%s) -> %s
  return %%y : %s
}
""" % (name, ", ".join(args), ty, bias, num_heads, ", ".join(types), ty, ty)


def mha_args(mha, x):
    args = [x.numpy().astype(np.float32), *seed_modules.qkv_weights(mha)]
    biases = seed_modules.qkv_biases(mha)
    if biases is not None:
        args += list(biases)
    args += [seed_modules.linear_weight(mha.out_proj), seed_modules.linear_bias(mha.out_proj)]
    return args


def check(work, label, mha, x, module_text, entry):
    with torch.no_grad():
        want = mha(x).numpy()
    (got,) = attn_exec.run(module_text, entry, mha_args(mha, x), work)
    attn_exec.assert_close(label, got, want, atol=1e-5, rtol=1e-5)
    return got


def main():
    work = attn_exec.workdir_from_argv(sys.argv)

    # The chapter's toy: d_in=3, d_out=2, two heads of size 1.
    inputs = seed_modules.seed_inputs()
    batch = torch.stack((inputs, inputs), dim=0)
    torch.manual_seed(123)
    toy = seed_modules.MultiHeadAttention(3, 2, 6, 0.0, num_heads=2).eval()
    text = mha_module("toy", 2, 6, 3, 2, 2, False)
    # CHECK: toy vs torch: max_abs_err={{.*}} OK
    got = check(work, "toy vs torch", toy, batch, text, "toy")
    # The chapter's printed output for this module and seed.
    # CHECK: toy[0][0]: 0.3190 0.4858
    # CHECK: toy[0][1]: 0.2943 0.3897
    # CHECK: toy[1][5]: 0.2575 0.4028
    print("toy[0][0]: " + attn_exec.fmt_row(got[0, 0]))
    print("toy[0][1]: " + attn_exec.fmt_row(got[0, 1]))
    print("toy[1][5]: " + attn_exec.fmt_row(got[1, 5]))

    # GPT-2 small's attention block.
    for qkv_bias in (False, True):
        torch.manual_seed(123)
        gpt2 = seed_modules.MultiHeadAttention(768, 768, 1024, 0.0, num_heads=12,
                                               qkv_bias=qkv_bias).eval()
        x64 = torch.randn(1, 64, 768)
        x40 = torch.randn(1, 40, 768)
        tag = "qkv_bias=%s" % qkv_bias
        static = mha_module("gpt2", 1, 64, 768, 768, 12, qkv_bias)
        dynamic = mha_module("gpt2_dyn", 1, None, 768, 768, 12, qkv_bias)
        check(work, "gpt2 %s T=64 vs torch" % tag, gpt2, x64, static, "gpt2")
        check(work, "gpt2 %s dynamic T=40 vs torch" % tag, gpt2, x40, dynamic, "gpt2_dyn")
    # CHECK: gpt2 qkv_bias=False T=64 vs torch: max_abs_err={{.*}} OK
    # CHECK: gpt2 qkv_bias=False dynamic T=40 vs torch: max_abs_err={{.*}} OK
    # CHECK: gpt2 qkv_bias=True T=64 vs torch: max_abs_err={{.*}} OK
    # CHECK: gpt2 qkv_bias=True dynamic T=40 vs torch: max_abs_err={{.*}} OK


if __name__ == "__main__":
    main()
