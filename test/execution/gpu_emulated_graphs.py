# RUN: %python %s %t | FileCheck %s
#
# The graph forms around attn.sdpa that the GPU target takes, at sizes that
# span several key tiles, run by attn-gpu-emulator (see gpu_emulated.py)
# and checked against float64 NumPy:
#   - KV caches: present_key/present_value = tensor.concat(past, new) along
#     the sequence, returned and read by the attn.sdpa (copy kernels build
#     them in their result buffers); the present outputs must equal the
#     concatenated inputs exactly, the attention output within the GPU
#     tolerance (f16 1e-2, bf16 and f32 operands 2e-2);
#   - masks computed by an elementwise linalg.generic from per-batch key
#     lengths (ONNX's nonpad_kv_seqlen), evaluated per score in the kernel,
#     including a length of 1 and one past the keys of a tile, and a short
#     additive mask padded with -inf to the keys (tensor.pad, read from
#     the argument in the kernel);
#   - packed [B, T, H * d] operands (views), a cache concatenated in that
#     form and then expanded, with a generator that captures the query
#     length from the host;
#   - PyTorch's export of a cached step: the new tokens split into heads by
#     a transpose (a permuted view) before the concatenation, the result
#     transposed back and merged;
#   - caches whose past length (and batch, or new length) is dynamic: the
#     emulator sizes the results from the signature as the runtime does,
#     the present length as the sum past + new ("?2+1", "?2+?1").
# Each case runs with the default kernel, synchronous staging, and 8 warps
# with 128-key tiles.
#
# CHECK-NOT: FAIL
# CHECK: gpu_emulated_graphs: 24 passed, 0 failed

import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_cases  # noqa: E402

EMULATOR = os.environ["ATTN_GPU_EMULATOR"]
VARIANTS = ["", "stages=1", "warps=8 block-kv=128"]


def ty(shape, elem):
    return "tensor<%s>" % "x".join([str(s) for s in shape] + [elem])


def kv_cache_module(B, Hq, Hk, Tq, Tp, Tn, d, elem, causal, window_left, dynamic=False):
    """`dynamic`: the batch and the past length are '?' (the runtime sizes
    the present outputs as past + new)."""
    Tk = Tp + Tn
    if dynamic:
        B, Tp, Tk = "?", "?", "?"
    q, kn, pk = ty((B, Hq, Tq, d), elem), ty((B, Hk, Tn, d), elem), ty((B, Hk, Tp, d), elem)
    kc = ty((B, Hk, Tk, d), elem)
    attrs = " {window_left = %d : i64}" % window_left if window_left else ""
    return (
        "func.func @main(%%q: %s, %%k: %s, %%v: %s, %%pk: %s, %%pv: %s) -> (%s, %s, %s) {\n"
        "  %%kc = tensor.concat dim(2) %%pk, %%k : (%s, %s) -> %s\n"
        "  %%vc = tensor.concat dim(2) %%pv, %%v : (%s, %s) -> %s\n"
        "  %%o = attn.sdpa %%q, %%kc, %%vc causal(%s)%s : %s, %s, %s -> %s\n"
        "  return %%o, %%kc, %%vc : %s, %s, %s\n}\n"
        % (q, kn, kn, pk, pk, q, kc, kc, pk, kn, kc, pk, kn, kc, causal, attrs, q, kc, kc, q,
           q, kc, kc))


def nonpad_module(B, Hq, Hk, Tq, Tk, d, elem):
    """Key j of batch b is seen iff j < lens[b]: a [B, 1, 1, Tk] generator."""
    q, k = ty((B, Hq, Tq, d), elem), ty((B, Hk, Tk, d), elem)
    m = ty((B, 1, 1, Tk), "i1")
    return (
        "#lens = affine_map<(d0, d1, d2, d3) -> (d0)>\n"
        "#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>\n"
        "func.func @main(%%q: %s, %%k: %s, %%v: %s, %%lens: tensor<%dxi64>) -> %s {\n"
        "  %%e = tensor.empty() : %s\n"
        "  %%m = linalg.generic {indexing_maps = [#lens, #id], iterator_types = [\"parallel\", "
        "\"parallel\", \"parallel\", \"parallel\"]} ins(%%lens : tensor<%dxi64>) outs(%%e : %s) {\n"
        "  ^bb0(%%n: i64, %%out: i1):\n"
        "    %%key = linalg.index 3 : index\n"
        "    %%len = arith.index_cast %%n : i64 to index\n"
        "    %%seen = arith.cmpi slt, %%key, %%len : index\n"
        "    linalg.yield %%seen : i1\n"
        "  } -> %s\n"
        "  %%o = attn.sdpa %%q, %%k, %%v mask(%%m : attend_where_true) : %s, %s, %s, %s -> %s\n"
        "  return %%o : %s\n}\n"
        % (q, k, k, B, q, m, B, m, m, q, k, k, m, q, q))


