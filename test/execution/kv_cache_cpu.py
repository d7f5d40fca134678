# RUN: %python %s %t | FileCheck %s
#
# KV-cache steps on the CPU: present = tensor.concat(past, new) returned
# and read by the attn.sdpa. The concatenations' buffer copies run as
# vector copies of their contiguous runs (attn-vectorize-copies), in
# parallel chunks of 32 Ki elements at the top level, serially with
# parallel=false; each case runs both ways and on one and two threads.
# The present outputs must equal np.concatenate exactly, the attention
# output a float64 reference within 1e-5. Sizes: runs with a scalar tail
# (d = 20: 37 x 20 = 740 elements per head), a packed [B, T, H * d] cache
# whose past is one run of 700 x 64 elements (two chunks), a module with
# dynamic batch and past length run at several sizes, f16 caches (32-lane
# vectors), and PyTorch's head-major cache with the new tokens transposed
# into it (a strided source: runs of one row).
#
# CHECK-NOT: FAIL
# CHECK: kv_cache_cpu: all 24 checks OK

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_exec  # noqa: E402

VARIANTS = [("parallel", ["--threads", "2"]), ("one-thread", ["--threads", "1"]),
            ("serial", ["--pipeline-options=parallel=false"])]


def ty(shape, elem="f32"):
    """A tensor type; '?' marks a dynamic dim."""
    return "tensor<%s>" % "x".join([str(n) for n in shape] + [elem])


def cache_module(q, kn, past, present, dim, elem, causal, layout=""):
    return ("func.func @main(%%q: %s, %%k: %s, %%v: %s, %%pk: %s, %%pv: %s) -> (%s, %s, %s) {\n"
            "  %%kc = tensor.concat dim(%d) %%pk, %%k : (%s, %s) -> %s\n"
            "  %%vc = tensor.concat dim(%d) %%pv, %%v : (%s, %s) -> %s\n"
            "  %%o = attn.sdpa %%q, %%kc, %%vc %s%s: %s, %s, %s -> %s\n"
            "  return %%o, %%kc, %%vc : %s, %s, %s\n}\n") % (
        ty(q, elem), ty(kn, elem), ty(kn, elem), ty(past, elem), ty(past, elem),
        ty(q, elem), ty(present, elem), ty(present, elem),
        dim, ty(past, elem), ty(kn, elem), ty(present, elem),
        dim, ty(past, elem), ty(kn, elem), ty(present, elem),
        "causal(%s) " % causal if causal else "", layout,
        ty(q, elem), ty(present, elem), ty(present, elem), ty(q, elem),
        ty(q, elem), ty(present, elem), ty(present, elem))


