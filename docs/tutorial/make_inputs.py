"""Writes the tutorial's inputs: the chapter's six embeddings and weights
initialised like nn.Linear (U(-1/sqrt(d_in), 1/sqrt(d_in))), seed 123.

usage: /usr/bin/python3 docs/tutorial/make_inputs.py OUT_DIR
"""
import os
import sys

import numpy as np

out = sys.argv[1] if len(sys.argv) > 1 else "tutorial-inputs"
os.makedirs(out, exist_ok=True)
inputs = np.array([[0.43, 0.15, 0.89],   # Your
                   [0.55, 0.87, 0.66],   # journey
                   [0.57, 0.85, 0.64],   # starts
                   [0.22, 0.58, 0.33],   # with
                   [0.77, 0.25, 0.10],   # one
                   [0.05, 0.80, 0.55]],  # step
                  dtype=np.float32)
rng = np.random.default_rng(123)
u = lambda shape, fan_in: rng.uniform(-fan_in ** -0.5, fan_in ** -0.5, shape).astype(np.float32)
arrays = {
    "inputs": inputs,
    "batch": np.stack([inputs, inputs]),
    "w_query": u((3, 2), 3), "w_key": u((3, 2), 3), "w_value": u((3, 2), 3),
    "w_out": u((2, 2), 2), "b_out": u((2,), 2),
}
for name, a in arrays.items():
    np.save(os.path.join(out, name + ".npy"), a)
print("wrote", ", ".join(sorted(arrays)), "to", out)
