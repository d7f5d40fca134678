# RUN: %python %s %t | FileCheck %s
#
# Dropout on the attention weights: Philox-4x32-10 keyed by `seed` on the
# flat index of each weight in the op's score tensor. Checked against an
# independent NumPy implementation of that definition: reproducibility, seed
# sensitivity, the drop rate, the 1/(1-p) rescaling of kept weights and the
# exact keep-mask, for attn.sdpa (weights read out with V = I),
# attn.causal_attention and attn.multi_head_attention (against the chapter's
# PyTorch modules with their nn.Dropout replaced by the same keep-mask).

import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import attn_exec  # noqa: E402
import seed_modules  # noqa: E402

T = 64
H = 2
D = 16
SEED_A = 1234
SEED_B = 4321

# Attention weights, causal: with V = I the result is the [1, H, T, T] weight
# tensor itself. The fourth op repeats the first: identical ops must give
# identical numbers (after CSE it is one value returned twice).
WEIGHTS_MODULE = """
func.func @weights(%q: tensor<1x{H}x{T}x{D}xf32>, %k: tensor<1x{H}x{T}x{D}xf32>, %eye: tensor<1x{H}x{T}x{T}xf32>)
    -> (tensor<1x{H}x{T}x{T}xf32>, tensor<1x{H}x{T}x{T}xf32>, tensor<1x{H}x{T}x{T}xf32>, tensor<1x{H}x{T}x{T}xf32>) {{
  %a = attn.sdpa %q, %k, %eye causal(top_left) {{dropout_p = 0.5 : f32, seed = {A} : i64}}
      : tensor<1x{H}x{T}x{D}xf32>, tensor<1x{H}x{T}x{D}xf32>, tensor<1x{H}x{T}x{T}xf32> -> tensor<1x{H}x{T}x{T}xf32>
  %b = attn.sdpa %q, %k, %eye causal(top_left) {{dropout_p = 0.5 : f32, seed = {B} : i64}}
      : tensor<1x{H}x{T}x{D}xf32>, tensor<1x{H}x{T}x{D}xf32>, tensor<1x{H}x{T}x{T}xf32> -> tensor<1x{H}x{T}x{T}xf32>
  %c = attn.sdpa %q, %k, %eye causal(top_left) {{dropout_p = 0.1 : f32, seed = {A} : i64}}
      : tensor<1x{H}x{T}x{D}xf32>, tensor<1x{H}x{T}x{D}xf32>, tensor<1x{H}x{T}x{T}xf32> -> tensor<1x{H}x{T}x{T}xf32>
  %d = attn.sdpa %q, %k, %eye causal(top_left) {{dropout_p = 0.5 : f32, seed = {A} : i64}}
      : tensor<1x{H}x{T}x{D}xf32>, tensor<1x{H}x{T}x{D}xf32>, tensor<1x{H}x{T}x{T}xf32> -> tensor<1x{H}x{T}x{T}xf32>
  return %a, %b, %c, %d : tensor<1x{H}x{T}x{T}xf32>, tensor<1x{H}x{T}x{T}xf32>, tensor<1x{H}x{T}x{T}xf32>, tensor<1x{H}x{T}x{T}xf32>
}}
""".format(H=H, T=T, D=D, A=SEED_A, B=SEED_B)

# A seed above 2^32 (both key words in use), rank-2 operands (score shape
# [1, Tq, Tk]), no mask, weights read out with V = I.
BIG_SEED = 0x123456789ABCDEF0
BIG_SEED_MODULE = """
func.func @big_seed(%q: tensor<24x16xf32>, %k: tensor<40x16xf32>, %eye: tensor<40x40xf32>) -> tensor<24x40xf32> {
  %w = attn.sdpa %q, %k, %eye {dropout_p = 0.25 : f32, seed = SEED : i64}
      : tensor<24x16xf32>, tensor<40x16xf32>, tensor<40x40xf32> -> tensor<24x40xf32>
  return %w : tensor<24x40xf32>
}
""".replace("SEED", str(BIG_SEED))

# GQA, a broadcast boolean mask, bottom-right causality, an explicit scale
# and dynamic sequence lengths together with dropout.
EXAMPLE_MODULE = """
func.func @example(%q: tensor<2x8x?x16xf32>, %k: tensor<2x2x?x16xf32>, %v: tensor<2x2x?x16xf32>, %m: tensor<1x?x?xi1>) -> tensor<2x8x?x16xf32> {
  %o = attn.sdpa %q, %k, %v mask(%m : attend_where_true) causal(bottom_right) {scale = 0.125 : f32, dropout_p = 0.1 : f32, seed = 5 : i64}
      : tensor<2x8x?x16xf32>, tensor<2x2x?x16xf32>, tensor<2x2x?x16xf32>, tensor<1x?x?xi1> -> tensor<2x8x?x16xf32>
  return %o : tensor<2x8x?x16xf32>
}
"""

