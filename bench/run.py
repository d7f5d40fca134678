"""Benchmarks the compiler against ONNX Runtime on identical inputs.

For every case: build the attn module and an ONNX model of the same
computation, run both on the same random inputs (ours with attention-run,
ONNX Runtime 1.30 CPU through onnxruntime-node), with the same thread count,
report the medians, GFLOP/s, % of the machine's FMA peak (measured here by
bench/peak/fma_peak.cpp) and the speed-up, and check that the outputs agree.
Every case alternates ours and ORT over rounds (three for the headline
cases, --sweep-rounds for the sweep rows, three by default; the side that
goes first alternates as well), and each side
reports the median of its per-round medians, so that a load change on a
shared host moves both sides rather than one ratio.
Writes results/bench-<date>[-<tag>].md and .png. Usage (through bench/run.sh):

  run.py BUILD_DIR [--threads 2] [--repeat 10]
         [--sweep [--sweep-weights-as-arguments] [--sweep-rounds 3]]
         [--tag NAME] [--target-cpu CPU] [--gpt-blocks N]

--target-cpu compiles ours for another CPU than the host (attention-run
--target-cpu, e.g. x86-64-v3 for AVX2 code on an AVX-512 host); the peak is
then that of the target's widest vector ISA on this host, and ORT still runs
its own kernels for this host: the table says so.

--gpt-blocks sets the transformer blocks of the whole-model row (the
book's GPTModel at GPT-2 small sizes, 50257-word head included; 12 by
default: GPT-2 small, 163M parameters; fewer for a quicker run).

Also reports each module's compile time (attention-run's ONNX import, pipeline
and codegen) and, for causal attention at T=8192, the peak RSS beyond inputs
and output.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))

# attention-run arguments of every run of ours (--target-cpu), and whether
# the CPU it compiles for has avx512_bf16 (set by main).
OURS_EXTRA_ARGS = []
BF16_DOT = False


def target_isa(cpu):
    """(widest vector ISA, has avx512_bf16) of an x86-64 CPU name, from the
    macros clang defines for it (the host's for "host")."""
    march = "native" if cpu == "host" else cpu
    proc = subprocess.run(["clang-22", "-march=" + march, "-dM", "-E", "-x", "c", "/dev/null"],
                          capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit("run.py: unknown target CPU '%s': %s" % (cpu, proc.stderr.strip()))
    macros = set(line.split()[1] for line in proc.stdout.splitlines() if line.startswith("#define"))
    return ("avx512" if "__AVX512F__" in macros else "avx2"), "__AVX512BF16__" in macros


def t(shape):
    return "tensor<%sxf32>" % "x".join(str(d) for d in shape)


# ---------------------------------------------------------------------------
# Cases: (name, flops, attn MLIR, ONNX model builder, inputs)
# ---------------------------------------------------------------------------

def core_case(b, h, tt, d, causal, rng, softcap=None):
    """SDPA core. Causal: ORT's standard Attention (opset 23, is_causal=1,
    `softcap` as its attribute) on [B, H, T, d]. Not causal:
    com.microsoft.MultiHeadAttention on [B, T, H*d] (ours reads the same
    memory as [B, T, H, d], layout(seq_major))."""
    if causal:
        shape = (b, h, tt, d)
        attrs = " {softcap = %r : f32}" % softcap if softcap else ""
        mlir = ("func.func @main(%q: {0}, %k: {0}, %v: {0}) -> {0} {{\n"
                "  %o = attn.sdpa %q, %k, %v causal(top_left){1} : {0}, {0}, {0} -> {0}\n"
                "  return %o : {0}\n}}\n").format(t(shape), attrs)
        ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in "QKV"]
        extra = {"softcap": softcap} if softcap else {}
        node = helper.make_node("Attention", ["Q", "K", "V"], ["Y"], is_causal=1, **extra)
        graph = helper.make_graph([node], "attention", ins,
                                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, shape)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
        flops = 2 * b * h * tt * tt * d
    else:
        shape = (b, tt, h, d)
        mlir = ("func.func @main(%q: {0}, %k: {0}, %v: {0}) -> {0} {{\n"
                "  %o = attn.sdpa %q, %k, %v layout(seq_major) : {0}, {0}, {0} -> {0}\n"
                "  return %o : {0}\n}}\n").format(t(shape))
        flat = (b, tt, h * d)
        ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, flat) for n in "QKV"]
        node = helper.make_node("MultiHeadAttention", ["Q", "K", "V"], ["Y"],
                                domain="com.microsoft", num_heads=h)
        graph = helper.make_graph([node], "mha", ins,
                                  [helper.make_tensor_value_info("Y", TensorProto.FLOAT, flat)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                        helper.make_opsetid("com.microsoft", 1)])
        flops = 4 * b * h * tt * tt * d
    arrays = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)]
    ort_dims = list(shape) if causal else list(flat)
    return mlir, model, arrays, ["Q", "K", "V"], ort_dims, flops


