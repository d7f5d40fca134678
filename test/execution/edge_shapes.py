# RUN: %python %s %t | FileCheck %s
#
# Shapes that break tiling assumptions: head_dim not a multiple of the vector
# width (1, 3, 5, 24, 33, 72), odd and prime batch and head counts, and one
# module with dynamic batch and sequence dims run at several sizes (3, 5, 7
# and sequence lengths not dividing the flash blocks). Plain lowering,
# attn-fuse-softmax and attn-vectorize-sdpa (it takes the head dims that are
# multiples of 16: 16 and 48 here), each with default and small blocks;
# float64 reference, atol/rtol 1e-5. The dynamic module is compiled once per
# variant and run at every size. In the sanitizer run of the suite each
# static shape runs the default (vector) variant and one other in turn
# (attn_exec.SanitizerTurns; the test prints what ran).

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_exec  # noqa: E402

VARIANTS = [("plain", "optimize=false"), ("flash", "vectorize-sdpa=false"),
            ("flash-small-blocks",
             "vectorize-sdpa=false flash-block-q=4 flash-block-kv=8"),
            ("vector", ""),
            ("vector-small-blocks", "sdpa-block-q=16 sdpa-block-kv=5")]


def sdpa_module(qshape, kshape, causal):
    tq, tk = attn_exec.tensor_type(qshape, "f32"), attn_exec.tensor_type(kshape, "f32")
    return ("func.func @main(%%q: %s, %%k: %s, %%v: %s) -> %s {\n"
            "  %%0 = attn.sdpa %%q, %%k, %%v %s: %s, %s, %s -> %s\n"
            "  return %%0 : %s\n}\n") % (
        tq, tk, tk, tq, "causal(%s) " % causal if causal else "",
        tq, tk, tk, tq, tq)


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    rng = np.random.default_rng(5)
    checks = attn_exec.Checks()
    turns = attn_exec.SanitizerTurns(always={"vector"})
    normal = lambda *s: rng.standard_normal(s).astype(np.float32)

    # Static shapes: odd head dims, odd batch/head counts.
    for b, h, tq, tk, d, causal in ((3, 5, 9, 9, 1, "top_left"),
                                    (1, 3, 17, 17, 3, None),
                                    (5, 1, 11, 13, 5, "bottom_right"),
                                    (7, 2, 33, 33, 24, "top_left"),
                                    (1, 7, 20, 29, 33, None),
                                    (2, 3, 65, 65, 72, "top_left"),
                                    (3, 5, 9, 9, 16, "top_left"),
                                    (2, 3, 65, 70, 48, "bottom_right")):
        q, k, v = normal(b, h, tq, d), normal(b, h, tk, d), normal(b, h, tk, d)
        want = attn_exec.ref_sdpa(q, k, v, causal=causal)
        text = sdpa_module(q.shape, k.shape, causal)
        for vname, opts in turns.pick(VARIANTS):
            label = "B=%d H=%d Tq=%d Tk=%d d=%d causal=%s %s" % (b, h, tq, tk, d, causal, vname)
            with checks(label):
                (got,) = attn_exec.run(text, "main", [q, k, v], work,
                                       extra_args=["--pipeline-options=" + opts])
                attn_exec.assert_close(label, got, want, atol=1e-5, rtol=1e-5)

    # One module, dynamic batch and sequence, run at several sizes.
    dyn = sdpa_module((None, 3, None, 20), (None, 3, None, 20), "top_left")
    compiled = {}
    for b, t in ((3, 1), (5, 31), (7, 130)):
        q, k, v = normal(b, 3, t, 20), normal(b, 3, t, 20), normal(b, 3, t, 20)
        want = attn_exec.ref_sdpa(q, k, v, causal="top_left")
        for vname, opts in VARIANTS:
            label = "dynamic B=%d T=%d d=20 %s" % (b, t, vname)
            with checks(label):
                if vname not in compiled:
                    compiled[vname] = attn_exec.compile_module(
                        dyn, work, extra_args=["--pipeline-options=" + opts])
                (got,) = attn_exec.run(compiled[vname], "main", [q, k, v], work)
                assert got.shape == want.shape, got.shape
                attn_exec.assert_close(label, got, want, atol=1e-5, rtol=1e-5)
    turns.report("edge_shapes")
    checks.finish("edge_shapes")


if __name__ == "__main__":
    main()

# CHECK-NOT: FAIL
# CHECK: edge_shapes: all {{[0-9]+}} checks OK
