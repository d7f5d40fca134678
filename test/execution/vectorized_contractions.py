# RUN: %python %s %t | FileCheck %s
#
# attn-vectorize-contractions' register tiles (by host: 8 rows x 32
# columns with AVX-512, 6 x 16 with AVX2; FMAs on vectors) and the
# remainder rows' tiles of 4, 2 and 1 rows, checked against float64 NumPy:
# a projection x[1, T, 96] @ w[96, 64] and a batched P V product
# p[2, 3, T, 50] @ v[2, 3, 50, 32], at row counts below, at and around the
# register and cache tiles (1, 5, 8, 63, 64, 65, 130) and of the row
# count that chooses between N split into work items (up to 192 rows, 3
# m blocks of 64, with the batch of 1) and m blocks at run time (192,
# 193, 257), plus the same
# modules with B read in place (contraction-pack-b=false), with the pass
# off (vectorize-contractions=false), with either host's register tile
# given explicitly (8 x 32 and 6 x 16, whatever this host's default) and
# with tiles of one row (register-m = 1: a block of one row copies no
# panel), and compiled for x86-64-v3 whatever the host (--target-cpu: AVX2
# code with its default 6 x 16 tiles).
# A k range of 600: one block with AVX-512's default (all of K up to 2048),
# three with cache-k = 256 (AVX2's default, also given explicitly, here and
# in the shared-weight runs below; the last one partial), for the
# zero-fill init that the first k block replaces,
# the bias add folded into it (out_proj), and an accumulator that is an
# argument (C + x @ w, read in every block).
# Static shapes can pack a weight shared by the m blocks once, before them
# (pack-b-once): x[2, T, 600] @ w[600, 64] + bias (600 rows of w in groups
# of 8, a partial last k block), x[1, T, 96] @ w[96, 64] (one group of 16
# per task), and x[1, T, 96] broadcast into the batch of w[2, 96, 64] (its
# map's 0 result; w differs per batch: per-panel copies), x[4, T, 96] @
# w[96, 64] (a batch of 4: from T = 65 to 128 one m block per sequence,
# also at T = 128 with the defaults), and x[1, T, 96] @
# w[96, 160] + bias[160] with w an argument or a constant, at T = 5 (no
# full register tile: the weight is not packed once, the rest tiles read
# per-panel copies), 8, 64, 65, 130 and 257:
# with the default thresholds (packed once from 8 blocks; fewer than 4
# blocks: one block of all rows and N split into 4
# work items, 160 columns into unequal chunks, with the bias and the packed
# constant read at the chunk's offset), with
# contraction-pack-b-once-blocks=1 (packed whenever a full tile exists),
# with contraction-pack-b-once=false and with
# contraction-split-n-items=0 (m blocks only) and with
# contraction-cache-k=256 (several k blocks). Constant weights are packed at compile
# time: x[1, T, 96] @ w with w an inline dense constant, a resource blob
# (as the ONNX importer holds initializers) and a splat, at the dynamic T
# above, with and without pack-b-once.
# Widths that are not a multiple of register-n are split along n into
# register tiles of register-n, register-n / 2, ... down to 8 columns and
# scalar loops for the rest: x[1, T, 96] @ w[96, N] for N = 57 (32 + 16 +
# 8 + 1 with AVX-512's tiles; 48 + 8 + 1 with AVX2's), 40, 24, 12, 8 and 7
# (no split: scalar loops), zero-filled or accumulating into an argument,
# w an argument or a constant (each part packs its slice at compile
# time), at dynamic T (1, 5, 64, 130, 257; 5 and 130 with the other options)
# and at static T with pack-b-once, under both register tiles, without
# packing and for x86-64-v3.
# Sequential n blocks around the m blocks (contraction-cache-n=32: blocks
# of one or two register tiles' columns): the dynamic-T module above under
# both register tiles, the static projections at T = 257 (5 m blocks) with
# per-panel copies, with the weight packed at run time (also for every m
# block count, pack-b-once-blocks=1) and at compile time, and without
# pack-b-once, and with cache-n=64 (w[96, 160] in blocks of 64, 64 and a
# narrower last one of 32), the constant weights, a split width (N = 57
# with 16-column tiles: its 48-column part in blocks of 32 and 16), and by
# default a weight of 5 MiB
# (x[1, T, 512] @ w[512, 2560] + bias: blocks of 1280 columns, on the host
# and for x86-64-v3). atol/rtol 1e-5.
#
# In the sanitizer run of the suite (ATTN_SANITIZED=1, set by lit for the
# ASan+UBSan build) every module and option set still runs, at fewer row
# counts: with the default options one row, rest tiles, several blocks and
# a partial last block; with the other option sets one row count (several
# blocks and a partial one where the module's T is dynamic). The
# instrumented part, the compiler, sees each module once per option set
# either way. The test prints the row counts it left out, which the
# release run has.
#
# CHECK-NOT: FAIL
# CHECK: vectorized_contractions: {{[0-9]+}} passed, 0 failed

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_exec  # noqa: E402