def hf_module(B, H, T, d):
    """New tokens [B, T, H * d] split into heads by a transpose before the
    concatenation with the head-major cache (dynamic T and past)."""
    p3, s4, h4, c4 = (ty(s) for s in ((B, "?", H * d), (B, "?", H, d), (B, H, "?", d),
                                       (B, H, "?", d)))
    lines = ["func.func @main(%%q: %s, %%k: %s, %%v: %s, %%pk: %s, %%pv: %s) -> (%s, %s, %s) {"
             % (p3, p3, p3, c4, c4, h4, c4, c4),
             "  %c1 = arith.constant 1 : index",
             "  %%t = tensor.dim %%q, %%c1 : %s" % p3,
             "  %%e = tensor.empty(%%t) : %s" % h4]
    for n in "qkv":
        lines += ["  %%%s4 = tensor.expand_shape %%%s [[0], [1], [2, 3]] output_shape "
                  "[%d, %%t, %d, %d] : %s into %s" % (n, n, B, H, d, p3, s4),
                  "  %%%st = linalg.transpose ins(%%%s4 : %s) outs(%%e : %s) "
                  "permutation = [0, 2, 1, 3]" % (n, n, s4, h4)]
    lines += ["  %%kc = tensor.concat dim(2) %%pk, %%kt : (%s, %s) -> %s" % (c4, h4, c4),
              "  %%vc = tensor.concat dim(2) %%pv, %%vt : (%s, %s) -> %s" % (c4, h4, c4),
              "  %%o = attn.sdpa %%qt, %%kc, %%vc causal(bottom_right) : %s, %s, %s -> %s"
              % (h4, c4, c4, h4),
              "  return %%o, %%kc, %%vc : %s, %s, %s" % (h4, c4, c4), "}", ""]
    return "\n".join(lines)


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    rng = np.random.default_rng(11)
    checks = attn_exec.Checks()

    def run_case(label, text, inputs, dim, causal, seq_major=False, split=None):
        q, k, v, pk, pv = inputs
        if split:
            k, v = split(k), split(v)
        kc, vc = np.concatenate([pk, k], dim), np.concatenate([pv, v], dim)
        qq = split(q) if split else q
        if seq_major:  # [B, T, H, d] -> [B, H, T, d] for the reference
            ref = attn_exec.ref_sdpa(*(np.swapaxes(a, 1, 2) for a in (qq, kc, vc)),
                                     causal=causal)
            want = np.swapaxes(ref, 1, 2)
        else:
            want = attn_exec.ref_sdpa(qq.astype(np.float64), kc, vc, causal=causal)
        tol = 2e-3 if q.dtype == np.float16 else 1e-5
        for vname, args in VARIANTS:
            name = "%s %s" % (label, vname)
            with checks(name):
                o, gk, gv = attn_exec.run(text, "main", list(inputs), work, num_outputs=3,
                                          extra_args=args)
                for what, got, exp in (("present_key", gk, kc), ("present_value", gv, vc)):
                    if got.shape != exp.shape or not np.array_equal(got, exp):
                        raise AssertionError("%s: %s differs from np.concatenate" % (name, what))
                attn_exec.assert_close(name, o, want, atol=tol, rtol=tol)

    normal = lambda s, dt=np.float32: rng.standard_normal(s).astype(dt)
    # Decode and a 5-token chunk, head-major, d = 20 (runs with a tail).
    for B, H, T, Tp, d in ((2, 3, 1, 37, 20), (1, 4, 5, 37, 20)):
        q = normal((B, H, T, d))
        ins = [q, normal((B, H, T, d)), normal((B, H, T, d)), normal((B, H, Tp, d)),
               normal((B, H, Tp, d))]
        text = cache_module(q.shape, (B, H, T, d), (B, H, Tp, d), (B, H, Tp + T, d), 2, "f32",
                            "bottom_right")
        run_case("heads B=%d H=%d T=%d past=%d d=%d" % (B, H, T, Tp, d), text, ins, 2,
                 "bottom_right")
    # Packed [B, T, H * d]: the past is one run of 700 x 64 (two chunks).
    B, H, T, Tp, d = 1, 2, 3, 700, 32
    ins = [normal((B, T, H, d)), normal((B, T, H, d)), normal((B, T, H, d)),
           normal((B, Tp, H, d)), normal((B, Tp, H, d))]
    text = cache_module((B, T, H, d), (B, T, H, d), (B, Tp, H, d), (B, Tp + T, H, d), 1, "f32",
                        "bottom_right", "layout(seq_major) ")
    run_case("seq_major past=700", text, ins, 1, "bottom_right", seq_major=True)
    # Dynamic batch and past length, one module at three sizes.
    text = cache_module(("?", 4, 1, 16), ("?", 4, 1, 16), ("?", 4, "?", 16), ("?", 4, "?", 16),
                        2, "f32", "bottom_right")
    for B, Tp in ((1, 1), (3, 129), (2, 600)):
        ins = [normal((B, 4, 1, 16)), normal((B, 4, 1, 16)), normal((B, 4, 1, 16)),
               normal((B, 4, Tp, 16)), normal((B, 4, Tp, 16))]
        run_case("dynamic B=%d past=%d" % (B, Tp), text, ins, 2, "bottom_right")
    # f16 cache.
    B, H, T, Tp, d = 1, 2, 1, 50, 64
    ins = [normal((B, H, T, d), np.float16), normal((B, H, T, d), np.float16),
           normal((B, H, T, d), np.float16), normal((B, H, Tp, d), np.float16),
           normal((B, H, Tp, d), np.float16)]
    text = cache_module((B, H, T, d), (B, H, T, d), (B, H, Tp, d), (B, H, Tp + T, d), 2, "f16",
                        None)
    run_case("f16 past=50", text, ins, 2, None)
    # PyTorch's step: new tokens transposed into the head-major cache.
    B, H, T, Tp, d = 1, 3, 2, 40, 16
    split = lambda a: a.reshape(B, T, H, d).transpose(0, 2, 1, 3)
    ins = [normal((B, T, H * d)), normal((B, T, H * d)), normal((B, T, H * d)),
           normal((B, H, Tp, d)), normal((B, H, Tp, d))]
    run_case("transposed new tokens", hf_module(B, H, T, d), ins, 2, "bottom_right",
             split=split)
    checks.finish("kv_cache_cpu")


if __name__ == "__main__":
    main()
