//===- FoldMask.cpp - attn-fold-mask --------------------------------------===//
//
// Models carry their causal mask as data: the seed registers
// triu(ones(context, context), 1) as a buffer and slices [:T, :T] of it;
// exports turn it into a bool constant (true = masked), a tril constant
// (true = attend) or an additive constant (-inf, -1e4, -1e9 or finfo.min
// above the diagonal). Read as data, the mask costs a Tq x Tk load per
// score and hides the structure that lets the flash lowering skip every
// block above the diagonal. This pass proves that a constant mask is exactly
// a causal triangle and replaces it by the `causal` attribute (top-left or
// bottom-right, whichever its diagonal matches); a mask that masks nothing
// is dropped. Anything else (another diagonal, a non-constant mask, a mask
// that varies along batch or head dims, a real additive bias) stays a mask.
// Masks computed in the IR from indices alone (linalg.generic on
// linalg.index comparisons, tensor.generate) are evaluated at compile time
// and judged the same way.
//
//===----------------------------------------------------------------------===//

#include "attn/AttnOps.h"
#include "attn/ConstantElements.h"
#include "attn/MaskAnalysis.h"
#include "attn/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <limits>
#include <optional>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFOLDMASKPASS
#include "attn/Passes.h.inc"

namespace {

/// A scalar while evaluating a mask computation: integers (i1, index, iN)
/// as int64, sign-extended from their width as getSExtValue reads
/// constants (i1 true is -1), floats as double.
struct Scalar {
  bool isFloat = false;
  int64_t i = 0;
  double f = 0;
};

/// The width of integer (or index) type `t`, 64 for anything else.
unsigned widthOf(Type t) {
  if (auto it = dyn_cast<IntegerType>(t))
    return std::min(it.getWidth(), 64u);
  return 64;
}

/// `v` wrapped to `width` bits and sign-extended back.
int64_t wrapSigned(int64_t v, unsigned width) {
  if (width >= 64)
    return v;
  unsigned shift = 64 - width;
  return static_cast<int64_t>(static_cast<uint64_t>(v) << shift) >> shift;
}

/// `v` wrapped to `width` bits, as an unsigned value.
int64_t wrapUnsigned(int64_t v, unsigned width) {
  if (width >= 64)
    return v;
  return static_cast<int64_t>(static_cast<uint64_t>(v) &
                              ((uint64_t(1) << width) - 1));
}

/// Evaluates the body of a mask computation (a linalg.generic with no
/// inputs, or a tensor.generate) at one index tuple. Only the pure index
/// arithmetic masks are built from is understood; anything else fails.
std::optional<Scalar> evalBody(Block &body, ArrayRef<int64_t> idx,
                               bool blockArgsAreIndices) {
  llvm::DenseMap<Value, Scalar> env;
  if (blockArgsAreIndices)
    for (auto [a, v] : llvm::zip(body.getArguments(), idx))
      env[a] = Scalar{false, v, 0};
  auto get = [&](Value v) -> std::optional<Scalar> {
    auto it = env.find(v);
    if (it != env.end())
      return it->second;
    // A scalar constant from outside the region.
    Attribute a;
    if (matchPattern(v, m_Constant(&a))) {
      if (auto ia = dyn_cast<IntegerAttr>(a))
        return Scalar{false, ia.getValue().getSExtValue(), 0};
      if (auto fa = dyn_cast<FloatAttr>(a))
        return Scalar{true, 0, fa.getValueAsDouble()};
      if (auto ba = dyn_cast<BoolAttr>(a))
        return Scalar{false, ba.getValue() ? -1 : 0, 0};
    }
    return std::nullopt;
  };
  for (Operation &op : body) {
    if (auto y = dyn_cast<linalg::YieldOp>(op))
      return get(y.getOperand(0));
    if (auto y = dyn_cast<tensor::YieldOp>(op))
      return get(y.getValue());
    if (auto ix = dyn_cast<linalg::IndexOp>(op)) {
      env[ix] = Scalar{false, idx[ix.getDim()], 0};
      continue;
    }
    if (auto c = dyn_cast<arith::ConstantOp>(op)) {
      auto v = get(c);
      if (!v)
        return std::nullopt;
      env[c] = *v;
      continue;
    }
    SmallVector<Scalar> in;
    for (Value o : op.getOperands()) {
      auto v = get(o);
      if (!v)
        return std::nullopt;
      in.push_back(*v);
    }
    if (op.getNumResults() != 1)
      return std::nullopt;
    Scalar r;
    if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
      // (Sign-extended values keep the unsigned order of their width.)
      int64_t a = in[0].i, b = in[1].i;
      uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
      using P = arith::CmpIPredicate;
      bool t = false;
      switch (cmp.getPredicate()) {
      case P::eq:
        t = a == b;
        break;
      case P::ne:
        t = a != b;
        break;
      case P::slt:
        t = a < b;
        break;
      case P::ult:
        t = ua < ub;
        break;
      case P::sle:
        t = a <= b;
        break;
      case P::ule:
        t = ua <= ub;
        break;
      case P::sgt:
        t = a > b;
        break;
      case P::ugt:
        t = ua > ub;
        break;
      case P::sge:
        t = a >= b;
        break;
      case P::uge:
        t = ua >= ub;
        break;
      }
      r.i = t ? -1 : 0; // i1, sign-extended
    } else if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
      double a = in[0].f, b = in[1].f;
      using P = arith::CmpFPredicate;
      switch (cmp.getPredicate()) {
      case P::OEQ:
      case P::UEQ:
        r.i = a == b;
        break;
      case P::ONE:
      case P::UNE:
        r.i = a != b;
        break;
      case P::OLT:
      case P::ULT:
        r.i = a < b;
        break;
      case P::OLE:
      case P::ULE:
        r.i = a <= b;
        break;
      case P::OGT:
      case P::UGT:
        r.i = a > b;
        break;
      case P::OGE:
      case P::UGE:
        r.i = a >= b;
        break;
      default:
        return std::nullopt;
      }
      r.i = r.i ? -1 : 0; // i1, sign-extended
    } else if (isa<arith::SelectOp>(op)) {
      r = in[0].i ? in[1] : in[2];
    } else if (isa<arith::AddIOp, arith::SubIOp, arith::MulIOp>(op)) {
      // Two's complement arithmetic, wrapped to the width below.
      uint64_t a = static_cast<uint64_t>(in[0].i),
               c = static_cast<uint64_t>(in[1].i);
      r.i = static_cast<int64_t>(isa<arith::AddIOp>(op)   ? a + c
                                 : isa<arith::SubIOp>(op) ? a - c
                                                          : a * c);
    } else if (isa<arith::AndIOp>(op)) {
      r.i = in[0].i & in[1].i;
    } else if (isa<arith::OrIOp>(op)) {
      r.i = in[0].i | in[1].i;
    } else if (isa<arith::XOrIOp>(op)) {
      r.i = in[0].i ^ in[1].i;
    } else if (isa<arith::IndexCastOp, arith::ExtSIOp, arith::TruncIOp>(op)) {
      r = in[0];
    } else if (isa<arith::IndexCastUIOp, arith::ExtUIOp>(op)) {
      r.i = wrapUnsigned(in[0].i, widthOf(op.getOperand(0).getType()));
    } else if (isa<arith::SIToFPOp>(op)) {
      r = Scalar{true, 0, static_cast<double>(in[0].i)};
    } else if (isa<arith::UIToFPOp>(op)) {
      r = Scalar{true, 0,
                 static_cast<double>(static_cast<uint64_t>(wrapUnsigned(
                     in[0].i, widthOf(op.getOperand(0).getType()))))};
    } else if (isa<arith::NegFOp>(op)) {
      r = Scalar{true, 0, -in[0].f};
    } else if (isa<arith::AddFOp>(op)) {
      r = Scalar{true, 0, in[0].f + in[1].f};
    } else if (isa<arith::SubFOp>(op)) {
      r = Scalar{true, 0, in[0].f - in[1].f};
    } else if (isa<arith::MulFOp>(op)) {
      r = Scalar{true, 0, in[0].f * in[1].f};
    } else {
      return std::nullopt;
    }
    // Integers wrap at their width, sign-extended (i1 true is -1); floats
    // round to their type (f32 arithmetic is not double arithmetic: 3 *
    // 0.1f < 0.3f differs).
    if (!r.isFloat)
      r.i = wrapSigned(r.i, widthOf(op.getResult(0).getType()));
    else if (auto ft = dyn_cast<FloatType>(op.getResult(0).getType())) {
      APFloat v(r.f);
      bool lost = false;
      v.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      r.f = v.convertToDouble();
    }
    env[op.getResult(0)] = r;
  }
  return std::nullopt;
}

