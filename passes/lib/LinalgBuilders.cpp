//===- LinalgBuilders.cpp - plain linalg forms of attention pieces ---------===//
//
// The reference lowering of attention, one linalg op per textbook step. It
// is deliberately unfused: later passes (mask folding, softmax fusion, flash
// tiling) are checked numerically against what these builders produce.
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"
#include "SdpaIndexing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"

#include <limits>

using namespace mlir;
using utils::IteratorType;

namespace mlir::attn::detail {
namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

Value f32Const(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc,
                                   b.getF32FloatAttr(static_cast<float>(v)));
}

Value emptyF32(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes) {
  return tensor::EmptyOp::create(b, loc, sizes, b.getF32Type());
}

SmallVector<unsigned> range(unsigned n) {
  SmallVector<unsigned> r;
  for (unsigned i = 0; i < n; ++i)
    r.push_back(i);
  return r;
}

/// Fast-math flags for contractions: `contract` lets LLVM form FMAs,
/// `reassoc` lets it vectorise reductions along the contiguous dimension.
arith::FastMathFlagsAttr contractFlags(OpBuilder &b) {
  return arith::FastMathFlagsAttr::get(
      b.getContext(),
      arith::FastMathFlags::contract | arith::FastMathFlags::reassoc);
}

void yieldMulAdd(OpBuilder &b, Location loc, Value x, Value y, Value acc) {
  auto fm = contractFlags(b);
  Value p = arith::MulFOp::create(b, loc, x, y, fm);
  linalg::YieldOp::create(b, loc,
                          ValueRange{arith::AddFOp::create(b, loc, acc, p, fm)});
}

} // namespace

/// tensor.empty of the given sizes, filled with `init`.
Value filled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
             double init) {
  Value empty = tensor::EmptyOp::create(b, loc, sizes, b.getF32Type());
  return linalg::FillOp::create(b, loc, ValueRange{f32Const(b, loc, init)},
                                ValueRange{empty})
      .getResult(0);
}

/// Affine map over `numDims` loops selecting `dims`.
AffineMap dimsMap(OpBuilder &b, unsigned numDims, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(b.getAffineDimExpr(d));
  return AffineMap::get(numDims, 0, exprs, b.getContext());
}

Value generic(OpBuilder &b, Location loc, ValueRange ins, Value out,
              ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iters,
              function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  return linalg::GenericOp::create(b, loc, TypeRange{out.getType()}, ins,
                                   ValueRange{out}, maps, iters, body)
      .getResult(0);
}

Value convertElementType(OpBuilder &b, Location loc, Value t, Type elem) {
  auto type = tensorType(t);
  Type from = type.getElementType();
  if (from == elem)
    return t;
  unsigned r = type.getRank();
  Value out = tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, t),
                                      elem);
  AffineMap id = b.getMultiDimIdentityMap(r);
  SmallVector<IteratorType> iters(r, IteratorType::parallel);
  return generic(b, loc, ValueRange{t}, out, {id, id}, iters,
                 [&](OpBuilder &nb, Location l, ValueRange args) {
                   Value v;
                   if (from.getIntOrFloatBitWidth() < elem.getIntOrFloatBitWidth())
                     v = arith::ExtFOp::create(nb, l, elem, args[0]);
                   else
                     v = arith::TruncFOp::create(nb, l, elem, args[0]);
                   linalg::YieldOp::create(nb, l, ValueRange{v});
                 });
}

void setBand(SdpaConfig &cfg, CausalKind causal, std::optional<uint64_t> left,
             std::optional<uint64_t> right) {
  cfg.causal = causal;
  cfg.windowLeft = left ? clampWindow(*left) : -1;
  cfg.windowRight = right ? clampWindow(*right) : -1;
}

Value buildOutsideBand(OpBuilder &b, Location loc, Value i, Value j,
                       const SdpaConfig &cfg) {
  // d = j - i: how far right of the (shifted) diagonal the key lies.
  Value d = arith::SubIOp::create(b, loc, j, i);
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value outside = arith::ConstantIntOp::create(b, loc, 0, 1);
  auto orIf = [&](arith::CmpIPredicate p, int64_t bound) {
    Value c = arith::CmpIOp::create(b, loc, p, d, cst(bound));
    outside = arith::OrIOp::create(b, loc, outside, c);
  };
  int64_t right = cfg.windowRight;
  if (cfg.causal != CausalKind::none)
    right = right < 0 ? 0 : std::min<int64_t>(right, 0);
  if (right >= 0)
    orIf(arith::CmpIPredicate::sgt, right);
  if (cfg.windowLeft >= 0)
    orIf(arith::CmpIPredicate::slt, -cfg.windowLeft);
  return outside;
}

