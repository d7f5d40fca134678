//===- FoldRepeatedKv.cpp - attn-fold-repeated-kv -------------------------===//
//
// Grouped-query models written without a GQA op repeat their key/value heads
// before the attention: Hugging Face's repeat_kv is
//
//   k[:, :, None].expand(B, Hkv, n, T, d).reshape(B, Hkv * n, T, d)
//
// and multi-query models broadcast their one K/V head to all query heads.
// Imported, that is an expand_shape, a broadcasting linalg.generic (or
// linalg.broadcast) and a collapse_shape: n copies of K and of V written
// and read again by every query head. attn.sdpa indexes K/V head h / n
// itself, so this pass hands it the unrepeated tensors instead and the
// copies become dead.
//
// The repeat must keep each head's copies together (head h of the repeated
// tensor is head h / n of the source): expand on the dim after the heads,
// as repeat_kv does. torch's k.repeat(1, n, 1, 1) tiles (head h reads
// h % Hkv) and is left alone, as is a tensor broadcast along other dims.
//
//===----------------------------------------------------------------------===//

#include "attn/AttnOps.h"
#include "attn/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFOLDREPEATEDKVPASS
#include "attn/Passes.h.inc"

namespace {

/// A tensor copied along one dim: `src` is the tensor, holding that dim
/// with size 1 (`srcHasDim`) or lacking it.
struct Broadcast {
  Value src;
  bool srcHasDim;
};

/// Whether `v` is `src` copied along exactly the dim `dim`: a
/// linalg.broadcast, or a linalg.generic that yields its one input indexed
/// by every loop but `dim` (absent, or 0 on a size-1 dim); dims of size 1
/// on both sides may be read at 0.
std::optional<Broadcast> matchBroadcast(Value v, int64_t dim) {
  auto vt = cast<RankedTensorType>(v.getType());
  int64_t r = vt.getRank();
  if (auto bc = v.getDefiningOp<linalg::BroadcastOp>()) {
    if (bc.getDimensions() != ArrayRef<int64_t>{dim})
      return std::nullopt;
    return Broadcast{bc.getInput(), false};
  }
  auto g = v.getDefiningOp<linalg::GenericOp>();
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumParallelLoops() != g.getNumLoops() || g.getNumLoops() != r ||
      !g.getIndexingMapsArray()[1].isIdentity())
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  if (yield.getNumOperands() != 1 ||
      yield.getOperand(0) != g.getBody()->getArgument(0))
    return std::nullopt;
  Value src = g.getDpsInputs()[0];
  auto st = dyn_cast<RankedTensorType>(src.getType());
  if (!st) // a scalar filled in (a generalized linalg.fill)
    return std::nullopt;
  AffineMap in = g.getIndexingMapsArray()[0];
  MLIRContext *ctx = v.getContext();
  AffineExpr zero = getAffineConstantExpr(0, ctx);
  // Source dim `s` read by loop `i`: as the loop, or as 0 where both sizes
  // are 1 (a static batch of 1 is imported that way).
  auto readsLoop = [&](int64_t s, int64_t i) {
    AffineExpr e = in.getResult(s);
    return e == getAffineDimExpr(i, ctx) ||
           (e == zero && st.getDimSize(s) == 1 && vt.getDimSize(i) == 1);
  };
  if (in.getNumResults() == r) {
    for (int64_t i = 0; i < r; ++i) {
      bool ok = i == dim ? in.getResult(i) == zero && st.getDimSize(i) == 1
                         : readsLoop(i, i);
      if (!ok)
        return std::nullopt;
    }
    return Broadcast{src, true};
  }
  if (in.getNumResults() != r - 1)
    return std::nullopt;
  for (int64_t i = 0; i + 1 < r; ++i)
    if (!readsLoop(i, i < dim ? i : i + 1))
      return std::nullopt;
  return Broadcast{src, false};
}

/// Where the unrepeated K or V comes from: `src`, viewed with a unit dim
/// inserted at or dropped from `dim`, or as it is.
struct KvSource {
  enum class View { asIs, insertUnit, dropUnit };
  Value src;
  View view;
  int64_t dim;
  int64_t heads; // the unrepeated head count
};

/// The unrepeated K or V behind `v`, whose head dim is `h`: a broadcast of
/// one head to all (multi-query), or a repeat_kv (a copy along a new dim
/// after the heads, [.., Hkv, n, ..] collapsed to [.., Hkv * n, ..]).
std::optional<KvSource> matchRepeat(Value v, int64_t h) {
  auto vt = cast<RankedTensorType>(v.getType());
  if (ShapedType::isDynamic(vt.getDimSize(h)))
    return std::nullopt;
  if (auto bc = matchBroadcast(v, h))
    return KvSource{bc->src,
                    bc->srcHasDim ? KvSource::View::asIs
                                  : KvSource::View::insertUnit,
                    h, 1};
  auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse)
    return std::nullopt;
  for (auto [i, g] : llvm::enumerate(collapse.getReassociationIndices()))
    if (g.size() != (int64_t(i) == h ? 2u : 1u))
      return std::nullopt;
  auto bc = matchBroadcast(collapse.getSrc(), h + 1);
  if (!bc)
    return std::nullopt;
  int64_t heads = cast<RankedTensorType>(bc->src.getType()).getDimSize(h);
  return KvSource{
      bc->src, bc->srcHasDim ? KvSource::View::dropUnit : KvSource::View::asIs,
      h + 1, heads};
}

