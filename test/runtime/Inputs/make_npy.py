"""Writes the .npy files the runtime's bad-input tests feed to attention-run.

usage: make_npy.py DIR
"""
import os
import sys

import numpy as np

d = sys.argv[1]
os.makedirs(d, exist_ok=True)
rng = np.random.default_rng(0)
x = rng.standard_normal((2, 4, 8)).astype(np.float32)
np.save(os.path.join(d, "x.npy"), x)                       # f32 [2, 4, 8]
np.save(os.path.join(d, "x_f16.npy"), x.astype(np.float16))
np.save(os.path.join(d, "x_f64.npy"), x.astype(np.float64))
np.save(os.path.join(d, "x_rank2.npy"), x[0])
np.save(os.path.join(d, "x_wrong_dim.npy"), rng.standard_normal((2, 4, 9)).astype(np.float32))
np.save(os.path.join(d, "x_fortran.npy"), np.asfortranarray(x))
np.save(os.path.join(d, "x_big_endian.npy"), x.astype(">f4"))
np.save(os.path.join(d, "x_empty.npy"), np.zeros((2, 0, 8), np.float32))
with open(os.path.join(d, "x.npy"), "rb") as f:
    whole = f.read()
with open(os.path.join(d, "x_truncated.npy"), "wb") as f:
    f.write(whole[: len(whole) - 10])
with open(os.path.join(d, "x_header_only.npy"), "wb") as f:
    f.write(whole[:8])
with open(os.path.join(d, "not_npy.npy"), "wb") as f:
    f.write(b"this is a text file, not an array\n")
with open(os.path.join(d, "x_huge_shape.npy"), "wb") as f:
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header.encode())
