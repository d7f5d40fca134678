# RUN: %python %s %t | FileCheck %s
#
# ONNX Transpose through the CPU pipeline, bit for bit against NumPy. A
# transpose that moves the innermost dim (swaps of the last two, outer dims
# permuted or not; channels-last to channels-first, keys for Q K, rank 3
# and 4 others) of 32-bit elements is copied in 16 x 16 blocks transposed
# in registers (attn-vectorize-copies), with scalar loops for the rows and
# columns past the last whole block: sizes below, at and off multiples of
# 16, static and dynamic, f32 and int32, with NaN and -0 payloads kept. Transposes that
# keep the innermost dim (a head split) and 16-bit ones take other paths,
# checked the same way. A Transpose of an initializer is a constant.

import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from run_model import counting_print, run_model  # noqa: E402

print, failures = counting_print()
work = sys.argv[1]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(23)
vi = helper.make_tensor_value_info
types = {np.float32: TensorProto.FLOAT, np.int32: TensorProto.INT32,
         np.float16: TensorProto.FLOAT16}

cases = [
    ("[1, 0] 64 x 48", (64, 48), [1, 0], np.float32, False),
    ("[1, 0] 37 x 50", (37, 50), [1, 0], np.float32, False),
    ("[1, 0] 5 x 3", (5, 3), [1, 0], np.float32, False),
    ("[1, 0] 1024 x 768", (1024, 768), [1, 0], np.float32, False),
    ("[0, 2, 1] 3 x 100 x 33", (3, 100, 33), [0, 2, 1], np.float32, False),
    ("[0, 2, 1] 3 x 100 x 33 dynamic", (3, 100, 33), [0, 2, 1], np.float32, True),
    ("[1, 0, 3, 2] 2 x 3 x 17 x 40", (2, 3, 17, 40), [1, 0, 3, 2], np.float32, False),
    ("[0, 1, 3, 2] 1 x 4 x 128 x 64 (K^T)", (1, 4, 128, 64), [0, 1, 3, 2], np.float32, False),
    ("[1, 0] int32 33 x 70", (33, 70), [1, 0], np.int32, False),
    ("[1, 0] float16 40 x 24", (40, 24), [1, 0], np.float16, False),
    ("[0, 2, 1, 3] 2 x 17 x 3 x 16 (head split)", (2, 17, 3, 16), [0, 2, 1, 3], np.float32, False),
    ("[0, 3, 1, 2] 2 x 9 x 21 x 35 (channels first)", (2, 9, 21, 35), [0, 3, 1, 2], np.float32, False),
    ("[0, 3, 1, 2] 2 x 9 x 21 x 35 dynamic", (2, 9, 21, 35), [0, 3, 1, 2], np.float32, True),
    ("[0, 2, 3, 1] 1 x 70 x 3 x 64 (keys for Q K)", (1, 70, 3, 64), [0, 2, 3, 1], np.float32, False),
    ("[2, 0, 1] int32 18 x 5 x 33", (18, 5, 33), [2, 0, 1], np.int32, False),
    ("[3, 2, 1, 0] 17 x 2 x 3 x 20", (17, 2, 3, 20), [3, 2, 1, 0], np.float32, False),
    ("[0, 3, 1, 2] float16 2 x 4 x 5 x 24", (2, 4, 5, 24), [0, 3, 1, 2], np.float16, False),
]
for what, shape, perm, dtype, dynamic in cases:
    if dtype == np.int32:
        x = rng.integers(-2**31, 2**31 - 1, shape, dtype=np.int32)
    else:
        x = rng.standard_normal(shape).astype(dtype)
        flat = x.reshape(-1)
        flat[:: 7] = -0.0
        if dtype == np.float32:
            # A NaN with a payload: copied, its bits must survive.
            flat[3] = np.array([0x7FC12345], np.uint32).view(np.float32)[0]
    dims = ["d%d" % i for i in range(len(shape))] if dynamic else list(shape)
    graph = helper.make_graph([helper.make_node("Transpose", ["x"], ["y"], perm=perm)], "g",
                              [vi("x", types[dtype], dims)], [vi("y", types[dtype], None)])
    path = os.path.join(work, "transpose.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    got = run_model(work, path, {"x": x})
    want = np.transpose(x, perm)
    if isinstance(got, str):
        print("FAIL %s: %s" % (what, got))
        continue
    bits = {4: np.uint32, 2: np.uint16}[want.dtype.itemsize]
    same = (got[0].shape == want.shape and got[0].dtype == want.dtype and
            np.array_equal(got[0].view(bits), want.view(bits)))
    print("%s Transpose %s: %s" % ("ok" if same else "FAIL", what,
                                   "bit for bit" if same else "differs"))
# CHECK: ok Transpose [1, 0] 64 x 48: bit for bit
# CHECK: ok Transpose [1, 0] 37 x 50: bit for bit
# CHECK: ok Transpose [1, 0] 5 x 3: bit for bit
# CHECK: ok Transpose [1, 0] 1024 x 768: bit for bit
# CHECK: ok Transpose [0, 2, 1] 3 x 100 x 33: bit for bit
# CHECK: ok Transpose [0, 2, 1] 3 x 100 x 33 dynamic: bit for bit
# CHECK: ok Transpose [1, 0, 3, 2] 2 x 3 x 17 x 40: bit for bit
# CHECK: ok Transpose [0, 1, 3, 2] 1 x 4 x 128 x 64 (K^T): bit for bit
# CHECK: ok Transpose [1, 0] int32 33 x 70: bit for bit
# CHECK: ok Transpose [1, 0] float16 40 x 24: bit for bit
# CHECK: ok Transpose [0, 2, 1, 3] 2 x 17 x 3 x 16 (head split): bit for bit
# CHECK: ok Transpose [0, 3, 1, 2] 2 x 9 x 21 x 35 (channels first): bit for bit
# CHECK: ok Transpose [0, 3, 1, 2] 2 x 9 x 21 x 35 dynamic: bit for bit
# CHECK: ok Transpose [0, 2, 3, 1] 1 x 70 x 3 x 64 (keys for Q K): bit for bit
# CHECK: ok Transpose [2, 0, 1] int32 18 x 5 x 33: bit for bit
# CHECK: ok Transpose [3, 2, 1, 0] 17 x 2 x 3 x 20: bit for bit
# CHECK: ok Transpose [0, 3, 1, 2] float16 2 x 4 x 5 x 24: bit for bit

# A Transpose of an initializer is folded at import into a new constant (a
# weight blob stays a blob, named after it): torch's x @ W.T moved W on
# every call. A blob (f32, 48 KiB), an inline int64 constant and a rank-3
# permutation, bit for bit; the imported module holds no linalg.transpose.
translate = os.path.join(os.path.dirname(os.environ["ATTENTION_RUN"]), "attention-translate")
for what, w, perm in (("f32 [96, 128] blob", rng.standard_normal((96, 128)).astype(np.float32), [1, 0]),
                      ("int64 [3, 5] inline", rng.integers(-9, 9, (3, 5)), [1, 0]),
                      ("f32 [4, 6, 5] perm [2, 0, 1]", rng.standard_normal((4, 6, 5)).astype(np.float32),
                       [2, 0, 1])):
    dtype = TensorProto.FLOAT if w.dtype == np.float32 else TensorProto.INT64
    graph = helper.make_graph([helper.make_node("Transpose", ["w"], ["t"], perm=perm),
                               helper.make_node("Identity", ["t"], ["y"])], "g", [],
                              [vi("y", dtype, None)], [numpy_helper.from_array(w, "w")])
    path = os.path.join(work, "transpose_weight.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    ir = subprocess.run([translate, "--import-onnx", path], stdout=subprocess.PIPE,
                        universal_newlines=True).stdout
    got = run_model(work, path, {})
    if isinstance(got, str):
        print("FAIL Transpose of an initializer %s: %s" % (what, got))
        continue
    want = np.transpose(w, perm)
    same = got[0].shape == want.shape and np.array_equal(got[0], want)
    print("%s Transpose of an initializer %s: %s, %s" % (
        "ok" if same and "linalg.transpose" not in ir else "FAIL", what,
        "bit for bit" if same else "differs",
        "folded" if "linalg.transpose" not in ir else "not folded"),
        " ".join(l.strip() for l in ir.splitlines() if "dense_resource" in l))
# CHECK: ok Transpose of an initializer f32 [96, 128] blob: bit for bit, folded %cst = arith.constant dense_resource<w_t> : tensor<128x96xf32>
# CHECK: ok Transpose of an initializer int64 [3, 5] inline: bit for bit, folded
# CHECK: ok Transpose of an initializer f32 [4, 6, 5] perm [2, 0, 1]: bit for bit, folded
print("%d failed" % len(failures))
# CHECK: 0 failed
