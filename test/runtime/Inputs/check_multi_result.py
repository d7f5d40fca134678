"""Checks multi-result.test's outputs against a float64 numpy reference."""
import sys

import numpy as np

d = sys.argv[1]
x = np.load(d + "/x.npy").astype(np.float64)


def sdpa(q, scale):
    s = scale * q @ q.T
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ q


o0, o1, o2 = (np.load(f"{d}/o{i}.npy") for i in range(3))
assert np.array_equal(o0, o2), "results 0 and 2 differ"
e0 = np.abs(o0 - sdpa(x, 0.25)).max()
e1 = np.abs(o1 - sdpa(x, 0.5)).max()
assert e0 < 1e-5 and e1 < 1e-5, (e0, e1)
print(f"twice: results 0 and 2 identical, max error 0 / {max(e0, e1):.2e}")
r = np.load(d + "/r.npy")
er = np.abs(r - (sdpa(x, 1.0) + x)).max()
assert er < 1e-5, er
print(f"residual: max error {er:.2e} OK")
p0, p1, p2 = (np.load(f"{d}/p{i}.npy") for i in range(3))
assert np.array_equal(p0, np.load(d + "/x.npy")), "the returned input differs"
ep = np.abs(p1 - sdpa(x, 0.25)).max()
assert ep < 1e-5, ep
assert np.array_equal(p2, np.array([1.0, 2.0], np.float32)), p2
print(f"passthrough: input returned intact, computed result max error {ep:.2e}, constant {p2} OK")
