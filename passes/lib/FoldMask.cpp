//===- FoldMask.cpp - attn-fold-mask ---------------------------------------===//
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
//
//===----------------------------------------------------------------------===//

#include "attn/AttnOps.h"
#include "attn/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <optional>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFOLDMASKPASS
#include "attn/Passes.h.inc"

namespace {

/// Additive values at or below this are "masked": -1e4 is the smallest
/// magnitude exporters use (BERT, GPT-2's masked_bias).
constexpr double kMaskedAdditive = -1.0e4;

/// A constant mask read as a [rows, cols] grid of "masked?" flags, or
/// nothing if it is not a pure mask (varies along leading dims, or has an
/// additive value that is neither 0 nor a large negative number).
struct MaskGrid {
  int64_t rows = 0, cols = 0;
  std::vector<bool> masked;
  bool at(int64_t i, int64_t j) const { return masked[i * cols + j]; }
};

std::optional<MaskGrid> readMask(DenseElementsAttr attr, MaskKind kind) {
  auto type = cast<RankedTensorType>(attr.getType());
  if (type.getRank() < 2)
    return std::nullopt;
  MaskGrid g;
  g.rows = type.getDimSize(type.getRank() - 2);
  g.cols = type.getDimSize(type.getRank() - 1);
  int64_t plane = g.rows * g.cols;
  if (plane == 0 || plane > (int64_t(1) << 26))
    return std::nullopt;
  int64_t planes = type.getNumElements() / plane;
  g.masked.assign(plane, false);
  if (kind == MaskKind::additive) {
    if (!isa<FloatType>(type.getElementType()))
      return std::nullopt;
    auto values = attr.getValues<APFloat>();
    for (int64_t p = 0; p < planes; ++p)
      for (int64_t e = 0; e < plane; ++e) {
        double v = values[p * plane + e].convertToDouble();
        bool m = v <= kMaskedAdditive;
        if (!m && v != 0.0)
          return std::nullopt; // a real bias, not a mask
        if (p == 0)
          g.masked[e] = m;
        else if (g.masked[e] != m)
          return std::nullopt; // differs between batch/head planes
      }
    return g;
  }
  if (!type.getElementType().isInteger(1))
    return std::nullopt;
  auto values = attr.getValues<bool>();
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t e = 0; e < plane; ++e) {
      bool v = values[p * plane + e];
      bool m = kind == MaskKind::masked_where_true ? v : !v;
      if (p == 0)
        g.masked[e] = m;
      else if (g.masked[e] != m)
        return std::nullopt;
    }
  return g;
}

/// True if the grid masks exactly the keys j > i + offset.
bool isTriangle(const MaskGrid &g, int64_t offset) {
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t j = 0; j < g.cols; ++j)
      if (g.at(i, j) != (j > i + offset))
        return false;
  return true;
}

bool masksNothing(const MaskGrid &g) {
  return llvm::none_of(g.masked, [](bool m) { return m; });
}

struct FoldConstantMask : OpRewritePattern<SdpaOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SdpaOp op,
                                PatternRewriter &rw) const override {
    Value mask = op.getMask();
    if (!mask)
      return rw.notifyMatchFailure(op, "no mask");
    // The seed slices its registered buffer: mask[:T, :T] at the origin
    // keeps a top-left triangle top-left whatever T is.
    bool originSlice = false;
    if (auto slice = mask.getDefiningOp<tensor::ExtractSliceOp>()) {
      if (!llvm::all_of(slice.getMixedOffsets(),
                        [](OpFoldResult o) { return isConstantIntValue(o, 0); }) ||
          !llvm::all_of(slice.getMixedStrides(),
                        [](OpFoldResult s) { return isConstantIntValue(s, 1); }) ||
          slice.getSourceType().getRank() != slice.getResultType().getRank())
        return rw.notifyMatchFailure(op, "mask is a slice away from the origin");
      mask = slice.getSource();
      originSlice = true;
    }
    DenseElementsAttr attr;
    if (!matchPattern(mask, m_Constant(&attr)))
      return rw.notifyMatchFailure(op, "mask is not a constant");
    std::optional<MaskGrid> grid = readMask(attr, op.getMaskKind());
    if (!grid)
      return rw.notifyMatchFailure(op, "constant is not a pure 0/masked grid");

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
      folded = CausalKind::bottom_right;
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

struct AttnFoldMaskPass : impl::AttnFoldMaskPassBase<AttnFoldMaskPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FoldConstantMask>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::attn