/// Groups that keep every dim but `dim`, which joins a neighbour: the
/// reassociation between a shape and the same shape with a unit at `dim`.
SmallVector<ReassociationIndices> unitDimGroups(int64_t bigRank, int64_t dim) {
  assert(bigRank >= 2 && dim < bigRank && "a unit dim beside another dim");
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0; i < bigRank; ++i)
    if (i != dim)
      groups.push_back({i});
  if (dim < bigRank - 1)
    groups[dim].insert(groups[dim].begin(), dim);
  else
    groups.back().push_back(dim);
  return groups;
}

Value materialize(PatternRewriter &rw, Location loc, const KvSource &s) {
  auto t = cast<RankedTensorType>(s.src.getType());
  SmallVector<int64_t> shape(t.getShape());
  switch (s.view) {
  case KvSource::View::asIs:
    return s.src;
  case KvSource::View::dropUnit:
    shape.erase(shape.begin() + s.dim);
    return tensor::CollapseShapeOp::create(
        rw, loc, RankedTensorType::get(shape, t.getElementType()), s.src,
        unitDimGroups(t.getRank(), s.dim));
  case KvSource::View::insertUnit: {
    shape.insert(shape.begin() + s.dim, 1);
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rw, loc, s.src);
    sizes.insert(sizes.begin() + s.dim, rw.getIndexAttr(1));
    return tensor::ExpandShapeOp::create(
        rw, loc, RankedTensorType::get(shape, t.getElementType()), s.src,
        unitDimGroups(t.getRank() + 1, s.dim), sizes);
  }
  }
  llvm_unreachable("unknown view");
}

/// `src` (the unrepeated K or V) cast to the sizes `repeated` knows
/// statically but `src` does not: a broadcast's init may type a size its
/// source leaves dynamic, and the op's result keeps that size. Dim `h`
/// (the heads) stays as `src` has it.
Value keepStaticSizes(PatternRewriter &rw, Location loc, Value src,
                      Value repeated, int64_t h) {
  auto st = cast<RankedTensorType>(src.getType());
  auto rt = cast<RankedTensorType>(repeated.getType());
  SmallVector<int64_t> shape(st.getShape());
  for (int64_t i = 0; i < st.getRank(); ++i)
    if (i != h && st.isDynamicDim(i))
      shape[i] = rt.getDimSize(i);
  if (shape == st.getShape())
    return src;
  return tensor::CastOp::create(rw, loc, st.clone(shape), src);
}

struct FoldRepeatedKv : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SdpaOp op, PatternRewriter &rw) const override {
    auto kt = cast<RankedTensorType>(op.getKey().getType());
    int64_t r = kt.getRank();
    if (r < 3)
      return rw.notifyMatchFailure(op, "no head dim");
    int64_t h = op.getLayout() == HeadLayout::seq_major ? r - 2 : r - 3;
    std::optional<KvSource> k = matchRepeat(op.getKey(), h);
    if (!k)
      return rw.notifyMatchFailure(op, "key is not a head repeat");
    std::optional<KvSource> v = matchRepeat(op.getValue(), h);
    if (!v)
      return rw.notifyMatchFailure(op, "value is not a head repeat");
    // K and V keep one head count, which divides the query heads.
    int64_t hq = cast<RankedTensorType>(op.getQuery().getType()).getDimSize(h);
    if (k->heads != v->heads || ShapedType::isDynamic(k->heads) ||
        k->heads <= 0 || ShapedType::isDynamic(hq) || hq % k->heads != 0)
      return rw.notifyMatchFailure(op, "key and value repeat differently");
    Value newK =
              keepStaticSizes(rw, op.getLoc(), materialize(rw, op.getLoc(), *k),
                              op.getKey(), h),
          newV =
              keepStaticSizes(rw, op.getLoc(), materialize(rw, op.getLoc(), *v),
                              op.getValue(), h);
    rw.modifyOpInPlace(op, [&] {
      op.getKeyMutable().assign(newK);
      op.getValueMutable().assign(newV);
    });
    return success();
  }
};

struct AttnFoldRepeatedKvPass
    : impl::AttnFoldRepeatedKvPassBase<AttnFoldRepeatedKvPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldRepeatedKv>(&getContext());
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::attn