SANITIZED = os.environ.get("ATTN_SANITIZED") == "1"


def rows(what, full, sanitized):
    """The row counts T to run `what` at: `full`, or under the sanitizers the
    subset `sanitized` (the rest differ in how many times the same tiles
    run), saying which were left out."""
    if not SANITIZED:
        return full
    print("sanitizer run: %s at T = %s; T = %s left out (the release run has them)"
          % (what, ", ".join(map(str, sanitized)),
             ", ".join(str(t) for t in full if t not in sanitized)))
    return sanitized


def projection(k, init, n=64):
    """x[1, T, k] @ w[k, n] into `init` (SSA name): %r."""
    return """  %r = linalg.generic {{indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}}
      ins(%x, %w : tensor<1x?x{k}xf32>, tensor<{k}x{n}xf32>) outs({init} : tensor<1x?x{n}xf32>) {{
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }} -> tensor<1x?x{n}xf32>
""".format(k=k, init=init, n=n)


def zero_init(k, n=64):
    """A zero-filled [1, T, n] accumulator for x[1, T, k]: %f."""
    return """  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %t = tensor.dim %x, %c1 : tensor<1x?x{k}xf32>
  %e = tensor.empty(%t) : tensor<1x?x{n}xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<1x?x{n}xf32>) -> tensor<1x?x{n}xf32>
""".format(k=k, n=n)


def bias_add(n=64):
    """%r[1, T, n] + %bias[n] (maps #ba, #ya): %y."""
    return """  %y = linalg.generic {{indexing_maps = [#ba, #ya], iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%bias : tensor<{n}xf32>) outs(%r : tensor<1x?x{n}xf32>) {{
  ^bb0(%bv: f32, %o: f32):
    %s = arith.addf %bv, %o : f32
    linalg.yield %s : f32
  }} -> tensor<1x?x{n}xf32>
""".format(n=n)


MODULE = """
#xa = affine_map<(b, m, k, n) -> (b, m, k)>
#wa = affine_map<(b, m, k, n) -> (k, n)>
#ca = affine_map<(b, m, k, n) -> (b, m, n)>
#pa = affine_map<(b, h, m, k, n) -> (b, h, m, k)>
#va = affine_map<(b, h, m, k, n) -> (b, h, k, n)>
#oa = affine_map<(b, h, m, k, n) -> (b, h, m, n)>
func.func @proj(%x: tensor<1x?x96xf32>, %w: tensor<96x64xf32>) -> tensor<1x?x64xf32> {
""" + zero_init(96) + projection(96, "%f") + """  return %r : tensor<1x?x64xf32>
}

func.func @pv(%p: tensor<2x3x?x50xf32>, %v: tensor<2x3x50x32xf32>) -> tensor<2x3x?x32xf32> {
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %t = tensor.dim %p, %c2 : tensor<2x3x?x50xf32>
  %e = tensor.empty(%t) : tensor<2x3x?x32xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x3x?x32xf32>) -> tensor<2x3x?x32xf32>
  %r = linalg.generic {indexing_maps = [#pa, #va, #oa], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%p, %v : tensor<2x3x?x50xf32>, tensor<2x3x50x32xf32>) outs(%f : tensor<2x3x?x32xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x3x?x32xf32>
  return %r : tensor<2x3x?x32xf32>
}

#ba = affine_map<(b, m, n) -> (n)>
#ya = affine_map<(b, m, n) -> (b, m, n)>
func.func @proj_bias(%x: tensor<1x?x600xf32>, %w: tensor<600x64xf32>, %bias: tensor<64xf32>) -> tensor<1x?x64xf32> {
""" + zero_init(600) + projection(600, "%f") + bias_add() + """  return %y : tensor<1x?x64xf32>
}

func.func @proj_acc(%x: tensor<1x?x600xf32>, %w: tensor<600x64xf32>, %c: tensor<1x?x64xf32>) -> tensor<1x?x64xf32> {
""" + projection(600, "%c") + """  return %r : tensor<1x?x64xf32>
}
"""


