//===- FuseHeads.cpp - attn-fuse-heads -------------------------------------===//
//
// The seed's MultiHeadAttentionWrapper runs N CausalAttention heads on the
// same input and concatenates their outputs on the last dim: N small
// projections and N attention cores. Stacking the heads' weights side by
// side gives exactly the efficient MultiHeadAttention with N heads and no
// output projection, whose one wide projection and one batched core the rest
// of the pipeline optimizes:
//
//   concat(causal_attention(x, Wq_i, Wk_i, Wv_i) for i < N)
//     == multi_head_attention(x, [Wq_0 | ... | Wq_N-1], ...) causal
//
// Head i of the fused op reads columns [i*d, (i+1)*d) of each stacked
// weight, i.e. Wq_i, and writes columns [i*d, (i+1)*d) of the output: the
// same numbers in the same places. Dropout is not fused (each head draws
// its own random numbers), nor are heads with different scales.
//
//===----------------------------------------------------------------------===//

#include "attn/AttnOps.h"
#include "attn/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSEHEADSPASS
#include "attn/Passes.h.inc"

namespace {

struct FuseConcatenatedHeads : OpRewritePattern<tensor::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ConcatOp concat,
                                PatternRewriter &rw) const override {
    auto rt = cast<RankedTensorType>(concat.getType());
    if (concat.getDim() != static_cast<uint64_t>(rt.getRank() - 1))
      return rw.notifyMatchFailure(concat, "not a concat on the last dim");
    SmallVector<CausalAttentionOp> heads;
    for (Value in : concat.getInputs()) {
      auto h = in.getDefiningOp<CausalAttentionOp>();
      if (!h)
        return rw.notifyMatchFailure(concat, "an input is not causal_attention");
      heads.push_back(h);
    }
    if (heads.size() < 2)
      return rw.notifyMatchFailure(concat, "fewer than two heads");
    CausalAttentionOp first = heads.front();
    for (CausalAttentionOp h : heads) {
      if (h.getInput() != first.getInput())
        return rw.notifyMatchFailure(concat, "heads read different inputs");
      if (h.getDropoutP().convertToFloat() != 0.0f)
        return rw.notifyMatchFailure(concat, "heads use dropout");
      if (h.getScaleAttr() != first.getScaleAttr())
        return rw.notifyMatchFailure(concat, "heads use different scales");
      if (!!h.getBQuery() != !!first.getBQuery())
        return rw.notifyMatchFailure(concat, "some heads have biases, some not");
      // (Widths compared by dim: multi_head_attention needs one static
      // d_out for all three weights, whose rows may differ in type.)
      auto width = [](Value w) {
        return cast<RankedTensorType>(w.getType()).getDimSize(1);
      };
      if (h.getWQuery().getType() != first.getWQuery().getType() ||
          h.getWKey().getType() != first.getWKey().getType() ||
          h.getWValue().getType() != first.getWValue().getType() ||
          width(h.getWQuery()) != width(h.getWKey()) ||
          width(h.getWQuery()) != width(h.getWValue()))
        return rw.notifyMatchFailure(concat, "heads have different widths");
    }
    if (ShapedType::isDynamic(first.getWQuery().getType().getDimSize(1)))
      return rw.notifyMatchFailure(concat, "dynamic head width");

    Location loc = concat.getLoc();
    auto stack = [&](auto get, int64_t dim) -> Value {
      SmallVector<Value> parts;
      for (CausalAttentionOp h : heads)
        parts.push_back(get(h));
      return tensor::ConcatOp::create(rw, loc, dim, parts);
    };
    Value wq = stack([](CausalAttentionOp h) { return h.getWQuery(); }, 1);
    Value wk = stack([](CausalAttentionOp h) { return h.getWKey(); }, 1);
    Value wv = stack([](CausalAttentionOp h) { return h.getWValue(); }, 1);
    Value bq, bk, bv;
    if (first.getBQuery()) {
      bq = stack([](CausalAttentionOp h) { return h.getBQuery(); }, 0);
      bk = stack([](CausalAttentionOp h) { return h.getBKey(); }, 0);
      bv = stack([](CausalAttentionOp h) { return h.getBValue(); }, 0);
    }
    // The op's type follows its operands (the concatenation may be typed
    // more statically than they are: a cast keeps its type).
    auto inType = cast<RankedTensorType>(first.getInput().getType());
    SmallVector<int64_t> shape(inType.getShape());
    shape.back() = cast<RankedTensorType>(wq.getType()).getDimSize(1);
    auto mhaType = RankedTensorType::get(shape, rt.getElementType());
    auto mha = MultiHeadAttentionOp::create(
        rw, loc, mhaType, first.getInput(), wq, wk, wv, bq, bk, bv,
        /*w_out=*/Value(), /*b_out=*/Value(),
        rw.getI64IntegerAttr(static_cast<int64_t>(heads.size())),
        rw.getUnitAttr(), first.getScaleAttr(), rw.getF32FloatAttr(0.0f),
        rw.getI64IntegerAttr(0));
    Value fused = mha.getResult();
    if (mhaType != rt)
      fused = tensor::CastOp::create(rw, loc, rt, fused);
    rw.replaceOp(concat, fused);
    return success();
  }
};

struct AttnFuseHeadsPass : impl::AttnFuseHeadsPassBase<AttnFuseHeadsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseConcatenatedHeads>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::attn
