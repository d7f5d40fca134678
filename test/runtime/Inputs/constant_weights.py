"""Models with constant weights, for the tests of constants linked as data
outside LLVM (attention-run --inline-constants-below).

usage: constant_weights.py make DIR   writes DIR/model.mlir, DIR/big.mlir,
                                      DIR/shared.mlir, DIR/model.onnx and
                                      their inputs (x, xb, a, b .npy)
       constant_weights.py check DIR OUT.npy...
                                      checks each output against float64
                                      NumPy at 1e-5 (by its file name: big*
                                      for big.mlir, onnx* for model.onnx,
                                      shared_a* and shared_b* for the results
                                      of shared.mlir, else model.mlir) and
                                      prints one line each

model.mlir: a two-layer projection. W1 [256, 128] f32 (128 KiB) is a
dense_resource blob (how the ONNX importer holds weights), W2 [128, 48] f32
(24 KiB) inline dense data. Both are above the 4 KiB from which the
pipeline holds constants as byte strings; only W1 is above the default 64
KiB. big.mlir: one product with W [1024, 640] f32 (2.5 MiB, above the 2 MiB
from which the JIT asks for huge pages). model.onnx: Y = (X * S) W1 + B1
with S a uniform [1, 256] initializer of 0.5 (1 KiB: the importer keeps it
a splat, not a blob). shared.mlir: a + W1 [256, 128] and b + W1 viewed as
[128, 256], two constants of one blob: after the pipeline two globals that
hold the very same byte attribute.
"""
import os
import sys

import numpy as np


def weights():
    rng = np.random.default_rng(7)
    w1 = (rng.standard_normal((256, 128)) / 16).astype(np.float32)
    b1 = rng.standard_normal(128).astype(np.float32)
    w2 = (rng.standard_normal((128, 48)) / 11).astype(np.float32)
    x = rng.standard_normal((5, 256)).astype(np.float32)
    wb = (rng.standard_normal((1024, 640)) / 32).astype(np.float32)
    xb = rng.standard_normal((3, 1024)).astype(np.float32)
    return x, w1, b1, w2, xb, wb


def dense(a):
    return "dense<%s>" % np.array2string(
        a, separator=", ", threshold=a.size + 1, floatmode="unique",
        max_line_width=1 << 30)


def resources(name, a):
    """The module's dialect_resources section: `a` as the blob `name`."""
    return """{-#
  dialect_resources: {
    builtin: {
      %s: "0x04000000%s"
    }
  }
#-}
""" % (name, a.tobytes().hex().upper())


def matmul(name, a, w, m, k, n):
    """%name = a [m, k] @ w [k, n], accumulated from zero (%zero)."""
    return """  %e{0} = tensor.empty() : tensor<{3}x{5}xf32>
  %f{0} = linalg.fill ins(%zero : f32) outs(%e{0} : tensor<{3}x{5}xf32>) -> tensor<{3}x{5}xf32>
  %{0} = linalg.matmul ins({1}, {2} : tensor<{3}x{4}xf32>, tensor<{4}x{5}xf32>) outs(%f{0} : tensor<{3}x{5}xf32>) -> tensor<{3}x{5}xf32>
""".format(name, a, w, m, k, n)


def make(d):
    x, w1, b1, w2, xb, wb = weights()
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "xb.npy"), xb)
    module = ("""func.func @main(%x: tensor<5x256xf32>) -> tensor<5x48xf32> {
  %w1 = arith.constant dense_resource<w1> : tensor<256x128xf32>
  %b1 = arith.constant BIAS : tensor<128xf32>
  %w2 = arith.constant W2 : tensor<128x48xf32>
  %zero = arith.constant 0.0 : f32
""" + matmul("h", "%x", "%w1", 5, 256, 128) + """  %hb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%h, %b1 : tensor<5x128xf32>, tensor<128xf32>) outs(%eh : tensor<5x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<5x128xf32>
""" + matmul("y", "%hb", "%w2", 5, 128, 48) + """  return %y : tensor<5x48xf32>
}
""").replace("BIAS", dense(b1)).replace("W2", dense(w2)) + resources("w1", w1)
    with open(os.path.join(d, "model.mlir"), "w") as f:
        f.write(module)
    big = """func.func @main(%x: tensor<3x1024xf32>) -> tensor<3x640xf32> {
  %w = arith.constant dense_resource<wb> : tensor<1024x640xf32>
  %zero = arith.constant 0.0 : f32
""" + matmul("y", "%x", "%w", 3, 1024, 640) + """  return %y : tensor<3x640xf32>
}
""" + resources("wb", wb)
    with open(os.path.join(d, "big.mlir"), "w") as f:
        f.write(big)
    rng = np.random.default_rng(11)
    np.save(os.path.join(d, "a.npy"), rng.standard_normal((256, 128)).astype(np.float32))
    np.save(os.path.join(d, "b.npy"), rng.standard_normal((128, 256)).astype(np.float32))
    shared = """func.func @main(%a: tensor<256x128xf32>, %b: tensor<128x256xf32>) -> (tensor<256x128xf32>, tensor<128x256xf32>) {
  %w = arith.constant dense_resource<w1> : tensor<256x128xf32>
  %wt = arith.constant dense_resource<w1> : tensor<128x256xf32>
  %ea = tensor.empty() : tensor<256x128xf32>
  %ya = linalg.add ins(%a, %w : tensor<256x128xf32>, tensor<256x128xf32>) outs(%ea : tensor<256x128xf32>) -> tensor<256x128xf32>
  %eb = tensor.empty() : tensor<128x256xf32>
  %yb = linalg.add ins(%b, %wt : tensor<128x256xf32>, tensor<128x256xf32>) outs(%eb : tensor<128x256xf32>) -> tensor<128x256xf32>
  return %ya, %yb : tensor<256x128xf32>, tensor<128x256xf32>
}
""" + resources("w1", w1)
    with open(os.path.join(d, "shared.mlir"), "w") as f:
        f.write(shared)

    import onnx
    from onnx import TensorProto, helper, numpy_helper
    inits = [numpy_helper.from_array(np.full((1, 256), 0.5, np.float32), "S"),
             numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(b1, "B1")]
    nodes = [helper.make_node("Mul", ["X", "S"], ["XS"], name="scale"),
             helper.make_node("MatMul", ["XS", "W1"], ["XW"], name="proj"),
             helper.make_node("Add", ["XW", "B1"], ["Y"], name="bias")]
    graph = helper.make_graph(
        nodes, "constant_weights",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [5, 256])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [5, 128])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(d, "model.onnx"))


def check(d, outputs):
    x, w1, b1, w2, xb, wb = (a.astype(np.float64) for a in weights())
    a, b = (np.load(os.path.join(d, n + ".npy")).astype(np.float64) for n in "ab")
    wants = {"big": xb @ wb, "onnx": (x * 0.5) @ w1 + b1,
             "shared_a": a + w1, "shared_b": b + w1.reshape(128, 256),
             "model": (x @ w1 + b1) @ w2}
    for path in outputs:
        name = os.path.basename(path)
        kind = [k for k in ("big", "onnx", "shared_a", "shared_b") if name.startswith(k)]
        want = wants[kind[0] if kind else "model"]
        got = np.load(path)
        assert got.shape == want.shape and got.dtype == np.float32, (got.shape, got.dtype)
        err = float(np.abs(got - want).max())
        assert err <= 1e-5 * max(1.0, float(np.abs(want).max())), (path, err)
        print("%s matches NumPy" % name)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3:])