def packed_cache_module(B, Hq, Hk, Tq, Tp, d, elem):
    """Packed [B, T, H * d] operands; the cache is concatenated packed and
    expanded to seq_major; key j of row i in batch b is seen iff j < lens[b]
    and j - i <= lens[b] - Tq (causal, aligned to the last valid key), Tq
    captured from the query's dim on the host."""
    Tk = Tp + Tq
    q3, k3, p3, c3 = (ty((B, T, H * d), elem) for T, H in
                      ((Tq, Hq), (Tq, Hk), (Tp, Hk), (Tk, Hk)))
    q4, c4 = ty((B, Tq, Hq, d), elem), ty((B, Tk, Hk, d), elem)
    m = ty((B, 1, Tq, Tk), "i1")
    return (
        "#lens = affine_map<(d0, d1, d2, d3) -> (d0)>\n"
        "#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>\n"
        "func.func @main(%%q: %s, %%k: %s, %%v: %s, %%pk: %s, %%pv: %s, %%lens: tensor<%dxi64>)"
        " -> (%s, %s, %s) {\n"
        "  %%kc = tensor.concat dim(1) %%pk, %%k : (%s, %s) -> %s\n"
        "  %%vc = tensor.concat dim(1) %%pv, %%v : (%s, %s) -> %s\n"
        "  %%q4 = tensor.expand_shape %%q [[0], [1], [2, 3]] output_shape [%d, %d, %d, %d] : %s into %s\n"
        "  %%k4 = tensor.expand_shape %%kc [[0], [1], [2, 3]] output_shape [%d, %d, %d, %d] : %s into %s\n"
        "  %%v4 = tensor.expand_shape %%vc [[0], [1], [2, 3]] output_shape [%d, %d, %d, %d] : %s into %s\n"
        "  %%c1 = arith.constant 1 : index\n"
        "  %%tq = tensor.dim %%q, %%c1 : %s\n"
        "  %%e = tensor.empty() : %s\n"
        "  %%m = linalg.generic {indexing_maps = [#lens, #id], iterator_types = [\"parallel\", "
        "\"parallel\", \"parallel\", \"parallel\"]} ins(%%lens : tensor<%dxi64>) outs(%%e : %s) {\n"
        "  ^bb0(%%n: i64, %%out: i1):\n"
        "    %%row = linalg.index 2 : index\n"
        "    %%key = linalg.index 3 : index\n"
        "    %%len = arith.index_cast %%n : i64 to index\n"
        "    %%valid = arith.cmpi slt, %%key, %%len : index\n"
        "    %%past = arith.subi %%len, %%tq : index\n"
        "    %%diag = arith.addi %%row, %%past : index\n"
        "    %%before = arith.cmpi sle, %%key, %%diag : index\n"
        "    %%seen = arith.andi %%valid, %%before : i1\n"
        "    linalg.yield %%seen : i1\n"
        "  } -> %s\n"
        "  %%o = attn.sdpa %%q4, %%k4, %%v4 mask(%%m : attend_where_true) layout(seq_major) :"
        " %s, %s, %s, %s -> %s\n"
        "  %%o3 = tensor.collapse_shape %%o [[0], [1], [2, 3]] : %s into %s\n"
        "  return %%o3, %%kc, %%vc : %s, %s, %s\n}\n"
        % (q3, k3, k3, p3, p3, B, q3, c3, c3,
           p3, k3, c3, p3, k3, c3,
           B, Tq, Hq, d, q3, q4, B, Tk, Hk, d, c3, c4, B, Tk, Hk, d, c3, c4,
           q3, m, B, m, m, q4, c4, c4, m, q4, q4, q3, q3, c3, c3))


