//===- Decompose.cpp - attn-decompose --------------------------------------===//
//
// Rewrites the compound attention ops into their parts so that the core
// passes (head-transpose folding, mask folding, flash lowering) see one
// attn.sdpa:
//
//   multi_head_attention(x)  ->  q, k, v = x @ Wq, x @ Wk, x @ Wv (+ biases)
//                                sdpa(split_heads(q), split_heads(k),
//                                     split_heads(v)) -> merge_heads
//                                -> @ W_out (+ b_out)
//   causal_attention(x)      ->  the same with one head and no out_proj
//   self_attention(x)        ->  sdpa(x, x, x) with scale 1 (or its scale)
//
// The three projections stay three contractions (concatenating the weights
// would copy them on every call). Projections are computed in f32 (as in
// the plain lowering) and the result is truncated back to the op's element
// type.
//
//===----------------------------------------------------------------------===//

#include "attn/AttnOps.h"
#include "attn/Passes.h"
#include "LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSEPASS
#include "attn/Passes.h.inc"

namespace {
using namespace detail;

Value toF32(OpBuilder &b, Location loc, Value v) {
  return v ? convertElementType(b, loc, v, b.getF32Type()) : v;
}

/// q, k, v = x @ Wq, x @ Wk, x @ Wv (+ biases), each in x's leading shape.
/// Three contractions rather than one over [Wq | Wk | Wv]: concatenating
/// the weights copies 3 d_in x N floats on every call, which cost more than
/// the two extra passes over x (GPT-2 XL at T = 128: 30 MB of weights).
SmallVector<Value> projections(PatternRewriter &rw, Location loc, Value x,
                               ValueRange weights, ValueRange biases) {
  SmallVector<Value> parts;
  for (auto [i, w] : llvm::enumerate(weights)) {
    Value bias = biases.empty() ? Value() : toF32(rw, loc, biases[i]);
    parts.push_back(buildProjection(rw, loc, x, toF32(rw, loc, w), bias));
  }
  return parts;
}

/// Splitting heads needs static projection widths.
template <typename OpT> bool staticWidths(OpT op) {
  return llvm::all_of(
      ValueRange{op.getWQuery(), op.getWKey(), op.getWValue()}, [](Value w) {
        return !ShapedType::isDynamic(
            cast<RankedTensorType>(w.getType()).getDimSize(1));
      });
}

/// Truncates to the op's result type and replaces the op.
void finish(PatternRewriter &rw, Operation *op, Value f32Result) {
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  Value r = convertElementType(rw, op->getLoc(), f32Result, type.getElementType());
  if (r.getType() != type)
    r = tensor::CastOp::create(rw, op->getLoc(), type, r);
  rw.replaceOp(op, r);
}

SdpaOp makeSdpa(PatternRewriter &rw, Location loc, Value q, Value k, Value v,
                CausalKind causal, double scale, FloatAttr dropout,
                IntegerAttr seed) {
  auto qt = cast<RankedTensorType>(q.getType());
  SmallVector<int64_t> shape(qt.getShape());
  shape.back() = cast<RankedTensorType>(v.getType()).getShape().back();
  return SdpaOp::create(
      rw, loc, RankedTensorType::get(shape, rw.getF32Type()), q, k, v,
      /*mask=*/Value(), CausalKindAttr::get(rw.getContext(), causal),
      MaskKindAttr::get(rw.getContext(), MaskKind::masked_where_true),
      HeadLayoutAttr::get(rw.getContext(), HeadLayout::heads_major),
      /*window_left=*/IntegerAttr(), /*window_right=*/IntegerAttr(),
      /*softcap=*/FloatAttr(),
      rw.getF32FloatAttr(static_cast<float>(scale)), dropout, seed);
}

struct DecomposeSelfAttention : OpRewritePattern<SelfAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SelfAttentionOp op,
                                PatternRewriter &rw) const override {
    Location loc = op.getLoc();
    Value x = toF32(rw, loc, op.getInput());
    double scale = op.getScale() ? op.getScale()->convertToDouble() : 1.0;
    SdpaOp s = makeSdpa(rw, loc, x, x, x, CausalKind::none, scale,
                        rw.getF32FloatAttr(0), rw.getI64IntegerAttr(0));
    finish(rw, op, s);
    return success();
  }
};

struct DecomposeCausalAttention : OpRewritePattern<CausalAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CausalAttentionOp op,
                                PatternRewriter &rw) const override {
    if (!staticWidths(op))
      return rw.notifyMatchFailure(op, "dynamic projection width");
    Location loc = op.getLoc();
    SmallVector<Value> biases;
    if (op.getBQuery())
      biases = {op.getBQuery(), op.getBKey(), op.getBValue()};
    SmallVector<Value> qkv = projections(
        rw, loc, toF32(rw, loc, op.getInput()),
        {op.getWQuery(), op.getWKey(), op.getWValue()}, biases);
    int64_t dOut = op.getWKey().getType().getDimSize(1);
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt(double(dOut));
    SdpaOp s = makeSdpa(rw, loc, qkv[0], qkv[1], qkv[2], CausalKind::top_left,
                        scale, op.getDropoutPAttr(), op.getSeedAttr());
    finish(rw, op, s);
    return success();
  }
};

struct DecomposeMultiHeadAttention : OpRewritePattern<MultiHeadAttentionOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MultiHeadAttentionOp op,
                                PatternRewriter &rw) const override {
    if (!staticWidths(op))
      return rw.notifyMatchFailure(op, "dynamic projection width");
    Location loc = op.getLoc();
    int64_t heads = op.getNumHeads();
    SmallVector<Value> biases;
    if (op.getBQuery())
      biases = {op.getBQuery(), op.getBKey(), op.getBValue()};
    Value x = toF32(rw, loc, op.getInput());
    SmallVector<Value> qkv = projections(
        rw, loc, x, {op.getWQuery(), op.getWKey(), op.getWValue()}, biases);
    SmallVector<Value> split;
    for (Value t : qkv) {
      auto tt = cast<RankedTensorType>(t.getType());
      SmallVector<int64_t> shape(tt.getShape().drop_back(2));
      int64_t width = tt.getShape().back();
      shape.append({heads, tt.getDimSize(tt.getRank() - 2), width / heads});
      split.push_back(SplitHeadsOp::create(
          rw, loc, RankedTensorType::get(shape, rw.getF32Type()), t,
          rw.getI64IntegerAttr(heads)));
    }
    int64_t headDim = op.getWQuery().getType().getDimSize(1) / heads;
    double scale = op.getScale() ? op.getScale()->convertToDouble()
                                 : 1.0 / std::sqrt(double(headDim));
    SdpaOp s = makeSdpa(rw, loc, split[0], split[1], split[2],
                        op.getCausal() ? CausalKind::top_left : CausalKind::none,
                        scale, op.getDropoutPAttr(), op.getSeedAttr());
    auto qt = cast<RankedTensorType>(qkv[0].getType());
    Value ctx = MergeHeadsOp::create(
        rw, loc, RankedTensorType::get(qt.getShape(), rw.getF32Type()), s);
    if (Value wo = op.getWOut())
      ctx = buildProjection(rw, loc, ctx, toF32(rw, loc, wo),
                            toF32(rw, loc, op.getBOut()));
    finish(rw, op, ctx);
    return success();
  }
};

struct AttnDecomposePass : impl::AttnDecomposePassBase<AttnDecomposePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeSelfAttention, DecomposeCausalAttention,
                 DecomposeMultiHeadAttention>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::attn