def masked_core_case(b, h, tt, d, kind, rng):
    """SDPA core with an explicit mask, ORT's standard Attention (opset 23)
    with attn_mask on both sides' [B, H, T, d]: `kind` "padding" is a bool
    key padding mask expanded over the query rows, [B, 1, T, T] as exports
    of padded batches carry it (the last eighth of the keys hidden, True =
    attend; ORT 1.30 takes no mask broadcast along the query rows), "bias"
    an additive float mask [1, H, T, T] (normal values, as a
    relative-position bias). FLOPs: the full core's."""
    shape = (b, h, tt, d)
    if kind == "padding":
        mshape, mty, mkind = (b, 1, tt, tt), "i1", "attend_where_true"
        mask = np.ones(mshape, bool)
        mask[..., tt - tt // 8:] = False
        elem = TensorProto.BOOL
    else:
        mshape, mty, mkind = (1, h, tt, tt), "f32", "additive"
        mask = rng.standard_normal(mshape).astype(np.float32)
        elem = TensorProto.FLOAT
    mt = "tensor<%sx%s>" % ("x".join(str(n) for n in mshape), mty)
    mlir = ("func.func @main(%q: {0}, %k: {0}, %v: {0}, %m: {1}) -> {0} {{\n"
            "  %o = attn.sdpa %q, %k, %v mask(%m : {2}) : {0}, {0}, {0}, {1} -> {0}\n"
            "  return %o : {0}\n}}\n").format(t(shape), mt, mkind)
    ins = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in "QKV"]
    ins.append(helper.make_tensor_value_info("M", elem, mshape))
    node = helper.make_node("Attention", ["Q", "K", "V", "M"], ["Y"])
    graph = helper.make_graph([node], "attention", ins,
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    arrays = [rng.standard_normal(shape).astype(np.float32) for _ in range(3)] + [mask]
    return mlir, model, arrays, ["Q", "K", "V", "M"], [list(shape)] * 3 + [list(mshape)], \
        4 * b * h * tt * tt * d


def mha_case(b, tt, dm, h, causal, rng, ours_from_onnx=False):
    """The seed's MultiHeadAttention; the ONNX side is the graph its
    torch.onnx.export produces (MatMul, Reshape, Transpose, MatMul, Div,
    Where(mask, -inf), Softmax, MatMul, Transpose, Reshape, MatMul, Add),
    the weights initializers. Ours runs the attn module with the weights as
    arguments, or with `ours_from_onnx` that same ONNX file (imported and
    raised, the weights constants), as ORT does."""
    hd = dm // h
    bound = 1 / np.sqrt(dm)
    x = rng.standard_normal((b, tt, dm)).astype(np.float32)
    ws = [rng.uniform(-bound, bound, (dm, dm)).astype(np.float32) for _ in range(4)]
    bo = rng.uniform(-bound, bound, dm).astype(np.float32)
    xs, wt, bt = t((b, tt, dm)), t((dm, dm)), t((dm,))
    mlir = ("func.func @main(%x: {x}, %wq: {w}, %wk: {w}, %wv: {w}, %wo: {w}, %bo: {bb}) -> {x} {{\n"
            "  %y = attn.multi_head_attention %x weights(%wq, %wk, %wv) out_proj(%wo, %bo) {c}"
            "{{num_heads = {h} : i64}} : ({x}, {w}, {w}, {w}, {w}, {bb}) -> {x}\n"
            "  return %y : {x}\n}}\n").format(x=xs, w=wt, bb=bt, h=h,
                                              c="causal " if causal else "")
    init = [numpy_helper.from_array(a, n) for a, n in zip(ws + [bo], ["Wq", "Wk", "Wv", "Wo", "bo"])]
    init += [numpy_helper.from_array(np.array([b, tt, h, hd], np.int64), "heads"),
             numpy_helper.from_array(np.array([b, tt, dm], np.int64), "merged"),
             numpy_helper.from_array(np.array(np.sqrt(hd), np.float32), "sqrt_d"),
             numpy_helper.from_array(np.array(-np.inf, np.float32), "ninf"),
             numpy_helper.from_array(np.triu(np.ones((tt, tt), bool), 1), "mask")]
    nodes = []
    for n in "qkv":
        W = "W" + n
        nodes += [helper.make_node("MatMul", ["x", W], [n + "p"]),
                  helper.make_node("Reshape", [n + "p", "heads"], [n + "r"]),
                  helper.make_node("Transpose", [n + "r"], [n + "h"],
                                   perm=[0, 2, 3, 1] if n == "k" else [0, 2, 1, 3])]
    nodes += [helper.make_node("MatMul", ["qh", "kh"], ["s"])]
    if causal:
        nodes += [helper.make_node("Where", ["mask", "ninf", "s"], ["sm"])]
    else:
        nodes += [helper.make_node("Identity", ["s"], ["sm"])]
    nodes += [helper.make_node("Div", ["sm", "sqrt_d"], ["ss"]),
              helper.make_node("Softmax", ["ss"], ["p"], axis=-1),
              helper.make_node("MatMul", ["p", "vh"], ["o"]),
              helper.make_node("Transpose", ["o"], ["ot"], perm=[0, 2, 1, 3]),
              helper.make_node("Reshape", ["ot", "merged"], ["c"]),
              helper.make_node("MatMul", ["c", "Wo"], ["y0"]),
              helper.make_node("Add", ["y0", "bo"], ["Y"])]
    graph = helper.make_graph(nodes, "seed_mha",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, (b, tt, dm))],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, (b, tt, dm))],
                              init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    core = (2 if causal else 4) * b * h * tt * tt * hd
    flops = 8 * b * tt * dm * dm + core
    if ours_from_onnx:
        return None, model, [x], ["x"], [b, tt, dm], flops
    return mlir, model, [x] + ws + [bo], ["x"], [b, tt, dm], flops


