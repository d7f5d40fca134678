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

#include "LinalgBuilders.h"
#include "attn/AttnOps.h"
#include "attn/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
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
        op.getWindowLeftAttr(), op.getWindowRightAttr(), op.getSoftcapAttr(),
        op.getScaleAttr(),
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

/// The same fold for the transposes an export leaves around an attention
/// core: sdpa(transpose(q), transpose(k), transpose(v)) whose result is only
/// transposed back, each transpose swapping heads and tokens.
struct FoldTransposedSdpa : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;
  static bool swapsHeadsAndTokens(linalg::TransposeOp t) {
    ArrayRef<int64_t> perm = t.getPermutation();
    int64_t r = perm.size();
    if (r < 3)
      return false;
    for (int64_t i = 0; i < r; ++i) {
      int64_t want = i == r - 3 ? r - 2 : i == r - 2 ? r - 3 : i;
      if (perm[i] != want)
        return false;
    }
    return true;
  }
  LogicalResult matchAndRewrite(SdpaOp op, PatternRewriter &rw) const override {
    if (op.getLayout() != HeadLayout::heads_major ||
        op.getQuery().getType().getRank() < 3)
      return rw.notifyMatchFailure(op, "not a heads-major sdpa");
    SmallVector<Value> sources;
    for (Value v : {op.getQuery(), op.getKey(), op.getValue()}) {
      auto t = v.getDefiningOp<linalg::TransposeOp>();
      if (!t || !swapsHeadsAndTokens(t))
        return rw.notifyMatchFailure(op, "an operand is not a head transpose");
      sources.push_back(t.getInput());
    }
    if (op.getResult().use_empty() ||
        !llvm::all_of(op.getResult().getUsers(), [](Operation *u) {
          auto t = dyn_cast<linalg::TransposeOp>(u);
          return t && swapsHeadsAndTokens(t);
        }))
      return rw.notifyMatchFailure(op, "result is not only transposed back");
    auto rt = op.getType();
    int64_t r = rt.getRank();
    SmallVector<int64_t> shape(rt.getShape());
    std::swap(shape[r - 3], shape[r - 2]);
    auto newOp = SdpaOp::create(
        rw, op.getLoc(), RankedTensorType::get(shape, rt.getElementType()),
        sources[0], sources[1], sources[2], op.getMask(), op.getCausalAttr(),
        op.getMaskKindAttr(),
        HeadLayoutAttr::get(rw.getContext(), HeadLayout::seq_major),
        op.getWindowLeftAttr(), op.getWindowRightAttr(), op.getSoftcapAttr(),
        op.getScaleAttr(), op.getDropoutPAttr(), op.getSeedAttr());
    for (Operation *user : llvm::make_early_inc_range(op.getResult().getUsers())) {
      auto t = cast<linalg::TransposeOp>(user);
      Value r2 = newOp.getResult();
      if (r2.getType() != t.getResult()[0].getType())
        r2 = tensor::CastOp::create(rw, t.getLoc(), t.getResult()[0].getType(), r2);
      rw.replaceOp(t, r2);
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

/// An f32 contraction (out + a * b over a reduction loop), the kind
/// attn-vectorize-contractions takes when the two innermost dims of each
/// operand are its m/k, k/n and m/n loops. A transpose or reshape folded
/// into it must not move an operand's two innermost loops (nor split them):
/// the copy it saves is one pass over memory,
/// the scalar contraction it would leave runs 10-100 times slower (a
/// projection written straight into [B, H, T, d] through a permuted output
/// map: 4 x 0.5 GFLOP went from ~10 to ~800 ms).
bool isContraction(linalg::LinalgOp op) {
  if (op.getNumReductionLoops() == 0 || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 ||
      !llvm::all_of(op->getOperandTypes(), [](Type t) {
        auto rt = dyn_cast<RankedTensorType>(t);
        return rt && rt.getElementType().isF32();
      }))
    return false;
  // Named contractions (batch_matmul, ...) have the same body.
  return detail::isMulAccBody(op);
}

/// The loop dims of the two innermost results of `map` (-1 for a constant).
std::pair<int64_t, int64_t> innerLoops(AffineMap map) {
  auto loop = [&](int64_t back) -> int64_t {
    int64_t r = map.getNumResults() - 1 - back;
    if (r < 0)
      return -1;
    auto d = dyn_cast<AffineDimExpr>(map.getResult(r));
    return d ? int64_t(d.getPosition()) : -1;
  };
  return {loop(1), loop(0)};
}

/// Whether replacing `op`'s indexing map of `operand` by `map` keeps a
/// contraction's innermost loops in place (always true for other ops).
bool keepsInnerLoops(linalg::LinalgOp op, OpOperand *operand, AffineMap map) {
  return !isContraction(op) ||
         innerLoops(op.getMatchingIndexingMap(operand)) == innerLoops(map);
}

/// A linalg.transpose feeding a structured op (a head transpose read by an
/// elementwise op, a transpose of a contraction's batch dims) becomes a
/// change of that operand's indexing map: the consumer reads the
/// untransposed tensor.
/// Named contractions are generalized first so that their maps can change.
struct FoldTransposeIntoConsumer : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rw) const override {
    if (isa<linalg::TransposeOp>(op) || !op.hasPureTensorSemantics())
      return rw.notifyMatchFailure(op, "not a tensor consumer");
    // result[x] = input[y] with y[perm[i]] = x[i]: the input's map lists,
    // for each input dim j, the consumer's expression for x[inv[j]].
    auto foldedMap = [&](OpOperand *in, linalg::TransposeOp t) {
      ArrayRef<int64_t> perm = t.getPermutation();
      SmallVector<int64_t> inv(perm.size());
      for (auto [i, p] : llvm::enumerate(perm))
        inv[p] = i;
      AffineMap old = op.getMatchingIndexingMap(in);
      SmallVector<AffineExpr> exprs;
      for (int64_t j = 0; j < static_cast<int64_t>(perm.size()); ++j)
        exprs.push_back(old.getResult(inv[j]));
      return AffineMap::get(old.getNumDims(), old.getNumSymbols(), exprs,
                            rw.getContext());
    };
    // The first transposed input whose fold keeps a contraction's inner
    // loops.
    OpOperand *use = nullptr;
    linalg::TransposeOp transpose;
    AffineMap folded;
    for (OpOperand *in : op.getDpsInputOperands())
      if (auto t = in->get().getDefiningOp<linalg::TransposeOp>()) {
        AffineMap m = foldedMap(in, t);
        if (!keepsInnerLoops(op, in, m))
          continue;
        use = in;
        transpose = t;
        folded = m;
        break;
      }
    if (!use)
      return rw.notifyMatchFailure(op, "no transposed input to fold");
    linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(op.getOperation());
    if (!generic) {
      FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rw, op);
      if (failed(g))
        return rw.notifyMatchFailure(op, "cannot generalize");
      generic = *g;
      use = &generic->getOpOperand(use->getOperandNumber());
    }
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    maps[use->getOperandNumber()] = folded;
    rw.modifyOpInPlace(generic, [&] {
      generic.setIndexingMapsAttr(rw.getAffineMapArrayAttr(maps));
      use->set(transpose.getInput());
    });
    return success();
  }
};