CAUSAL_MODULE = """
func.func @causal(%x: tensor<2x6x3xf32>, %wq: tensor<3x2xf32>, %wk: tensor<3x2xf32>, %wv: tensor<3x2xf32>) -> tensor<2x6x2xf32> {
  %z = attn.causal_attention %x weights(%wq, %wk, %wv) {dropout_p = 0.5 : f32, seed = 123 : i64}
      : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x6x2xf32>
  return %z : tensor<2x6x2xf32>
}
"""

MHA_MODULE = """
func.func @mha(%x: tensor<2x10x8xf32>, %wq: tensor<8x12xf32>, %wk: tensor<8x12xf32>, %wv: tensor<8x12xf32>,
               %bq: tensor<12xf32>, %bk: tensor<12xf32>, %bv: tensor<12xf32>,
               %wo: tensor<12x12xf32>, %bo: tensor<12xf32>) -> tensor<2x10x12xf32> {
  %y = attn.multi_head_attention %x weights(%wq, %wk, %wv) bias(%bq, %bk, %bv) out_proj(%wo, %bo) causal
      {num_heads = 3 : i64, dropout_p = 0.3 : f32, seed = 77 : i64}
      : (tensor<2x10x8xf32>, tensor<8x12xf32>, tensor<8x12xf32>, tensor<8x12xf32>,
         tensor<12xf32>, tensor<12xf32>, tensor<12xf32>, tensor<12x12xf32>, tensor<12xf32>) -> tensor<2x10x12xf32>
  return %y : tensor<2x10x12xf32>
}
"""


class FixedMaskDropout(torch.nn.Module):
    """Stands in for nn.Dropout in the chapter's modules: the Philox
    keep-mask of the attn definition instead of torch's generator."""

    def __init__(self, keep, p):
        super().__init__()
        self.keep = torch.tensor(keep, dtype=torch.float32)
        self.p = p

    def forward(self, w):
        assert w.shape == self.keep.shape, (w.shape, self.keep.shape)
        return w * self.keep / (1.0 - self.p)


def eye_like(q):
    """V = I for every head of q, so that the result is the weight tensor."""
    return np.broadcast_to(np.eye(T), q.shape[:-1] + (T,))


def check_philox_reference():
    """The NumPy generator against the Random123 known-answer vector for
    Philox-4x32-10 with counter 0 and key 0 (first output word 0x6627e8d5)."""
    u = attn_exec.philox_uniform(np.array([0], dtype=np.uint64), 0)[0]
    assert u == (0x6627E8D5 >> 8) * 2.0 ** -24, u
    print("philox reference: known answer OK")