/// Evaluates a mask computed in the IR from indices alone (a linalg.generic
/// without inputs, or a tensor.generate) into a constant, if its shape is
/// static and small.
std::optional<DenseElementsAttr> evaluateIndexMask(Value mask) {
  auto type = dyn_cast<RankedTensorType>(mask.getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() > (1 << 20))
    return std::nullopt;
  Block *body = nullptr;
  bool argsAreIndices = false;
  if (auto g = mask.getDefiningOp<linalg::GenericOp>()) {
    if (g.getNumDpsInputs() != 0 || g.getNumResults() != 1 ||
        !llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }))
      return std::nullopt;
    body = g.getBody();
  } else if (auto gen = mask.getDefiningOp<tensor::GenerateOp>()) {
    body = &gen.getBody().front();
    argsAreIndices = true;
  } else {
    return std::nullopt;
  }
  int64_t n = type.getNumElements();
  SmallVector<int64_t> idx(type.getRank(), 0);
  SmallVector<Attribute> values;
  values.reserve(n);
  Type elem = type.getElementType();
  for (int64_t e = 0; e < n; ++e) {
    std::optional<Scalar> v = evalBody(*body, idx, argsAreIndices);
    if (!v)
      return std::nullopt;
    if (elem.isInteger(1))
      values.push_back(BoolAttr::get(elem.getContext(), v->i != 0));
    else if (auto ft = dyn_cast<FloatType>(elem))
      values.push_back(FloatAttr::get(ft, v->isFloat ? v->f : double(v->i)));
    else
      return std::nullopt;
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      if (++idx[d] < type.getDimSize(d))
        break;
      idx[d] = 0;
    }
  }
  return DenseElementsAttr::get(type, values);
}