def projections_case(b, tt, dm, rng):
    """The seed MHA's four projections on their own: the GEMMs of x Wq,
    x Wk, x Wv and ctx Wo + bo at its sizes ([B*T, d] x [d, d]), chained
    into one result, ((x Wq) Wk) Wv) Wo + bo, so that both sides return a
    single tensor and no projection can be skipped. Both sides run the same
    ONNX file (weights as initializers; ours imports it, no attention to
    raise). FLOPs: 8 B T d^2."""
    bound = 1 / np.sqrt(dm)
    x = rng.standard_normal((b, tt, dm)).astype(np.float32)
    names = ["Wq", "Wk", "Wv", "Wo"]
    init = [numpy_helper.from_array(rng.uniform(-bound, bound, (dm, dm)).astype(np.float32), n)
            for n in names]
    init.append(numpy_helper.from_array(rng.uniform(-bound, bound, dm).astype(np.float32), "bo"))
    nodes, prev = [], "x"
    for n in names:
        nodes.append(helper.make_node("MatMul", [prev, n], [n + "_out"]))
        prev = n + "_out"
    nodes.append(helper.make_node("Add", [prev, "bo"], ["Y"]))
    graph = helper.make_graph(nodes, "seed_mha_projections",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, (b, tt, dm))],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, (b, tt, dm))],
                              init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return None, model, [x], ["x"], [b, tt, dm], 8 * b * tt * dm * dm


