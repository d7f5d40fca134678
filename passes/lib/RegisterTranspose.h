//===- RegisterTranspose.h - square transposes in vector registers -*- C++
//-*-===//
//
// A square block of n rows of n lanes (n a power of 2), transposed with
// vector.shuffle: log2(n) stages of pairwise shuffles, which LLVM lowers to
// vpermt2ps/vunpck* (16 x 16 f32: 64 shuffles of zmm pairs). Shared by the
// attention kernel (Q^T, mask panels) and the transposing copies.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_PASSES_REGISTERTRANSPOSE_H
#define ATTN_PASSES_REGISTERTRANSPOSE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace mlir::attn::detail {

/// `rows` (n vectors of n lanes, n a power of 2) replaced by the rows of
/// their transpose: element j of row i becomes element i of row j.
void transposeInRegisters(OpBuilder &b, Location loc,
                          SmallVectorImpl<Value> &rows);

} // namespace mlir::attn::detail

#endif // ATTN_PASSES_REGISTERTRANSPOSE_H