/// A sliding-window band: keys j with -left <= j - (i + offset) <= right
/// visible (-1 = unbounded on that side).
struct Band {
  int64_t left = -1, right = -1;
};

/// The band the grid is, for this diagonal offset, if it is exactly one.
std::optional<Band> findBand(const MaskGrid &g, int64_t offset) {
  int64_t maxRight = INT64_MIN, maxLeft = INT64_MIN;
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t j = 0; j < g.cols; ++j)
      if (!g.at(i, j)) {
        maxRight = std::max(maxRight, j - (i + offset));
        maxLeft = std::max(maxLeft, (i + offset) - j);
      }
  if (maxRight == INT64_MIN)
    return std::nullopt; // everything masked
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t j = 0; j < g.cols; ++j) {
      int64_t d = j - (i + offset);
      if (g.at(i, j) != (d > maxRight || d < -maxLeft))
        return std::nullopt;
    }
  // Window bounds are distances from the diagonal on each side: a band
  // that excludes the diagonal itself (e.g. j < i) is not a window.
  if (maxRight < 0 || maxLeft < 0)
    return std::nullopt;
  Band band;
  // A side no key lies beyond is unbounded.
  if (maxRight < (g.cols - 1) - offset)
    band.right = maxRight;
  if (maxLeft < (g.rows - 1) + offset)
    band.left = maxLeft;
  return band;
}

bool masksNothing(const MaskGrid &g) {
  return llvm::none_of(g.masked, [](bool m) { return m; });
}

struct FoldConstantMask : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SdpaOp op, PatternRewriter &rw) const override {
    Value mask = op.getMask();
    if (!mask)
      return rw.notifyMatchFailure(op, "no mask");
    // The seed slices its registered buffer: mask[:T, :T] at the origin
    // keeps a top-left triangle top-left whatever T is.
    bool originSlice = false;
    Type slicedType = mask.getType();
    mask = peelOriginSlices(mask, originSlice);
    if (!mask)
      return rw.notifyMatchFailure(op, "mask is a slice away from the origin");
    DenseElementsAttr attr;
    if (auto c = constantElements(mask)) {
      attr = *c;
    } else {
      // Masks built in the IR from iota-style index comparisons.
      std::optional<DenseElementsAttr> evaluated = evaluateIndexMask(mask);
      if (!evaluated)
        return rw.notifyMatchFailure(op, "mask is neither constant nor "
                                         "computed from indices alone");
      attr = *evaluated;
    }
    std::optional<MaskGrid> grid = readMask(attr, op.getMaskKind());
    if (!grid)
      return rw.notifyMatchFailure(op, "constant is not a pure 0/masked grid");
    clipToSlice(*grid, slicedType);
    // A row masked entirely by a finite value keeps softmax(s) (a uniform
    // shift); as an attribute it would be a row of zeros.
    if (grid->finiteMasked && grid->hasFullyMaskedRow())
      return rw.notifyMatchFailure(op, "a row is masked entirely by a finite "
                                       "additive value");

    auto qt = op.getQuery().getType();
    int64_t tq = qt.getDimSize(op.getSeqDimIndex());
    int64_t tk = op.getKey().getType().getDimSize(op.getSeqDimIndex());
    // A broadcast (size-1) row or column cannot be a triangle unless it
    // masks nothing.
    bool fullGrid = grid->rows != 1 && grid->cols != 1;

