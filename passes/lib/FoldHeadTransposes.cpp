//===- FoldHeadTransposes.cpp - attn-fold-head-transposes ------------------===//
//
// The seed's efficient MHA splits heads with view + transpose(1, 2) and
// merges them with transpose(1, 2) + contiguous().view: two copies of Q, K,
// V and the context per call. The transposes only reorder which index is
// outer; the attention core can read Q/K/V and write O in tokens-before-
// heads order directly. This pass therefore turns
//
//   sdpa(split_heads(q), split_heads(k), split_heads(v)) -> merge_heads
//
// into views and one seq_major sdpa:
//
//   sdpa(expand_shape(q), expand_shape(k), expand_shape(v)) layout(seq_major)
//     -> collapse_shape
//
// and cancels inverse pairs (merge_heads(split_heads(x)) = x and
// split_heads(merge_heads(y)) = y).
//
//===----------------------------------------------------------------------===//

#include "attn/AttnOps.h"
#include "attn/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFOLDHEADTRANSPOSESPASS
#include "attn/Passes.h.inc"

namespace {

/// [..., T, H*d] -> [..., T, H, d] as a view.
Value viewHeads(PatternRewriter &rw, Location loc, Value x, int64_t heads) {
  auto t = cast<RankedTensorType>(x.getType());
  int64_t r = t.getRank();
  SmallVector<int64_t> shape(t.getShape());
  shape.back() = heads;
  shape.push_back(t.getShape().back() / heads);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rw, loc, x);
  sizes.back() = rw.getIndexAttr(heads);
  sizes.push_back(rw.getIndexAttr(shape.back()));
  SmallVector<ReassociationIndices> reassoc;
  for (int64_t i = 0; i + 1 < r; ++i)
    reassoc.push_back({i});
  reassoc.push_back({r - 1, r});
  return tensor::ExpandShapeOp::create(
      rw, loc, RankedTensorType::get(shape, t.getElementType()), x, reassoc,
      sizes);
}

struct FoldSplitSdpaMerge : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rw) const override {
    if (op.getLayout() != HeadLayout::heads_major)
      return rw.notifyMatchFailure(op, "already seq_major");
    SmallVector<SplitHeadsOp> splits;
    for (Value v : {op.getQuery(), op.getKey(), op.getValue()}) {
      auto split = v.getDefiningOp<SplitHeadsOp>();
      if (!split)
        return rw.notifyMatchFailure(op, "an operand is not a split_heads");
      splits.push_back(split);
    }
    if (op.getResult().use_empty() ||
        !llvm::all_of(op.getResult().getUsers(),
                      [](Operation *u) { return isa<MergeHeadsOp>(u); }))
      return rw.notifyMatchFailure(op, "result is not only merged");

    Location loc = op.getLoc();
    SmallVector<Value> views;
    for (SplitHeadsOp s : splits)
      views.push_back(viewHeads(rw, loc, s.getInput(), s.getNumHeads()));
    auto rt = op.getType();
    int64_t r = rt.getRank();
    SmallVector<int64_t> shape(rt.getShape());
    std::swap(shape[r - 3], shape[r - 2]);
    auto newOp = SdpaOp::create(
        rw, loc, RankedTensorType::get(shape, rt.getElementType()), views[0],
        views[1], views[2], op.getMask(), op.getCausalAttr(),
        op.getMaskKindAttr(),
        HeadLayoutAttr::get(rw.getContext(), HeadLayout::seq_major),
        op.getWindowLeftAttr(), op.getWindowRightAttr(), op.getScaleAttr(),
        op.getDropoutPAttr(), op.getSeedAttr());
    for (Operation *user : llvm::make_early_inc_range(op.getResult().getUsers())) {
      auto merge = cast<MergeHeadsOp>(user);
      SmallVector<ReassociationIndices> reassoc;
      for (int64_t i = 0; i + 2 < r; ++i)
        reassoc.push_back({i});
      reassoc.push_back({r - 2, r - 1});
      rw.setInsertionPoint(merge);
      Value merged = tensor::CollapseShapeOp::create(rw, merge.getLoc(),
                                                     newOp.getResult(), reassoc);
      if (merged.getType() != merge.getType())
        merged = tensor::CastOp::create(rw, merge.getLoc(), merge.getType(), merged);
      rw.replaceOp(merge, merged);
    }
    rw.eraseOp(op);
    return success();
  }
};

struct CancelMergeOfSplit : OpRewritePattern<MergeHeadsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MergeHeadsOp op,
                                PatternRewriter &rw) const override {
    auto split = op.getInput().getDefiningOp<SplitHeadsOp>();
    if (!split || split.getInput().getType() != op.getType())
      return rw.notifyMatchFailure(op, "input is not a matching split_heads");
    rw.replaceOp(op, split.getInput());
    return success();
  }
};

struct CancelSplitOfMerge : OpRewritePattern<SplitHeadsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SplitHeadsOp op,
                                PatternRewriter &rw) const override {
    auto merge = op.getInput().getDefiningOp<MergeHeadsOp>();
    if (!merge || merge.getInput().getType() != op.getType())
      return rw.notifyMatchFailure(op, "input is not a matching merge_heads");
    rw.replaceOp(op, merge.getInput());
    return success();
  }
};

struct AttnFoldHeadTransposesPass
    : impl::AttnFoldHeadTransposesPassBase<AttnFoldHeadTransposesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldSplitSdpaMerge, CancelMergeOfSplit, CancelSplitOfMerge>(
        &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::attn
