//===- MaskAnalysis.h - reading constant attention masks --------*- C++ -*-===//
//
// Constant masks as grids of "masked?" flags, shared by attn-fold-mask and
// by the ONNX importer's raising (which must know a mask is causal before it
// chooses an op without a mask operand). Dense constants and dense resource
// blobs are read alike (ConstantElements.h).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_MASKANALYSIS_H
#define ATTN_MASKANALYSIS_H

#include "attn/AttnOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Value.h"

#include <optional>
#include <vector>

namespace mlir::attn {

/// Additive values at or below this are "masked": -1e4 is the smallest
/// magnitude exporters use (BERT, GPT-2's masked_bias).
constexpr double kMaskedAdditive = -1.0e4;

/// A constant mask read as a [rows, cols] grid of "masked?" flags.
struct MaskGrid {
  int64_t rows = 0, cols = 0;
  std::vector<bool> masked;
  /// An additive mask masks some key by a finite value (-1e4, finfo.min),
  /// not -inf: a row it masks entirely is a uniform shift of the scores,
  /// softmax(s), not a row of zeros.
  bool finiteMasked = false;
  bool at(int64_t i, int64_t j) const { return masked[i * cols + j]; }
  /// Some row masks every key.
  bool hasFullyMaskedRow() const;
};

/// The grid of `attr` applied as a `kind` mask, or nothing if it is not a
/// pure mask (varies along leading dims, or has an additive value that is
/// neither 0 nor masked). Additive values are taken times `scale` (a scale
/// applied to the scores after the mask was added).
std::optional<MaskGrid> readMask(DenseElementsAttr attr, MaskKind kind,
                                 double scale = 1.0);

/// True if the grid masks exactly the keys j > i + offset.
bool isTriangle(const MaskGrid &g, int64_t offset);

/// `mask` with slices at the origin (offsets 0, strides 1, no rank change:
/// mask[:T, :T]) peeled off; `sliced` tells whether any was. Null if a
/// slice starts elsewhere.
Value peelOriginSlices(Value mask, bool &sliced);

/// `g`, read from the source of origin slices, cut to the part the sliced
/// mask of type `sliced` covers: a static size below the grid's keeps the
/// first rows or keys (a [1, T] slice of a triangle is its first row, which
/// broadcasts over every query; not a triangle). Dynamic sizes keep the grid.
void clipToSlice(MaskGrid &g, Type sliced);

} // namespace mlir::attn

#endif // ATTN_MASKANALYSIS_H
