"""Writes ONNX models of attention as real exporters and real model code write
it, with inputs and expected outputs, for the importer's pattern tests.

usage: pattern_models.py OUTDIR [NAME...]

With NAME arguments only those cases are written; without, all of them.

For every case NAME the script writes, in OUTDIR:

  NAME.onnx                   the model
  NAME_<INPUT>.npy            one array per graph input, INPUT being the graph
                              input's name
  NAME.inputs                 one line per graph input, in graph-input order:
                                  INPUT=<absolute path of NAME_<INPUT>.npy>
                              (the form attention-run's --input takes)
  NAME_expected_<OUTPUT>.npy  the expected value of every graph output
  NAME_expected.npy           the expected value of the first graph output
                              (the only one, except for ms_mha_past)
  NAME.outputs                one graph output name per line, in graph-output
                              order

and prints `NAME: inputs=... output shape=...`, then indented lines with the
op types of the model and the result of checking it.

Expected outputs: for the torch-exported cases, the torch module's forward
under torch.no_grad() on the saved inputs; for the hand-built graphs, an
independent numpy float64 reference cast to float32. Every float array is
float32 and every random value is seeded per case, so a case's files do not
depend on which other cases are written.

Each model is checked with onnx.checker. Models in the standard domain are
then run, on the saved inputs, with onnx.reference.ReferenceEvaluator where
this onnx has it, otherwise with the small numpy evaluator at the end of this
file; the result must match the expected output within 1e-5. The
com.microsoft cases are not run: their only reference is the numpy one below.

Dynamic models are traced at other sizes than the saved inputs use, so a
model that baked a traced size in as a constant fails that check.
"""

import io
import math
import os
import sys
import zlib
from collections import OrderedDict

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import torch
import torch.nn as nn

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "scripts"))
import seed_modules  # noqa: E402

OPSET = 17
TOL = 1e-5
F32 = np.float32
INT64_MAX = np.iinfo(np.int64).max

CASES = OrderedDict()


def case(name):
    """Registers a case builder. A builder takes a numpy Generator (torch is
    seeded too) and returns (model, inputs, outputs, kind): inputs and outputs
    are lists of (name, array) in graph order, kind is "torch" or "hand"."""
    def register(fn):
        CASES[name] = fn
        return fn
    return register


def seed_for(name):
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def randn(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(F32)


# ----------------------------------------------------------------------------
# torch export

def export(module, example, run, input_names, output_names, dynamic_axes=None):
    """Exports `module` traced at `example` (a tuple of tensors) and returns
    (model, inputs, outputs) with the expected outputs computed by the module
    on `run`, the inputs that are saved (for static models, pass the same
    tuple twice)."""
    module.eval()
    buf = io.BytesIO()
    with torch.no_grad():
        torch.onnx.export(module, example, buf, opset_version=OPSET,
                          do_constant_folding=True, input_names=input_names,
                          output_names=output_names, dynamic_axes=dynamic_axes)
        got = module(*run)
    model = onnx.load_from_string(buf.getvalue())
    names = [i.name for i in model.graph.input]
    if names != list(input_names):
        raise RuntimeError("exported graph inputs %s, expected %s" % (names, input_names))
    got = got if isinstance(got, (tuple, list)) else (got,)
    inputs = [(n, t.numpy()) for n, t in zip(input_names, run)]
    outputs = [(n, t.numpy().astype(F32)) for n, t in zip(output_names, got)]
    return model, inputs, outputs


def randomise(module, std):
    """Refills every parameter with N(0, std): GPT-2's init (std 0.02 weights,
    zero biases) would make every attention map nearly uniform and every bias
    add invisible, which tests nothing."""
    with torch.no_grad():
        for p in module.parameters():
            p.normal_(0.0, std)


def dyn(names, axes=None):
    """dynamic_axes giving every named tensor a dynamic batch (dim 0) and
    sequence (dim `axes[name]`, default 1)."""
    axes = axes or {}
    return {n: {0: "batch", axes.get(n, 1): "seq"} for n in names}


# ----------------------------------------------------------------------------
# Hugging Face GPT-2 attention (transformers 4.3x, eager path)
#
# The pattern: one Conv1D (addmm) producing fused QKV, Split into three,
# view+permute into heads, the scale as a Div by a 0-d constant, the causal
# mask as a slice of a bool [1,1,P,P] tril buffer whose bounds come from the
# runtime sequence length, Where(mask, scores, finfo.min) (a *replacing*
# mask), then an *additive* padding mask given as an input, Softmax, and the
# heads merged back before a second Conv1D.

class Conv1D(nn.Module):
    """transformers.pytorch_utils.Conv1D: a linear layer with the weight
    stored transposed, [nx, nf]."""

    def __init__(self, nf, nx):
        super().__init__()
        self.nf = nf
        self.weight = nn.Parameter(torch.empty(nx, nf))
        self.bias = nn.Parameter(torch.zeros(nf))
        nn.init.normal_(self.weight, std=0.02)

    def forward(self, x):
        size_out = x.size()[:-1] + (self.nf,)
        x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)
        x = x.view(size_out)
        return x


class GPT2Attention(nn.Module):
    """GPT2Attention for self-attention without a KV cache, head mask or
    returned weights; forward returns attn_output only."""

    def __init__(self, hidden_size, num_heads, max_positions, dropout=0.0):
        super().__init__()
        self.register_buffer(
            "bias",
            torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(
                1, 1, max_positions, max_positions),
            persistent=False)
        self.register_buffer("masked_bias", torch.tensor(-1e4), persistent=False)
        self.embed_dim = hidden_size
        self.num_heads = num_heads
        self.head_dim = self.embed_dim // self.num_heads
        self.split_size = self.embed_dim
        self.scale_attn_weights = True
        self.c_attn = Conv1D(3 * self.embed_dim, self.embed_dim)
        self.c_proj = Conv1D(self.embed_dim, self.embed_dim)
        self.attn_dropout = nn.Dropout(dropout)
        self.resid_dropout = nn.Dropout(dropout)

    def _attn(self, query, key, value, attention_mask=None):
        attn_weights = torch.matmul(query, key.transpose(-1, -2))
        if self.scale_attn_weights:
            attn_weights = attn_weights / torch.full(
                [], value.size(-1) ** 0.5, dtype=attn_weights.dtype,
                device=attn_weights.device)
        query_length, key_length = query.size(-2), key.size(-2)
        causal_mask = self.bias[:, :, key_length - query_length: key_length, :key_length]
        mask_value = torch.finfo(attn_weights.dtype).min
        mask_value = torch.full([], mask_value, dtype=attn_weights.dtype,
                                device=attn_weights.device)
        attn_weights = torch.where(causal_mask, attn_weights.to(attn_weights.dtype), mask_value)
        if attention_mask is not None:
            attn_weights = attn_weights + attention_mask
        attn_weights = nn.functional.softmax(attn_weights, dim=-1)
        attn_weights = attn_weights.type(value.dtype)
        attn_weights = self.attn_dropout(attn_weights)
        attn_output = torch.matmul(attn_weights, value)
        return attn_output, attn_weights

    def _split_heads(self, tensor, num_heads, attn_head_size):
        new_shape = tensor.size()[:-1] + (num_heads, attn_head_size)
        tensor = tensor.view(new_shape)
        return tensor.permute(0, 2, 1, 3)  # (batch, head, seq_length, head_features)

    def _merge_heads(self, tensor, num_heads, attn_head_size):
        tensor = tensor.permute(0, 2, 1, 3).contiguous()
        new_shape = tensor.size()[:-2] + (num_heads * attn_head_size,)
        return tensor.view(new_shape)

    def forward(self, hidden_states, attention_mask=None):
        query, key, value = self.c_attn(hidden_states).split(self.split_size, dim=2)
        query = self._split_heads(query, self.num_heads, self.head_dim)
        key = self._split_heads(key, self.num_heads, self.head_dim)
        value = self._split_heads(value, self.num_heads, self.head_dim)
        attn_output, _ = self._attn(query, key, value, attention_mask)
        attn_output = self._merge_heads(attn_output, self.num_heads, self.head_dim)
        attn_output = self.c_proj(attn_output)
        attn_output = self.resid_dropout(attn_output)
        return attn_output


