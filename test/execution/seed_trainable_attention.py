# RUN: %python %s %t | FileCheck %s
#
# The chapter's SelfAttention_v2 (trainable Wq/Wk/Wv, scaled by
# 1/sqrt(d_out), not causal) is a one-head multi_head_attention without
# `causal` and without out_proj, on the rank-2 [T, d_in] input.

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import attn_exec  # noqa: E402
import seed_modules  # noqa: E402

MODULE = """
func.func @sa_v2(%x: tensor<6x3xf32>, %wq: tensor<3x2xf32>, %wk: tensor<3x2xf32>, %wv: tensor<3x2xf32>) -> tensor<6x2xf32> {
  %y = attn.multi_head_attention %x weights(%wq, %wk, %wv) {num_heads = 1 : i64}
      : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<6x2xf32>
  return %y : tensor<6x2xf32>
}

func.func @sa_v2_bias(%x: tensor<6x3xf32>, %wq: tensor<3x2xf32>, %wk: tensor<3x2xf32>, %wv: tensor<3x2xf32>,
                      %bq: tensor<2xf32>, %bk: tensor<2xf32>, %bv: tensor<2xf32>) -> tensor<6x2xf32> {
  %y = attn.multi_head_attention %x weights(%wq, %wk, %wv) bias(%bq, %bk, %bv) {num_heads = 1 : i64}
      : (tensor<6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>,
         tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<6x2xf32>
  return %y : tensor<6x2xf32>
}
"""


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    x = seed_modules.seed_inputs()
    xn = x.numpy().astype(np.float32)

    # The chapter's example: torch.manual_seed(789), d_in=3, d_out=2.
    torch.manual_seed(789)
    sa = seed_modules.SelfAttention_v2(3, 2).eval()
    with torch.no_grad():
        want = sa(x).numpy()
    (got,) = attn_exec.run(MODULE, "sa_v2", [xn, *seed_modules.qkv_weights(sa)], work)

    # The chapter prints these rows for SelfAttention_v2 under seed 789.
    # CHECK: sa_v2[0]: -0.0739 0.0713
    # CHECK: sa_v2[5]: -0.0754 0.0693
    print("sa_v2[0]: " + attn_exec.fmt_row(got[0]))
    print("sa_v2[5]: " + attn_exec.fmt_row(got[5]))
    # CHECK: sa_v2 vs torch: max_abs_err={{.*}} OK
    attn_exec.assert_close("sa_v2 vs torch", got, want, atol=1e-5, rtol=1e-5)

    # qkv_bias=True adds a bias to each projection.
    torch.manual_seed(789)
    sab = seed_modules.SelfAttention_v2(3, 2, qkv_bias=True).eval()
    with torch.no_grad():
        want_b = sab(x).numpy()
    (got_b,) = attn_exec.run(
        MODULE, "sa_v2_bias",
        [xn, *seed_modules.qkv_weights(sab), *seed_modules.qkv_biases(sab)], work)
    # CHECK: sa_v2 qkv_bias vs torch: max_abs_err={{.*}} OK
    attn_exec.assert_close("sa_v2 qkv_bias vs torch", got_b, want_b, atol=1e-5, rtol=1e-5)


if __name__ == "__main__":
    main()
