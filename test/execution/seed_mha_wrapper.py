# RUN: %python %s %t | FileCheck %s
#
# The chapter's MultiHeadAttentionWrapper: independent CausalAttention heads
# whose outputs are concatenated on the last axis. In MLIR that is one
# attn.causal_attention per head and a tensor.concat.

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import attn_exec  # noqa: E402
import seed_modules  # noqa: E402

MODULE = """
func.func @wrapper(%x: tensor<2x6x3xf32>,
                   %wq0: tensor<3x2xf32>, %wk0: tensor<3x2xf32>, %wv0: tensor<3x2xf32>,
                   %wq1: tensor<3x2xf32>, %wk1: tensor<3x2xf32>, %wv1: tensor<3x2xf32>) -> tensor<2x6x4xf32> {
  %a = attn.causal_attention %x weights(%wq0, %wk0, %wv0)
      : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x6x2xf32>
  %b = attn.causal_attention %x weights(%wq1, %wk1, %wv1)
      : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x6x2xf32>
  %c = tensor.concat dim(2) %a, %b : (tensor<2x6x2xf32>, tensor<2x6x2xf32>) -> tensor<2x6x4xf32>
  return %c : tensor<2x6x4xf32>
}

func.func @wrapper_bias(%x: tensor<2x6x3xf32>,
                        %wq0: tensor<3x2xf32>, %wk0: tensor<3x2xf32>, %wv0: tensor<3x2xf32>,
                        %bq0: tensor<2xf32>, %bk0: tensor<2xf32>, %bv0: tensor<2xf32>,
                        %wq1: tensor<3x2xf32>, %wk1: tensor<3x2xf32>, %wv1: tensor<3x2xf32>,
                        %bq1: tensor<2xf32>, %bk1: tensor<2xf32>, %bv1: tensor<2xf32>) -> tensor<2x6x4xf32> {
  %a = attn.causal_attention %x weights(%wq0, %wk0, %wv0) bias(%bq0, %bk0, %bv0)
      : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>,
         tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x6x2xf32>
  %b = attn.causal_attention %x weights(%wq1, %wk1, %wv1) bias(%bq1, %bk1, %bv1)
      : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>,
         tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x6x2xf32>
  %c = tensor.concat dim(2) %a, %b : (tensor<2x6x2xf32>, tensor<2x6x2xf32>) -> tensor<2x6x4xf32>
  return %c : tensor<2x6x4xf32>
}
"""


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    inputs = seed_modules.seed_inputs()
    batch = torch.stack((inputs, inputs), dim=0)
    bn = batch.numpy().astype(np.float32)

    torch.manual_seed(123)
    mha = seed_modules.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2).eval()
    with torch.no_grad():
        want = mha(batch).numpy()
    args = [bn]
    for head in mha.heads:
        args += seed_modules.qkv_weights(head)
    (got,) = attn_exec.run(MODULE, "wrapper", args, work)

    # The chapter's printed output for this wrapper and seed.
    # CHECK: wrapper[0][0]: -0.4519 0.2216 0.4772 0.1063
    # CHECK: wrapper[0][1]: -0.5874 0.0058 0.5891 0.3257
    print("wrapper[0][0]: " + attn_exec.fmt_row(got[0, 0]))
    print("wrapper[0][1]: " + attn_exec.fmt_row(got[0, 1]))
    # CHECK: wrapper vs torch: max_abs_err={{.*}} OK
    attn_exec.assert_close("wrapper vs torch", got, want, atol=1e-5, rtol=1e-5)
    # The same without attn-fuse-heads (N separate heads): the fused and the
    # unfused forms agree.
    (unfused,) = attn_exec.run(MODULE, "wrapper", args, work,
                               extra_args=["--pipeline-options=fuse-heads=false"])
    # CHECK: wrapper fused vs unfused heads: max_abs_err={{.*}} OK
    attn_exec.assert_close("wrapper fused vs unfused heads", got, unfused,
                           atol=1e-5, rtol=1e-5)

    torch.manual_seed(123)
    mhab = seed_modules.MultiHeadAttentionWrapper(3, 2, 6, 0.0, num_heads=2, qkv_bias=True).eval()
    with torch.no_grad():
        want_b = mhab(batch).numpy()
    args = [bn]
    for head in mhab.heads:
        args += seed_modules.qkv_weights(head)
        args += seed_modules.qkv_biases(head)
    (got_b,) = attn_exec.run(MODULE, "wrapper_bias", args, work)
    # CHECK: wrapper qkv_bias vs torch: max_abs_err={{.*}} OK
    attn_exec.assert_close("wrapper qkv_bias vs torch", got_b, want_b, atol=1e-5, rtol=1e-5)


if __name__ == "__main__":
    main()