def hf_additive_mask(padding):
    """[B, T] 1/0 padding mask -> the additive [B, 1, 1, T] float mask
    GPT2Model passes its attention layers: (1 - mask) * finfo.min."""
    m = padding[:, None, None, :].astype(F32)
    return ((1.0 - m) * np.finfo(F32).min).astype(F32)


def gpt2_case(rng, dynamic):
    B, T, D, H, P = 2, 7, 16, 4, 32
    module = GPT2Attention(D, H, P)
    randomise(module, 0.3)
    padding = np.ones((B, T), np.int64)
    padding[1, -1] = 0  # the last token of batch 1 is padding
    run = (torch.from_numpy(randn(rng, B, T, D)), torch.from_numpy(hf_additive_mask(padding)))
    names, out = ["hidden_states", "attention_mask"], ["attn_output"]
    if not dynamic:
        model, ins, outs = export(module, run, run, names, out)
    else:
        tb, tt = 3, 5  # traced at other sizes than the saved inputs
        tpad = np.ones((tb, tt), np.int64)
        tpad[0, -2:] = 0
        example = (torch.from_numpy(randn(rng, tb, tt, D)),
                   torch.from_numpy(hf_additive_mask(tpad)))
        axes = {"hidden_states": {0: "batch", 1: "seq"},
                "attention_mask": {0: "batch", 3: "seq"},
                "attn_output": {0: "batch", 1: "seq"}}
        model, ins, outs = export(module, example, run, names, out, axes)
    return model, ins, outs, "torch"


@case("gpt2_hf")
def gpt2_hf(rng):
    """GPT-2 attention with dynamic batch and sequence: the causal-buffer
    Slice bounds and the head Reshapes are computed from Shape at runtime."""
    return gpt2_case(rng, dynamic=True)


@case("gpt2_hf_static")
def gpt2_hf_static(rng):
    """The same module with static shapes, where constant folding turns the
    buffer slice into a constant [1,1,T,T] bool mask."""
    return gpt2_case(rng, dynamic=False)


# ----------------------------------------------------------------------------
# Hugging Face BERT self-attention (transformers 4.x)
#
# The pattern: three separate biased projections, the extended attention mask
# built inside the graph from an int64 [B, T] padding mask (Unsqueeze, Cast,
# Sub from 1, Mul by -10000) and added to scores already divided by
# sqrt(head_dim), Softmax, eval-mode dropout (gone), context merged back with
# permute + reshape. No output projection (that is BertSelfOutput).

class BertSelfAttention(nn.Module):
    def __init__(self, hidden_size, num_attention_heads, dropout=0.0):
        super().__init__()
        self.num_attention_heads = num_attention_heads
        self.attention_head_size = int(hidden_size / num_attention_heads)
        self.all_head_size = self.num_attention_heads * self.attention_head_size
        self.query = nn.Linear(hidden_size, self.all_head_size)
        self.key = nn.Linear(hidden_size, self.all_head_size)
        self.value = nn.Linear(hidden_size, self.all_head_size)
        self.dropout = nn.Dropout(dropout)

    def transpose_for_scores(self, x):
        new_x_shape = x.size()[:-1] + (self.num_attention_heads, self.attention_head_size)
        x = x.view(new_x_shape)
        return x.permute(0, 2, 1, 3)

    def forward(self, hidden_states, attention_mask=None):
        mixed_query_layer = self.query(hidden_states)
        key_layer = self.transpose_for_scores(self.key(hidden_states))
        value_layer = self.transpose_for_scores(self.value(hidden_states))
        query_layer = self.transpose_for_scores(mixed_query_layer)
        attention_scores = torch.matmul(query_layer, key_layer.transpose(-1, -2))
        attention_scores = attention_scores / math.sqrt(self.attention_head_size)
        if attention_mask is not None:
            attention_scores = attention_scores + attention_mask
        attention_probs = nn.functional.softmax(attention_scores, dim=-1)
        attention_probs = self.dropout(attention_probs)
        context_layer = torch.matmul(attention_probs, value_layer)
        context_layer = context_layer.permute(0, 2, 1, 3).contiguous()
        new_context_layer_shape = context_layer.size()[:-2] + (self.all_head_size,)
        context_layer = context_layer.view(new_context_layer_shape)
        return context_layer


class BertSelfAttentionWithMask(nn.Module):
    """BertSelfAttention behind the extended-mask computation of
    ModuleUtilsMixin.get_extended_attention_mask (the classic -10000 form),
    so that the mask arithmetic is part of the exported graph."""

    def __init__(self, hidden_size, num_attention_heads):
        super().__init__()
        self.attention = BertSelfAttention(hidden_size, num_attention_heads)

    def forward(self, hidden_states, attention_mask):
        extended_attention_mask = attention_mask[:, None, None, :]
        extended_attention_mask = extended_attention_mask.to(dtype=hidden_states.dtype)
        extended_attention_mask = (1.0 - extended_attention_mask) * -10000.0
        return self.attention(hidden_states, extended_attention_mask)


@case("bert_self_attention")
def bert_self_attention(rng):
    B, T, D, H = 2, 7, 16, 4
    module = BertSelfAttentionWithMask(D, H)
    mask = np.ones((B, T), np.int64)
    mask[1, -2:] = 0  # batch 1 has two padding tokens
    run = (torch.from_numpy(randn(rng, B, T, D)), torch.from_numpy(mask))
    tmask = np.ones((3, 5), np.int64)
    tmask[2, -1] = 0
    example = (torch.from_numpy(randn(rng, 3, 5, D)), torch.from_numpy(tmask))
    names, out = ["hidden_states", "attention_mask"], ["context_layer"]
    model, ins, outs = export(module, example, run, names, out, dyn(names + out))
    return model, ins, outs, "torch"


