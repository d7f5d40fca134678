# RUN: %python %s %t | FileCheck %s
#
# The chapter's CausalAttention (batch of two copies of the six embeddings,
# d_out=2, torch.manual_seed(123), eval mode) as attn.causal_attention, with
# and without qkv bias, and with dynamic batch and sequence dimensions run
# on a prefix of the sequence (the module slices its mask to num_tokens).

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import attn_exec  # noqa: E402
import seed_modules  # noqa: E402

MODULE = """
func.func @causal(%x: tensor<2x6x3xf32>, %wq: tensor<3x2xf32>, %wk: tensor<3x2xf32>, %wv: tensor<3x2xf32>) -> tensor<2x6x2xf32> {
  %z = attn.causal_attention %x weights(%wq, %wk, %wv)
      : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x6x2xf32>
  return %z : tensor<2x6x2xf32>
}

func.func @causal_bias(%x: tensor<2x6x3xf32>, %wq: tensor<3x2xf32>, %wk: tensor<3x2xf32>, %wv: tensor<3x2xf32>,
                       %bq: tensor<2xf32>, %bk: tensor<2xf32>, %bv: tensor<2xf32>) -> tensor<2x6x2xf32> {
  %z = attn.causal_attention %x weights(%wq, %wk, %wv) bias(%bq, %bk, %bv)
      : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>,
         tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x6x2xf32>
  return %z : tensor<2x6x2xf32>
}

func.func @causal_dyn(%x: tensor<?x?x3xf32>, %wq: tensor<3x2xf32>, %wk: tensor<3x2xf32>, %wv: tensor<3x2xf32>) -> tensor<?x?x2xf32> {
  %z = attn.causal_attention %x weights(%wq, %wk, %wv)
      : (tensor<?x?x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<?x?x2xf32>
  return %z : tensor<?x?x2xf32>
}
"""


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    inputs = seed_modules.seed_inputs()
    batch = torch.stack((inputs, inputs), dim=0)
    bn = batch.numpy().astype(np.float32)

    torch.manual_seed(123)
    ca = seed_modules.CausalAttention(3, 2, batch.shape[1], 0.0).eval()
    with torch.no_grad():
        want = ca(batch).numpy()
    w = seed_modules.qkv_weights(ca)
    (got,) = attn_exec.run(MODULE, "causal", [bn, *w], work)

    # The chapter's printed context vectors for this module and seed.
    # CHECK: causal[0][0]: -0.4519 0.2216
    # CHECK: causal[0][1]: -0.5874 0.0058
    # CHECK: causal[1][5]: -0.5299 -0.1081
    print("causal[0][0]: " + attn_exec.fmt_row(got[0, 0]))
    print("causal[0][1]: " + attn_exec.fmt_row(got[0, 1]))
    print("causal[1][5]: " + attn_exec.fmt_row(got[1, 5]))
    # CHECK: causal vs torch: max_abs_err={{.*}} OK
    attn_exec.assert_close("causal vs torch", got, want, atol=1e-5, rtol=1e-5)
    # Token 0 only sees itself: its context is its own value projection.
    # CHECK: causal row 0 == x0 @ Wv: max_abs_err={{.*}} OK
    attn_exec.assert_close("causal row 0 == x0 @ Wv", got[:, 0], bn[:, 0] @ w[2],
                           atol=1e-6, rtol=1e-6)

    torch.manual_seed(123)
    cab = seed_modules.CausalAttention(3, 2, batch.shape[1], 0.0, qkv_bias=True).eval()
    with torch.no_grad():
        want_b = cab(batch).numpy()
    (got_b,) = attn_exec.run(
        MODULE, "causal_bias",
        [bn, *seed_modules.qkv_weights(cab), *seed_modules.qkv_biases(cab)], work)
    # CHECK: causal qkv_bias vs torch: max_abs_err={{.*}} OK
    attn_exec.assert_close("causal qkv_bias vs torch", got_b, want_b, atol=1e-5, rtol=1e-5)

    # Dynamic shapes: three sequences of four tokens.
    torch.manual_seed(7)
    xd = torch.rand(3, 4, 3)
    with torch.no_grad():
        want_d = ca(xd).numpy()
    (got_d,) = attn_exec.run(MODULE, "causal_dyn", [xd.numpy(), *w], work)
    # CHECK: causal dynamic 3x4 vs torch: max_abs_err={{.*}} OK
    attn_exec.assert_close("causal dynamic 3x4 vs torch", got_d, want_d, atol=1e-5, rtol=1e-5)


if __name__ == "__main__":
    main()
