# RUN: %python %s %t | FileCheck %s
#
# Every unary math op a hand-written module may apply to a whole tensor,
# in f32, f16 and bf16, through the CPU pipeline (with and without the
# fast exp/tanh), against float64 NumPy / math references taken on the
# same rounded inputs. The pipeline approximates some (exp, exp2, tanh,
# erf, expm1), leaves most to LLVM's intrinsics, and calls libm for those
# LLVM has none for (asinh, acosh, atanh, cbrt, erfc, log1p); f16 and bf16
# are computed in f32. Tolerances: f32 2e-6 relative (+1e-6 absolute), f16
# 1e-3 (+1e-4), bf16 8e-3 (+1e-3): two units in the last place of each
# type, and f32's polynomial approximations (about 2e-7); the absolute part
# shrinks with the results' magnitude (log1p and expm1 of x near 1e-4).

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_exec  # noqa: E402

N = 64


def half_away(x):
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


OPS = [  # (op, reference, low, high); small magnitudes are mixed in below
    ("absf", np.abs, -5, 5),
    ("ceil", np.ceil, -5, 5),
    ("floor", np.floor, -5, 5),
    ("trunc", np.trunc, -5, 5),
    ("round", half_away, -5, 5),
    ("roundeven", np.round, -5, 5),
    ("sqrt", np.sqrt, 0.01, 100),
    ("rsqrt", lambda x: 1 / np.sqrt(x), 0.01, 100),
    ("exp", np.exp, -10, 10),
    ("exp2", np.exp2, -10, 10),
    ("expm1", np.expm1, -3, 3),
    ("expm1", np.expm1, -1e-4, 1e-4),  # exp(x) - 1 would lose most of x
    ("log", np.log, 0.01, 100),
    ("log2", np.log2, 0.01, 100),
    ("log10", np.log10, 0.01, 100),
    ("log1p", np.log1p, -0.5, 3),
    ("log1p", np.log1p, -1e-4, 1e-4),  # log(1 + x) would lose most of x
    ("sin", np.sin, -3, 3),
    ("cos", np.cos, -3, 3),
    ("tan", np.tan, -1.4, 1.4),
    ("asin", np.arcsin, -1, 1),
    ("acos", np.arccos, -1, 1),
    ("atan", np.arctan, -10, 10),
    ("sinh", np.sinh, -5, 5),
    ("cosh", np.cosh, -5, 5),
    ("tanh", np.tanh, -5, 5),
    ("asinh", np.arcsinh, -10, 10),
    ("acosh", np.arccosh, 1, 10),
    ("atanh", np.arctanh, -0.99, 0.99),
    ("erf", np.vectorize(math.erf), -3, 3),
    ("erfc", np.vectorize(math.erfc), -2, 4),
    ("cbrt", np.cbrt, -10, 10),
]

TOLERANCES = {"f32": (2e-6, 1e-6), "f16": (1e-3, 1e-4), "bf16": (8e-3, 1e-3)}


def inputs(rng, low, high):
    x = rng.uniform(low, high, N)
    # Small magnitudes where the domain has them (log1p, expm1, the inverse
    # hyperbolics near 0: where cancellation would show).
    if low < 0 < high and high - low > 1:
        x[:8] = rng.uniform(-0.1, 0.1, 8)
    return x


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    rng = np.random.default_rng(23)
    checks = attn_exec.Checks()
    raw = [inputs(rng, low, high) for _, _, low, high in OPS]
    for dtype in ("f32", "f16", "bf16"):
        ty = attn_exec.tensor_type((N,), dtype)
        args = ", ".join("%%x%d: %s" % (i, ty) for i in range(len(OPS)))
        body = "".join("  %%r%d = math.%s %%x%d : %s\n" % (i, op, i, ty)
                       for i, (op, _, _, _) in enumerate(OPS))
        module = "func.func @main(%s) -> (%s) {\n%s  return %s : %s\n}\n" % (
            args, ", ".join([ty] * len(OPS)), body,
            ", ".join("%%r%d" % i for i in range(len(OPS))),
            ", ".join([ty] * len(OPS)))
        xs = [attn_exec.round_to(x, dtype) for x in raw]
        rtol, atol = TOLERANCES[dtype]
        for variant, opts in (("fast-exp", ""), ("libm-exp", "fast-exp=false")):
            label = "%s %s" % (dtype, variant)
            with checks(label):
                got = attn_exec.run(module, "main", xs, work,
                                    num_outputs=len(OPS),
                                    extra_args=["--pipeline-options=" + opts])
                for (op, ref, _, _), x, g in zip(OPS, xs, got):
                    want = ref(np.asarray(x, dtype=np.float64))
                    # (The absolute floor scaled down for small results.)
                    scale = min(1.0, float(np.abs(want).max()))
                    attn_exec.assert_close("%s math.%s" % (label, op), g, want,
                                           atol=atol * scale, rtol=rtol)
    checks.finish("math_ops")


if __name__ == "__main__":
    main()

# CHECK: f32 fast-exp math.erfc: max_abs_err={{.*}} OK
# CHECK: f16 fast-exp math.log1p: max_abs_err={{.*}} OK
# CHECK: bf16 libm-exp math.log1p: max_abs_err={{.*}} OK
# CHECK-NOT: FAIL
# CHECK: math_ops: all 6 checks OK