def static_fn(name, x, w, c, maps="#xa, #wa, #ca", bias=False, const_w=None):
    """@name: C = x @ w (types x, w, c; static), + bias[N] if `bias`; w is
    the inline constant `const_w` (its values) instead of an argument if
    given."""
    btype = "tensor<%sxf32>" % c.split("x")[-2]
    args = "%x: " + x
    if const_w is None:
        args += ", %w: " + w
    if bias:
        args += ", %bias: " + btype
    text = "func.func @%s(%s) -> %s {\n" % (name, args, c)
    if const_w is not None:
        values = ", ".join("[%s]" % ", ".join("%.9g" % v for v in row) for row in const_w)
        text += "  %%w = arith.constant dense<[%s]> : %s\n" % (values, w)
    text += """  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : {c}
  %f = linalg.fill ins(%zero : f32) outs(%e : {c}) -> {c}
  %r = linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}}
      ins(%x, %w : {x}, {w}) outs(%f : {c}) {{
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }} -> {c}
""".format(x=x, w=w, c=c, maps=maps)
    if not bias:
        return text + "  return %%r : %s\n}\n\n" % c
    return text + """  %y = linalg.generic {{indexing_maps = [#ba, #ya], iterator_types = ["parallel", "parallel", "parallel"]}}
      ins(%bias : {b}) outs(%r : {c}) {{
  ^bb0(%bv: f32, %o: f32):
    %s = arith.addf %bv, %o : f32
    linalg.yield %s : f32
  }} -> {c}
  return %y : {c}
}}

""".format(b=btype, c=c)


def static_module(t, w_wide):
    """The static-shape projections at T = t: @proj2 (batch 2, k 600, bias),
    @proj4 (batch 4, k 96; at t = 65 one m block per sequence, N not
    split), @proj1 (batch 1, k 96), @bcast (x[1, t, 96] broadcast over the
    batch of w[2, 96, 64], its batch dim indexed by 0, as the ONNX importer
    writes MatMul's broadcasting), and @wide and @wide_const (x[1, t, 96] @
    w[96, 160] + bias[160], w an argument or the constant `w_wide`): 160
    columns split into 4 work items are chunks of 3 register tiles and a
    last one of 1 (AVX2; AVX-512: 2, 2 and 1)."""
    return ("""#xa = affine_map<(b, m, k, n) -> (b, m, k)>
#wa = affine_map<(b, m, k, n) -> (k, n)>
#ca = affine_map<(b, m, k, n) -> (b, m, n)>
#ba = affine_map<(b, m, n) -> (n)>
#ya = affine_map<(b, m, n) -> (b, m, n)>
#xb = affine_map<(b, m, k, n) -> (0, m, k)>
#wb = affine_map<(b, m, k, n) -> (b, k, n)>
""" + static_fn("proj2", "tensor<2x%dx600xf32>" % t, "tensor<600x64xf32>",
                  "tensor<2x%dx64xf32>" % t, bias=True)
            + static_fn("proj1", "tensor<1x%dx96xf32>" % t, "tensor<96x64xf32>",
                        "tensor<1x%dx64xf32>" % t)
            + static_fn("proj4", "tensor<4x%dx96xf32>" % t, "tensor<96x64xf32>",
                        "tensor<4x%dx64xf32>" % t)
            + static_fn("bcast", "tensor<1x%dx96xf32>" % t, "tensor<2x96x64xf32>",
                        "tensor<2x%dx64xf32>" % t, maps="#xb, #wb, #ca")
            + static_fn("wide", "tensor<1x%dx96xf32>" % t, "tensor<96x160xf32>",
                        "tensor<1x%dx160xf32>" % t, bias=True)
            + static_fn("wide_const", "tensor<1x%dx96xf32>" % t, "tensor<96x160xf32>",
                        "tensor<1x%dx160xf32>" % t, bias=True, const_w=w_wide))