Value buildSoftcap(OpBuilder &b, Location loc, Value s, double c) {
  Value inv = f32Const(b, loc, 1.0 / c), cap = f32Const(b, loc, c);
  Value t = math::TanhOp::create(b, loc, arith::MulFOp::create(b, loc, s, inv));
  return arith::MulFOp::create(b, loc, t, cap);
}

Value buildApplyMask(OpBuilder &b, Location loc, Value s, Value m,
                     MaskKind kind) {
  Value ninf = f32Const(b, loc, -std::numeric_limits<double>::infinity());
  switch (kind) {
  case MaskKind::masked_where_true:
    return arith::SelectOp::create(b, loc, m, ninf, s);
  case MaskKind::attend_where_true:
    return arith::SelectOp::create(b, loc, m, s, ninf);
  case MaskKind::additive:
    return arith::AddFOp::create(b, loc, s, m);
  }
  llvm_unreachable("unknown mask kind");
}

Value buildWeightedAdd(OpBuilder &b, Location loc, Value w, Value v,
                       Value acc) {
  auto fm = contractFlags(b);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0f));
  Value isZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, w, zero);
  Value prod = arith::MulFOp::create(b, loc, w, v, fm);
  Value term = arith::SelectOp::create(b, loc, isZero, zero, prod);
  return arith::AddFOp::create(b, loc, acc, term, fm);
}

Value buildProjection(OpBuilder &b, Location loc, Value x, Value w,
                      Value bias) {
  unsigned r = tensorType(x).getRank();
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  sizes.back() = tensor::getMixedSize(b, loc, w, 1);
  Value acc = filled(b, loc, sizes, 0.0);
  // Loops (batch..., t, k, n): the reduction k sits outside n so the
  // innermost loop streams contiguous rows of W and of the output.
  unsigned n = r + 1, kDim = r - 1, nDim = r;
  SmallVector<unsigned> rows = range(r - 1);
  SmallVector<unsigned> xDims(rows), oDims(rows);
  xDims.push_back(kDim);
  oDims.push_back(nDim);
  SmallVector<IteratorType> iters(n, IteratorType::parallel);
  iters[kDim] = IteratorType::reduction;
  Value y = generic(b, loc, ValueRange{x, w}, acc,
                    {dimsMap(b, n, xDims), dimsMap(b, n, {kDim, nDim}),
                     dimsMap(b, n, oDims)},
                    iters, [&](OpBuilder &nb, Location l, ValueRange a) {
                      yieldMulAdd(nb, l, a[0], a[1], a[2]);
                    });
  if (!bias)
    return y;
  AffineMap id = b.getMultiDimIdentityMap(r);
  return generic(b, loc, ValueRange{bias}, y,
                 {dimsMap(b, r, {r - 1}), id},
                 SmallVector<IteratorType>(r, IteratorType::parallel),
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   linalg::YieldOp::create(
                       nb, l, ValueRange{arith::AddFOp::create(nb, l, a[1], a[0])});
                 });
}

Value buildSplitHeads(OpBuilder &b, Location loc, Value x, int64_t heads) {
  auto type = tensorType(x);
  unsigned r = type.getRank();
  int64_t width = type.getShape().back(), headDim = width / heads;
  // [..., T, D] -> [..., T, H, d]: a view, no copy.
  SmallVector<ReassociationIndices> reassoc;
  for (unsigned i = 0; i + 1 < r; ++i)
    reassoc.push_back({static_cast<int64_t>(i)});
  reassoc.push_back({static_cast<int64_t>(r - 1), static_cast<int64_t>(r)});
  SmallVector<OpFoldResult> expSizes = tensor::getMixedSizes(b, loc, x);
  expSizes.back() = b.getIndexAttr(heads);
  expSizes.push_back(b.getIndexAttr(headDim));
  SmallVector<int64_t> expShape(type.getShape());
  expShape.back() = heads;
  expShape.push_back(headDim);
  auto expType = RankedTensorType::get(expShape, type.getElementType());
  Value expanded = tensor::ExpandShapeOp::create(b, loc, expType, x, reassoc,
                                                 expSizes);
  // [..., T, H, d] -> [..., H, T, d].
  SmallVector<int64_t> perm;
  for (unsigned i = 0; i + 2 < r; ++i)
    perm.push_back(i);
  perm.append({static_cast<int64_t>(r - 1), static_cast<int64_t>(r - 2),
               static_cast<int64_t>(r)});
  SmallVector<OpFoldResult> outSizes;
  for (int64_t p : perm)
    outSizes.push_back(expSizes[p]);
  Value init = tensor::EmptyOp::create(b, loc, outSizes, type.getElementType());
  return linalg::TransposeOp::create(b, loc, expanded, init, perm)
      .getResult()[0];
}

