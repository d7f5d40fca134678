//===- AttnOps.td - operations of the attn dialect -------------*- tablegen -*-===//
//
// One section per operation: the seed's chapter in order (weightless
// self-attention, the SDPA core, causal single-head attention, multi-head
// attention) and the explicit head split/merge of the efficient MHA form.
//
// Weight layout: every projection weight is [d_in, d_out] and is applied as
// `x @ W` (the layout ONNX exports of nn.Linear carry as MatMul initializers;
// a PyTorch nn.Linear weight is its transpose).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_OPS_TD
#define ATTN_OPS_TD

include "attn/AttnDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Attn_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Attn_MaskTensor : RankedTensorOf<[I1, F32, F16, BF16]>;

//===----------------------------------------------------------------------===//
// self_attention
//===----------------------------------------------------------------------===//

def Attn_SelfAttentionOp : Attn_Op<"self_attention", [Pure]> {
  let summary = "weightless self-attention: softmax(scale * X X^T) X";
  let description = [{
    The simplest form of the seed's chapter: every row of `input` ([..., T, D])
    is both query, key and value. `scale` defaults to 1 (the chapter's first
    version does not scale); leading dimensions are batch dimensions.

    ```mlir
    %z = attn.self_attention %x : tensor<6x3xf32> -> tensor<6x3xf32>
    %z2 = attn.self_attention %x {scale = 0.577 : f32} : tensor<2x?x64xf32> -> tensor<2x?x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, OptionalAttr<F32Attr>:$scale);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// sdpa
//===----------------------------------------------------------------------===//

def Attn_SdpaOp : Attn_Op<"sdpa", [Pure]> {
  let summary = "scaled dot-product attention core on Q, K, V";
  let description = [{
    `softmax(scale * Q K^T + mask) V` with dropout on the weights.

    Shapes: `query` is [B..., Hq, Tq, d], `key` [B..., Hkv, Tk, d], `value`
    [B..., Hkv, Tk, dv]; the result is [B..., Hq, Tq, dv]. Rank-2 operands
    ([T, d]) are a single head. When Hkv < Hq (grouped-query / multi-query
    attention) query head h reads key/value head h / (Hq / Hkv): K and V are
    indexed, never repeated.

    - `scale` defaults to 1/sqrt(d).
    - `causal(top_left)`: query i sees keys j <= i (PyTorch).
      `causal(bottom_right)`: query i sees keys j <= i + Tk - Tq (ONNX).
    - `window_left = L`, `window_right = R` (sliding window, each optional,
      >= 0): query i sees keys j with -L <= j - (i + off) <= R, where off
      is Tk - Tq for `causal(bottom_right)` and 0 otherwise. With `causal`
      R is 0 anyway; `causal(top_left) {window_left = 255}` is a 256-key
      causal sliding window.
    - `softcap = c` (> 0): scores become c * tanh(scores / c) after scaling
      and before any mask (Gemma, ONNX Attention's softcap).
    - `mask(%m : kind)`: an explicit mask broadcastable (NumPy rules, aligned
      at the right) to [B..., Hq, Tq, Tk]. `masked_where_true` and
      `attend_where_true` take i1 masks, `additive` a float mask of the
      operand element type added to the scaled scores.
    - `dropout_p` in [0, 1) drops attention weights (training mode) with a
      counter-based Philox generator keyed by `seed`: the same seed gives the
      same output; kept weights are scaled by 1/(1-p).
    - A query row whose every key is masked yields 0 (ONNX and PyTorch
      semantics), not NaN.
    - `layout(seq_major)`: every operand and the result hold tokens before
      heads ([B..., T, H, d]); the math is unchanged. This is how a head
      split/merge is folded away: a projection's [B, T, H*d] output is
      viewed as [B, T, H, d] without a transpose.

    ```mlir
    %o = attn.sdpa %q, %k, %v causal(top_left) {scale = 0.125 : f32}
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
    %g = attn.sdpa %q, %k, %v mask(%m : attend_where_true)
        : tensor<2x8x16x64xf16>, tensor<2x2x16x64xf16>, tensor<2x2x16x64xf16>, tensor<2x1x16x16xi1> -> tensor<2x8x16x64xf16>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$query, Attn_FloatTensor:$key,
      Attn_FloatTensor:$value, Optional<Attn_MaskTensor>:$mask,
      DefaultValuedAttr<Attn_CausalKind, "::mlir::attn::CausalKind::none">:$causal,
      DefaultValuedAttr<Attn_MaskKind, "::mlir::attn::MaskKind::masked_where_true">:$mask_kind,
      DefaultValuedAttr<Attn_HeadLayout, "::mlir::attn::HeadLayout::heads_major">:$layout,
      OptionalAttr<I64Attr>:$window_left,
      OptionalAttr<I64Attr>:$window_right,
      OptionalAttr<F32Attr>:$softcap,
      OptionalAttr<F32Attr>:$scale,
      DefaultValuedAttr<F32Attr, "0.0f">:$dropout_p,
      DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`mask` `(` $mask^ `:` $mask_kind `)`)?
    (`causal` `(` $causal^ `)`)?
    (`layout` `(` $layout^ `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value)
    (`,` type($mask)^)? `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The scale applied to Q K^T: the attribute, or 1/sqrt(head_dim).
    double getEffectiveScale();
    /// Dim index of heads / tokens in the operands (rank >= 3 for heads).
    int64_t getHeadDimIndex();
    int64_t getSeqDimIndex();
  }];
}

