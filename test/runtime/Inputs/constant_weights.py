"""A two-layer projection with constant weights, for the tests of constants
linked as data outside LLVM (attention-run --inline-constants-below).

usage: constant_weights.py make DIR   writes DIR/model.mlir and DIR/x.npy
       constant_weights.py check DIR OUT.npy...
                                      checks each output against float64
                                      NumPy at 1e-5 and prints one line each

The first weight, W1 [256, 128] f32 (128 KiB), is a dense_resource blob
(how the ONNX importer holds weights); the second, W2 [128, 48] f32 (24
KiB), inline dense data. Both are above the 4 KiB from which the pipeline
holds constants as byte strings; only W1 is above the default 64 KiB.
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
    return x, w1, b1, w2


def dense(a):
    return "dense<%s>" % np.array2string(
        a, separator=", ", threshold=a.size + 1, floatmode="unique",
        max_line_width=1 << 30)


def make(d):
    x, w1, b1, w2 = weights()
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "x.npy"), x)
    blob = "0x04000000" + w1.tobytes().hex().upper()
    module = """func.func @main(%x: tensor<5x256xf32>) -> tensor<5x48xf32> {
  %w1 = arith.constant dense_resource<w1> : tensor<256x128xf32>
  %b1 = arith.constant BIAS : tensor<128xf32>
  %w2 = arith.constant W2 : tensor<128x48xf32>
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<5x128xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<5x128xf32>) -> tensor<5x128xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<5x256xf32>, tensor<256x128xf32>) outs(%f1 : tensor<5x128xf32>) -> tensor<5x128xf32>
  %hb = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%h, %b1 : tensor<5x128xf32>, tensor<128xf32>) outs(%e1 : tensor<5x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<5x128xf32>
  %e2 = tensor.empty() : tensor<5x48xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<5x48xf32>) -> tensor<5x48xf32>
  %y = linalg.matmul ins(%hb, %w2 : tensor<5x128xf32>, tensor<128x48xf32>) outs(%f2 : tensor<5x48xf32>) -> tensor<5x48xf32>
  return %y : tensor<5x48xf32>
}
{-#
  dialect_resources: {
    builtin: {
      w1: "BLOB"
    }
  }
#-}
""".replace("BIAS", dense(b1)).replace("W2", dense(w2)).replace("BLOB", blob)
    with open(os.path.join(d, "model.mlir"), "w") as f:
        f.write(module)


def check(outputs):
    x, w1, b1, w2 = (a.astype(np.float64) for a in weights())
    want = (x @ w1 + b1) @ w2
    for path in outputs:
        got = np.load(path)
        assert got.shape == want.shape and got.dtype == np.float32, (got.shape, got.dtype)
        err = float(np.abs(got - want).max())
        assert err <= 1e-5 * max(1.0, float(np.abs(want).max())), (path, err)
        print("%s matches NumPy" % os.path.basename(path))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        check(sys.argv[3:])
