//===- ConstantElements.h - reading constant tensors ------------*- C++ -*-===//
//
// Constants reach the attn ops either as dense elements or, for weights
// imported from models, as dense resource blobs (kept out of line so large
// models print and parse quickly). Analyses that read constant values (mask
// folding, raising) see both through this one helper.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CONSTANTELEMENTS_H
#define ATTN_CONSTANTELEMENTS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::attn {

/// The elements of `v` if it is a constant tensor (dense or a dense
/// resource blob of a non-bool element type).
inline std::optional<DenseElementsAttr> constantElements(Value v) {
  Attribute attr;
  if (!v || !matchPattern(v, m_Constant(&attr)))
    return std::nullopt;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr))
    return dense;
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  if (!resource || !resource.getRawHandle().getBlob() ||
      resource.getType().getElementType().isInteger(1))
    return std::nullopt;
  ArrayRef<char> data = resource.getRawHandle().getBlob()->getData();
  bool splat = false;
  if (!DenseElementsAttr::isValidRawBuffer(resource.getType(), data, splat))
    return std::nullopt;
  return DenseElementsAttr::getFromRawBuffer(resource.getType(), data);
}

} // namespace mlir::attn

#endif // ATTN_CONSTANTELEMENTS_H