# ----------------------------------------------------------------------------
# torch 2.x scaled_dot_product_attention(q, k, v, is_causal=True), as the
# TorchScript exporter (symbolic_opset14.scaled_dot_product_attention) writes
# it. torch 1.13 has no SDPA, so the graph is built by hand.
#
# The pattern: the scale computed in the graph from the query's last dim
# (1 / Sqrt(Cast(Shape(Q)[-1]))); Sqrt(scale) multiplied into both Q and
# K^T before the MatMul; the causal mask built at runtime from the query and
# key lengths (ones -> Trilu(upper=0) -> Equal 0 -> Where(-inf, 0)) and added.

def np_causal_sdpa(q, k, v, scale=None):
    """float64 softmax(q k^T * scale + causal) v, causal top-left aligned."""
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = q @ np.swapaxes(k, -1, -2) * scale
    t, l = s.shape[-2:]
    s = np.where(np.tril(np.ones((t, l), bool)), s, -np.inf)
    return (softmax64(s) @ v).astype(F32)


def softmax64(s):
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    return e / e.sum(axis=-1, keepdims=True)


def const(name, value):
    return helper.make_node("Constant", [], [name], name=name,
                            value=numpy_helper.from_array(np.asarray(value), name))


def sdpa_inputs(rng):
    B, H, T, d = 2, 2, 6, 8
    shape = [B, H, "seq", d]
    vis = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape) for n in "QKV"]
    out = [helper.make_tensor_value_info("Y", TensorProto.FLOAT, shape)]
    data = [(n, randn(rng, B, H, T, d)) for n in "QKV"]
    return vis, out, data


def sdpa_tail(mask):
    """K^T, the Sqrt(scale) products, MatMul, + mask, Softmax, MatMul."""
    return [
        helper.make_node("Transpose", ["K"], ["kt"], perm=[0, 1, 3, 2], name="k_t"),
        helper.make_node("Sqrt", ["scale"], ["sq_scale_q"], name="sqrt_scale_q"),
        helper.make_node("Mul", ["Q", "sq_scale_q"], ["q_scaled"], name="q_scaled"),
        helper.make_node("Sqrt", ["scale"], ["sq_scale_k"], name="sqrt_scale_k"),
        helper.make_node("Mul", ["kt", "sq_scale_k"], ["kt_scaled"], name="kt_scaled"),
        helper.make_node("MatMul", ["q_scaled", "kt_scaled"], ["qk"], name="qk"),
        helper.make_node("Add", ["qk", mask], ["qk_masked"], name="qk_masked"),
        helper.make_node("Softmax", ["qk_masked"], ["probs"], axis=-1, name="softmax"),
        helper.make_node("MatMul", ["probs", "V"], ["Y"], name="pv"),
    ]


def mask_tail(ones):
    """Trilu(upper=0) -> Equal 0 -> Where(-inf, 0), as the exporter writes the
    float causal mask."""
    return [
        helper.make_node("Trilu", [ones], ["tril"], upper=0, name="tril"),
        const("zero", np.array([0.0], F32)),
        const("neg_inf", np.array([-np.inf], F32)),
        helper.make_node("Equal", ["tril", "zero"], ["above"], name="above"),
        helper.make_node("Where", ["above", "neg_inf", "zero"], ["causal"], name="causal"),
    ]


def hand_model(name, nodes, inputs, outputs, domains=()):
    graph = helper.make_graph(nodes, name, inputs, outputs)
    opsets = [helper.make_opsetid("", OPSET)] + [helper.make_opsetid(d, v) for d, v in domains]
    return helper.make_model(graph, opset_imports=opsets, producer_name="pattern_models")


@case("sdpa_export")
def sdpa_export(rng):
    """Node for node what _attention_scale and _causal_attention_mask emit:
    the lengths are Slices of Shape, the ones tensor an Expand of [1.0]."""
    vis, out, data = sdpa_inputs(rng)
    nodes = [
        # scale = 1 / sqrt(Q.size(-1))
        helper.make_node("Shape", ["Q"], ["q_shape"], name="q_shape"),
        const("idx_m1", np.array([-1], np.int64)),
        const("idx_max", np.array([INT64_MAX], np.int64)),
        helper.make_node("Slice", ["q_shape", "idx_m1", "idx_max"], ["q_last"], name="q_last"),
        helper.make_node("Cast", ["q_last"], ["emb"], to=TensorProto.FLOAT, name="emb"),
        const("one", np.array([1.0], F32)),
        helper.make_node("Sqrt", ["emb"], ["sqrt_emb"], name="sqrt_emb"),
        helper.make_node("Div", ["one", "sqrt_emb"], ["scale"], name="scale"),
        # ones(L, S), L = Q.size(-2), S = K.size(-2)
        helper.make_node("Shape", ["K"], ["k_shape"], name="k_shape"),
        const("idx_m2", np.array([-2], np.int64)),
        helper.make_node("Slice", ["q_shape", "idx_m2", "idx_m1"], ["tgt_len"], name="tgt_len"),
        helper.make_node("Slice", ["k_shape", "idx_m2", "idx_m1"], ["src_len"], name="src_len"),
        helper.make_node("Concat", ["tgt_len", "src_len"], ["mask_size"], axis=0, name="mask_size"),
        const("one_mask", np.array([1.0], F32)),
        helper.make_node("Expand", ["one_mask", "mask_size"], ["ones"], name="ones"),
    ] + mask_tail("ones") + sdpa_tail("causal")
    model = hand_model("sdpa_export", nodes, vis, out)
    q, k, v = (a for _, a in data)
    return model, data, [("Y", np_causal_sdpa(q, k, v))], "hand"


@case("sdpa_export_gather")
def sdpa_export_gather(rng):
    """The same computation with the other common spelling of the shape
    arithmetic: scalar Gathers of Shape (with Unsqueeze + Concat for the mask
    size) and ConstantOfShape for the ones tensor."""
    vis, out, data = sdpa_inputs(rng)
    nodes = [
        helper.make_node("Shape", ["Q"], ["q_shape"], name="q_shape"),
        const("idx_last", np.array(-1, np.int64)),
        helper.make_node("Gather", ["q_shape", "idx_last"], ["q_last"], axis=0, name="q_last"),
        helper.make_node("Cast", ["q_last"], ["emb"], to=TensorProto.FLOAT, name="emb"),
        const("one", np.array(1.0, F32)),
        helper.make_node("Sqrt", ["emb"], ["sqrt_emb"], name="sqrt_emb"),
        helper.make_node("Div", ["one", "sqrt_emb"], ["scale"], name="scale"),
        helper.make_node("Shape", ["K"], ["k_shape"], name="k_shape"),
        const("idx_seq", np.array(2, np.int64)),
        helper.make_node("Gather", ["q_shape", "idx_seq"], ["tgt_len"], axis=0, name="tgt_len"),
        helper.make_node("Gather", ["k_shape", "idx_seq"], ["src_len"], axis=0, name="src_len"),
        const("axis0", np.array([0], np.int64)),
        helper.make_node("Unsqueeze", ["tgt_len", "axis0"], ["tgt_len1"], name="tgt_len1"),
        helper.make_node("Unsqueeze", ["src_len", "axis0"], ["src_len1"], name="src_len1"),
        helper.make_node("Concat", ["tgt_len1", "src_len1"], ["mask_size"], axis=0, name="mask_size"),
        helper.make_node("ConstantOfShape", ["mask_size"], ["ones"], name="ones",
                         value=numpy_helper.from_array(np.array([1.0], F32), "value")),
    ] + mask_tail("ones") + sdpa_tail("causal")
    model = hand_model("sdpa_export_gather", nodes, vis, out)
    q, k, v = (a for _, a in data)
    return model, data, [("Y", np_causal_sdpa(q, k, v))], "hand"


