# RUN: %python %s %t | FileCheck %s
#
# Real export shapes of attention (test/onnx/Inputs/pattern_models.py): the
# seed's classes exported by torch.onnx.export with dynamic batch and
# sequence axes (Shape/Gather/Unsqueeze/Concat/Slice/Cast around the mask
# slice and the head-split reshapes), Hugging Face GPT-2 and BERT attention,
# PyTorch's SDPA export and post-softmax masking. Each model is imported
# (the remark names every raised node), the attn-level folds run, and
# attention-run's result on the .onnx is compared with torch's (or a float64
# reference's) within 1e-5, raised and (--onnx-raise=false) op by op. ONNX Runtime's com.microsoft.MultiHeadAttention
# (bias, key padding, attention_bias, packed QKV, past/present) imports to
# attn.sdpa, and so does torch.nn.MultiheadAttention with a key padding mask.
# Whole pre-norm transformer blocks (LayerNormalization, GELU with Tanh or
# Erf, residual Adds) import around the raised attention, and so does the
# book's whole GPT model, token ids to logits. Grouped-query (Llama's
# repeat_kv) and multi-query exports reach attn.sdpa with their own K/V
# head count. In the sanitizer run of the
# suite (ATTN_SANITIZED=1) the op-by-op runs are limited to the models whose
# lines are checked below (the whole blocks, the GPT, the torch MHA and
# Llama's GQA);
# the test prints the others it left out.

import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RUN = os.environ.get("ATTENTION_RUN", os.path.join(HERE, "..", "..", "build", "bin",
                                                   "attention-run"))
TRANSLATE = os.path.join(os.path.dirname(RUN), "attention-translate")
OPT = os.path.join(os.path.dirname(RUN), "attention-opt")

CASES = ["seed_self_attention_v2", "seed_causal_dynamic", "seed_wrapper_dynamic",
         "seed_mha_dynamic", "seed_mha_qkv_bias_dynamic", "gpt2_hf", "gpt2_hf_static",
         "bert_self_attention", "sdpa_export", "sdpa_export_gather", "sdpa_identity",
         "post_softmax_mask",
         "ms_mha_basic", "ms_mha_causal_bias", "ms_mha_key_padding", "ms_mha_key_padding_2d",
         "ms_mha_attention_bias", "ms_mha_packed_qkv", "ms_mha_past",
         "torch_mha_key_padding", "gpt2_block_dynamic", "block_exact_gelu",
         "book_gpt_dynamic", "llama_gqa_dynamic", "llama_gqa_static",
         "mqa_broadcast_dynamic", "mqa_expand_dynamic"]
# The cases whose op-by-op (unraised) results the CHECK lines name.
UNRAISED_IN_SANITIZER_RUN = {"torch_mha_key_padding", "gpt2_block_dynamic",
                             "block_exact_gelu", "book_gpt_dynamic",
                             "llama_gqa_dynamic"}