def torch_mha_case(b, tt, dm, h, rng):
    """The seed's MultiHeadAttention (causal, GPT-2 sizes) as
    torch.onnx.export writes it (opset 17, static shapes): both sides run
    that same file; ours imports it and raises it to one
    attn.multi_head_attention."""
    import io
    import torch
    sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
    import seed_modules
    torch.manual_seed(int(rng.integers(1 << 30)))
    module = seed_modules.MultiHeadAttention(dm, dm, tt, 0.0, num_heads=h).eval()
    x = rng.standard_normal((b, tt, dm)).astype(np.float32)
    buf = io.BytesIO()
    torch.onnx.export(module, torch.from_numpy(x), buf, opset_version=17,
                      input_names=["x"], output_names=["y"])
    model = onnx.load_from_string(buf.getvalue())
    flops = 8 * b * tt * dm * dm + 2 * b * h * tt * tt * (dm // h)
    return None, model, [x], ["x"], [b, tt, dm], flops


def llama_gqa_case(b, tt, dm, h, kv, rng):
    """Llama-style grouped-query attention (bias-free projections, rotary
    embeddings, repeat_kv of K and V, Meta's torch.full(-inf).triu(1) causal
    mask, o_proj) as torch.onnx.export writes it (opset 17, static shapes):
    both sides run that file; ours raises the core to attn.sdpa and hands it
    the unrepeated K and V (attn-fold-repeated-kv). FLOPs: the four
    projections and the useful causal attention."""
    import io
    import torch
    sys.path.insert(0, os.path.join(HERE, "..", "test", "onnx", "Inputs"))
    import pattern_models
    torch.manual_seed(int(rng.integers(1 << 30)))
    module = pattern_models.LlamaAttention(dm, h, kv).eval()
    x = rng.standard_normal((b, tt, dm)).astype(np.float32)
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(module, torch.from_numpy(x), buf, opset_version=17,
                          input_names=["x"], output_names=["y"])
    model = onnx.load_from_string(buf.getvalue())
    flops = 4 * b * tt * dm * dm * (1 + kv / h) + 2 * b * h * tt * tt * (dm // h)
    return None, model, [x], ["x"], [b, tt, dm], int(flops)


def book_gpt_case(b, tt, layers, rng):
    """The book's GPTModel (chapter 4) at GPT-2 small sizes (d_model 768,
    12 heads, a 1024-position table, qkv_bias as GPT-2), `layers` blocks of
    the seed's causal MultiHeadAttention with LayerNorm, GELU feed-forward
    and residual adds, a final LayerNorm and the 50257-word output head,
    from token ids to logits, as torch.onnx.export writes it (opset 17,
    static shapes): both sides run that file, ours imports it (each block's
    attention raised to one attn op). FLOPs: the contractions (QKV, out_proj
    and the two feed-forward projections, 24 T d^2 per block), the useful
    causal attention (2 T^2 d) and the head (2 T d V)."""
    import io
    import torch
    sys.path.insert(0, os.path.join(HERE, "..", "test", "onnx", "Inputs"))
    import pattern_models
    torch.manual_seed(int(rng.integers(1 << 30)))
    d, vocab = 768, 50257
    module = pattern_models.BookGPT(dict(vocab_size=vocab, context_length=1024, emb_dim=d,
                                         n_heads=12, n_layers=layers, drop_rate=0.1,
                                         qkv_bias=True)).eval()
    ids = rng.integers(0, vocab, (b, tt)).astype(np.int64)
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(module, torch.from_numpy(ids), buf, opset_version=17,
                          input_names=["in_idx"], output_names=["logits"])
    model = onnx.load_from_string(buf.getvalue())
    flops = b * (layers * (24 * tt * d * d + 2 * tt * tt * d) + 2 * tt * d * vocab)
    return None, model, [ids], ["in_idx"], [b, tt], flops


def memory_case(build, threads, work, tt=8192, h=12, d=64):
    """Causal attention at T=8192: time and peak RSS of ours, against the same
    module at T=512 (the difference beyond the larger inputs and output is
    what the kernel itself allocates; a Tq x Tk buffer would be 3 GiB)."""
    ty = "tensor<1x%dx?x%dxf32>" % (h, d)
    mlir = ("func.func @main(%q: {0}, %k: {0}, %v: {0}) -> {0} {{\n"
            "  %o = attn.sdpa %q, %k, %v causal(top_left) : {0}, {0}, {0} -> {0}\n"
            "  return %o : {0}\n}}\n").format(ty)
    path = os.path.join(work, "long.mlir")
    with open(path, "w") as f:
        f.write(mlir)
    rng = np.random.default_rng(8192)
    out = {}
    for t_ in (512, tt):
        arrays = [rng.standard_normal((1, h, t_, d), dtype=np.float32) for _ in range(3)]
        # One plain run for the memory (timing mode keeps more buffers).
        _, rss = run_ours(build, path, arrays, None, threads, 0, os.path.join(work, "long%d" % t_))
        out[t_] = rss
    timed, _ = run_ours(build, path, arrays, None, threads, 3, os.path.join(work, "long"))
    ms = parse_timing(timed.stdout)["median_ms"]
    io_growth = 4 * h * d * 4 * (tt - 512)
    growth = out[tt] - out[512]
    return {"ms": ms, "rss_mib": out[tt] / 2**20, "extra_mib": (growth - io_growth) / 2**20,
            "gflops": 2 * h * tt * tt * d / ms / 1e6}


def bf16_case(build, threads, repeat, work, h=12, tt=1024, d=64):
    """The causal core in bf16 (avx512_bf16 dot products where the CPU
    compiled for has them) against the same core in f32, both ours, same inputs (rounded to
    bf16), same run; the bf16 output is checked against a float64 reference
    of the rounded inputs (bf16 tolerance 2e-2)."""
    sys.path.insert(0, os.path.join(HERE, "..", "test", "execution"))
    import attn_exec
    rng = np.random.default_rng(16)
    arrays = [attn_exec.round_to_bf16(rng.standard_normal((1, h, tt, d)).astype(np.float32))
              for _ in range(3)]
    want = attn_exec.ref_sdpa(*arrays, causal="top_left")
    out = {elem: {"ms": []} for elem in ("f32", "bf16")}
    for r in range(3):  # alternating rounds, as the headline cases
        for elem in (("f32", "bf16") if r % 2 == 0 else ("bf16", "f32")):
            ty = "tensor<1x%dx%dx%dx%s>" % (h, tt, d, elem)
            path = os.path.join(work, "core_%s.mlir" % elem)
            with open(path, "w") as f:
                f.write("func.func @main(%q: {0}, %k: {0}, %v: {0}) -> {0} {{\n"
                        "  %o = attn.sdpa %q, %k, %v causal(top_left) : {0}, {0}, {0} -> {0}\n"
                        "  return %o : {0}\n}}\n".format(ty))
            tag = os.path.join(work, "core_%s" % elem)
            proc, _ = run_ours(build, path, arrays, None, threads, repeat, tag)
            got = np.load(tag + ".ours.npy").astype(np.float64)
            out[elem]["ms"].append(parse_timing(proc.stdout)["median_ms"])
            out[elem]["err"] = float(np.abs(got - want).max())
    for elem in out:
        out[elem]["ms"] = float(np.median(out[elem]["ms"]))
    flops = 2 * h * tt * tt * d
    dot = BF16_DOT
    return {"f32_ms": out["f32"]["ms"], "bf16_ms": out["bf16"]["ms"],
            "bf16_gflops": flops / out["bf16"]["ms"] / 1e6,
            "speedup": out["f32"]["ms"] / out["bf16"]["ms"], "err": out["bf16"]["err"],
            "path": "vdpbf16ps" if dot else "operands widened to f32 (no avx512_bf16 on the "
                                           "CPU compiled for)"}


# ---------------------------------------------------------------------------

def parse_timing(text):
    for line in text.splitlines():
        if line.startswith("median_ms="):
            return {k: float(v) for k, v in (kv.split("=") for kv in line.split())}
    raise RuntimeError("no timing line in:\n" + text)


def parse_compile_s(stderr):
    """The sum of attention-run's 'compiled X: [import I s, ]pipeline A s,
    codegen B s[; ...]' (the import of an .onnx input, with the raising of
    its attention subgraphs, comes first)."""
    for line in stderr.splitlines():
        if line.startswith("compiled ") and "pipeline" in line:
            m = re.search(r": (?:import ([0-9.]+) s, )?pipeline ([0-9.]+) s, "
                          r"codegen ([0-9.]+) s(?:;|$)", line)
            if m:
                return sum(float(t) for t in m.groups() if t is not None)
    return float("nan")


def run_measured(cmd):
    """Runs cmd in a fresh child and returns (CompletedProcess, its peak RSS
    in bytes)."""
    probe = ("import resource, subprocess, sys\n"
             "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
             "sys.stdout.write(p.stdout); sys.stderr.write(p.stderr)\n"
             "print('peak_rss_kib=%d' % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
             "sys.exit(p.returncode)\n")
    proc = subprocess.run([sys.executable, "-c", probe] + cmd, capture_output=True, text=True)
    rss = 0
    for line in proc.stdout.splitlines():
        if line.startswith("peak_rss_kib="):
            rss = int(line.split("=")[1]) * 1024
    return proc, rss


def run_ours(build, source, arrays, names, threads, repeat, tag):
    cmd = [os.path.join(build, "bin", "attention-run"), source,
           "--threads", str(threads), "--output", tag + ".ours.npy"] + OURS_EXTRA_ARGS
    if repeat:
        cmd += ["--repeat", str(repeat)]
    for i, a in enumerate(arrays):
        np.save("%s.in%d.npy" % (tag, i), a)
        prefix = names[i] + "=" if names else ""
        cmd += ["--input", prefix + "%s.in%d.npy" % (tag, i)]
    ours, rss = run_measured(cmd)
    if ours.returncode:
        raise RuntimeError("attention-run failed:\n" + ours.stderr)
    return ours, rss


def decode_case(b, h, past, d, rng):
    """One KV-cache decode step as ONNX exports it: the standard Attention op
    (opset 23, is_causal=1) with past_key/past_value [B, H, past, d] and
    the present outputs [B, H, past + 1, d]. Both sides run this file (ours
    imports it). Bytes: the past read and the present written, K and V."""
    shapes = [("Q", (b, h, 1, d)), ("K", (b, h, 1, d)), ("V", (b, h, 1, d)),
              ("past_key", (b, h, past, d)), ("past_value", (b, h, past, d))]
    outs = [("Y", (b, h, 1, d)), ("present_key", (b, h, past + 1, d)),
            ("present_value", (b, h, past + 1, d))]
    vi = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
    node = helper.make_node("Attention", ["Q", "K", "V", "", "past_key", "past_value"],
                            [n for n, _ in outs], is_causal=1)
    graph = helper.make_graph([node], "decode", [vi(n, s) for n, s in shapes],
                              [vi(n, s) for n, s in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    arrays = [rng.standard_normal(s).astype(np.float32) for _, s in shapes]
    moved = 4 * 2 * b * h * d * (past + past + 1)
    return model, arrays, [n for n, _ in shapes], [list(s) for _, s in shapes], moved


def run_decode(name, spec, build, threads, repeat, work, rounds=3):
    """A decode step on both sides, alternating rounds as run_case does;
    every output (Y and the present caches) is compared."""
    model, arrays, names, dims, moved = spec
    tag = os.path.join(work, "".join(c if c.isalnum() else "_" for c in name))
    onnx.save(model, tag + ".onnx")
    n_out = len(model.graph.output)
    ours_cmd = [os.path.join(build, "bin", "attention-run"), tag + ".onnx", "--threads",
                str(threads), "--repeat", str(repeat)] + OURS_EXTRA_ARGS
    inputs = []
    for i, (n, a) in enumerate(zip(names, arrays)):
        np.save("%s.in%d.npy" % (tag, i), a)
        ours_cmd += ["--input", "%s=%s.in%d.npy" % (n, tag, i)]
        a.tofile("%s.ort%d.bin" % (tag, i))
        inputs.append({"name": n, "path": "%s.ort%d.bin" % (tag, i), "dims": dims[i],
                       "type": "float32"})
    for o in range(n_out):
        ours_cmd += ["--output", "%s.ours%d.npy" % (tag, o)]
    with open(tag + ".json", "w") as f:
        json.dump({"model": tag + ".onnx", "threads": threads, "repeat": repeat,
                   "inputs": inputs, "output": tag + ".ort.bin",
                   "outputs": ["%s.ortout%d.bin" % (tag, o) for o in range(n_out)]}, f)
    ours_ms, ort_ms = [], []
    for r in range(rounds):
        for side in ("ours", "ort") if r % 2 == 0 else ("ort", "ours"):
            if side == "ours":
                p = subprocess.run(ours_cmd, capture_output=True, text=True)
                if p.returncode:
                    raise RuntimeError("attention-run failed:\n" + p.stderr)
                ours_ms.append(parse_timing(p.stdout)["median_ms"])
            else:
                p = subprocess.run(["node", os.path.join(HERE, "ort_bench.mjs"), tag + ".json"],
                                   capture_output=True, text=True, cwd=HERE)
                if p.returncode:
                    raise RuntimeError("onnxruntime failed:\n" + p.stderr)
                ort_ms.append(parse_timing(p.stdout)["median_ms"])
    err = max(float(np.abs(np.load("%s.ours%d.npy" % (tag, o)).reshape(-1) -
                           np.fromfile("%s.ortout%d.bin" % (tag, o), dtype=np.float32)).max())
              for o in range(n_out))
    ours, ort = float(np.median(ours_ms)), float(np.median(ort_ms))
    return {"case": name, "ours_ms": ours, "ort_ms": ort, "speedup": ort / ours,
            "ours_gbs": moved / ours / 1e6, "ort_gbs": moved / ort / 1e6, "max_abs_diff": err}


def run_case(name, spec, build, threads, repeat, work, rounds=1):
    """Ours and ORT, `rounds` times in alternation; each side reports the
    median of its per-round medians, so that a load change on the host hits
    both sides alike instead of one. The side that goes first alternates
    too (ours first in even rounds, ORT first in odd ones): on the shared
    2-core host the first of two back-to-back runs was sometimes the faster
    one, which would otherwise favour one side every round."""
    mlir, model, arrays, ort_names, ort_dims, flops = spec
    tag = os.path.join(work, "".join(c if c.isalnum() else "_" for c in name))
    onnx.save(model, tag + ".onnx")
    if mlir is None:
        # Ours compiles the very ONNX file ORT runs (import + raising).
        source, names = tag + ".onnx", ort_names
    else:
        with open(tag + ".mlir", "w") as f:
            f.write(mlir)
        source, names = tag + ".mlir", None
    inputs = []
    for i, (n, a) in enumerate(zip(ort_names, arrays)):
        a.tofile("%s.ort%d.bin" % (tag, i))
        # One dims list for every input, or one per input.
        dims = ort_dims[i] if isinstance(ort_dims[0], list) else ort_dims
        kind = {np.dtype(np.bool_): "bool", np.dtype(np.int64): "int64"}.get(a.dtype, "float32")
        inputs.append({"name": n, "path": "%s.ort%d.bin" % (tag, i), "dims": dims,
                       "type": kind})
    spec_json = {"model": tag + ".onnx", "threads": threads, "repeat": repeat,
                 "inputs": inputs, "output": tag + ".ort.bin"}
    with open(tag + ".json", "w") as f:
        json.dump(spec_json, f)
    ours_ms, ort_ms, compile_s = [], [], None
    ours = None

    def run_our_side():
        nonlocal ours, compile_s
        ours, _ = run_ours(build, source, arrays, names, threads, repeat, tag)
        ours_ms.append(parse_timing(ours.stdout)["median_ms"])
        if compile_s is None:
            compile_s = parse_compile_s(ours.stderr)

    def run_ort_side():
        ort = subprocess.run(["node", os.path.join(HERE, "ort_bench.mjs"), tag + ".json"],
                             capture_output=True, text=True, cwd=HERE)
        if ort.returncode:
            raise RuntimeError("onnxruntime failed:\n" + ort.stderr)
        ort_ms.append(parse_timing(ort.stdout)["median_ms"])

    for r in range(rounds):
        for side in ((run_our_side, run_ort_side) if r % 2 == 0
                     else (run_ort_side, run_our_side)):
            side()
    got = np.load(tag + ".ours.npy").reshape(-1)
    ref = np.fromfile(tag + ".ort.bin", dtype=np.float32)
    err = float(np.abs(got - ref).max())
    # An ONNX graph with attention (a Softmax or an Attention op) that does
    # not raise runs op by op: say so in the row.
    has_attention = any(n.op_type in ("Softmax", "Attention", "MultiHeadAttention")
                        for n in model.graph.node)
    if mlir is None and has_attention and "remark: raised" not in ours.stderr:
        name += " (not raised: op by op)"
    return {"case": name, "flops": flops, "ours_ms": float(np.median(ours_ms)),
            "ort_ms": float(np.median(ort_ms)), "rounds": rounds,
            "max_abs_diff": err, "compile_s": compile_s}


def plot(rows, peak, threads, date, path):
    """Bars of GFLOP/s per case, ours and ORT, with the FMA peak; the legend
    below the axes, clear of the bars."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plot (apt-get install python3-matplotlib)")
        return
    fig, ax = plt.subplots(figsize=(10, 0.5 * len(rows) + 2.5))
    y = np.arange(len(rows))
    ax.barh(y - 0.2, [r["ours_gflops"] for r in rows], 0.4, label="attention-compiler")
    ax.barh(y + 0.2, [r["ort_gflops"] for r in rows], 0.4, label="ONNX Runtime 1.30")
    ax.axvline(peak, color="k", linestyle="--", label="FMA peak (%.0f)" % peak)
    ax.set_yticks(y)
    ax.set_yticklabels([r["case"] for r in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("GFLOP/s (%d threads, fp32)" % threads)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=3)
    ax.set_title("Attention, %s" % date)
    fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--sweep", action="store_true",
                    help="also the d_model x B x T x causal sweep (slow)")
    # By default both sides of a sweep row run the same ONNX file, whose
    # weights are initializers: ORT prepacks them when the session is
    # created, ours packs them at compile time. The attn module takes them
    # as arguments instead, which makes our side pack (or copy) all four
    # on every call (at d_model = 1600, 41 MB per call); that form is a
    # different computation from ORT's, kept as an option.
    ap.add_argument("--sweep-weights-as-arguments", action="store_true",
                    help="with --sweep: run our side of the sweep rows as the attn module "
                         "with the weights as arguments (packed or copied on every call) "
                         "instead of the ONNX file ORT runs (weights constant on both sides)")
    ap.add_argument("--sweep-rounds", type=int, default=3,
                    help="rounds alternating the two sides per sweep row (1 is three times "
                         "faster and more exposed to load changes on a shared host)")
    ap.add_argument("--tag", default="",
                    help="suffix of the results files (bench-<date>-<tag>.md), e.g. the "
                         "machine, so that runs on several hosts on one date do not overwrite "
                         "each other")
    ap.add_argument("--gpt-blocks", type=int, default=12,
                    help="transformer blocks of the whole-model row (12: GPT-2 small)")
    ap.add_argument("--target-cpu", default="host",
                    help="compile ours for this CPU (attention-run --target-cpu, e.g. x86-64-v3: "
                         "AVX2 code on an AVX-512 host), against that ISA's peak; ORT keeps its "
                         "kernels for this host")
    args = ap.parse_args()
    global BF16_DOT
    vector_isa, BF16_DOT = target_isa(args.target_cpu)
    if args.target_cpu != "host":
        OURS_EXTRA_ARGS.append("--target-cpu=" + args.target_cpu)
    if args.sweep_rounds < 1:
        ap.error("--sweep-rounds must be at least 1")
    if args.sweep_weights_as_arguments and not args.sweep:
        ap.error("--sweep-weights-as-arguments needs --sweep")
    rng = np.random.default_rng(2024)

    peak_bin = os.path.join(tempfile.gettempdir(), "attn_fma_peak")
    subprocess.run(["clang++-22", "-O2", "-pthread", os.path.join(HERE, "peak", "fma_peak.cpp"),
                    "-o", peak_bin], check=True)
    def measure_peak():
        line = subprocess.run([peak_bin, str(args.threads), vector_isa], capture_output=True,
                              text=True, check=True).stdout.strip()
        return float(line.split()[0].split("=")[1]), line.split()[2]
    # On a shared host a single measurement can land in a slow phase (half
    # the rate has been seen): measured before and after the cases, the
    # higher of the two is the peak.
    peak, isa = measure_peak()

    cases = [("causal core B=1 H=12 T=1024 d=64", core_case(1, 12, 1024, 64, True, rng)),
             ("core B=1 H=12 T=1024 d=64", core_case(1, 12, 1024, 64, False, rng)),
             ("seed MHA GPT-2 small B=1 T=1024 causal", mha_case(1, 1024, 768, 12, True, rng)),
             ("seed MHA GPT-2 small B=1 T=1024, torch.onnx.export",
              torch_mha_case(1, 1024, 768, 12, rng)),
             ("seed MHA's 4 projections, chained MatMuls B=1 T=1024 d=768",
              projections_case(1, 1024, 768, rng)),
             ("core + padding mask (bool [B,1,T,T]) B=1 H=12 T=1024 d=64",
              masked_core_case(1, 12, 1024, 64, "padding", rng)),
             ("core + additive bias ([1,H,T,T]) B=1 H=12 T=1024 d=64",
              masked_core_case(1, 12, 1024, 64, "bias", rng)),
             ("causal core + softcap 50 B=1 H=12 T=1024 d=64",
              core_case(1, 12, 1024, 64, True, rng, softcap=50.0)),
             ("Llama GQA attention d=2048 H=32 Hkv=8 B=1 T=1024, torch.onnx.export",
              llama_gqa_case(1, 1024, 2048, 32, 8, rng)),
             ("book GPTModel, %d blocks at GPT-2 small sizes B=1 T=1024, torch.onnx.export"
              % args.gpt_blocks, book_gpt_case(1, 1024, args.gpt_blocks, rng))]
    headline = len(cases)
    if args.sweep:
        for dm, h in ((768, 12), (1600, 25)):
            for b in (1, 4):
                for tt in (128, 512, 1024, 2048):
                    for causal in (True, False):
                        cases.append(("MHA d=%d H=%d B=%d T=%d %s" % (
                            dm, h, b, tt, "causal" if causal else "full"),
                            mha_case(b, tt, dm, h, causal, rng,
                                     ours_from_onnx=not args.sweep_weights_as_arguments)))
    rows = []
    with tempfile.TemporaryDirectory() as work:
        for i, (name, spec) in enumerate(cases):
            # The headline cases alternate three rounds.
            r = run_case(name, spec, args.build, args.threads, args.repeat, work,
                         rounds=3 if i < headline else args.sweep_rounds)
            r["ours_gflops"] = r["flops"] / r["ours_ms"] / 1e6
            r["ort_gflops"] = r["flops"] / r["ort_ms"] / 1e6
            r["speedup"] = r["ort_ms"] / r["ours_ms"]
            rows.append(r)
            print("%-44s ours %8.2f ms %6.1f GFLOP/s (%4.1f%% of peak) | ORT %8.2f ms | %5.2fx | "
                  "max|diff| %.1e | compile %.2f s"
                  % (name, r["ours_ms"], r["ours_gflops"], 100 * r["ours_gflops"] / peak,
                     r["ort_ms"], r["speedup"], r["max_abs_diff"], r["compile_s"]), flush=True)
        decode_rows = []
        for b, h, past in ((1, 12, 127), (1, 12, 1023), (1, 12, 2047), (4, 12, 1023),
                           (1, 25, 1023)):
            name = "decode B=%d H=%d past=%d d=64" % (b, h, past)
            r = run_decode(name, decode_case(b, h, past, 64, rng), args.build, args.threads,
                           max(args.repeat, 100), work)
            decode_rows.append(r)
            print("%-44s ours %8.3f ms %6.1f GB/s | ORT %8.3f ms | %5.2fx | max|diff| %.1e"
                  % (name, r["ours_ms"], r["ours_gbs"], r["ort_ms"], r["speedup"],
                     r["max_abs_diff"]), flush=True)
        mem = memory_case(args.build, args.threads, work)
        bf = bf16_case(args.build, args.threads, args.repeat, work)
    peak_before = peak
    peak_after = measure_peak()[0]
    peak = max(peak_before, peak_after)
    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    peak_line = ("peak_gflops=%.1f threads=%d %s, %s (the higher of %.1f before and %.1f "
                 "after the cases)" % (peak, args.threads, isa, cpu, peak_before, peak_after))

    date = datetime.date.today().isoformat()
    from_onnx = ("the torch.onnx.export rows and the sweep rows, which import and raise"
                 if args.sweep and not args.sweep_weights_as_arguments
                 else "the torch.onnx.export rows, which import and raise")
    sides = ("ORT runs each case's ONNX graph with the weights as initializers; ours the attn "
             "module with the weights as arguments, except %s the very file ORT runs (weights "
             "as constants)" % from_onnx)
    if args.target_cpu != "host":
        sides += ("; ours compiled for --target-cpu=%s (%s code; %% of peak against this "
                  "host's %s FMA peak below), ORT with its own kernels for this host"
                  % (args.target_cpu, vector_isa, vector_isa))
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    sweep_rounds = ""
    if args.sweep:
        sweep_rounds = ("; the sweep rows: %d rounds alternating the two sides, the median of "
                        "the medians" % args.sweep_rounds if args.sweep_rounds > 1
                        else "; the sweep rows: one run each")
    md = ["Measured %s, %d threads, fp32, medians of %d runs after a warm-up (the first %d "
          "cases and the bf16 comparison: three rounds alternating the two sides, the median "
          "of the three medians%s); %s; machine FMA peak "
          "%s (bench/peak/fma_peak.cpp). ONNX Runtime 1.30.0 CPU (onnxruntime-node), "
          "graph optimizations on." % (date, args.threads, args.repeat, headline,
                                        sweep_rounds, sides, peak_line),
          "",
          "| case | GFLOP | ours ms | ours GFLOP/s | % of peak | ORT ms | ORT GFLOP/s | speed-up | max abs diff | ours compile s |",
          "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        md.append("| %s | %.2f | %.2f | %.1f | %.1f%% | %.2f | %.1f | %.2fx | %.1e | %.2f |" % (
            r["case"], r["flops"] / 1e9, r["ours_ms"], r["ours_gflops"],
            100 * r["ours_gflops"] / peak, r["ort_ms"], r["ort_gflops"], r["speedup"],
            r["max_abs_diff"], r["compile_s"]))
    md += ["",
           "KV-cache decode steps (one new token; ONNX Attention with past_key/past_value and "
           "the present outputs, the same file on both sides; medians of %d runs, three "
           "alternating rounds; GB/s: the past read plus the present written, K and V; max abs "
           "diff over all three outputs):" % max(args.repeat, 100),
           "",
           "| case | ours ms | ours GB/s | ORT ms | ORT GB/s | speed-up | max abs diff |",
           "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in decode_rows:
        md.append("| %s | %.3f | %.1f | %.3f | %.1f | %.2fx | %.1e |" % (
            r["case"], r["ours_ms"], r["ours_gbs"], r["ort_ms"], r["ort_gbs"], r["speedup"],
            r["max_abs_diff"]))
    md += ["",
           "Long sequence, ours only: causal B=1 H=12 T=8192 d=64 in %.0f ms (%.1f GFLOP/s, "
           "useful causal FLOPs, median of 3), peak RSS of a single run %.0f MiB, %.1f MiB "
           "beyond the growth of inputs and output from T=512 (bound: 64 MiB)." % (mem["ms"], mem["gflops"], mem["rss_mib"],
                                                      mem["extra_mib"]),
           "",
           "bf16, ours only: causal core B=1 H=12 T=1024 d=64 in %.2f ms (%.1f GFLOP/s, %s), "
           "%.2fx our f32 core on the same inputs in the same run (%.2f ms); max abs error "
           "%.1e against a float64 reference of the bf16 inputs (tolerance 2e-2)."
           % (bf["bf16_ms"], bf["bf16_gflops"], bf["path"], bf["speedup"], bf["f32_ms"],
              bf["err"])]
    stem = "bench-%s%s" % (date, "-" + args.tag if args.tag else "")
    md_path = os.path.join(HERE, "results", stem + ".md")
    with open(md_path, "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))
    plot(rows, peak, args.threads, date, os.path.join(HERE, "results", stem + ".png"))
    bad = [r for r in rows + decode_rows if not r["max_abs_diff"] <= 1e-3]
    if bad:
        print("outputs disagree with ONNX Runtime: " + ", ".join(r["case"] for r in bad))
        sys.exit(1)


if __name__ == "__main__":
    main()