/// A structured op whose only use is a linalg.transpose writes the
/// transposed layout directly (an elementwise op's result transposed
/// before a head merge; a contraction only where its inner loops stay).
struct FoldTransposeIntoProducer : OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rw) const override {
    auto producer = transpose.getInput().getDefiningOp<linalg::GenericOp>();
    if (!producer || producer->getNumResults() != 1 ||
        !producer->getResult(0).hasOneUse() ||
        !producer.hasPureTensorSemantics())
      return rw.notifyMatchFailure(transpose, "no single-use generic producer");
    OpOperand *init = producer.getDpsInitOperand(0);
    // A reduction's init is read: it must be a fresh fill (possibly
    // reshaped) or an unread tensor.empty, whose contents do not depend on
    // the layout.
    Value initVal = init->get();
    while (auto r = initVal.getDefiningOp<tensor::ExpandShapeOp>())
      initVal = r.getSrc();
    while (auto r = initVal.getDefiningOp<tensor::CollapseShapeOp>())
      initVal = r.getSrc();
    auto fill = initVal.getDefiningOp<linalg::FillOp>();
    if (fill) {
      if (!fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
        return rw.notifyMatchFailure(transpose, "init is not a fresh fill");
    } else if (producer.payloadUsesValueFromOperand(init)) {
      return rw.notifyMatchFailure(transpose, "init contents are used");
    }
    ArrayRef<int64_t> perm = transpose.getPermutation();
    AffineMap old = producer.getMatchingIndexingMap(init);
    // out[x] = produced[y], y[perm[i]] = x[i]: the new output map lists the
    // producer's expression for y[perm[i]] at position i.
    SmallVector<AffineExpr> exprs;
    for (int64_t p : perm)
      exprs.push_back(old.getResult(p));
    AffineMap folded = AffineMap::get(old.getNumDims(), old.getNumSymbols(),
                                      exprs, rw.getContext());
    if (!keepsInnerLoops(producer, init, folded))
      return rw.notifyMatchFailure(transpose, "would move a contraction's "
                                              "inner loops");
    Location loc = transpose.getLoc();
    Value newInit = transpose.getInit();
    if (fill)
      newInit = linalg::FillOp::create(rw, loc, fill.getInputs(),
                                       ValueRange{transpose.getInit()})
                    .getResult(0);
    SmallVector<AffineMap> maps = producer.getIndexingMapsArray();
    maps[init->getOperandNumber()] = folded;
    rw.setInsertionPoint(transpose);
    auto fused = linalg::GenericOp::create(
        rw, loc, TypeRange{transpose.getResult()[0].getType()},
        producer.getDpsInputs(), ValueRange{newInit}, maps,
        producer.getIteratorTypesArray());
    rw.inlineRegionBefore(producer.getRegion(), fused.getRegion(),
                          fused.getRegion().begin());
    rw.replaceOp(transpose, fused.getResults());
    rw.eraseOp(producer);
    return success();
  }
};