def check_weights(label, got, q, k, p, seed):
    """`got` is the [1, H, T, T] post-dropout weight tensor."""
    _, want_plain = attn_exec.ref_sdpa(q, k, eye_like(q), causal="top_left",
                                       return_weights=True)
    keep = attn_exec.dropout_keep_mask(got.shape, p, seed)
    visible = np.broadcast_to(np.tril(np.ones((T, T), dtype=bool)), got.shape)

    if np.any(got[~visible] != 0):
        raise AssertionError("%s: causally masked weights are not 0" % label)
    zeroed = (got == 0) & visible
    n = int(visible.sum())
    frac = zeroed.sum() / n
    sigma = np.sqrt(p * (1 - p) / n)
    if abs(frac - p) > 3 * sigma:
        raise AssertionError("%s: dropped fraction %.4f is outside %.2f +- 3 sigma (%.4f)"
                             % (label, frac, p, 3 * sigma))
    print("%s: dropped fraction %.4f within %.2f +- %.4f OK" % (label, frac, p, 3 * sigma))

    got_keep = (got != 0) & visible
    want_keep = keep & visible
    if not np.array_equal(got_keep, want_keep):
        diff = np.argwhere(got_keep != want_keep)
        first = tuple(int(i) for i in diff[0])
        flat = int(np.ravel_multi_index(first, got.shape))
        raise AssertionError(
            "%s: keep-mask differs from the Philox reference at %d positions; first at "
            "%s (flat counter %d): kept=%s, reference u=%.8f vs p=%g"
            % (label, len(diff), first, flat, bool(got_keep[first]),
               attn_exec.philox_uniform(np.array([flat], dtype=np.uint64), seed)[0], p))
    print("%s: keep-mask equals the Philox reference (%d of %d kept)"
          % (label, int(want_keep.sum()), n))

    scale = 1.0 / (1.0 - float(np.float32(p)))
    attn_exec.assert_close("%s: kept weights == softmax / (1-p)" % label,
                           got[want_keep], want_plain[want_keep] * scale,
                           atol=1e-5, rtol=1e-5)


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    rng = np.random.default_rng(99)
    checks = attn_exec.Checks()
    # CHECK: philox reference: known answer OK
    with checks("philox reference"):
        check_philox_reference()

    q = rng.standard_normal((1, H, T, D)).astype(np.float32)
    k = rng.standard_normal((1, H, T, D)).astype(np.float32)
    eye = np.broadcast_to(np.eye(T, dtype=np.float32), (1, H, T, T)).copy()
    run1 = run2 = None
    with checks("weights module runs"):
        run1 = attn_exec.run(WEIGHTS_MODULE, "weights", [q, k, eye], work, num_outputs=4)
        run2 = attn_exec.run(WEIGHTS_MODULE, "weights", [q, k, eye], work, num_outputs=4)
    if run1 is not None:
        p50a, p50b, p10a, p50a_again = run1

        # CHECK: same seed, two runs: identical
        with checks("same seed, two runs"):
            for i in range(3):
                assert np.array_equal(run1[i], run2[i]), \
                    "same seed, two processes: result %d differs at %d positions" % (
                        i, int(np.sum(run1[i] != run2[i])))
            print("same seed, two runs: identical")
        # Two identical ops in one function (folded into one value that is
        # returned twice) must give identical results.
        # CHECK: same seed, two ops: identical
        with checks("same seed, two ops in one function"):
            for r, run in enumerate((run1, run2)):
                bad = np.argwhere(run[0] != run[3])
                assert len(bad) == 0, (
                    "run %d: results 0 and 3 (identical ops) differ at %d positions, first "
                    "%s: %r vs %r" % (r + 1, len(bad), tuple(int(i) for i in bad[0]),
                                      run[0][tuple(bad[0])], run[3][tuple(bad[0])]))
            print("same seed, two ops: identical")
        # CHECK: different seeds: different
        with checks("different seeds"):
            ndiff = int(np.sum((p50a == 0) != (p50b == 0)))
            assert ndiff > 0, "seeds %d and %d drop the same weights" % (SEED_A, SEED_B)
            print("different seeds: different (%d keep decisions differ)" % ndiff)

        # CHECK: p=0.5 seed=1234: dropped fraction {{.*}} OK
        # CHECK: p=0.5 seed=1234: keep-mask equals the Philox reference
        # CHECK: p=0.5 seed=1234: kept weights == softmax / (1-p): max_abs_err={{.*}} OK
        with checks("p=0.5 seed=%d" % SEED_A):
            check_weights("p=0.5 seed=%d" % SEED_A, p50a, q, k, 0.5, SEED_A)
        # CHECK: p=0.5 seed=4321: keep-mask equals the Philox reference
        with checks("p=0.5 seed=%d" % SEED_B):
            check_weights("p=0.5 seed=%d" % SEED_B, p50b, q, k, 0.5, SEED_B)
        # CHECK: p=0.1 seed=1234: dropped fraction {{.*}} OK
        # CHECK: p=0.1 seed=1234: keep-mask equals the Philox reference
        # CHECK: p=0.1 seed=1234: kept weights == softmax / (1-p): max_abs_err={{.*}} OK
        with checks("p=0.1 seed=%d" % SEED_A):
            check_weights("p=0.1 seed=%d" % SEED_A, p10a, q, k, 0.1, SEED_A)
        # The whole weight tensor against the reference with dropout.
        # CHECK: weights p=0.5 vs reference: max_abs_err={{.*}} OK
        # CHECK: weights p=0.1 vs reference: max_abs_err={{.*}} OK
        for label, got, p, seed in (("p=0.5", p50a, 0.5, SEED_A), ("p=0.1", p10a, 0.1, SEED_A)):
            with checks("weights %s vs reference" % label):
                _, want = attn_exec.ref_sdpa(q, k, eye_like(q), causal="top_left", dropout_p=p,
                                             seed=seed, return_weights=True)
                attn_exec.assert_close("weights %s vs reference" % label, got, want,
                                       atol=1e-5, rtol=1e-5)

    # Seed above 2^32.
    qb = rng.standard_normal((24, 16)).astype(np.float32)
    kb = rng.standard_normal((40, 16)).astype(np.float32)
    # CHECK: seed > 2^32 rank-2: keep-mask equals the Philox reference
    # CHECK: seed > 2^32 rank-2 weights vs reference: max_abs_err={{.*}} OK
    with checks("seed > 2^32"):
        (wb,) = attn_exec.run(BIG_SEED_MODULE, "big_seed",
                              [qb, kb, np.eye(40, dtype=np.float32)], work)
        _, want_wb = attn_exec.ref_sdpa(qb, kb, np.eye(40), dropout_p=0.25, seed=BIG_SEED,
                                        return_weights=True)
        keep_b = attn_exec.dropout_keep_mask((1, 24, 40), 0.25, BIG_SEED)[0]
        if not np.array_equal(wb != 0, keep_b):
            raise AssertionError(
                "seed 0x%x: keep-mask differs from the Philox reference at %d of %d positions"
                % (BIG_SEED, int(np.sum((wb != 0) != keep_b)), keep_b.size))
        print("seed > 2^32 rank-2: keep-mask equals the Philox reference")
        attn_exec.assert_close("seed > 2^32 rank-2 weights vs reference", wb, want_wb,
                               atol=1e-5, rtol=1e-5)

    # Dropout with GQA, mask, bottom-right causality and dynamic lengths.
    tq, tk = 7, 12
    qe = rng.standard_normal((2, 8, tq, 16)).astype(np.float32)
    ke = rng.standard_normal((2, 2, tk, 16)).astype(np.float32)
    ve = rng.standard_normal((2, 2, tk, 16)).astype(np.float32)
    me = rng.random((1, tq, tk)) < 0.7
    me[..., 0] = True
    # CHECK: sdpa gqa+mask+bottom_right dropout vs reference: max_abs_err={{.*}} OK
    with checks("sdpa gqa+mask+bottom_right dropout"):
        (oe,) = attn_exec.run(EXAMPLE_MODULE, "example", [qe, ke, ve, me], work)
        want_e = attn_exec.ref_sdpa(qe, ke, ve, mask=me, mask_kind="attend_where_true",
                                    causal="bottom_right", scale=float(np.float32(0.125)),
                                    dropout_p=0.1, seed=5)
        attn_exec.assert_close("sdpa gqa+mask+bottom_right dropout vs reference", oe, want_e,
                               atol=1e-5, rtol=1e-5)

    # attn.causal_attention: score shape [B, T, T].
    inputs = seed_modules.seed_inputs()
    batch = torch.stack((inputs, inputs), dim=0)
    torch.manual_seed(123)
    ca = seed_modules.CausalAttention(3, 2, 6, 0.5)
    ca.dropout = FixedMaskDropout(attn_exec.dropout_keep_mask((2, 6, 6), 0.5, 123), 0.5)
    with torch.no_grad():
        want_c = ca(batch).numpy()
    # CHECK: causal_attention dropout vs torch with Philox mask: max_abs_err={{.*}} OK
    with checks("causal_attention dropout"):
        (got_c,) = attn_exec.run(CAUSAL_MODULE, "causal",
                                 [batch.numpy(), *seed_modules.qkv_weights(ca)], work)
        attn_exec.assert_close("causal_attention dropout vs torch with Philox mask", got_c,
                               want_c, atol=1e-5, rtol=1e-5)

    # attn.multi_head_attention: score shape [B, H, T, T].
    torch.manual_seed(123)
    mha = seed_modules.MultiHeadAttention(8, 12, 10, 0.3, num_heads=3, qkv_bias=True)
    mha.dropout = FixedMaskDropout(attn_exec.dropout_keep_mask((2, 3, 10, 10), 0.3, 77), 0.3)
    x = torch.randn(2, 10, 8)
    with torch.no_grad():
        want_m = mha(x).numpy()
    args = [x.numpy(), *seed_modules.qkv_weights(mha), *seed_modules.qkv_biases(mha),
            seed_modules.linear_weight(mha.out_proj), seed_modules.linear_bias(mha.out_proj)]
    # CHECK: multi_head_attention dropout vs torch with Philox mask: max_abs_err={{.*}} OK
    with checks("multi_head_attention dropout"):
        (got_m,) = attn_exec.run(MHA_MODULE, "mha", args, work)
        attn_exec.assert_close("multi_head_attention dropout vs torch with Philox mask", got_m,
                               want_m, atol=1e-5, rtol=1e-5)

    # CHECK-NOT: FAIL
    # CHECK: dropout: all {{[0-9]+}} checks OK
    checks.finish("dropout")


if __name__ == "__main__":
    main()