@case("sdpa_identity")
def sdpa_identity(rng):
    """Full attention with Identity nodes in the chain, as hand-built graphs
    write it: MatMul -> Identity -> Div(sqrt d) -> Softmax -> Identity ->
    MatMul."""
    vis, out, data = sdpa_inputs(rng)
    nodes = [
        helper.make_node("Transpose", ["K"], ["kt"], perm=[0, 1, 3, 2], name="k_t"),
        helper.make_node("MatMul", ["Q", "kt"], ["qk"], name="qk"),
        helper.make_node("Identity", ["qk"], ["qk_id"], name="qk_id"),
        const("sqrt_d", np.array(math.sqrt(8.0), F32)),
        helper.make_node("Div", ["qk_id", "sqrt_d"], ["scaled"], name="scaled"),
        helper.make_node("Softmax", ["scaled"], ["probs"], axis=-1, name="softmax"),
        helper.make_node("Identity", ["probs"], ["probs_id"], name="probs_id"),
        helper.make_node("MatMul", ["probs_id", "V"], ["Y"], name="pv"),
    ]
    model = hand_model("sdpa_identity", nodes, vis, out)
    q, k, v = (a.astype(np.float64) for _, a in data)
    want = softmax64(q @ np.swapaxes(k, -1, -2) / math.sqrt(8.0)) @ v
    return model, data, [("Y", want.astype(F32))], "hand"


# ----------------------------------------------------------------------------
# The seed chapter's modules (scripts/seed_modules.py) and its first,
# post-softmax way of masking.

class PostSoftmaxMask(nn.Module):
    """The chapter's first causal mask: the softmax is taken unmasked, the
    weights above the diagonal are zeroed by a multiply with tril(ones), and
    the rows are renormalised by their sums. Mathematically the same as
    masking the scores with -inf before the softmax, but the graph has no
    mask before the Softmax: Mul, ReduceSum and Div after it."""

    def __init__(self, d_in, d_out):
        super().__init__()
        self.W_query = nn.Linear(d_in, d_out, bias=False)
        self.W_key = nn.Linear(d_in, d_out, bias=False)
        self.W_value = nn.Linear(d_in, d_out, bias=False)

    def forward(self, x):
        queries = self.W_query(x)
        keys = self.W_key(x)
        values = self.W_value(x)
        attn_scores = queries @ keys.T
        attn_weights = torch.softmax(attn_scores / keys.shape[-1] ** 0.5, dim=-1)
        context_length = attn_scores.shape[0]
        mask_simple = torch.tril(torch.ones(context_length, context_length))
        masked_simple = attn_weights * mask_simple
        row_sums = masked_simple.sum(dim=-1, keepdim=True)
        masked_simple_norm = masked_simple / row_sums
        return masked_simple_norm @ values


@case("post_softmax_mask")
def post_softmax_mask(rng):
    T, d_in, d_out = 6, 16, 8
    module = PostSoftmaxMask(d_in, d_out)
    run = (torch.from_numpy(randn(rng, T, d_in)),)
    model, ins, outs = export(module, run, run, ["x"], ["context_vec"])
    return model, ins, outs, "torch"


def seed_dynamic(module, rng, d_in, run_bt, trace_bt=(3, 8)):
    """Exports a seed module taking [B, T, d_in] with dynamic batch and seq,
    traced at trace_bt and saved at run_bt."""
    example = (torch.from_numpy(randn(rng, *trace_bt, d_in)),)
    run = (torch.from_numpy(randn(rng, *run_bt, d_in)),)
    names, out = ["x"], ["context_vec"]
    model, ins, outs = export(module, example, run, names, out, dyn(names + out))
    return model, ins, outs, "torch"


@case("seed_wrapper_dynamic")
def seed_wrapper_dynamic(rng):
    """MultiHeadAttentionWrapper: one CausalAttention per head, each with its
    own projections, triu-buffer slice and masked_fill(-inf), the head
    outputs concatenated on the last axis."""
    module = seed_modules.MultiHeadAttentionWrapper(
        d_in=16, d_out=8, context_length=8, dropout=0.0, num_heads=2)
    return seed_dynamic(module, rng, 16, (2, 7))


@case("seed_mha_dynamic")
def seed_mha_dynamic(rng):
    """MultiHeadAttention: fused heads by view + transpose, the mask buffer
    sliced to the runtime length (6 of a context of 8), the scale a Div by
    head_dim ** 0.5 after the masked_fill, then out_proj."""
    module = seed_modules.MultiHeadAttention(
        d_in=16, d_out=16, context_length=8, dropout=0.0, num_heads=4)
    return seed_dynamic(module, rng, 16, (2, 6))


class TransformerBlock(nn.Module):
    """A GPT-2 block around the seed's MultiHeadAttention (pre-norm): x +
    attn(ln1(x)), then + ff(ln2(.)), the feed-forward Linear, GELU, Linear.
    `gelu`: "tanh" (GPT-2's approximation: Tanh in the export) or "none"
    (the exact one: Erf)."""

    def __init__(self, d, heads, context, gelu):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.ln2 = nn.LayerNorm(d)
        self.att = seed_modules.MultiHeadAttention(
            d_in=d, d_out=d, context_length=context, dropout=0.0, num_heads=heads)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(approximate=gelu),
                                nn.Linear(4 * d, d))

    def forward(self, x):
        x = x + self.att(self.ln1(x))
        return x + self.ff(self.ln2(x))


def export_x_to_y(module, rng, trace_shape, run_shape):
    """Exports `module` (parameters randomised to N(0, 0.2)) from x to y
    with dynamic batch and sequence, traced at one shape and run at another."""
    randomise(module, 0.2)
    example = (torch.from_numpy(randn(rng, *trace_shape)),)
    run = (torch.from_numpy(randn(rng, *run_shape)),)
    model, ins, outs = export(module, example, run, ["x"], ["y"], dyn(["x", "y"]))
    return model, ins, outs, "torch"


@case("gpt2_block_dynamic")
def gpt2_block_dynamic(rng):
    """A whole pre-norm transformer block with dynamic batch and sequence:
    LayerNormalization (opset 17), the seed's causal MHA (raised), residual
    Adds, and the feed-forward with GELU's tanh form (Tanh, Pow)."""
    return export_x_to_y(TransformerBlock(32, 4, 16, "tanh"), rng, (3, 8, 32), (2, 11, 32))


