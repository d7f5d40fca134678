"""Checks the tutorial's outputs against float64 numpy versions of the seed's classes."""
import sys

import numpy as np

d = sys.argv[1]
L = lambda n: np.load(f"{d}/{n}.npy").astype(np.float64)
x, batch = L("inputs"), L("batch")
wq, wk, wv, wo, bo = L("w_query"), L("w_key"), L("w_value"), L("w_out"), L("b_out")


def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def attend(q, k, v, causal):
    s = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:
        t = s.shape[-1]
        s = np.where(np.triu(np.ones((t, t), bool), 1), -np.inf, s)
    return softmax(s) @ v


z2 = np.load(f"{d}/z2.npy")
assert np.abs(z2 - attend(x @ wq, x @ wk, x @ wv, False)).max() < 1e-5
print("02-trainable vs numpy: OK")

# With dropout 0.5 the first token's single weight (1.0) is dropped (0) or
# kept and doubled (2.0): its context is 0 or 2 * x0 @ Wv.
z3 = np.load(f"{d}/z3.npy")
v0 = (batch[:, 0] @ wv)
for b in range(2):
    assert np.allclose(z3[b, 0], 0, atol=1e-6) or np.allclose(z3[b, 0], 2 * v0[b], atol=1e-5)
print("03-causal: first token keeps all of its value or none: OK")

z4 = np.load(f"{d}/z4.npy")
heads = lambda m: (batch @ m).reshape(2, 6, 2, 1).transpose(0, 2, 1, 3)
ctx = attend(heads(wq), heads(wk), heads(wv), True).transpose(0, 2, 1, 3).reshape(2, 6, 2)
assert np.abs(z4 - (ctx @ wo + bo)).max() < 1e-5
print("04-multi-head vs numpy: OK")