def hf_decode_module(B, H, T, Tp, d, elem, dynamic=False):
    """PyTorch's export of a cached step: packed new tokens split into heads
    (expand_shape, then a transpose to [B, H, T, d]), concatenated with the
    head-major cache, the result transposed back and merged. `dynamic`: the
    new and past lengths are '?', as torch.onnx.export's dynamic axes."""
    Tk, Ts = Tp + T, str(T)
    if dynamic:
        T, Tp, Tk, Ts = "?", "?", "?", "%t"
    p3 = ty((B, T, H * d), elem)
    s4, h4 = ty((B, T, H, d), elem), ty((B, H, T, d), elem)
    c4 = ty((B, H, Tp, d), elem)
    k4 = ty((B, H, Tk, d), elem)
    empty = "(%t)" if dynamic else "()"
    lines = ["func.func @main(%%q: %s, %%k: %s, %%v: %s, %%pk: %s, %%pv: %s) -> (%s, %s, %s) {"
             % (p3, p3, p3, c4, c4, p3, k4, k4),
             "  %c1 = arith.constant 1 : index",
             "  %%t = tensor.dim %%q, %%c1 : %s" % p3,
             "  %%e = tensor.empty%s : %s" % (empty, h4)]
    for n in ("q", "k", "v"):
        lines.append("  %%%s4 = tensor.expand_shape %%%s [[0], [1], [2, 3]] output_shape "
                     "[%d, %s, %d, %d] : %s into %s" % (n, n, B, Ts, H, d, p3, s4))
        lines.append("  %%%st = linalg.transpose ins(%%%s4 : %s) outs(%%e : %s) "
                     "permutation = [0, 2, 1, 3]" % (n, n, s4, h4))
    lines += [
        "  %%kc = tensor.concat dim(2) %%pk, %%kt : (%s, %s) -> %s" % (c4, h4, k4),
        "  %%vc = tensor.concat dim(2) %%pv, %%vt : (%s, %s) -> %s" % (c4, h4, k4),
        "  %%o = attn.sdpa %%qt, %%kc, %%vc causal(bottom_right) : %s, %s, %s -> %s"
        % (h4, k4, k4, h4),
        "  %%e2 = tensor.empty%s : %s" % (empty, s4),
        "  %%ot = linalg.transpose ins(%%o : %s) outs(%%e2 : %s) permutation = [0, 2, 1, 3]"
        % (h4, s4),
        "  %%oc = tensor.collapse_shape %%ot [[0], [1], [2, 3]] : %s into %s" % (s4, p3),
        "  return %%oc, %%kc, %%vc : %s, %s, %s" % (p3, k4, k4), "}", ""]
    return "\n".join(lines)


def padded_mask_module(B, H, Tq, Tk, W, d, elem):
    """An additive mask [B, 1, Tq, W] padded with -inf to the Tk keys (as
    ONNX pads a short mask), read by a generator that also hides keys past
    per-batch lengths."""
    q, k = ty((B, H, Tq, d), elem), ty((B, H, Tk, d), elem)
    short, m = ty((B, 1, Tq, W), elem), ty((B, 1, Tq, Tk), elem)
    return (
        "#lens = affine_map<(d0, d1, d2, d3) -> (d0)>\n"
        "#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>\n"
        "func.func @main(%%q: %s, %%k: %s, %%v: %s, %%bias: %s, %%lens: tensor<%dxi64>) -> %s {\n"
        "  %%ninf = arith.constant 0xFC00 : %s\n"
        "  %%padded = tensor.pad %%bias low[0, 0, 0, 0] high[0, 0, 0, %d] {\n"
        "  ^bb0(%%i0: index, %%i1: index, %%i2: index, %%i3: index):\n"
        "    tensor.yield %%ninf : %s\n"
        "  } : %s to %s\n"
        "  %%e = tensor.empty() : %s\n"
        "  %%m = linalg.generic {indexing_maps = [#lens, #id, #id], iterator_types = "
        "[\"parallel\", \"parallel\", \"parallel\", \"parallel\"]} ins(%%lens, %%padded : "
        "tensor<%dxi64>, %s) outs(%%e : %s) {\n"
        "  ^bb0(%%n: i64, %%b: %s, %%out: %s):\n"
        "    %%key = linalg.index 3 : index\n"
        "    %%len = arith.index_cast %%n : i64 to index\n"
        "    %%seen = arith.cmpi slt, %%key, %%len : index\n"
        "    %%x = arith.select %%seen, %%b, %%ninf : %s\n"
        "    linalg.yield %%x : %s\n"
        "  } -> %s\n"
        "  %%o = attn.sdpa %%q, %%k, %%v mask(%%m : additive) : %s, %s, %s, %s -> %s\n"
        "  return %%o : %s\n}\n"
        % (q, k, k, short, B, q, elem, Tk - W, elem, short, m, m, B, m, m, elem, elem,
           elem, elem, m, q, k, k, m, q, q))