def constant_module(w):
    """x[1, T, 96] @ w[96, 64] with w a constant: @proj_dense (inline
    values), @proj_resource (a dense_resource blob) and @proj_splat (0.25
    everywhere)."""
    values = ", ".join("[%s]" % ", ".join("%.9g" % v for v in row) for row in w)
    blob = "0x04000000" + w.astype("<f4").tobytes().hex().upper()
    text = ""
    for entry, const in (("proj_dense", "dense<[%s]>" % values),
                         ("proj_resource", "dense_resource<w_blob>"),
                         ("proj_splat", "dense<0.25>")):
        text += ("func.func @{e}(%x: tensor<1x?x96xf32>) -> tensor<1x?x64xf32> {{\n"
                 "  %w = arith.constant {c} : tensor<96x64xf32>\n").format(e=entry, c=const)
        text += zero_init(96) + projection(96, "%f") + "  return %r : tensor<1x?x64xf32>\n}\n"
    return ("#xa = affine_map<(b, m, k, n) -> (b, m, k)>\n"
            "#wa = affine_map<(b, m, k, n) -> (k, n)>\n"
            "#ca = affine_map<(b, m, k, n) -> (b, m, n)>\n" + text +
            "{-#\n  dialect_resources: {\n    builtin: {\n      w_blob: \"%s\"\n    }\n  }\n#-}\n" % blob)


workdir = sys.argv[1]
rng = np.random.default_rng(5)
passed = failed = 0
w = rng.standard_normal((96, 64)).astype(np.float32)
v = rng.standard_normal((2, 3, 50, 32)).astype(np.float32)
# nn.Linear's init for the 600-deep projections: outputs of order 1.
w600 = rng.uniform(-600 ** -0.5, 600 ** -0.5, (600, 64)).astype(np.float32)
bias = rng.standard_normal(64).astype(np.float32)


_compiled = {}


def compiled(module, options):
    """`module` compiled with the pipeline options (or --target-cpu=CPU),
    once: the dynamic-T modules serve every T and entry from one shared
    object."""
    key = (module, options)
    if key not in _compiled:
        extra = ([options] if options.startswith("--") else
                 ["--pipeline-options", options] if options else [])
        _compiled[key] = attn_exec.compile_module(module, workdir, extra_args=extra)
    return _compiled[key]


def check(module, t, options, cases):
    """Runs each (entry, args, float64 reference) of `module` with the
    pipeline options and counts it (a module that fails to compile fails
    every case)."""
    global passed, failed
    for entry, args, want in cases:
        name = "%s T=%d %s" % (entry, t, options or "default")
        try:
            (got,) = attn_exec.run(compiled(module, options), entry, args, workdir)
            attn_exec.assert_close(name, got, want, atol=1e-5, rtol=1e-5)
            passed += 1
        except (AssertionError, attn_exec.AttentionRunError) as e:
            print("FAIL %s: %s" % (name, e))
            failed += 1


for options in ("", "contraction-pack-b=false", "vectorize-contractions=false",
                "contraction-register-m=8 contraction-register-n=32",
                "contraction-register-m=6 contraction-register-n=16",
                "contraction-register-m=1 contraction-register-n=16",
                "contraction-cache-k=256", "--target-cpu=x86-64-v3",
                "contraction-cache-n=32",
                "contraction-cache-n=32 contraction-register-m=6 contraction-register-n=16"):
    for t in rows("dynamic T, " + (options or "default"),
                  (1, 5, 8, 63, 64, 65, 130, 192, 193, 257),
                  (1, 63, 130, 257) if not options else (130, 257)):
        x = rng.standard_normal((1, t, 96)).astype(np.float32)
        p = rng.standard_normal((2, 3, t, 50)).astype(np.float32)
        x600 = rng.standard_normal((1, t, 600)).astype(np.float32)
        c = rng.standard_normal((1, t, 64)).astype(np.float32)
        deep = x600.astype(np.float64) @ w600
        check(MODULE, t, options,
              (("proj", [x, w], x.astype(np.float64) @ w),
               ("pv", [p, v], p.astype(np.float64) @ v),
               ("proj_bias", [x600, w600, bias], deep + bias),
               ("proj_acc", [x600, w600, c], deep + c)))
