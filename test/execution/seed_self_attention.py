# RUN: %python %s %t | FileCheck %s
#
# The chapter's first, weightless self-attention on its six 3-d embeddings:
# softmax(X X^T) X, checked against the chapter's printed numbers and
# against PyTorch. The attention weights are not an output of the op, so
# they are read through attn.sdpa with V = I (weights @ I = weights).

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import attn_exec  # noqa: E402
from seed_modules import SEED_INPUTS  # noqa: E402

MODULE = """
func.func @self(%x: tensor<6x3xf32>) -> tensor<6x3xf32> {
  %z = attn.self_attention %x : tensor<6x3xf32> -> tensor<6x3xf32>
  return %z : tensor<6x3xf32>
}

func.func @weights(%x: tensor<6x3xf32>, %eye: tensor<6x6xf32>) -> tensor<6x6xf32> {
  %w = attn.sdpa %x, %x, %eye {scale = 1.0 : f32} : tensor<6x3xf32>, tensor<6x3xf32>, tensor<6x6xf32> -> tensor<6x6xf32>
  return %w : tensor<6x6xf32>
}
"""


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    x = np.array(SEED_INPUTS, dtype=np.float32)

    (ctx,) = attn_exec.run(MODULE, "self", [x], work)
    (weights,) = attn_exec.run(MODULE, "weights", [x, np.eye(6, dtype=np.float32)], work)

    xt = torch.tensor(x)
    want_w = torch.softmax(xt @ xt.T, dim=-1)
    want_ctx = want_w @ xt

    # CHECK: weights[1]: 0.1385 0.2379 0.2333 0.1240 0.1082 0.1581
    print("weights[1]: " + attn_exec.fmt_row(weights[1]))
    # CHECK: context[1]: 0.4419 0.6515 0.5683
    print("context[1]: " + attn_exec.fmt_row(ctx[1]))

    # CHECK: weights row sums: 1.0000 1.0000 1.0000 1.0000 1.0000 1.0000
    print("weights row sums: " + attn_exec.fmt_row(weights.sum(axis=-1)))

    # CHECK: weights: max_abs_err={{.*}} OK
    attn_exec.assert_close("weights", weights, want_w.numpy(), atol=1e-5, rtol=1e-5)
    # CHECK: context: max_abs_err={{.*}} OK
    attn_exec.assert_close("context", ctx, want_ctx.numpy(), atol=1e-5, rtol=1e-5)
    # The op's result must also be the weights applied to X.
    # CHECK: context == weights @ X: max_abs_err={{.*}} OK
    attn_exec.assert_close("context == weights @ X", ctx, weights @ x, atol=1e-5, rtol=1e-5)


if __name__ == "__main__":
    main()