@case("block_exact_gelu")
def block_exact_gelu(rng):
    """The same block with the exact GELU (Erf), static shapes."""
    module = TransformerBlock(32, 4, 16, "none")
    randomise(module, 0.2)
    run = (torch.from_numpy(randn(rng, 2, 9, 32)),)
    model, ins, outs = export(module, run, run, ["x"], ["y"])
    return model, ins, outs, "torch"


class BookLayerNorm(nn.Module):
    """The book's LayerNorm (chapter 4), written out: torch exports it as
    ReduceMean, Sub, Pow, Sqrt, Div rather than LayerNormalization."""

    def __init__(self, d):
        super().__init__()
        self.eps = 1e-5
        self.scale = nn.Parameter(torch.ones(d))
        self.shift = nn.Parameter(torch.zeros(d))

    def forward(self, x):
        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        return self.scale * (x - mean) / torch.sqrt(var + self.eps) + self.shift


class BookGELU(nn.Module):
    """The book's GELU: the tanh approximation written with torch.pow."""

    def forward(self, x):
        return 0.5 * x * (1 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                         (x + 0.044715 * torch.pow(x, 3))))


class BookBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        d = c["emb_dim"]
        self.att = seed_modules.MultiHeadAttention(
            d_in=d, d_out=d, context_length=c["context_length"], dropout=c["drop_rate"],
            num_heads=c["n_heads"], qkv_bias=c["qkv_bias"])
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), BookGELU(), nn.Linear(4 * d, d))
        self.norm1, self.norm2 = BookLayerNorm(d), BookLayerNorm(d)
        self.drop_shortcut = nn.Dropout(c["drop_rate"])

    def forward(self, x):
        x = x + self.drop_shortcut(self.att(self.norm1(x)))
        return x + self.drop_shortcut(self.ff(self.norm2(x)))


class BookGPT(nn.Module):
    """The book's GPTModel (chapter 4) around the seed's MultiHeadAttention:
    token and position embeddings (position ids from torch.arange of the
    sequence length: Range), dropout, the blocks, a final LayerNorm and the
    output head, from token ids to logits."""

    def __init__(self, c):
        super().__init__()
        self.tok_emb = nn.Embedding(c["vocab_size"], c["emb_dim"])
        self.pos_emb = nn.Embedding(c["context_length"], c["emb_dim"])
        self.drop_emb = nn.Dropout(c["drop_rate"])
        self.trf_blocks = nn.Sequential(*[BookBlock(c) for _ in range(c["n_layers"])])
        self.final_norm = BookLayerNorm(c["emb_dim"])
        self.out_head = nn.Linear(c["emb_dim"], c["vocab_size"], bias=False)

    def forward(self, in_idx):
        seq_len = in_idx.shape[1]
        x = self.tok_emb(in_idx) + self.pos_emb(torch.arange(seq_len, device=in_idx.device))
        x = self.trf_blocks(self.drop_emb(x))
        return self.out_head(self.final_norm(x))


@case("book_gpt_dynamic")
def book_gpt_dynamic(rng):
    """The book's whole GPT model (two blocks, a 16-token context) from
    token ids to logits, with dynamic batch and sequence axes: Gather of
    the embeddings, Range, ReduceMean, the raised attention of each block."""
    module = BookGPT(dict(vocab_size=50, context_length=16, emb_dim=32, n_heads=4,
                          n_layers=2, drop_rate=0.1, qkv_bias=False))
    randomise(module, 0.2)
    example = (torch.from_numpy(rng.integers(0, 50, (3, 8))),)
    run = (torch.from_numpy(rng.integers(0, 50, (2, 11))),)
    names, out = ["in_idx"], ["logits"]
    model, ins, outs = export(module, example, run, names, out, dyn(names + out))
    return model, ins, outs, "torch"


class TorchMhaKeyPadding(nn.Module):
    """torch.nn.MultiheadAttention (batch_first) with a key_padding_mask."""

    def __init__(self, embed_dim, num_heads):
        super().__init__()
        self.mha = nn.MultiheadAttention(embed_dim, num_heads, batch_first=True)

    def forward(self, x, key_padding_mask):
        return self.mha(x, x, x, key_padding_mask=key_padding_mask, need_weights=False)[0]


@case("torch_mha_key_padding")
def torch_mha_key_padding(rng):
    """nn.MultiheadAttention with key_padding_mask: the exporter expands the
    [B, 1, 1, Tk] mask to the heads with expand(-1, H, -1, -1), whose target
    shape it writes as Where(Equal(shape, -1), ones, shape) over constants
    (known integers while importing), and adds it as -inf to the scores."""
    module = TorchMhaKeyPadding(24, 3)
    x = torch.from_numpy(randn(rng, 2, 7, 24))
    pad = torch.zeros(2, 7, dtype=torch.bool)
    pad[1, 4:] = True
    model, ins, outs = export(module, (x, pad), (x, pad), ["x", "key_padding_mask"], ["y"])
    return model, ins, outs, "torch"


# ----------------------------------------------------------------------------
# Grouped-query and multi-query attention as model code writes it without a
# GQA op: Llama (Meta's reference model.py and Hugging Face's LlamaAttention)
# repeats each K/V head for its query heads with repeat_kv; multi-query
# models keep one K/V head that the MatMuls broadcast or that is expanded.

def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def repeat_kv(x, n):
    """transformers.models.llama.modeling_llama.repeat_kv."""
    b, hkv, t, d = x.shape
    if n == 1:
        return x
    return x[:, :, None, :, :].expand(b, hkv, n, t, d).reshape(b, hkv * n, t, d)


