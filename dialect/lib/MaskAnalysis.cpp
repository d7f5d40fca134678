//===- MaskAnalysis.cpp - reading constant attention masks ----------------===//

#include "attn/MaskAnalysis.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

#include <cmath>

namespace mlir::attn {

std::optional<MaskGrid> readMask(DenseElementsAttr attr, MaskKind kind,
                                 double scale) {
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
        bool m = v * scale <= kMaskedAdditive;
        if (!m && v != 0.0)
          return std::nullopt; // a real bias, not a mask
        if (m && !std::isinf(v))
          g.finiteMasked = true;
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

bool MaskGrid::hasFullyMaskedRow() const {
  for (int64_t i = 0; i < rows; ++i) {
    bool all = true;
    for (int64_t j = 0; all && j < cols; ++j)
      all = at(i, j);
    if (all)
      return true;
  }
  return false;
}

bool isTriangle(const MaskGrid &g, int64_t offset) {
  for (int64_t i = 0; i < g.rows; ++i)
    for (int64_t j = 0; j < g.cols; ++j)
      if (g.at(i, j) != (j > i + offset))
        return false;
  return true;
}

Value peelOriginSlices(Value mask, bool &sliced) {
  sliced = false;
  // Exports slice one axis at a time: peel every slice at the origin.
  while (auto slice = mask.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (!llvm::all_of(
            slice.getMixedOffsets(),
            [](OpFoldResult o) { return isConstantIntValue(o, 0); }) ||
        !llvm::all_of(
            slice.getMixedStrides(),
            [](OpFoldResult s) { return isConstantIntValue(s, 1); }) ||
        slice.getSourceType().getRank() != slice.getResultType().getRank())
      return nullptr;
    mask = slice.getSource();
    sliced = true;
  }
  return mask;
}

void clipToSlice(MaskGrid &g, Type sliced) {
  auto type = dyn_cast<ShapedType>(sliced);
  if (!type || !type.hasRank() || type.getRank() < 2)
    return;
  auto clip = [](int64_t size, int64_t limit) {
    return ShapedType::isDynamic(size) ? limit : std::min(size, limit);
  };
  int64_t rows = clip(type.getDimSize(type.getRank() - 2), g.rows);
  int64_t cols = clip(type.getDimSize(type.getRank() - 1), g.cols);
  if (rows == g.rows && cols == g.cols)
    return;
  std::vector<bool> masked(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      masked[i * cols + j] = g.at(i, j);
  g.rows = rows;
  g.cols = cols;
  g.masked = std::move(masked);
}

} // namespace mlir::attn