w_wide = rng.standard_normal((96, 160)).astype(np.float32)
bias_wide = rng.standard_normal(160).astype(np.float32)
for options in ("", "contraction-pack-b-once-blocks=1", "contraction-pack-b-once=false",
                "contraction-split-n-items=0", "contraction-cache-k=256"):
    for t in rows("static T, " + (options or "default"), (5, 8, 64, 65, 130, 257),
                  (5, 65, 257) if not options else (65,)):
        x2 = rng.standard_normal((2, t, 600)).astype(np.float32)
        x1 = rng.standard_normal((1, t, 96)).astype(np.float32)
        x4 = rng.standard_normal((4, t, 96)).astype(np.float32)
        w2 = rng.standard_normal((2, 96, 64)).astype(np.float32)
        wide = x1.astype(np.float64) @ w_wide + bias_wide
        check(static_module(t, w_wide), t, options,
              (("proj2", [x2, w600, bias], x2.astype(np.float64) @ w600 + bias),
               ("proj1", [x1, w], x1.astype(np.float64) @ w),
               ("proj4", [x4, w], x4.astype(np.float64) @ w),
               ("bcast", [x1, w2], x1.astype(np.float64) @ w2),
               ("wide", [x1, w_wide, bias_wide], wide),
               ("wide_const", [x1, bias_wide], wide)))
# N blocks of 32 columns (cache-n=32) at T = 257 (5 m blocks: N is not
# split into work items): the per-panel copies (proj1, wide), the weight
# packed at run time (proj2, proj4; all of them with
# pack-b-once-blocks=1) or at compile time (wide_const), the bias at each
# block's offset; without pack-b-once; and the 160 columns of wide and
# wide_const in blocks of 64, 64 and 32 (cache-n=64; wide's weight also
# packed at run time, pack-b-once-blocks=1).
for options in ("contraction-cache-n=32", "contraction-cache-n=32 contraction-pack-b-once-blocks=1",
                "contraction-cache-n=32 contraction-pack-b-once=false", "contraction-cache-n=64",
                "contraction-cache-n=64 contraction-pack-b-once-blocks=1"):
    t = 257
    x2 = rng.standard_normal((2, t, 600)).astype(np.float32)
    x1 = rng.standard_normal((1, t, 96)).astype(np.float32)
    x4 = rng.standard_normal((4, t, 96)).astype(np.float32)
    wide = x1.astype(np.float64) @ w_wide + bias_wide
    check(static_module(t, w_wide), t, options,
          (("proj2", [x2, w600, bias], x2.astype(np.float64) @ w600 + bias),
           ("proj1", [x1, w], x1.astype(np.float64) @ w),
           ("proj4", [x4, w], x4.astype(np.float64) @ w),
           ("wide", [x1, w_wide, bias_wide], wide),
           ("wide_const", [x1, bias_wide], wide)))
# T = 128 with the batch of 4: one block of exactly two blocks' rows (a
# 2-row rest tile on AVX2, none on AVX-512).
x4 = rng.standard_normal((4, 128, 96)).astype(np.float32)
check(static_module(128, w_wide), 128, "",
      (("proj4", [x4, w], x4.astype(np.float64) @ w),))
const_module = constant_module(w)
splat = np.full((96, 64), 0.25)
for options in ("", "contraction-pack-b-once=false", "contraction-cache-n=32"):
    for t in rows("constant w, " + (options or "default"), (1, 5, 8, 63, 64, 65, 130),
                  (1, 63, 130) if not options else (130,)):
        x = rng.standard_normal((1, t, 96)).astype(np.float32)
        x64 = x.astype(np.float64)
        check(const_module, t, options,
              (("proj_dense", [x], x64 @ w),
               ("proj_resource", [x], x64 @ w),
               ("proj_splat", [x], x64 @ splat)))