def normal(rng, case, shape):
    return case._round(rng.standard_normal(shape, dtype=np.float32))


def cases():
    rng = np.random.default_rng(7)
    out = []
    # A decode step under GQA with a sliding window, and a chunk of 37 new
    # tokens (bf16) after 100 cached ones.
    # Then a step with a dynamic batch and past length, which the runtime
    # sizes from the signature (past + 1).
    for name, B, Hq, Hk, Tq, Tp, d, elem, window, dynamic in (
            ("kv_cache_decode_gqa_window_f16", 2, 8, 2, 1, 190, 64, "f16", 100, False),
            ("kv_cache_chunk_bf16", 1, 4, 4, 37, 100, 128, "bf16", None, False),
            ("kv_cache_dynamic_past_f16", 3, 4, 2, 1, 77, 64, "f16", None, True)):
        Tk = Tp + Tq
        case = gpu_cases.Case(name, B, Hq, Tq, d, elem, "bottom_right", Hk=Hk, Tk=Tk,
                              window=(window, None))
        q = normal(rng, case, (B, Hq, Tq, d))
        k, v = normal(rng, case, (B, Hk, Tq, d)), normal(rng, case, (B, Hk, Tq, d))
        pk, pv = normal(rng, case, (B, Hk, Tp, d)), normal(rng, case, (B, Hk, Tp, d))
        kc, vc = np.concatenate([pk, k], 2), np.concatenate([pv, v], 2)
        out.append((case, kv_cache_module(B, Hq, Hk, Tq, Tp, Tq, d, elem, "bottom_right", window,
                                          dynamic),
                    [q, k, v, pk, pv], [(q, kc, vc, None), kc, vc]))
    # Per-batch key lengths: all keys, 130 of 200 (a tile boundary inside
    # the third 64-key tile), and a single key.
    B, Hq, Hk, Tq, Tk, d = 3, 4, 2, 70, 200, 64
    case = gpu_cases.Case("nonpad_lengths_f16", B, Hq, Tq, d, "f16", Hk=Hk, Tk=Tk,
                          mask=("attend_where_true", (B, 1, 1, Tk)))
    q = normal(rng, case, (B, Hq, Tq, d))
    k, v = normal(rng, case, (B, Hk, Tk, d)), normal(rng, case, (B, Hk, Tk, d))
    lens = np.array([200, 130, 1], np.int64)
    mask = np.arange(Tk)[None, None, None, :] < lens[:, None, None, None]
    out.append((case, nonpad_module(B, Hq, Hk, Tq, Tk, d, "f16"), [q, k, v, lens],
                [(q, k, v, mask)]))
    # Packed operands, a packed cache and lengths with causal alignment
    # (f32 operands, rounded to bf16 by the kernel).
    B, Hq, Hk, Tq, Tp, d = 2, 6, 3, 20, 150, 32
    Tk = Tp + Tq
    case = gpu_cases.Case("packed_cache_nonpad_causal_f32", B, Hq, Tq, d, "f32", Hk=Hk, Tk=Tk,
                          layout="packed", mask=("attend_where_true", (B, 1, Tq, Tk)))
    q = normal(rng, case, (B, Tq, Hq * d))
    k, v = normal(rng, case, (B, Tq, Hk * d)), normal(rng, case, (B, Tq, Hk * d))
    pk, pv = normal(rng, case, (B, Tp, Hk * d)), normal(rng, case, (B, Tp, Hk * d))
    kc, vc = np.concatenate([pk, k], 1), np.concatenate([pv, v], 1)
    lens = np.array([Tk, 97], np.int64)
    key, row = np.arange(Tk)[None, None, None, :], np.arange(Tq)[None, None, :, None]
    L = lens[:, None, None, None]
    mask = (key < L) & (key - row <= L - Tq)
    out.append((case, packed_cache_module(B, Hq, Hk, Tq, Tp, d, "f32"),
                [q, k, v, pk, pv, lens], [(q, kc, vc, mask), kc, vc]))
    # A bias of 150 keys padded with -inf to 200, and lengths 180 and 120.
    B, H, Tq, Tk, W, d = 2, 2, 40, 200, 150, 32
    case = gpu_cases.Case("padded_mask_lengths_f16", B, H, Tq, d, "f16", Tk=Tk,
                          mask=("additive", (B, 1, Tq, Tk)))
    q = normal(rng, case, (B, H, Tq, d))
    k, v = normal(rng, case, (B, H, Tk, d)), normal(rng, case, (B, H, Tk, d))
    bias = normal(rng, case, (B, 1, Tq, W))
    lens = np.array([180, 120], np.int64)
    full = np.concatenate([bias.astype(np.float32),
                           np.full((B, 1, Tq, Tk - W), -np.inf, np.float32)], 3)
    full[np.broadcast_to(np.arange(Tk)[None, None, None, :] >= lens[:, None, None, None],
                         full.shape)] = -np.inf
    out.append((case, padded_mask_module(B, H, Tq, Tk, W, d, "f16"), [q, k, v, bias, lens],
                [(q, k, v, full)]))
    # PyTorch's cached step: 3 new tokens after 150, transposed views into
    # the cache and out of the result; then 5 after 66 with both lengths
    # dynamic.
    for name, B, H, T, Tp, d, dynamic in (
            ("hf_decode_transposed_cache_f16", 2, 8, 3, 150, 64, False),
            ("hf_decode_dynamic_lengths_f16", 1, 4, 5, 66, 64, True)):
        case = gpu_cases.Case(name, B, H, T, d, "f16", "bottom_right", Tk=Tp + T)
        split = lambda a, B=B, T=T, H=H, d=d: a.reshape(B, T, H, d).transpose(0, 2, 1, 3)
        q, k, v = (normal(rng, case, (B, T, H * d)) for _ in range(3))
        pk, pv = normal(rng, case, (B, H, Tp, d)), normal(rng, case, (B, H, Tp, d))
        kc = np.concatenate([pk, split(k)], 2)
        vc = np.concatenate([pv, split(v)], 2)
        out.append((case, hf_decode_module(B, H, T, Tp, d, "f16", dynamic), [q, k, v, pk, pv],
                    [(split(q), kc, vc, None, split), kc, vc]))
    return out


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    passed = failed = 0
    for case, text, inputs, wants in cases():
        module = os.path.join(work, case.name + ".mlir")
        with open(module, "w") as f:
            f.write(text)
        paths = []
        for i, a in enumerate(inputs):
            p = os.path.join(work, "%s_in%d.npy" % (case.name, i))
            # bf16 values travel as float32 (exactly representable).
            np.save(p, a if a.dtype in (np.float16, np.int64) else a.astype(np.float32))
            paths.append(p)
        for options in VARIANTS:
            label = case.name + (" [%s]" % options if options else "")
            outs = [os.path.join(work, "%s_%d_out%d.npy" % (case.name, len(options), i))
                    for i in range(len(wants))]
            cmd = [EMULATOR, module, "--pass-options", options]
            for p in paths:
                cmd += ["--input", p]
            for o in outs:
                cmd += ["--output", o]
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  universal_newlines=True)
            if proc.returncode != 0:
                print("FAIL %s: emulator exit %d\n%s" % (label, proc.returncode, proc.stdout))
                failed += 1
                continue
            notes, ok = [], True
            for o, want in zip(outs, wants):
                got = np.load(o)
                if isinstance(want, tuple):
                    # (q, k, v, mask[, how the result reads as the case's
                    # layout])
                    q, kc, vc, mask = want[:4]
                    if len(want) > 4:
                        got = want[4](got)
                    err, good = gpu_cases.check(case, got, q, kc, vc, mask)
                    notes.append("max_abs_err=%.3g (tolerance %g)"
                                 % (err, gpu_cases.TOLERANCE[case.dtype]))
                else:
                    good = got.shape == want.shape and np.array_equal(
                        got, want.astype(np.float32))
                    notes.append("present %s" % ("exact" if good else "differs"))
                ok &= bool(good)
            print("%s %s: %s" % ("PASS" if ok else "FAIL", label, ", ".join(notes)))
            passed += ok
            failed += not ok
    print("gpu_emulated_graphs: %d passed, %d failed" % (passed, failed))


if __name__ == "__main__":
    main()
