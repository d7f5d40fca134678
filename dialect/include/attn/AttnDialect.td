//===- AttnDialect.td - the attn dialect and its attributes ----*- tablegen -*-===//
//
// The attn dialect expresses attention at the level a model author thinks in:
// whole attention blocks (multi-head, causal, with projections) and the
// scaled-dot-product core, on ranked tensors with value semantics. Layout and
// masking are attributes, not tensors, so later passes can exploit them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_TD
#define ATTN_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Attention graphs: self-attention, SDPA, causal and multi-head attention";
  let description = [{
    The `attn` dialect models the attention family of transformer models as
    first-class operations on ranked tensors (f32, f16, bf16). Causality,
    mask meaning, scale and dropout are attributes, so optimizing passes can
    fold them into loop bounds instead of materialising mask tensors.
  }];
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

// Where the causal diagonal sits when Tq != Tk.
def Attn_CausalKind : I32EnumAttr<"CausalKind",
    "alignment of the causal mask", [
      I32EnumAttrCase<"none", 0>,
      // Query i attends key j iff j <= i (PyTorch's is_causal, the seed's triu mask).
      I32EnumAttrCase<"top_left", 1>,
      // Query i attends key j iff j <= i + (Tk - Tq) (ONNX Attention, KV caches).
      I32EnumAttrCase<"bottom_right", 2>
    ]> {
  let cppNamespace = "::mlir::attn";
}

// What the values of an explicit mask operand mean.
def Attn_MaskKind : I32EnumAttr<"MaskKind",
    "meaning of the mask operand", [
      // i1, true = this score is masked out (the seed's `mask.bool()`).
      I32EnumAttrCase<"masked_where_true", 0>,
      // i1, true = this score takes part (ONNX Attention's bool mask).
      I32EnumAttrCase<"attend_where_true", 1>,
      // float, added to the scaled scores (-inf / large negative = masked).
      I32EnumAttrCase<"additive", 2>
    ]> {
  let cppNamespace = "::mlir::attn";
}

// Where the head dim sits in attn.sdpa's operands and result.
def Attn_HeadLayout : I32EnumAttr<"HeadLayout",
    "position of the head dimension", [
      // [B..., H, T, d]: heads before tokens (the seed's q.transpose(1, 2)).
      I32EnumAttrCase<"heads_major", 0>,
      // [B..., T, H, d]: tokens before heads, i.e. a projection's output
      // [B..., T, H*d] viewed without any transpose.
      I32EnumAttrCase<"seq_major", 1>
    ]> {
  let cppNamespace = "::mlir::attn";
}

#endif // ATTN_DIALECT_TD