class LlamaAttention(nn.Module):
    """Llama attention without a KV cache: bias-free projections, rotary
    embeddings from positions arange(T) (rotate_half), repeat_kv of K and
    V, the scores divided by sqrt(d) plus Meta's causal mask
    torch.full((T, T), -inf).triu(1), a softmax and o_proj."""

    def __init__(self, d, heads, kv_heads, base=10000.0):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.q_proj = nn.Linear(d, heads * self.hd, bias=False)
        self.k_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.v_proj = nn.Linear(d, kv_heads * self.hd, bias=False)
        self.o_proj = nn.Linear(heads * self.hd, d, bias=False)
        inv_freq = 1.0 / (base ** (torch.arange(0, self.hd, 2).float() / self.hd))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q_proj(x).view(b, t, self.heads, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
        pos = torch.arange(t, dtype=torch.float32)
        freqs = pos[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos(), emb.sin()
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        n = self.heads // self.kv_heads
        k, v = repeat_kv(k, n), repeat_kv(v, n)
        w = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.hd)
        w = w + torch.full((t, t), float("-inf")).triu(1)
        w = torch.softmax(w, dim=-1)
        o = torch.matmul(w, v).transpose(1, 2).reshape(b, t, -1)
        return self.o_proj(o)


@case("llama_gqa_dynamic")
def llama_gqa_dynamic(rng):
    """8 query heads over 2 K/V heads (a 4:1 grouping, as Llama-3-8B's 32:8),
    dynamic batch and sequence: the repeat_kv expand target is computed
    from the sizes (Where(Equal(shape, -1), 1, shape)); attn-fold-repeated-kv
    hands attn.sdpa the 2-head K and V, and the triu(-inf) mask is causal."""
    return export_x_to_y(LlamaAttention(64, 8, 2), rng, (3, 5, 64), (2, 11, 64))


@case("llama_gqa_static")
def llama_gqa_static(rng):
    """The same layer exported with static shapes at batch 1 (as the
    benchmark's Llama row): the repeat_kv copy reads the batch at index 0
    too, and is still a repeat of the heads only."""
    module = LlamaAttention(64, 8, 2)
    randomise(module, 0.2)
    run = (torch.from_numpy(randn(rng, 1, 11, 64)),)
    model, ins, outs = export(module, run, run, ["x"], ["y"])
    return model, ins, outs, "torch"


class MultiQueryAttention(nn.Module):
    """Multi-query attention (one K/V head for all query heads, as PaLM and
    Falcon-7B): K and V are [B, 1, T, d], broadcast to the heads by the
    MatMuls themselves or (expand=True) expanded first; a bool causal mask
    from torch.ones(T, T).tril() hides with masked_fill."""

    def __init__(self, d, heads, expand):
        super().__init__()
        self.heads, self.hd, self.expand = heads, d // heads, expand
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, 2 * self.hd)
        self.o = nn.Linear(d, d)

    def forward(self, x):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.heads, self.hd).transpose(1, 2)
        k, v = self.kv(x).split(self.hd, dim=-1)
        k, v = k[:, None], v[:, None]
        if self.expand:
            k = k.expand(-1, self.heads, -1, -1)
            v = v.expand(-1, self.heads, -1, -1)
        w = torch.matmul(q, k.transpose(-1, -2)) * self.hd ** -0.5
        keep = torch.ones(t, t, dtype=torch.bool).tril()
        w = torch.softmax(w.masked_fill(~keep, float("-inf")), dim=-1)
        o = torch.matmul(w, v).transpose(1, 2).reshape(b, t, -1)
        return self.o(o)


def mqa_case(rng, expand):
    return export_x_to_y(MultiQueryAttention(32, 4, expand), rng, (3, 5, 32), (2, 9, 32))


@case("mqa_broadcast_dynamic")
def mqa_broadcast_dynamic(rng):
    """One K/V head that the MatMuls broadcast over 4 query heads: raised
    to attn.sdpa with Hkv = 1."""
    return mqa_case(rng, expand=False)


@case("mqa_expand_dynamic")
def mqa_expand_dynamic(rng):
    """One K/V head expanded to the 4 query heads (expand(-1, H, -1, -1)):
    attn-fold-repeated-kv takes the expand away."""
    return mqa_case(rng, expand=True)


@case("seed_mha_qkv_bias_dynamic")
def seed_mha_qkv_bias_dynamic(rng):
    """As seed_mha_dynamic with biased Q/K/V projections (MatMul + Add)."""
    module = seed_modules.MultiHeadAttention(
        d_in=16, d_out=16, context_length=8, dropout=0.0, num_heads=4, qkv_bias=True)
    return seed_dynamic(module, rng, 16, (2, 6))


@case("seed_causal_dynamic")
def seed_causal_dynamic(rng):
    """CausalAttention: single head, 3-D, keys.transpose(1, 2)."""
    module = seed_modules.CausalAttention(d_in=16, d_out=8, context_length=8, dropout=0.0)
    return seed_dynamic(module, rng, 16, (2, 7))


@case("seed_self_attention_v2")
def seed_self_attention_v2(rng):
    """SelfAttention_v2: unmasked 2-D attention, keys.T (a 2-D Transpose)."""
    module = seed_modules.SelfAttention_v2(d_in=16, d_out=8)
    run = (torch.from_numpy(randn(rng, 6, 16)),)
    model, ins, outs = export(module, run, run, ["x"], ["context_vec"])
    return model, ins, outs, "torch"


# ----------------------------------------------------------------------------
# com.microsoft.MultiHeadAttention (onnxruntime contrib op, domain version 1),
# as onnxruntime's transformer optimizer fuses attention into.
#
# Inputs by position: 0 query [B,S,D] (or packed QKV [B,S,N,3,h] with key and
# value absent), 1 key [B,L,D], 2 value [B,L,Dv], 3 bias [D+D+Dv], 4
# key_padding_mask int32 [B] (valid key lengths) or [B,L] (1 keep, 0 pad), 5
# attention_bias [B|1, N|1, S, P+L], 6 past_key [B,N,P,h], 7 past_value
# [B,N,P,hv]. Outputs: 0 output [B,S,Dv], 1 present_key [B,N,P+L,h], 2
# present_value [B,N,P+L,hv]. Attributes: num_heads, scale (default
# 1/sqrt(h)), unidirectional (default 0), mask_filter_value (default -10000).

MS = "com.microsoft"


def ms_mha_reference(query, key=None, value=None, bias=None, key_padding_mask=None,
                     attention_bias=None, past_key=None, past_value=None, *,
                     num_heads, unidirectional=0, scale=None, mask_filter_value=-10000.0):
    """float64 reference following the CPU kernel: padding-masked scores get
    mask_filter_value *added* (the kernel fills a mask buffer with 0 or
    mask_filter_value and accumulates QK^T * scale onto it); with
    unidirectional, key j is hidden from query i when j > i + P (bottom-right
    aligned), its mask entry set to float32's lowest; attention_bias is added
    after the mask; then softmax and the product with V. Returns
    (output, present_key, present_value) as float32."""
    f = lambda a: None if a is None else a.astype(np.float64)  # noqa: E731
    query, key, value, bias = f(query), f(key), f(value), f(bias)
    n = num_heads
    if key is None:  # packed QKV [B, S, N, 3, h]
        b, s = query.shape[:2]
        q, k, v = (query[:, :, :, i, :].transpose(0, 2, 1, 3) for i in range(3))
    else:
        b, s, d = query.shape
        dv = value.shape[-1]
        if bias is not None:
            query = query + bias[:d]
            key = key + bias[d:2 * d]
            value = value + bias[2 * d:2 * d + dv]
        heads = lambda x: x.reshape(b, x.shape[1], n, -1).transpose(0, 2, 1, 3)  # noqa: E731
        q, k, v = heads(query), heads(key), heads(value)
    p = 0
    if past_key is not None:
        p = past_key.shape[2]
        k = np.concatenate([past_key.astype(np.float64), k], axis=2)
        v = np.concatenate([past_value.astype(np.float64), v], axis=2)
    total = k.shape[2]
    h = q.shape[-1]
    scale = 1.0 / math.sqrt(h) if scale is None else scale

    mask = np.zeros((b, s, total))
    if key_padding_mask is not None:
        if key_padding_mask.ndim == 1:  # valid lengths, right padding
            for bi in range(b):
                mask[bi, :, key_padding_mask[bi]:] = mask_filter_value
        else:  # [B, total] 1 keep / 0 pad
            mask[:] = np.where(key_padding_mask[:, None, :] > 0, 0.0, mask_filter_value)
    if unidirectional:
        future = np.arange(total)[None, :] > np.arange(s)[:, None] + p
        mask[:, future] = float(np.finfo(F32).min)

    scores = q @ k.transpose(0, 1, 3, 2) * scale + mask[:, None]
    if attention_bias is not None:
        scores = scores + attention_bias.astype(np.float64)
    out = softmax64(scores) @ v  # [B, N, S, hv]
    out = out.transpose(0, 2, 1, 3).reshape(b, s, -1)
    return out.astype(F32), k.astype(F32), v.astype(F32)


