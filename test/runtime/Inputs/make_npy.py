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
# The header's length field promises more than the file holds.
with open(os.path.join(d, "x_cut_header.npy"), "wb") as f:
    f.write(whole[:40])
with open(os.path.join(d, "x_trailing.npy"), "wb") as f:
    f.write(whole + b"\0\0\0\0")
# A bool mask [2, 4, 8] with a byte that is neither 0 nor 1.
m = np.ones((2, 4, 8), bool)
np.save(os.path.join(d, "m.npy"), m)
with open(os.path.join(d, "m.npy"), "rb") as f:
    mb = bytearray(f.read())
mb[-3] = 7
with open(os.path.join(d, "m_bad_byte.npy"), "wb") as f:
    f.write(bytes(mb))
# Format version 2 (4-byte header length): read like version 1.
with open(os.path.join(d, "x_v2.npy"), "wb") as f:
    np.lib.format.write_array(f, x, version=(2, 0))