    CausalKind folded;
    if (masksNothing(*grid)) {
      folded = op.getCausal(); // the mask changes nothing
    } else if (fullGrid && isTriangle(*grid, 0) &&
               (originSlice || !ShapedType::isDynamic(tq))) {
      folded = CausalKind::top_left;
      // With Tq == Tk both alignments coincide; keep an existing one.
      if (op.getCausal() == CausalKind::bottom_right && !originSlice &&
          tq == tk && !ShapedType::isDynamic(tq))
        folded = CausalKind::bottom_right;
    } else if (fullGrid && !originSlice && !ShapedType::isDynamic(tq) &&
               !ShapedType::isDynamic(tk) && isTriangle(*grid, tk - tq)) {
      // Windows lean on the causal diagonal: without a causal attribute on
      // the top-left one, which bottom-right alignment would move.
      if (tq != tk && op.getCausal() == CausalKind::none &&
          (op.getWindowLeft() || op.getWindowRight()))
        return rw.notifyMatchFailure(op, "a bottom-right triangle would move "
                                         "the window's diagonal");
      folded = CausalKind::bottom_right;
    } else if (fullGrid && !originSlice && op.getCausal() == CausalKind::none &&
               !op.getWindowLeft() && !op.getWindowRight() &&
               !ShapedType::isDynamic(tq) && !ShapedType::isDynamic(tk)) {
      // A banded mask: a (causal) sliding window. A band leaning on the
      // bottom-right diagonal is expressible only when causal (right = 0).
      std::optional<Band> band = findBand(*grid, 0);
      CausalKind kind = CausalKind::none;
      if (band && band->right == 0)
        kind = CausalKind::top_left;
      if (!band && tk != tq) {
        band = findBand(*grid, tk - tq);
        if (band && band->right == 0)
          kind = CausalKind::bottom_right;
        else
          band = std::nullopt;
      }
      if (!band || (band->left < 0 && band->right < 0))
        return rw.notifyMatchFailure(op, "mask is not a causal triangle or a "
                                         "sliding-window band");
      rw.modifyOpInPlace(op, [&] {
        op.getMaskMutable().clear();
        op.setMaskKind(MaskKind::masked_where_true);
        op.setCausal(kind);
        if (band->left >= 0)
          op.setWindowLeft(static_cast<uint64_t>(band->left));
        if (band->right > 0)
          op.setWindowRight(static_cast<uint64_t>(band->right));
      });
      return success();
    } else {
      return rw.notifyMatchFailure(op, "mask is not a causal triangle");
    }
    // An explicit mask on top of a different causal alignment is their
    // intersection, which one attribute cannot express.
    if (op.getCausal() != CausalKind::none && folded != op.getCausal() &&
        !(tq == tk && !ShapedType::isDynamic(tq)))
      return rw.notifyMatchFailure(op, "mask and causal attribute disagree");
    if (op.getCausal() != CausalKind::none && folded != CausalKind::none)
      folded = op.getCausal();

    rw.modifyOpInPlace(op, [&] {
      op.getMaskMutable().clear();
      op.setCausal(folded);
      op.setMaskKind(MaskKind::masked_where_true);
    });
    return success();
  }
};