MS_INPUTS = ["query", "key", "value", "bias", "key_padding_mask", "attention_bias",
             "past_key", "past_value"]


def ms_mha_case(name, num_heads, data, outputs=("output",), **attrs):
    """One com.microsoft.MultiHeadAttention node on graph inputs `data`
    (name -> array; absent optional inputs are left empty in the node)."""
    node_inputs = [n if n in data else "" for n in MS_INPUTS]
    while node_inputs[-1] == "":
        node_inputs.pop()
    node = helper.make_node("MultiHeadAttention", node_inputs, list(outputs), domain=MS,
                            name="mha", num_heads=num_heads, **attrs)
    inputs = [(n, data[n]) for n in MS_INPUTS if n in data]
    # Float attributes are stored as float32; the reference uses that value.
    ref_attrs = {k: float(np.float32(v)) if isinstance(v, float) else v for k, v in attrs.items()}
    expect = ms_mha_reference(**dict(inputs), num_heads=num_heads, **ref_attrs)
    expect = list(zip(outputs, expect))
    elem = {np.dtype(F32): TensorProto.FLOAT, np.dtype(np.int32): TensorProto.INT32}
    vis = [helper.make_tensor_value_info(n, elem[a.dtype], a.shape) for n, a in inputs]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, a.shape) for n, a in expect]
    model = hand_model(name, [node], vis, outs, domains=[(MS, 1)])
    return model, inputs, expect, "hand"


def qkv(rng, b, s, l, n, h, hv=None):
    hv = h if hv is None else hv
    return {"query": randn(rng, b, s, n * h), "key": randn(rng, b, l, n * h),
            "value": randn(rng, b, l, n * hv)}


@case("ms_mha_basic")
def ms_mha_basic(rng):
    """Separate Q, K, V of different lengths (S=5, L=7), no options."""
    return ms_mha_case("ms_mha_basic", 2, qkv(rng, 2, 5, 7, 2, 8))


@case("ms_mha_causal_bias")
def ms_mha_causal_bias(rng):
    """unidirectional=1, the input-projection bias, an explicit scale."""
    data = qkv(rng, 2, 6, 6, 2, 8)
    data["bias"] = randn(rng, 3 * 16)
    return ms_mha_case("ms_mha_causal_bias", 2, data, unidirectional=1, scale=0.3)


@case("ms_mha_key_padding")
def ms_mha_key_padding(rng):
    """1-D key_padding_mask: the valid key length of each batch."""
    data = qkv(rng, 2, 6, 6, 2, 8)
    data["key_padding_mask"] = np.array([6, 4], np.int32)
    return ms_mha_case("ms_mha_key_padding", 2, data)


@case("ms_mha_key_padding_2d")
def ms_mha_key_padding_2d(rng):
    """2-D key_padding_mask, 1 keep / 0 pad, with holes not only at the end."""
    data = qkv(rng, 2, 6, 6, 2, 8)
    data["key_padding_mask"] = np.array([[1, 1, 1, 1, 1, 0], [1, 0, 1, 1, 0, 0]], np.int32)
    return ms_mha_case("ms_mha_key_padding_2d", 2, data)


@case("ms_mha_attention_bias")
def ms_mha_attention_bias(rng):
    """attention_bias [1, N, S, L] broadcast over the batch, and a value head
    size (6) other than the query/key head size (8)."""
    data = qkv(rng, 2, 5, 6, 2, 8, hv=6)
    data["attention_bias"] = randn(rng, 1, 2, 5, 6)
    return ms_mha_case("ms_mha_attention_bias", 2, data)


@case("ms_mha_packed_qkv")
def ms_mha_packed_qkv(rng):
    """Packed QKV: query [B, S, N, 3, h], key and value absent."""
    return ms_mha_case("ms_mha_packed_qkv", 2, {"query": randn(rng, 2, 6, 2, 3, 8)})


@case("ms_mha_past")
def ms_mha_past(rng):
    """A decoding step: past_key/past_value [B, N, P=3, h] concatenated before
    this step's keys (S=L=2), present_key/present_value returned, and the
    causal mask bottom-right aligned (query i sees keys j <= i + P)."""
    data = qkv(rng, 2, 2, 2, 2, 8)
    data["past_key"] = randn(rng, 2, 2, 3, 8)
    data["past_value"] = randn(rng, 2, 2, 3, 8)
    return ms_mha_case("ms_mha_past", 2, data,
                       outputs=("output", "present_key", "present_value"), unidirectional=1)


# ----------------------------------------------------------------------------
# Writing and checking

def shape_str(a):
    return "[" + ",".join(str(d) for d in a.shape) + "]"


def write_case(outdir, name, model, inputs, outputs):
    onnx.save(model, os.path.join(outdir, name + ".onnx"))
    lines = []
    for n, a in inputs:
        path = os.path.abspath(os.path.join(outdir, "%s_%s.npy" % (name, n)))
        np.save(path, a)
        lines.append("%s=%s\n" % (n, path))
    with open(os.path.join(outdir, name + ".inputs"), "w") as f:
        f.writelines(lines)
    for n, a in outputs:
        np.save(os.path.join(outdir, "%s_expected_%s.npy" % (name, n)), a)
    np.save(os.path.join(outdir, name + "_expected.npy"), outputs[0][1])
    with open(os.path.join(outdir, name + ".outputs"), "w") as f:
        f.writelines(n + "\n" for n, _ in outputs)


def evaluate(model, inputs):
    """Runs a standard-domain model; returns (outputs, evaluator name)."""
    feeds = dict(inputs)
    try:
        from onnx.reference import ReferenceEvaluator
    except ImportError:
        return NumpyEvaluator(model).run(feeds), "numpy evaluator"
    return ReferenceEvaluator(model).run(None, feeds), "onnx.reference"


def run_case(outdir, name):
    rng = np.random.default_rng(seed_for(name))
    torch.manual_seed(seed_for(name))
    model, inputs, outputs, kind = CASES[name](rng)
    onnx.checker.check_model(model)
    write_case(outdir, name, model, inputs, outputs)

    ins = ",".join("%s%s:%s" % (n, shape_str(a), a.dtype) for n, a in inputs)
    extra = "".join(" %s%s" % (n, shape_str(a)) for n, a in outputs[1:])
    print("%s: inputs=%s output shape=%s%s" % (name, ins, shape_str(outputs[0][1]),
                                               " (+" + extra.strip() + ")" if extra else ""))
    ops = sorted({(n.domain + "." if n.domain else "") + n.op_type for n in model.graph.node})
    print("  ops (%s): %s" % ("torch.onnx.export" if kind == "torch" else "hand-built",
                              " ".join(ops)))
    if any(n.domain not in ("", "ai.onnx") for n in model.graph.node):
        print("  check: onnx.checker ok; not run (contrib op), expected from the numpy reference")
        return True
    got, how = evaluate(model, inputs)
    err = max(float(np.abs(np.asarray(g, np.float64) - e).max()) for g, (_, e) in zip(got, outputs))
    ok = err <= TOL
    print("  check: onnx.checker ok; %s max_abs_err=%.2e%s" % (how, err, "" if ok else "  FAIL"))
    return ok