Value buildMergeHeads(OpBuilder &b, Location loc, Value x) {
  auto type = tensorType(x);
  unsigned r = type.getRank();
  SmallVector<int64_t> perm;
  for (unsigned i = 0; i + 3 < r; ++i)
    perm.push_back(i);
  perm.append({static_cast<int64_t>(r - 2), static_cast<int64_t>(r - 3),
               static_cast<int64_t>(r - 1)});
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  SmallVector<OpFoldResult> tSizes;
  for (int64_t p : perm)
    tSizes.push_back(sizes[p]);
  Value init = tensor::EmptyOp::create(b, loc, tSizes, type.getElementType());
  Value t = linalg::TransposeOp::create(b, loc, x, init, perm).getResult()[0];
  SmallVector<ReassociationIndices> reassoc;
  for (unsigned i = 0; i + 2 < r; ++i)
    reassoc.push_back({static_cast<int64_t>(i)});
  reassoc.push_back({static_cast<int64_t>(r - 2), static_cast<int64_t>(r - 1)});
  return tensor::CollapseShapeOp::create(b, loc, t, reassoc);
}

Value buildSdpa(OpBuilder &b, Location loc, Value q, Value k, Value v,
                Value mask, const SdpaConfig &cfg) {
  // A rank-2 problem is one head: give it a unit head dim and drop it again.
  if (tensorType(q).getRank() == 2) {
    auto addHead = [&](Value t) -> Value {
      auto ty = tensorType(t);
      SmallVector<int64_t> shape{1};
      shape.append(ty.getShape().begin(), ty.getShape().end());
      SmallVector<OpFoldResult> sizes{b.getIndexAttr(1)};
      llvm::append_range(sizes, tensor::getMixedSizes(b, loc, t));
      return tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get(shape, ty.getElementType()), t,
          SmallVector<ReassociationIndices>{{0, 1}, {2}}, sizes);
    };
    Value o = buildSdpa(b, loc, addHead(q), addHead(k), addHead(v), mask, cfg);
    return tensor::CollapseShapeOp::create(
        b, loc, o, SmallVector<ReassociationIndices>{{0, 1}, {2}});
  }

  auto qt = tensorType(q), kt = tensorType(k);
  unsigned r = qt.getRank();
  unsigned hDim = r - 3, iDim = r - 2, jDim = r - 1, cDim = r;
  int64_t hq = qt.getDimSize(hDim), hkv = kt.getDimSize(hDim);
  int64_t group = (hq == hkv) ? 1 : hq / hkv;

  // Key/value maps: query head h reads key/value head h floordiv group, so
  // grouped-query attention never copies K or V.
  auto kvExprs = [&](unsigned numDims, unsigned rowDim, unsigned colDim) {
    SmallVector<AffineExpr> e;
    for (unsigned i = 0; i < hDim; ++i)
      e.push_back(b.getAffineDimExpr(i));
    AffineExpr h = b.getAffineDimExpr(hDim);
    e.push_back(group == 1 ? h : h.floorDiv(group));
    e.push_back(b.getAffineDimExpr(rowDim));
    e.push_back(b.getAffineDimExpr(colDim));
    return AffineMap::get(numDims, 0, e, b.getContext());
  };

  SmallVector<OpFoldResult> qSizes = tensor::getMixedSizes(b, loc, q);
  SmallVector<OpFoldResult> sSizes(qSizes);
  sSizes.back() = tensor::getMixedSize(b, loc, k, r - 2);

  // 1. S = Q K^T. Loops (batch..., h, i, j, c).
  SmallVector<unsigned> bhi = range(r - 1);
  SmallVector<unsigned> qDims(bhi), sDims = range(r);
  qDims.push_back(cDim);
  SmallVector<IteratorType> contractIters(r + 1, IteratorType::parallel);
  contractIters[cDim] = IteratorType::reduction;
  Value scores = generic(
      b, loc, ValueRange{q, k}, filled(b, loc, sSizes, 0.0),
      {dimsMap(b, r + 1, qDims), kvExprs(r + 1, jDim, cDim),
       dimsMap(b, r + 1, sDims)},
      contractIters, [&](OpBuilder &nb, Location l, ValueRange a) {
        yieldMulAdd(nb, l, a[0], a[1], a[2]);
      });

  // 2. Scale, explicit mask and causal mask: masked scores become -inf.
  SmallVector<IteratorType> par(r, IteratorType::parallel);
  AffineMap sId = b.getMultiDimIdentityMap(r);
  SmallVector<Value> maskIns;
  SmallVector<AffineMap> maskMaps;
  if (mask) {
    if (cfg.maskKind == MaskKind::additive)
      mask = convertElementType(b, loc, mask, b.getF32Type());
    auto mt = tensorType(mask);
    unsigned mr = mt.getRank();
    SmallVector<AffineExpr> e;
    for (unsigned a = 0; a < mr; ++a) {
      // A static unit dim broadcasts (reading index 0 is also right when
      // the score dim is 1); dims are aligned at the right, NumPy style.
      e.push_back(mt.getDimSize(a) == 1 ? b.getAffineConstantExpr(0)
                                        : b.getAffineDimExpr(r - mr + a));
    }
    maskIns.push_back(mask);
    maskMaps.push_back(AffineMap::get(r, 0, e, b.getContext()));
  }
  maskMaps.push_back(sId);
  Value causalOffset;
  if (cfg.causal == CausalKind::bottom_right) {
    Value tq = tensor::DimOp::create(b, loc, q, iDim);
    Value tk = tensor::DimOp::create(b, loc, k, r - 2);
    causalOffset = arith::SubIOp::create(b, loc, tk, tq);
  }
  const double negInf = -std::numeric_limits<double>::infinity();
  Value masked = generic(
      b, loc, maskIns, scores, maskMaps, par,
      [&](OpBuilder &nb, Location l, ValueRange a) {
        Value s = a.back();
        s = arith::MulFOp::create(nb, l, s, f32Const(nb, l, cfg.scale));
        if (cfg.softcap > 0.0)
          s = buildSoftcap(nb, l, s, cfg.softcap);
        Value ninf = f32Const(nb, l, negInf);
        if (mask)
          s = buildApplyMask(nb, l, s, a[0], cfg.maskKind);
        if (cfg.hasBand()) {
          Value i = linalg::IndexOp::create(nb, l, iDim);
          Value j = linalg::IndexOp::create(nb, l, jDim);
          if (causalOffset)
            i = arith::AddIOp::create(nb, l, i, causalOffset);
          s = arith::SelectOp::create(nb, l, buildOutsideBand(nb, l, i, j, cfg),
                                      ninf, s);
        }
        linalg::YieldOp::create(nb, l, ValueRange{s});
      });

  // 3. Row max (reduction over j).
  SmallVector<OpFoldResult> rowSizes(sSizes.begin(), sSizes.end() - 1);
  AffineMap rowMap = dimsMap(b, r, range(r - 1));
  SmallVector<IteratorType> rowIters(par);
  rowIters[jDim] = IteratorType::reduction;
  Value rowMax = generic(
      b, loc, ValueRange{masked}, filled(b, loc, rowSizes, negInf),
      {sId, rowMap}, rowIters, [&](OpBuilder &nb, Location l, ValueRange a) {
        linalg::YieldOp::create(
            nb, l, ValueRange{arith::MaximumFOp::create(nb, l, a[0], a[1])});
      });

  // 4. E = exp(S - max); a row whose max is -inf is fully masked: E = 0
  //    there instead of exp(-inf - -inf) = NaN.
  Value expd = generic(
      b, loc, ValueRange{masked, rowMax}, emptyF32(b, loc, sSizes),
      {sId, rowMap, sId}, par, [&](OpBuilder &nb, Location l, ValueRange a) {
        Value ninf = f32Const(nb, l, negInf);
        Value dead = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                           a[1], ninf);
        Value e = math::ExpOp::create(
            nb, l, arith::SubFOp::create(nb, l, a[0], a[1]));
        linalg::YieldOp::create(
            nb, l,
            ValueRange{arith::SelectOp::create(nb, l, dead,
                                               f32Const(nb, l, 0.0), e)});
      });

  // 5. Row sum.
  Value rowSum = generic(
      b, loc, ValueRange{expd}, filled(b, loc, rowSizes, 0.0), {sId, rowMap},
      rowIters, [&](OpBuilder &nb, Location l, ValueRange a) {
        linalg::YieldOp::create(
            nb, l, ValueRange{arith::AddFOp::create(nb, l, a[1], a[0])});
      });

  // 6. P = E / sum (0 for fully masked rows), then dropout.
  SmallVector<Value> dims;
  if (cfg.dropoutP > 0.0)
    for (unsigned d = 0; d < r; ++d)
      dims.push_back(getValueOrCreateConstantIndexOp(b, loc, sSizes[d]));
  Value probs = generic(
      b, loc, ValueRange{expd, rowSum}, emptyF32(b, loc, sSizes),
      {sId, rowMap, sId}, par, [&](OpBuilder &nb, Location l, ValueRange a) {
        Value zero = f32Const(nb, l, 0.0);
        Value empty = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                            a[1], zero);
        Value p = arith::SelectOp::create(
            nb, l, empty, zero, arith::DivFOp::create(nb, l, a[0], a[1]));
        if (cfg.dropoutP > 0.0) {
          // Flat index of this weight in [B..., H, Tq, Tk] order.
          Value flat = linalg::IndexOp::create(nb, l, 0);
          for (unsigned d = 1; d < r; ++d)
            flat = arith::AddIOp::create(
                nb, l, arith::MulIOp::create(nb, l, flat, dims[d]),
                linalg::IndexOp::create(nb, l, d));
          Value ctr = arith::IndexCastUIOp::create(nb, l, nb.getI64Type(), flat);
          Value u = buildPhiloxUniform(nb, l, ctr, cfg.seed);
          Value keep = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGE,
                                             u, f32Const(nb, l, cfg.dropoutP));
          Value scaled = arith::MulFOp::create(
              nb, l, p, f32Const(nb, l, 1.0 / (1.0 - cfg.dropoutP)));
          p = arith::SelectOp::create(nb, l, keep, scaled, zero);
        }
        linalg::YieldOp::create(nb, l, ValueRange{p});
      });

  // 7. O = P V. Loops (batch..., h, i, j, e); j is the reduction, e innermost.
  SmallVector<OpFoldResult> oSizes(qSizes);
  oSizes.back() = tensor::getMixedSize(b, loc, v, r - 1);
  unsigned eDim = r;
  SmallVector<unsigned> pDims = range(r), oDims(bhi);
  oDims.push_back(eDim);
  SmallVector<IteratorType> pvIters(r + 1, IteratorType::parallel);
  pvIters[jDim] = IteratorType::reduction;
  return generic(b, loc, ValueRange{probs, v}, filled(b, loc, oSizes, 0.0),
                 {dimsMap(b, r + 1, pDims), kvExprs(r + 1, jDim, eDim),
                  dimsMap(b, r + 1, oDims)},
                 pvIters, [&](OpBuilder &nb, Location l, ValueRange a) {
                   linalg::YieldOp::create(
                       nb, l, ValueRange{buildWeightedAdd(nb, l, a[0], a[1], a[2])});
                 });
}

bool isMulAccBody(Operation *op) {
  if (op->getNumRegions() != 1 || op->getRegion(0).empty())
    return false;
  Block &body = op->getRegion(0).front();
  if (body.getNumArguments() != 3 || body.getOperations().size() != 3)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&body.front());
  auto add =
      dyn_cast_if_present<arith::AddFOp>(mul ? mul->getNextNode() : nullptr);
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!mul || !add || !yield || yield->getNumOperands() != 1 ||
      yield->getOperand(0) != add.getResult())
    return false;
  Value a = body.getArgument(0), c = body.getArgument(1),
        out = body.getArgument(2);
  bool products = (mul.getLhs() == a && mul.getRhs() == c) ||
                  (mul.getLhs() == c && mul.getRhs() == a);
  bool accumulates = (add.getLhs() == out && add.getRhs() == mul) ||
                     (add.getRhs() == out && add.getLhs() == mul);
  return products && accumulates;
}

} // namespace mlir::attn::detail