/// The seed's "first method" of causal attention: softmax, multiply by a
/// 0/1 mask, renormalise by the row sum. Since
///   softmax(s) * t / rowsum(softmax(s) * t) == softmax(t ? s : -inf)
/// for any 0/1 mask t, the three extra passes over the weights become one
/// select before the softmax (the form the rest of the compiler knows as a
/// masked softmax). Matched on the named linalg ops an importer produces:
///   %w = linalg.softmax dimension(last) ins(%s)
///   %m = linalg.mul ins(%w, %t)            (%t a 0/1 constant, possibly
///                                           through linalg.broadcast)
///   %r = linalg.reduce { arith.addf } ins(%m) dimensions = [last]
///   %b = linalg.broadcast ins(%r) dimensions = [last]
///   %n = linalg.div ins(%m, %b)
struct FoldRenormalizedSoftmax : OpRewritePattern<linalg::DivOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::DivOp div,
                                PatternRewriter &rw) const override {
    if (div.getNumDpsInputs() != 2 || !div.hasPureTensorSemantics())
      return rw.notifyMatchFailure(div, "not a tensor division");
    Value num = div.getDpsInputs()[0], den = div.getDpsInputs()[1];
    auto mul = num.getDefiningOp<linalg::MulOp>();
    auto bcast = den.getDefiningOp<linalg::BroadcastOp>();
    if (!mul || !bcast)
      return rw.notifyMatchFailure(div, "not (softmax * t) / broadcast(sum)");
    auto type = cast<RankedTensorType>(div.getResultTypes()[0]);
    int64_t last = type.getRank() - 1;
    if (bcast.getDimensions() != ArrayRef<int64_t>{last})
      return rw.notifyMatchFailure(div, "sum is not broadcast along the rows");
    auto reduce = bcast.getInput().getDefiningOp<linalg::ReduceOp>();
    if (!reduce || reduce.getInputs().size() != 1 ||
        reduce.getInputs()[0] != num ||
        reduce.getDimensions() != ArrayRef<int64_t>{last})
      return rw.notifyMatchFailure(div, "denominator is not rowsum(numerator)");
    // A sum from zero: the combiner adds the element to the accumulator,
    // and the accumulator starts as a fill of 0 (a fill of 1 would add 1
    // to every row's sum).
    Block &body = reduce.getCombiner().front();
    auto addOp = dyn_cast<arith::AddFOp>(body.front());
    if (body.getOperations().size() != 2 || !addOp ||
        body.getNumArguments() != 2 ||
        !((addOp.getLhs() == body.getArgument(0) &&
           addOp.getRhs() == body.getArgument(1)) ||
          (addOp.getLhs() == body.getArgument(1) &&
           addOp.getRhs() == body.getArgument(0))) ||
        body.getTerminator()->getOperand(0) != addOp.getResult())
      return rw.notifyMatchFailure(div, "reduction is not a sum");
    auto fill = reduce.getInits()[0].getDefiningOp<linalg::FillOp>();
    if (!fill || !matchPattern(fill.getInputs()[0], m_AnyZeroFloat()))
      return rw.notifyMatchFailure(div, "the row sum does not start at 0");
    Value w, t;
    for (int side = 0; side < 2; ++side) {
      Value a = mul.getDpsInputs()[side], b = mul.getDpsInputs()[1 - side];
      if (auto sm = a.getDefiningOp<linalg::SoftmaxOp>()) {
        if (sm.getDimension() == static_cast<uint64_t>(last)) {
          w = a;
          t = b;
        }
      }
    }
    if (!w)
      return rw.notifyMatchFailure(div, "numerator is not softmax(s) * t");
    // t must be a 0/1 constant (possibly broadcast).
    Value tSource = t;
    if (auto tb = t.getDefiningOp<linalg::BroadcastOp>())
      tSource = tb.getInput();
    std::optional<DenseElementsAttr> tConst = constantElements(tSource);
    DenseElementsAttr tAttr = tConst ? *tConst : DenseElementsAttr();
    if (!tAttr || !isa<FloatType>(tAttr.getElementType()) ||
        !llvm::all_of(tAttr.getValues<APFloat>(), [](const APFloat &v) {
          return v.isZero() || v.isExactlyValue(1.0);
        }))
      return rw.notifyMatchFailure(div, "multiplier is not a 0/1 constant");

    auto softmax = w.getDefiningOp<linalg::SoftmaxOp>();
    Value scores = softmax.getInput();
    Location loc = div.getLoc();
    Type elem = type.getElementType();
    AffineMap id = rw.getMultiDimIdentityMap(type.getRank());
    SmallVector<utils::IteratorType> par(type.getRank(),
                                         utils::IteratorType::parallel);
    Value init = tensor::EmptyOp::create(
        rw, loc, tensor::getMixedSizes(rw, loc, scores), elem);
    Value masked =
        linalg::GenericOp::create(
            rw, loc, TypeRange{type}, ValueRange{scores, t}, ValueRange{init},
            ArrayRef<AffineMap>{id, id, id}, par,
            [&](OpBuilder &b, Location l, ValueRange a) {
              Value zero = arith::ConstantOp::create(b, l, b.getZeroAttr(elem));
              Value keep = arith::CmpFOp::create(
                  b, l, arith::CmpFPredicate::ONE, a[1], zero);
              Value ninf = arith::ConstantOp::create(
                  b, l,
                  b.getFloatAttr(elem,
                                 -std::numeric_limits<double>::infinity()));
              linalg::YieldOp::create(
                  b, l,
                  ValueRange{arith::SelectOp::create(b, l, keep, a[0], ninf)});
            })
            .getResult(0);
    Value out = linalg::SoftmaxOp::create(rw, loc, TypeRange{type}, masked,
                                          softmax.getOutput(), last)
                    .getResult()[0];
    rw.replaceOp(div, out);
    return success();
  }
};

struct AttnFoldMaskPass : impl::AttnFoldMaskPassBase<AttnFoldMaskPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldConstantMask, FoldRenormalizedSoftmax>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::attn