def main(argv):
    if len(argv) < 2 or argv[1].startswith("-"):
        sys.exit(next(l for l in __doc__.splitlines() if l.startswith("usage:")))
    outdir, names = argv[1], argv[2:] or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        sys.exit("unknown case(s): %s\nknown: %s" % (" ".join(unknown), " ".join(CASES)))
    os.makedirs(outdir, exist_ok=True)
    ok = True
    for name in names:
        ok &= run_case(outdir, name)
    return 0 if ok else 1


# ----------------------------------------------------------------------------
# A minimal numpy interpreter for the standard ops these models use (opset
# 13+ forms: axes/splits as inputs), for onnx versions without
# onnx.reference. It computes in the arrays' own dtypes, as a runtime would.

def np_dtype(onnx_type):
    try:
        return helper.tensor_dtype_to_np_dtype(onnx_type)
    except AttributeError:
        return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[onnx_type]


class NumpyEvaluator:
    def __init__(self, model):
        self.graph = model.graph

    def run(self, feeds):
        env = {t.name: numpy_helper.to_array(t) for t in self.graph.initializer}
        env.update(feeds)
        with np.errstate(all="ignore"):
            for node in self.graph.node:
                attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
                args = [env[i] if i else None for i in node.input]
                fn = getattr(self, "op_" + node.op_type, None)
                if fn is None:
                    raise NotImplementedError("numpy evaluator: no %s" % node.op_type)
                res = fn(*args, **attrs)
                res = res if isinstance(res, list) else [res]
                for o, r in zip(node.output, res):
                    env[o] = np.asarray(r)
        return [env[o.name] for o in self.graph.output]

    # Elementwise and data movement.
    def op_Add(self, a, b): return a + b
    def op_Sub(self, a, b): return a - b
    def op_Mul(self, a, b): return a * b
    def op_Pow(self, a, b): return np.power(a, b).astype(a.dtype)
    def op_Sqrt(self, x): return np.sqrt(x)
    def op_Tanh(self, x): return np.tanh(x)

    def op_Erf(self, x):
        return np.vectorize(math.erf, otypes=[np.float64])(x).astype(x.dtype)

    def op_LayerNormalization(self, x, scale, bias=None, axis=-1, epsilon=1e-5,
                              stash_type=1):
        axes = tuple(range(axis % x.ndim, x.ndim))
        x64 = x.astype(np.float64)
        mean = x64.mean(axis=axes, keepdims=True)
        var = ((x64 - mean) ** 2).mean(axis=axes, keepdims=True)
        y = (x64 - mean) / np.sqrt(var + epsilon) * scale
        return (y + bias if bias is not None else y).astype(x.dtype)
    def op_Neg(self, x): return -x
    def op_Cos(self, x): return np.cos(x)
    def op_Sin(self, x): return np.sin(x)
    def op_Not(self, x): return np.logical_not(x)
    def op_Equal(self, a, b): return np.equal(a, b)
    def op_Less(self, a, b): return np.less(a, b)
    def op_Greater(self, a, b): return np.greater(a, b)
    def op_Where(self, c, a, b): return np.where(c, a, b)
    def op_Identity(self, x): return x
    def op_MatMul(self, a, b): return np.matmul(a, b)
    def op_Shape(self, x): return np.array(x.shape, np.int64)
    def op_Cast(self, x, to): return x.astype(np_dtype(to))
    def op_Constant(self, value): return numpy_helper.to_array(value)

    def op_Div(self, a, b):
        if np.issubdtype(a.dtype, np.integer):
            return np.trunc(a / b).astype(a.dtype)
        return a / b

    def op_Softmax(self, x, axis=-1):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    def op_Transpose(self, x, perm=None):
        return np.transpose(x, perm)

    def op_Reshape(self, x, shape, allowzero=0):
        shape = [x.shape[i] if d == 0 and not allowzero else d for i, d in enumerate(shape)]
        return x.reshape(shape)

    def op_Gather(self, x, idx, axis=0):
        return np.take(x, idx, axis=axis)

    def op_Unsqueeze(self, x, axes):
        out = x
        rank = x.ndim + len(axes)
        for a in sorted(int(a) % rank for a in axes):
            out = np.expand_dims(out, a)
        return out

    def op_Squeeze(self, x, axes=None):
        return np.squeeze(x) if axes is None else np.squeeze(x, tuple(int(a) for a in axes))

    def op_Concat(self, *xs, axis):
        return np.concatenate(xs, axis=axis)

    def op_Slice(self, x, starts, ends, axes=None, steps=None):
        axes = range(len(starts)) if axes is None else axes
        steps = [1] * len(starts) if steps is None else steps
        index = [slice(None)] * x.ndim
        for s, e, a, st in zip(starts, ends, axes, steps):
            index[int(a)] = slice(int(s), int(e), int(st))
        return x[tuple(index)]

    def op_Split(self, x, split=None, axis=0, num_outputs=None):
        if split is None:
            raise NotImplementedError("numpy evaluator: Split without split sizes")
        return list(np.split(x, np.cumsum(split)[:-1], axis=axis))

    def op_Expand(self, x, shape):
        return np.array(np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(shape))))

    def op_ConstantOfShape(self, shape, value=None):
        v = np.zeros(1, F32) if value is None else numpy_helper.to_array(value)
        return np.full(tuple(shape), v.reshape(-1)[0], v.dtype)

    def op_Trilu(self, x, k=None, upper=1):
        k = 0 if k is None else int(k)
        return np.triu(x, k) if upper else np.tril(x, k)

    def op_ReduceSum(self, x, axes=None, keepdims=1, noop_with_empty_axes=0):
        if axes is None or len(axes) == 0:
            if noop_with_empty_axes:
                return x
            axes = range(x.ndim)
        return np.sum(x, axis=tuple(int(a) for a in axes), keepdims=bool(keepdims))

    def op_ReduceMean(self, x, axes=None, keepdims=1):
        axes = range(x.ndim) if axes is None or len(axes) == 0 else axes
        return np.mean(x, axis=tuple(int(a) for a in axes), keepdims=bool(keepdims)).astype(x.dtype)

    def op_Range(self, start, limit, delta):
        return np.arange(start, limit, delta).astype(start.dtype)

    def op_Gemm(self, a, b, c=None, alpha=1.0, beta=1.0, transA=0, transB=0):
        a = a.T if transA else a
        b = b.T if transB else b
        y = alpha * (a @ b)
        return y + beta * c if c is not None else y


if __name__ == "__main__":
    sys.exit(main(sys.argv))