def ragged_module(widths, w_const, t=None):
    """@zN (zero fill, w an argument), @aN (C + x @ w, C an argument) and
    @kN (zero fill, w the constant w_const[:, :N]) for each width N, over
    x[1, T, 96]: T dynamic, or the static `t`."""
    tdim = "?" if t is None else str(t)
    text = ("#xa = affine_map<(b, m, k, n) -> (b, m, k)>\n"
            "#wa = affine_map<(b, m, k, n) -> (k, n)>\n"
            "#ca = affine_map<(b, m, k, n) -> (b, m, n)>\n")
    for n in widths:
        x, w, c = ("tensor<1x%sx96xf32>" % tdim, "tensor<96x%dxf32>" % n,
                   "tensor<1x%sx%dxf32>" % (tdim, n))
        body = """  %r = linalg.generic {{indexing_maps = [#xa, #wa, #ca], iterator_types = ["parallel", "parallel", "reduction", "parallel"]}}
      ins(%x, %w : {x}, {w}) outs({init} : {c}) {{
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }} -> {c}
  return %r : {c}
}}
"""
        fill = """  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %t = tensor.dim %x, %c1 : {x}
  %e = tensor.empty({dyn}) : {c}
  %f = linalg.fill ins(%zero : f32) outs(%e : {c}) -> {c}
""".format(x=x, c=c, dyn="%t" if t is None else "")
        values = ", ".join("[%s]" % ", ".join("%.9g" % v for v in row) for row in w_const[:, :n])
        text += ("func.func @z%d(%%x: %s, %%w: %s) -> %s {\n" % (n, x, w, c) + fill +
                 body.format(x=x, w=w, c=c, init="%f"))
        text += ("func.func @a%d(%%x: %s, %%w: %s, %%acc: %s) -> %s {\n" % (n, x, w, c, c) +
                 body.format(x=x, w=w, c=c, init="%acc"))
        text += ("func.func @k%d(%%x: %s) -> %s {\n" % (n, x, c) +
                 "  %%w = arith.constant dense<[%s]> : %s\n" % (values, w) + fill +
                 body.format(x=x, w=w, c=c, init="%f"))
    return text


RAGGED = (57, 40, 24, 12, 8, 7)
w_ragged = rng.standard_normal((96, 57)).astype(np.float32)


def ragged_cases(t):
    x = rng.standard_normal((1, t, 96)).astype(np.float32)
    x64 = x.astype(np.float64)
    cases = []
    for n in RAGGED:
        acc = rng.standard_normal((1, t, n)).astype(np.float32)
        want = x64 @ w_ragged[:, :n]
        cases += [("z%d" % n, [x, w_ragged[:, :n].copy()], want),
                  ("a%d" % n, [x, w_ragged[:, :n].copy(), acc], want + acc),
                  ("k%d" % n, [x], want)]
    return cases


dynamic_ragged = ragged_module(RAGGED, w_ragged)
for options, full, sanitized in (
        ("", (1, 5, 64, 130, 257), (5, 130, 257)),
        ("contraction-register-m=6 contraction-register-n=16", (5, 130), (130,)),
        ("contraction-pack-b=false", (5, 130), (130,)),
        ("--target-cpu=x86-64-v3", (5, 130), (130,)),
        # N = 57's 48-column part in n blocks of 32 and 16 columns (the last
        # one narrower: a dynamic width).
        ("contraction-cache-n=32 contraction-register-m=6 contraction-register-n=16",
         (5, 130), (130,))):
    for t in rows("ragged widths, " + (options or "default"), full, sanitized):
        check(dynamic_ragged, t, options, ragged_cases(t))
for t in (8, 130):
    check(ragged_module(RAGGED, w_ragged, t), t, "contraction-pack-b-once-blocks=1",
          ragged_cases(t))
# A weight of 5 MiB, x[1, T, 512] @ w[512, 2560] + bias: n blocks by
# default (4 MiB of w's rows fit 64 tiles of 32 columns or 128 of 16: N's
# 80 or 160 tiles take 2 blocks of 1280 columns).
BIG_MODULE = """
#xa = affine_map<(b, m, k, n) -> (b, m, k)>
#wa = affine_map<(b, m, k, n) -> (k, n)>
#ca = affine_map<(b, m, k, n) -> (b, m, n)>
#ba = affine_map<(b, m, n) -> (n)>
#ya = affine_map<(b, m, n) -> (b, m, n)>
func.func @big(%x: tensor<1x?x512xf32>, %w: tensor<512x2560xf32>, %bias: tensor<2560xf32>) -> tensor<1x?x2560xf32> {
""" + zero_init(512, 2560) + projection(512, "%f", 2560) + bias_add(2560) + """  return %y : tensor<1x?x2560xf32>
}
"""
w_big = rng.uniform(-512 ** -0.5, 512 ** -0.5, (512, 2560)).astype(np.float32)
bias_big = rng.standard_normal(2560).astype(np.float32)
for options in ("", "--target-cpu=x86-64-v3"):
    for t in rows("5 MiB weight, " + (options or "default"), (5, 130), (130,)):
        x = rng.standard_normal((1, t, 512)).astype(np.float32)
        check(BIG_MODULE, t, options,
              (("big", [x, w_big, bias_big], x.astype(np.float64) @ w_big + bias_big),))
print("vectorized_contractions: %d passed, %d failed" % (passed, failed))
