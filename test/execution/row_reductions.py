# RUN: %python %s %t | FileCheck %s --check-prefixes=CHECK,%malloc
#
# Row sums through the CPU pipeline, where attn-vectorize-row-reductions
# writes them as vector code: a plain sum over the last dim ([B, C] ->
# [B, 1]), a LayerNorm-style sum of squared deviations from a per-row mean
# ([B, C] -> [B]), both with B and C dynamic, a [2, 5, 70] sum over
# rows of 70 (a 64-element step, no 16-wide one, a 6-element tail), and a
# 1-D sum ([C] -> [], no tiling), and a row max of negative values ([B, C]
# -> [B], from -inf). First the pass is shown to rewrite all five (the IR
# after it has five vector.reduction and no reduction generic), then every size runs with threads (default), on one thread,
# with parallel=false, and with the pass off, against a float64 NumPy
# reference within 1e-5 + 1e-5 * |sum| (the max exactly). Sizes cover the loop boundaries:
# C in {1, 15, 16, 17, 63, 64, 65, 129, 768}. In the sanitizer run of the
# suite (ATTN_SANITIZED=1), where only the runtime that runs the compiled
# code is instrumented, four of the nine sizes run (C = 1, 17, 129 and
# 768: no vector step, a tail after one, several steps with a tail, the
# GPT-2 width); the test prints the others.
#
# CHECK: IR after attn-vectorize-row-reductions: 5 vector.reduction, 0 reduction generics
# CHECK-NOT: FAIL
# GLIBC: row_reductions: all 112 checks OK
# SANITIZED: row_reductions: all 52 checks OK

import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_exec  # noqa: E402

MODULE = """
#id2 = affine_map<(b, c) -> (b, c)>
#keep = affine_map<(b, c) -> (b, 0)>
#row = affine_map<(b, c) -> (b)>
#id3 = affine_map<(a, b, c) -> (a, b, c)>
#row3 = affine_map<(a, b, c) -> (a, b)>
#all = affine_map<(c) -> (c)>
#none = affine_map<(c) -> ()>
func.func @rows(%x: tensor<?x?xf32>, %m: tensor<?x1xf32>) -> (tensor<?x1xf32>, tensor<?xf32>) {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c0 : tensor<?x?xf32>
  %e1 = tensor.empty(%b) : tensor<?x1xf32>
  %i1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<?x1xf32>) -> tensor<?x1xf32>
  %s = linalg.generic {indexing_maps = [#id2, #keep], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%i1 : tensor<?x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<?x1xf32>
  %e2 = tensor.empty(%b) : tensor<?xf32>
  %i2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<?xf32>) -> tensor<?xf32>
  %v = linalg.generic {indexing_maps = [#id2, #keep, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : tensor<?x?xf32>, tensor<?x1xf32>) outs(%i2 : tensor<?xf32>) {
  ^bb0(%in: f32, %mean: f32, %out: f32):
    %d = arith.subf %in, %mean : f32
    %sq = arith.mulf %d, %d : f32
    %r = arith.addf %out, %sq : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %s, %v : tensor<?x1xf32>, tensor<?xf32>
}
func.func @static3(%x: tensor<2x5x70xf32>) -> tensor<2x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x5xf32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %s = linalg.generic {indexing_maps = [#id3, #row3], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<2x5x70xf32>) outs(%i : tensor<2x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<2x5xf32>
  return %s : tensor<2x5xf32>
}
func.func @rowmax(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %ninf = arith.constant 0xFF800000 : f32
  %b = tensor.dim %x, %c0 : tensor<?x?xf32>
  %e = tensor.empty(%b) : tensor<?xf32>
  %i = linalg.fill ins(%ninf : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %m = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%i : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<?xf32>
  return %m : tensor<?xf32>
}
func.func @flat(%x: tensor<?xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction"]}
      ins(%x : tensor<?xf32>) outs(%i : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
"""

VARIANTS = [("threads", []), ("one-thread", ["--threads", "1"]),
            ("serial", ["--pipeline-options=parallel=false"]),
            ("pass off", ["--pipeline-options=vectorize-row-reductions=false"])]