/// Whether a reshape being propagated sits between a linalg.transpose and
/// the structured op it feeds or is fed by.
bool touchesTranspose(OpOperand *fused) {
  Value v = fused->get();
  if (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>())
    return collapse.getSrc().getDefiningOp<linalg::TransposeOp>() != nullptr;
  if (auto expand = v.getDefiningOp<tensor::ExpandShapeOp>())
    return expand.getSrc().getDefiningOp<linalg::TransposeOp>() != nullptr;
  // Producer side: a generic result reshaped and then transposed.
  for (Operation *user : v.getUsers())
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user))
      for (Operation *u : expand->getUsers())
        if (isa<linalg::TransposeOp>(u))
          return true;
  return false;
}

/// Whether propagating the reshape at `fused` through the structured op on
/// its other side leaves a contraction's innermost loops whole: only its
/// batch dims may be split (B * H into B, H), not its m, n or k (a
/// projection's H * d columns into H and d).
bool keepsContractionLoops(OpOperand *fused) {
  linalg::LinalgOp op;
  OpOperand *operand = nullptr;
  SmallVector<ReassociationIndices> groups;
  if (auto collapse = fused->get().getDefiningOp<tensor::CollapseShapeOp>()) {
    // The consumer's loops expand as the collapsed operand's dims.
    op = dyn_cast<linalg::LinalgOp>(fused->getOwner());
    operand = fused;
    groups = collapse.getReassociationIndices();
  } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(fused->getOwner())) {
    // The producer's loops expand as its result's dims.
    auto result = dyn_cast<OpResult>(fused->get());
    op = result ? dyn_cast<linalg::LinalgOp>(result.getOwner())
                : linalg::LinalgOp();
    if (op)
      operand = op.getDpsInitOperand(result.getResultNumber());
    groups = expand.getReassociationIndices();
  }
  if (!op || !operand || !isContraction(op))
    return true;
  AffineMap map = op.getMatchingIndexingMap(operand);
  SmallVector<int64_t> inner;
  for (AffineMap m : op.getIndexingMapsArray()) {
    auto [a, b] = innerLoops(m);
    inner.append({a, b});
  }
  for (auto [j, g] : llvm::enumerate(groups)) {
    if (g.size() < 2 || j >= map.getNumResults())
      continue;
    auto d = dyn_cast<AffineDimExpr>(map.getResult(j));
    if (d && llvm::is_contained(inner, int64_t(d.getPosition())))
      return false;
  }
  return true;
}

/// Reshape propagation works on linalg.generic: a named contraction whose
/// operand is a reshaped transpose (or whose result is reshaped and then
/// transposed) is generalized first.
struct GeneralizeReshapedContraction
    : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rw) const override {
    if (isa<linalg::GenericOp, linalg::TransposeOp, linalg::FillOp>(op) ||
        !op.hasPureTensorSemantics())
      return rw.notifyMatchFailure(op, "nothing to generalize");
    bool involved = llvm::any_of(op.getDpsInputOperands(), touchesTranspose);
    for (Value r : op->getResults())
      for (Operation *u : r.getUsers())
        if (auto expand = dyn_cast<tensor::ExpandShapeOp>(u))
          for (Operation *uu : expand->getUsers())
            involved |= isa<linalg::TransposeOp>(uu);
    if (!involved)
      return rw.notifyMatchFailure(op, "no reshaped transpose around it");
    if (failed(linalg::generalizeNamedOp(rw, op)))
      return rw.notifyMatchFailure(op, "cannot generalize");
    return success();
  }
};

struct AttnFoldHeadTransposesPass
    : impl::AttnFoldHeadTransposesPassBase<AttnFoldHeadTransposesPass> {
  void runOnOperation() override {
    // The attention-level folds first: the linalg-level ones below would
    // otherwise take the transposes around an sdpa into its neighbours
    // (the projections) one by one, leaving the sdpa heads-major.
    RewritePatternSet attnPatterns(&getContext());
    attnPatterns.add<FoldSplitSdpaMerge, FoldTransposedSdpa, CancelMergeOfSplit,
                     CancelSplitOfMerge>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(attnPatterns))))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldSplitSdpaMerge, FoldTransposedSdpa, CancelMergeOfSplit,
                 CancelSplitOfMerge,
                 FoldTransposeIntoConsumer, FoldTransposeIntoProducer,
                 GeneralizeReshapedContraction>(&getContext());
    // Exported graphs merge (batch, head) with a reshape between the head
    // transpose and the batched matmul; propagating such reshapes through
    // the matmul (expanding its batch loop) puts the transpose right next to
    // it, where it folds. Only reshapes that touch a transpose move, and
    // none that would split a contraction's m, n or k.
    linalg::populateFoldReshapeOpsByExpansionPatterns(
        patterns, [](OpOperand *fused) {
          return touchesTranspose(fused) && keepsContractionLoops(fused);
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::attn
