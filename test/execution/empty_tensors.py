# RUN: %python %s %t | FileCheck %s
#
# attn.sdpa and KV-cache steps with a dynamic dim of 0: no batch, no
# queries, no keys (every query row sees no key: 0, the op's fully masked
# row), both. One module per causal alignment (none, top_left,
# bottom_right) and one with a dynamic bool mask, each compiled for the
# plain lowering, the flash form (attn-fuse-softmax) and the vectorized
# kernel (attn-vectorize-sdpa), and run at every size; then the cache step
# of kv_cache_cpu (present = concat(past, new)) with an empty past (a
# cache's first step), no new token, an empty batch and all empty, in
# parallel, on one thread and serially; attn.multi_head_attention with a
# dynamic input width of 0 (every projection is its bias), no batch or no
# tokens, in the three forms. Results against float64 NumPy
# within 1e-5; the presents must equal np.concatenate exactly.
#
# CHECK-NOT: FAIL
# CHECK: empty_tensors: all 90 checks OK

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_exec  # noqa: E402
import kv_cache_cpu  # noqa: E402
from edge_shapes import sdpa_module  # noqa: E402

VARIANTS = [("plain", "optimize=false"), ("flash", "vectorize-sdpa=false"), ("vector", "")]
SIZES = ((0, 5, 5), (1, 0, 7), (1, 7, 0), (2, 0, 0), (1, 3, 3))  # (B, Tq, Tk)


def masked_module():
    """attn.sdpa with a bool mask [B, 1, Tq, Tk] (true: masked), all dynamic."""
    q, m = "tensor<?x3x?x16xf32>", "tensor<?x1x?x?xi1>"
    return ("func.func @main(%%q: %s, %%k: %s, %%v: %s, %%m: %s) -> %s {\n"
            "  %%0 = attn.sdpa %%q, %%k, %%v mask(%%m : masked_where_true) : %s, %s, %s, %s -> %s\n"
            "  return %%0 : %s\n}\n") % (q, q, q, m, q, q, q, q, m, q, q)


def reference(q, k, v, causal=None, mask=None):
    """ref_sdpa, and 0 for the rows of no key (NumPy's max has no identity)."""
    if k.shape[-2] == 0 or q.size == 0:
        return np.zeros(q.shape[:-1] + v.shape[-1:])
    return attn_exec.ref_sdpa(q, k, v, causal=causal, mask=mask)


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    rng = np.random.default_rng(3)
    checks = attn_exec.Checks()
    normal = lambda *s: rng.standard_normal(s).astype(np.float32)

    modules = [(str(c), sdpa_module((None, 3, None, 16), (None, 3, None, 16), c), c, False)
               for c in (None, "top_left", "bottom_right")]
    modules.append(("mask", masked_module(), None, True))

    def run_variants(label, text, compiled, ins, want):
        """Runs `text` in each of VARIANTS (compiled once each, kept in
        `compiled`) on `ins` against `want`."""
        for vname, opts in VARIANTS:
            with checks(label + " " + vname):
                if vname not in compiled:
                    compiled[vname] = attn_exec.compile_module(
                        text, work, extra_args=["--pipeline-options=" + opts])
                (got,) = attn_exec.run(compiled[vname], "main", ins, work)
                attn_exec.assert_close(label + " " + vname, got, want, atol=1e-5, rtol=1e-5)

    for name, text, causal, masked in modules:
        compiled = {}
        for b, tq, tk in SIZES:
            q, k, v = normal(b, 3, tq, 16), normal(b, 3, tk, 16), normal(b, 3, tk, 16)
            ins = [q, k, v]
            mask = None
            if masked:
                mask = rng.random((b, 1, tq, tk)) < 0.3
                ins.append(mask)
            run_variants("B=%d Tq=%d Tk=%d %s" % (b, tq, tk, name), text, compiled, ins,
                         reference(q, k, v, causal, mask))

    # attn.multi_head_attention with a dynamic input width: 0 makes every
    # projection its bias (the register-tiled contractions kept no zero
    # fill and returned garbage there).
    x, w, bias = "tensor<?x?x?xf32>", "tensor<?x12xf32>", "tensor<12xf32>"
    wo, y = "tensor<12x12xf32>", "tensor<?x?x12xf32>"
    mha = ("func.func @main(%%x: {x}, %%wq: {w}, %%wk: {w}, %%wv: {w}, %%bq: {b}, %%bk: {b}, "
           "%%bv: {b}, %%wo: {wo}, %%bo: {b}) -> {y} {{\n"
           "  %%y = attn.multi_head_attention %%x weights(%%wq, %%wk, %%wv) bias(%%bq, %%bk, %%bv) "
           "out_proj(%%wo, %%bo) causal {{num_heads = 3 : i64}}\n"
           "    : ({x}, {w}, {w}, {w}, {b}, {b}, {b}, {wo}, {b}) -> {y}\n"
           "  return %%y : {y}\n}}\n").replace("%%", "%").format(x=x, w=w, b=bias, wo=wo, y=y)
    compiled = {}
    for b, t, d_in in ((2, 5, 0), (2, 5, 8), (0, 5, 8), (2, 0, 8)):
        ins = [normal(b, t, d_in)] + [normal(d_in, 12) for _ in range(3)] + \
              [normal(12) for _ in range(3)] + [normal(12, 12), normal(12)]
        xq, xk, xv = (ins[0].astype(np.float64) @ ins[i] + ins[i + 3] for i in (1, 2, 3))
        split = lambda a: a.reshape(b, t, 3, 4).transpose(0, 2, 1, 3)
        o = reference(split(xq), split(xk), split(xv), "top_left")
        run_variants("mha B=%d T=%d d_in=%d" % (b, t, d_in), mha, compiled, ins,
                     o.transpose(0, 2, 1, 3).reshape(b, t, 12) @ ins[7] + ins[8])

    cache = kv_cache_cpu.cache_module(("?", 4, "?", 16), ("?", 4, "?", 16), ("?", 4, "?", 16),
                                      ("?", 4, "?", 16), 2, "f32", "bottom_right")
    compiled = attn_exec.compile_module(cache, work)
    for b, t, past in ((1, 3, 0), (2, 1, 0), (1, 0, 5), (0, 1, 3), (1, 0, 0), (2, 2, 4)):
        ins = [normal(b, 4, t, 16), normal(b, 4, t, 16), normal(b, 4, t, 16),
               normal(b, 4, past, 16), normal(b, 4, past, 16)]
        kc, vc = np.concatenate([ins[3], ins[1]], 2), np.concatenate([ins[4], ins[2]], 2)
        want = reference(ins[0], kc, vc, "bottom_right")
        for vname, args in kv_cache_cpu.VARIANTS:
            label = "cache B=%d T=%d past=%d %s" % (b, t, past, vname)
            with checks(label):
                module = cache if vname == "serial" else compiled
                o, gk, gv = attn_exec.run(module, "main", ins, work, num_outputs=3,
                                          extra_args=args)
                for what, got, exp in (("present_key", gk, kc), ("present_value", gv, vc)):
                    if got.shape != exp.shape or not np.array_equal(got, exp):
                        raise AssertionError("%s differs from np.concatenate" % what)
                attn_exec.assert_close(label, o, want, atol=1e-5, rtol=1e-5)
    checks.finish("empty_tensors")


if __name__ == "__main__":
    main()
