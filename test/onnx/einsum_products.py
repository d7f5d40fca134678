# RUN: %python %s %t | FileCheck %s
#
# Two-operand Einsums that are one matrix product once letters are grouped
# (several row, column or summed letters: "bthd,hdc->btc", an attention
# output projection written per head): the operands are transposed to
# [batch, rows, summed] and [batch, summed, columns] (a constant operand at
# import), the groups collapsed, one contraction taken by the CPU kernels,
# and the product expanded and transposed to the output. As one generic
# with several summed loops such an Einsum took 248 ms where ONNX Runtime
# takes 3.4 ms. The second operand as an input and as an initializer,
# dynamic sizes, float16; against NumPy in float64.

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
rng = np.random.default_rng(31)
vi = helper.make_tensor_value_info
translate = os.path.join(os.path.dirname(os.environ["ATTENTION_RUN"]), "attention-translate")
sizes = {"b": 2, "t": 37, "h": 3, "d": 16, "c": 40, "i": 5, "j": 6, "k": 7, "l": 33}
cases = [("bthd,hdc->btc", False, False, np.float32), ("bthd,hdc->btc", True, False, np.float32),
         ("btc,chd->bthd", True, False, np.float32), ("btc,chd->bthd", False, True, np.float32),
         ("bijk,jkl->bil", False, False, np.float32), ("bijk,bjkl->bli", False, False, np.float32),
         ("bthd,hdc->btc", True, False, np.float16)]
for eq, const, dynamic, dtype in cases:
    lhs, out = eq.split("->")
    ta, tw = lhs.split(",")
    a = rng.standard_normal([sizes[c] for c in ta]).astype(dtype)
    w = rng.standard_normal([sizes[c] for c in tw]).astype(dtype)
    etype = TensorProto.FLOAT if dtype == np.float32 else TensorProto.FLOAT16
    adims = [c if dynamic and c in "bt" else sizes[c] for c in ta]
    inputs = [vi("a", etype, adims)] + ([] if const else [vi("w", etype, list(w.shape))])
    inits = [numpy_helper.from_array(w, "w")] if const else []
    graph = helper.make_graph([helper.make_node("Einsum", ["a", "w"], ["y"], equation=eq)],
                              "g", inputs, [vi("y", etype, None)], inits)
    path = os.path.join(work, "einsum.onnx")
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    ir = subprocess.run([translate, "--import-onnx", path], stdout=subprocess.PIPE,
                        universal_newlines=True).stdout
    feeds = {"a": a} if const else {"a": a, "w": w}
    got = run_model(work, path, feeds)
    what = "%s %s, w %s%s" % (eq, np.dtype(dtype).name, "an initializer" if const else "an input",
                              ", dynamic" if dynamic else "")
    if isinstance(got, str):
        print("FAIL %s: %s" % (what, got))
        continue
    want = np.einsum(eq, a.astype(np.float64), w.astype(np.float64))
    tol = 1e-5 if dtype == np.float32 else 2e-3
    err = float(np.abs(got[0].astype(np.float64) - want).max() / np.abs(want).max())
    # One contraction with a single summed loop (and the collapses).
    single = "tensor.collapse_shape" in ir and '"reduction", "reduction"' not in ir
    print("%s %s: relative error %s, %s" % (
        "ok" if err < tol and single else "FAIL", what,
        "below %g" % tol if err < tol else err,
        "one matrix product" if single else "not a matrix product"))
# CHECK: ok bthd,hdc->btc float32, w an input: relative error below 1e-05, one matrix product
# CHECK: ok bthd,hdc->btc float32, w an initializer: relative error below 1e-05, one matrix product
# CHECK: ok btc,chd->bthd float32, w an initializer: relative error below 1e-05, one matrix product
# CHECK: ok btc,chd->bthd float32, w an input, dynamic: relative error below 1e-05, one matrix product
# CHECK: ok bijk,jkl->bil float32, w an input: relative error below 1e-05, one matrix product
# CHECK: ok bijk,bjkl->bli float32, w an input: relative error below 1e-05, one matrix product
# CHECK: ok bthd,hdc->btc float16, w an initializer: relative error below 0.002, one matrix product
print("%d failed" % len(failures))
# CHECK: 0 failed
