//===- SdpaIndexing.h - indexing shared by the SDPA code generators -------===//
//
// Where batch, head, token and column sit in an attn.sdpa operand of rank 2
// to 4, in either head layout. Used by the passes that emit their own loop
// nests on memrefs (convert-attn-to-gpu, attn-vectorize-sdpa).
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_PASSES_LIB_SDPAINDEXING_H
#define ATTN_PASSES_LIB_SDPAINDEXING_H

#include "attn/AttnOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::attn::detail {

/// Size `i` of `memref`: a constant when static.
inline Value memrefDim(OpBuilder &b, Location loc, Value memref, int64_t i) {
  auto t = cast<MemRefType>(memref.getType());
  if (!t.isDynamicDim(i))
    return arith::ConstantIndexOp::create(b, loc, t.getDimSize(i));
  return memref::DimOp::create(b, loc, memref, i);
}

/// [B, H, T, d] (heads_major) or [B, T, H, d] (seq_major); rank 3 drops B,
/// rank 2 is one head [T, d].
struct SdpaIndexing {
  int64_t rank = 0;
  bool seqMajor = false;

  SdpaIndexing() = default;
  explicit SdpaIndexing(SdpaOp op)
      : rank(op.getQuery().getType().getRank()),
        seqMajor(op.getLayout() == HeadLayout::seq_major) {}

  int64_t seqDim() const {
    return rank == 2 ? 0 : (seqMajor ? rank - 3 : rank - 2);
  }
  int64_t headDim() const { return seqMajor ? rank - 2 : rank - 3; }
  /// Indices of (batch, head, token, column) in an operand.
  SmallVector<Value> at(Value batch, Value head, Value tok, Value col) const {
    SmallVector<Value> idx(rank);
    if (rank == 4)
      idx[0] = batch;
    if (rank >= 3)
      idx[headDim()] = head;
    idx[seqDim()] = tok;
    idx[rank - 1] = col;
    return idx;
  }
};

} // namespace mlir::attn::detail

#endif // ATTN_PASSES_LIB_SDPAINDEXING_H