def ir_after_pass(work):
    """The IR right after attn-vectorize-row-reductions in the pipeline."""
    path = os.path.join(work, "ir.mlir")
    with open(path, "w") as f:
        f.write(MODULE)
    proc = subprocess.run([attn_exec.ATTENTION_RUN, path, "--compile-only",
                           "--print-ir-after-all"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, check=True)
    dumps = proc.stdout.split("// -----// IR Dump After ")
    # One dump per function (a function pass), each of the whole module:
    # the last one shows all four rewritten.
    after = [d for d in dumps if d.startswith("AttnVectorizeRowReductionsPass")]
    if len(after) != 4:
        print("FAIL: %d dumps after attn-vectorize-row-reductions, not 4" % len(after))
        return ""
    return after[-1]


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    rng = np.random.default_rng(21)
    checks = attn_exec.Checks()
    ir = ir_after_pass(work)
    print("IR after attn-vectorize-row-reductions: %d vector.reduction, %d reduction generics"
          % (ir.count("vector.reduction <"), ir.count('"reduction"]')))
    # Pipeline options at compile time, --threads at run time.
    pipeline = lambda args: [a for a in args if a.startswith("--pipeline-options")]
    runtime = lambda args: [a for a in args if a not in pipeline(args)]
    compiled = {name: attn_exec.compile_module(MODULE, work, pipeline(args))
                for name, args in VARIANTS}

    def close(name, got, want):
        attn_exec.assert_close(name, got, want, atol=1e-5, rtol=1e-5)

    sizes = ((3, 1), (3, 15), (1, 16), (3, 17), (3, 63), (1, 64), (3, 65), (2, 129), (3, 768))
    sanitizer_run = attn_exec.SANITIZED
    if sanitizer_run:
        kept = ((3, 1), (3, 17), (2, 129), (3, 768))
        print("sanitizer run: [B, C] = %s left out (the release run has them)"
              % ", ".join("[%d, %d]" % bc for bc in sizes if bc not in kept))
        sizes = kept
    for b, c in sizes:
        # Offset values, so that a lost or doubled element shows.
        x = (rng.standard_normal((b, c)) + 0.5).astype(np.float32)
        m = x.astype(np.float64).mean(-1, keepdims=True).astype(np.float32)
        want_s = x.astype(np.float64).sum(-1, keepdims=True)
        want_v = ((x.astype(np.float64) - m) ** 2).sum(-1)
        for name, args in VARIANTS:
            run_args = runtime(args)
            with checks("rows B=%d C=%d %s" % (b, c, name)):
                s, v = attn_exec.run(compiled[name], "rows", [x, m], work, num_outputs=2,
                                     extra_args=run_args)
                close("sum B=%d C=%d %s" % (b, c, name), s, want_s)
                close("squares B=%d C=%d %s" % (b, c, name), v, want_v)
            with checks("rowmax B=%d C=%d %s" % (b, c, name)):
                (got,) = attn_exec.run(compiled[name], "rowmax", [x - 10], work,
                                       extra_args=run_args)
                want = (x - 10).max(-1)
                if got.shape != want.shape or not np.array_equal(got, want):
                    raise AssertionError("rowmax differs from np.max")
            with checks("flat C=%d %s" % (b * c, name)):
                (t,) = attn_exec.run(compiled[name], "flat", [x.reshape(-1)], work,
                                     extra_args=run_args)
                close("flat C=%d %s" % (b * c, name), t, x.astype(np.float64).sum())
    x3 = rng.standard_normal((2, 5, 70)).astype(np.float32)
    for name, args in VARIANTS:
        run_args = runtime(args)
        with checks("static3 %s" % name):
            (s3,) = attn_exec.run(compiled[name], "static3", [x3], work, extra_args=run_args)
            close("static3 %s" % name, s3, x3.astype(np.float64).sum(-1))
    checks.finish("row_reductions")


if __name__ == "__main__":
    main()