//===----------------------------------------------------------------------===//
// causal_attention
//===----------------------------------------------------------------------===//

def Attn_CausalAttentionOp : Attn_Op<"causal_attention",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "single-head causal attention with Wq/Wk/Wv (the seed's CausalAttention)";
  let description = [{
    `input` [B..., T, d_in] is projected by `w_query`, `w_key` ([d_in, d_out])
    and `w_value` ([d_in, d_v]), plus optional biases; then causal (top-left)
    scaled dot-product attention with scale 1/sqrt(d_out) (or `scale`) and
    dropout on the weights. The result is [B..., T, d_v].

    ```mlir
    %z = attn.causal_attention %x weights(%wq, %wk, %wv) {dropout_p = 0.5 : f32, seed = 123 : i64}
        : (tensor<2x6x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<2x6x2xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$w_query,
      Attn_FloatTensor:$w_key, Attn_FloatTensor:$w_value,
      Optional<Attn_FloatTensor>:$b_query, Optional<Attn_FloatTensor>:$b_key,
      Optional<Attn_FloatTensor>:$b_value,
      OptionalAttr<F32Attr>:$scale,
      DefaultValuedAttr<F32Attr, "0.0f">:$dropout_p,
      DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `weights` `(` $w_query `,` $w_key `,` $w_value `)`
    (`bias` `(` $b_query^ `,` $b_key `,` $b_value `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// multi_head_attention
//===----------------------------------------------------------------------===//

def Attn_MultiHeadAttentionOp : Attn_Op<"multi_head_attention",
    [Pure, AttrSizedOperandSegments]> {
  let summary = "multi-head attention, the seed's efficient form";
  let description = [{
    `input` [B..., T, d_in] is projected once per Q/K/V by [d_in, d_out]
    weights (optional qkv biases [d_out]), split into `num_heads` heads of
    d_out / num_heads, attended per head (causal top-left when `causal` is
    set, scale 1/sqrt(head_dim) unless `scale` is given, dropout on the
    weights), merged back to [B..., T, d_out] and passed through the optional
    output projection `out_proj(W [d_out, d_model], b [d_model])`.

    ```mlir
    %y = attn.multi_head_attention %x weights(%wq, %wk, %wv) out_proj(%wo, %bo)
        causal {num_heads = 12 : i64, dropout_p = 0.1 : f32, seed = 7 : i64}
        : (tensor<1x1024x768xf32>, tensor<768x768xf32>, tensor<768x768xf32>,
           tensor<768x768xf32>, tensor<768x768xf32>, tensor<768xf32>) -> tensor<1x1024x768xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input, Attn_FloatTensor:$w_query,
      Attn_FloatTensor:$w_key, Attn_FloatTensor:$w_value,
      Optional<Attn_FloatTensor>:$b_query, Optional<Attn_FloatTensor>:$b_key,
      Optional<Attn_FloatTensor>:$b_value,
      Optional<Attn_FloatTensor>:$w_out, Optional<Attn_FloatTensor>:$b_out,
      ConfinedAttr<I64Attr, [IntPositive]>:$num_heads,
      UnitAttr:$causal,
      OptionalAttr<F32Attr>:$scale,
      DefaultValuedAttr<F32Attr, "0.0f">:$dropout_p,
      DefaultValuedAttr<I64Attr, "0">:$seed);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = [{
    $input `weights` `(` $w_query `,` $w_key `,` $w_value `)`
    (`bias` `(` $b_query^ `,` $b_key `,` $b_value `)`)?
    (`out_proj` `(` $w_out^ (`,` $b_out^)? `)`)?
    (`causal` $causal^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// split_heads / merge_heads
//===----------------------------------------------------------------------===//

def Attn_SplitHeadsOp : Attn_Op<"split_heads", [Pure]> {
  let summary = "[..., T, H*d] -> [..., H, T, d] (the seed's view + transpose(1, 2))";
  let description = [{
    ```mlir
    %q4 = attn.split_heads %q {num_heads = 12 : i64} : tensor<1x?x768xf32> -> tensor<1x12x?x64xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input,
      ConfinedAttr<I64Attr, [IntPositive]>:$num_heads);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Attn_MergeHeadsOp : Attn_Op<"merge_heads", [Pure]> {
  let summary = "[..., H, T, d] -> [..., T, H*d] (transpose(1, 2) + contiguous().view)";
  let description = [{
    ```mlir
    %c = attn.merge_heads %o : tensor<1x12x?x64xf32> -> tensor<1x?x768xf32>
    ```
  }];
  let arguments = (ins Attn_FloatTensor:$input);
  let results = (outs Attn_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

#endif // ATTN_OPS_TD