SANITIZED = os.environ.get("ATTN_SANITIZED") == "1"


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(HERE, "Inputs", "pattern_models.py"),
                    work] + CASES, check=True, stdout=subprocess.DEVNULL)
    ok = True
    for case in CASES:
        model = os.path.join(work, case + ".onnx")
        imported = subprocess.run([TRANSLATE, "--import-onnx", model], capture_output=True,
                                  text=True)
        if imported.returncode:
            print("FAIL: %s import: %s" % (case, imported.stderr))
            ok = False
            continue
        for line in imported.stderr.splitlines():
            if "remark:" in line:
                print("%s remark: %s" % (case, line.split("remark: ", 1)[1]))
        folded = subprocess.run([OPT, "--canonicalize", "--attn-fuse-heads",
                                 "--attn-fold-repeated-kv", "--attn-fold-mask"],
                                input=imported.stdout, capture_output=True, text=True,
                                check=True).stdout
        cores = [l.strip().split(" : ")[0] for l in folded.splitlines()
                 if "= attn." in l and " mask(" not in l]
        cores += [l.strip().split(" : tensor")[0] for l in folded.splitlines()
                  if "= attn." in l and " mask(" in l]
        print("%s cores: %d" % (case, len(cores)))
        for c in cores:
            print("%s core: %s" % (case, c))
        # Q, K, V types: how many K/V heads the query heads read.
        for l in folded.splitlines():
            if "= attn.sdpa" in l:
                print("%s sdpa types: %s" % (case, l.strip().rsplit(" : ", 1)[1]))
        with open(os.path.join(work, case + ".outputs")) as f:
            outputs = f.read().split()
        args = [RUN, model]
        for name in outputs:
            args += ["--output", os.path.join(work, "%s_got_%s.npy" % (case, name))]
        with open(os.path.join(work, case + ".inputs")) as f:
            for line in f.read().split():
                args += ["--input", line]
        # Raised, and op by op (every imported op checked numerically).
        variants = [("", []), (" unraised", ["--onnx-raise=false"])]
        if SANITIZED and case not in UNRAISED_IN_SANITIZER_RUN:
            print("sanitizer run: %s unraised left out (the release run has it)" % case)
            variants = variants[:1]
        for variant, extra in variants:
            proc = subprocess.run(args + extra, capture_output=True, text=True)
            if proc.returncode:
                print("FAIL: %s%s run: %s" % (case, variant, proc.stderr))
                ok = False
                continue
            for name in outputs:
                got = np.load(os.path.join(work, "%s_got_%s.npy" % (case, name)))
                want = np.load(os.path.join(work, "%s_expected_%s.npy" % (case, name)))
                err = (float(np.abs(got - want).max()) if got.shape == want.shape
                       else float("inf"))
                good = err <= 1e-5
                ok &= good
                print("%s %s%s: %s shape %s max_abs_err=%.2e" % (
                    "ok" if good else "FAIL:", case, variant, name, list(got.shape), err))
    # The seed's mask buffer has context_length (8) rows: longer sequences
    # are refused before anything runs, as torch refuses them.
    long_x = os.path.join(work, "x_long.npy")
    np.save(long_x, np.zeros((1, 9, 16), np.float32))
    proc = subprocess.run([RUN, os.path.join(work, "seed_causal_dynamic.onnx"), "--input",
                           "x=" + long_x, "--output", os.path.join(work, "long.npy"),
                           "--print-signature"], capture_output=True, text=True)
    print("long input: exit %d: %s" % (proc.returncode, proc.stderr.strip().splitlines()[-1]))
    # The book's GPT: token ids index a 50-row embedding, position ids a
    # 16-row one: an id past the vocabulary and a sequence past the context
    # are refused before anything runs (torch raises IndexError for both).
    gpt = os.path.join(work, "book_gpt_dynamic.onnx")
    for what, ids in (("bad token", np.array([[3, 50, 7]], np.int64)),
                      ("long sequence", np.zeros((1, 17), np.int64))):
        path = os.path.join(work, "ids_%s.npy" % what.replace(" ", "_"))
        np.save(path, ids)
        proc = subprocess.run([RUN, gpt, "--input", "in_idx=" + path, "--output",
                               os.path.join(work, "bad_logits.npy")],
                              capture_output=True, text=True)
        print("%s: exit %d: %s" % (what, proc.returncode,
                                   proc.stderr.strip().splitlines()[-1]))
    print("bad logits written: %s" % os.path.exists(os.path.join(work, "bad_logits.npy")))
    print("export_patterns: %s" % ("all OK" if ok else "FAILED"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

# CHECK-NOT: FAIL
# The seed's SelfAttention_v2 (2-D, keys.T, Div by Pow(d, 0.5)): the
# projections and the core, one head, no mask.
# CHECK: seed_self_attention_v2 remark: raised 8 ONNX nodes to attn.multi_head_attention: MatMul '/W_key/MatMul', MatMul '/W_query/MatMul', MatMul '/W_value/MatMul', Transpose '/Transpose', MatMul '/MatMul', Div '/Div', Softmax '/Softmax', MatMul '/MatMul_1'
# CHECK: seed_self_attention_v2 core: %0 = attn.multi_head_attention %arg0 weights(%{{.*}}, %{{.*}}, %{{.*}}) {num_heads = 1
# CHECK: ok seed_self_attention_v2
# Dynamic axes: the mask is Slice(Slice(triu buffer, 0, T), 0, T) with T
# from Shape/Gather/Unsqueeze: a causal triangle.
# CHECK: seed_causal_dynamic remark: raised 9 ONNX nodes to attn.causal_attention: MatMul '/W_key/MatMul', MatMul '/W_query/MatMul', MatMul '/W_value/MatMul', Transpose '/Transpose', MatMul '/MatMul', Where '/Where', Div '/Div', Softmax '/Softmax', MatMul '/MatMul_1'
# CHECK: seed_causal_dynamic core: %0 = attn.causal_attention %arg0 weights(
# CHECK: ok seed_causal_dynamic: context_vec shape [2, 7, 8]
# The wrapper: two causal heads concatenated, fused by attn-fuse-heads.
# CHECK: seed_wrapper_dynamic remark: raised 9 ONNX nodes to attn.causal_attention: {{.*}}'/heads.0/MatMul_1'
# CHECK: seed_wrapper_dynamic remark: raised 9 ONNX nodes to attn.causal_attention: {{.*}}'/heads.1/MatMul_1'
# CHECK: seed_wrapper_dynamic cores: 1
# CHECK: seed_wrapper_dynamic core: %0 = attn.multi_head_attention %arg0 weights({{.*}}) causal {num_heads = 2
# CHECK: ok seed_wrapper_dynamic: context_vec shape [2, 7, 16]
# The seed's MultiHeadAttention: projections, head split, core, merge and
# out_proj, one op, causal, no mask tensor.
# CHECK: seed_mha_dynamic remark: raised 18 ONNX nodes to attn.multi_head_attention: MatMul '/W_key/MatMul', MatMul '/W_query/MatMul', MatMul '/W_value/MatMul', Reshape '/Reshape', Reshape '/Reshape_1', Reshape '/Reshape_2', Transpose '/Transpose_1', Transpose '/Transpose_2', Transpose '/Transpose_3', MatMul '/MatMul', Where '/Where', Div '/Div', Softmax '/Softmax', MatMul '/MatMul_1', Transpose '/Transpose_4', Reshape '/Reshape_3', MatMul '/out_proj/MatMul', Add '/out_proj/Add'
# CHECK: seed_mha_dynamic core: %0 = attn.multi_head_attention %arg0 weights(%{{.*}}, %{{.*}}, %{{.*}}) out_proj(%{{.*}}, %{{.*}}) causal {num_heads = 4
# CHECK: ok seed_mha_dynamic: context_vec shape [2, 6, 16]
# CHECK: seed_mha_qkv_bias_dynamic remark: raised 21 ONNX nodes to attn.multi_head_attention
# CHECK: seed_mha_qkv_bias_dynamic core: %0 = attn.multi_head_attention %arg0 weights({{.*}}) bias({{.*}}) out_proj({{.*}}) causal {num_heads = 4
# CHECK: ok seed_mha_qkv_bias_dynamic
# GPT-2 (HF eager attention): Div by a full([]) scale, Where(causal bias
# sliced bottom-right [k-q:k, :k], s, finfo.min), Add of the padding mask,
# Cast of the weights: causal plus the additive mask operand.
# CHECK: gpt2_hf remark: raised 8 ONNX nodes to attn.sdpa: MatMul '/MatMul', Div '/Div', Cast '/Cast_1', Where '/Where', Add '/Add_1', Softmax '/Softmax', Cast '/Cast_2', MatMul '/MatMul_1'
# CHECK: gpt2_hf core: {{.*}} = attn.sdpa {{.*}} mask(%arg1 : additive) causal(top_left) {scale = 5.000000e-01
# CHECK: ok gpt2_hf: attn_output shape [2, 7, 16]
# CHECK: gpt2_hf_static core: {{.*}} mask(%arg1 : additive) causal(top_left)
# CHECK: ok gpt2_hf_static
# BERT: the padding mask computed in the graph (Unsqueeze, Cast, Sub, Mul) is
# the additive mask.
# CHECK: bert_self_attention remark: raised 5 ONNX nodes to attn.sdpa: MatMul '/attention/MatMul', Div '/attention/Div', Add '/attention/Add', Softmax '/attention/Softmax', MatMul '/attention/MatMul_1'
# CHECK: bert_self_attention core: {{.*}} = attn.sdpa {{.*}} mask(%{{.*}} : additive) {scale = 5.000000e-01
# CHECK: ok bert_self_attention
# SDPA export: Q and K^T each scaled by sqrt(1/sqrt(d)), computed from Shape;
# the causal mask built from the sizes (Trilu/Equal/Where) is causal.
# CHECK: sdpa_export remark: raised 6 ONNX nodes to attn.sdpa: Mul 'q_scaled', Mul 'kt_scaled', MatMul 'qk', Add 'qk_masked', Softmax 'softmax', MatMul 'pv'
# CHECK: sdpa_export core: %0 = attn.sdpa %arg0, %arg1, %arg2 causal(top_left) {scale = 0.353553385
# CHECK: ok sdpa_export
# CHECK: sdpa_export_gather remark: raised 6 ONNX nodes
# CHECK: sdpa_export_gather core: %0 = attn.sdpa %arg0, %arg1, %arg2 causal(top_left)
# CHECK: ok sdpa_export_gather
# CHECK: sdpa_identity remark: raised 6 ONNX nodes to attn.sdpa: MatMul 'qk', Identity 'qk_id', Div 'scaled', Softmax 'softmax', Identity 'probs_id', MatMul 'pv'
# CHECK: sdpa_identity core: %0 = attn.sdpa %arg0, %arg1, %arg2 {scale = 0.353553385
# CHECK: ok sdpa_identity
# Post-softmax masking (softmax * tril / rowsum) is a causal softmax.
# CHECK: post_softmax_mask remark: raised 11 ONNX nodes to attn.causal_attention: {{.*}} Softmax '/Softmax', Mul '/Mul', ReduceSum '/ReduceSum', Div '/Div_1', MatMul '/MatMul_1'
# CHECK: post_softmax_mask core: %0 = attn.causal_attention %arg0 weights(
# CHECK: ok post_softmax_mask
# CHECK: ms_mha_basic core: {{.*}} = attn.sdpa
# CHECK: ok ms_mha_basic: output shape [2, 5, 16]
# CHECK: ms_mha_causal_bias core: {{.*}} = attn.sdpa {{.*}} causal(top_left) {scale = 3.000000e-01
# CHECK: ok ms_mha_causal_bias
# CHECK: ms_mha_key_padding core: {{.*}} : additive)
# CHECK: ok ms_mha_key_padding
# CHECK: ok ms_mha_key_padding_2d
# CHECK: ok ms_mha_attention_bias: output shape [2, 5, 12]
# CHECK: ok ms_mha_packed_qkv
# CHECK: ms_mha_past core: {{.*}} causal(bottom_right)
# CHECK: ok ms_mha_past: output shape [2, 2, 16]
# CHECK: ok ms_mha_past: present_key shape [2, 2, 5, 8]
# CHECK: ok ms_mha_past: present_value shape [2, 2, 5, 8]
# torch.nn.MultiheadAttention with key_padding_mask: the expand(-1, H, -1,
# -1) of the mask has its target shape as Where(Equal(c, -1), 1, c) of
# constants, folded while importing; the expanded -inf mask is additive.
# CHECK: torch_mha_key_padding remark: raised 5 ONNX nodes to attn.sdpa: MatMul '/mha/MatMul_1', Mul '/mha/Mul_4', Add '/mha/Add_2', Softmax '/mha/Softmax', MatMul '/mha/MatMul_2'
# CHECK: torch_mha_key_padding core: {{.*}} = attn.sdpa {{.*}} mask(%{{.*}} : additive)
# CHECK: ok torch_mha_key_padding: y shape [2, 7, 24]
# CHECK: ok torch_mha_key_padding unraised: y shape [2, 7, 24]
# A whole pre-norm transformer block around the seed's MHA: LayerNormalization,
# residual Adds (the raised block's result has its input's dynamic dims),
# the feed-forward with GELU's tanh form, and with the exact GELU (Erf).
# CHECK: gpt2_block_dynamic remark: raised 18 ONNX nodes to attn.multi_head_attention
# CHECK: gpt2_block_dynamic core: %{{.*}} = attn.multi_head_attention %{{.*}} weights({{.*}}) out_proj({{.*}}) causal {num_heads = 4
# CHECK: ok gpt2_block_dynamic: y shape [2, 11, 32]
# CHECK: ok gpt2_block_dynamic unraised: y shape [2, 11, 32]
# CHECK: block_exact_gelu remark: raised 18 ONNX nodes to attn.multi_head_attention
# CHECK: ok block_exact_gelu: y shape [2, 9, 32]
# CHECK: ok block_exact_gelu unraised: y shape [2, 9, 32]
# The book's GPT model (chapter 4) from token ids to logits: ReduceMean,
# Range, Gather of the embeddings, one raised MHA per block.
# CHECK: book_gpt_dynamic remark: raised 18 ONNX nodes to attn.multi_head_attention: {{.*}}'/trf_blocks/trf_blocks.0/att/out_proj/Add'
# CHECK: book_gpt_dynamic remark: raised 18 ONNX nodes to attn.multi_head_attention: {{.*}}'/trf_blocks/trf_blocks.1/att/out_proj/Add'
# CHECK: book_gpt_dynamic cores: 2
# CHECK: ok book_gpt_dynamic: logits shape [2, 11, 50]
# CHECK: ok book_gpt_dynamic unraised: logits shape [2, 11, 50]
# Llama's grouped-query attention (8 query heads, 2 K/V heads) with rotary
# embeddings: repeat_kv's expand target is computed from the dynamic sizes
# (Where(Equal(shape, -1), ...) over Reshape(Concat(...), [-1])), Meta's
# torch.full((T, T), -inf).triu(1) is causal, and attn-fold-repeated-kv
# hands the core the 2-head K and V.
# CHECK: llama_gqa_dynamic remark: raised 5 ONNX nodes to attn.sdpa: MatMul '/MatMul', Div '/Div_2', Add '/Add_2', Softmax '/Softmax', MatMul '/MatMul_1'
# CHECK: llama_gqa_dynamic core: {{.*}} = attn.sdpa {{.*}} causal(top_left) {scale = 0.353553385
# CHECK: llama_gqa_dynamic sdpa types: tensor<?x8x?x8xf32>, tensor<?x2x?x8xf32>, tensor<?x2x?x8xf32> -> tensor<?x8x?x8xf32>
# CHECK: ok llama_gqa_dynamic: y shape [2, 11, 64]
# CHECK: ok llama_gqa_dynamic unraised: y shape [2, 11, 64]
# Static at batch 1: the copies read the batch at index 0 as well.
# CHECK: llama_gqa_static sdpa types: tensor<1x8x11x8xf32>, tensor<1x2x11x8xf32>, tensor<1x2x11x8xf32> -> tensor<1x8x11x8xf32>
# CHECK: ok llama_gqa_static: y shape [1, 11, 64]
# Multi-query attention: one K/V head broadcast by the MatMuls, or expanded
# to the 4 query heads first: K and V reach the core with their one head.
# CHECK: mqa_broadcast_dynamic remark: raised 5 ONNX nodes to attn.sdpa
# CHECK: mqa_broadcast_dynamic core: {{.*}} = attn.sdpa {{.*}} causal(top_left)
# CHECK: mqa_broadcast_dynamic sdpa types: tensor<?x4x?x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32> -> tensor<?x4x?x8xf32>
# CHECK: ok mqa_broadcast_dynamic: y shape [2, 9, 32]
# CHECK: mqa_expand_dynamic remark: raised 5 ONNX nodes to attn.sdpa
# CHECK: mqa_expand_dynamic sdpa types: tensor<?x4x?x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32> -> tensor<?x4x?x8xf32>
# CHECK: ok mqa_expand_dynamic: y shape [2, 9, 32]
# CHECK: long input: exit 1: attention-run: error: input 0 ({{.*}}x_long.npy): dim 1 is 9 but the module accepts at most 8 (expected x: f32[?, ?<=8, 16], got f32[1, 9, 16])
# CHECK: bad token: exit 1: attention-run: error: input 0 ({{.*}}ids_bad_token.npy): element [0, 1] is 50, outside [-50, 50), the indices the module accepts there (it indexes a table of 50 entries with it)
# CHECK: long sequence: exit 1: attention-run: error: input 0 ({{.*}}ids_long_sequence.npy): dim 1 is 17 but the module accepts at most 16 (expected in_idx: i64[?, ?<=16] in [-50, 50), got i64[1, 17])
# CHECK: bad logits written: False
# CHECK: export_patterns: all OK
