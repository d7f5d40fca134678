//===- SdpaIndexing.h - indexing shared by the SDPA code generators -------===//
//
// Where batch, head, token and column sit in an attn.sdpa operand of rank 2
// to 4, in either head layout, and which keys a query row sees. Used by the
// passes that emit their own loop nests on memrefs (convert-attn-to-gpu,
// attn-vectorize-sdpa).
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
  /// Indices into an explicit mask of type `maskType` for the score of
  /// (batch, head, row, key): the mask's dims align with the trailing dims
  /// of the scores [B, Hq, Tq, Tk] (of this rank, less the key dim when
  /// `noKeyDim`), and a dim of size 1 is read at `zero`.
  SmallVector<Value> maskAt(MemRefType maskType, bool noKeyDim, Value zero,
                            Value batch, Value head, Value row,
                            Value key) const {
    int64_t mr = maskType.getRank();
    int64_t scoreRank = noKeyDim ? rank - 1 : rank;
    SmallVector<Value> idx;
    for (int64_t a = 0; a < mr; ++a) {
      int64_t sd = scoreRank - mr + a; // score dim of [B, H, Tq, Tk]
      if (maskType.getDimSize(a) == 1)
        idx.push_back(zero);
      else if (sd == rank - 1)
        idx.push_back(key);
      else if (sd == rank - 2)
        idx.push_back(row);
      else if (sd == rank - 3)
        idx.push_back(head);
      else
        idx.push_back(batch);
    }
    return idx;
  }
};

/// A window bound as the lowerings compute with it: bounds beyond any
/// sequence length (a tensor dim of 2^40 would be terabytes) are clamped to
/// 2^40, so that index arithmetic on them (q0 + rows + offset + R) cannot
/// overflow; they hide no key either way.
inline int64_t clampWindow(uint64_t bound) {
  constexpr uint64_t kFarKey = uint64_t(1) << 40;
  return static_cast<int64_t>(std::min(bound, kFarKey));
}

/// The keys query row i sees: -left <= j - (i + offset) <= right, offset =
/// Tk - Tq for causal(bottom_right) and 0 otherwise; -1 is no bound on that
/// side. Causal is right = 0, a sliding window sets either side.
struct KeyBand {
  int64_t left = -1, right = -1;

  explicit KeyBand(SdpaOp op) {
    if (op.getCausal() != CausalKind::none)
      right = 0;
    else if (op.getWindowRight())
      right = clampWindow(*op.getWindowRight());
    if (op.getWindowLeft())
      left = clampWindow(*op.getWindowLeft());
  }

  /// Block indices for query rows whose diagonal keys are firstDiag ..
  /// firstDiag + rows - 1: some row sees keys [kBegin, kEnd) and every row
  /// those in [fullLo, fullHi), so the blocks of `blockKeys` keys [first,
  /// full) (a left window edge) and [fullEnd, end) (the diagonal, a right
  /// edge, the end of K) need the key predicate, [full, fullEnd) do not,
  /// and no row sees a key outside [first, end). first = full = 0 without
  /// a left bound; first <= full <= fullEnd <= end always.
  struct Blocks {
    Value first, full, fullEnd, end, kEnd;
  };
  Blocks blocks(OpBuilder &b, Location loc, Value firstDiag, int64_t rows,
                Value tk, int64_t blockKeys) const {
    auto cIdx = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    auto minI = [&](Value x, Value y) {
      return arith::MinSIOp::create(b, loc, x, y).getResult();
    };
    auto maxI = [&](Value x, Value y) {
      return arith::MaxSIOp::create(b, loc, x, y).getResult();
    };
    auto plus = [&](Value x, int64_t c) {
      return c ? arith::AddIOp::create(b, loc, x, cIdx(c)).getResult() : x;
    };
    Value zero = cIdx(0), bk = cIdx(blockKeys);
    auto clampToK = [&](Value key) { return minI(maxI(key, zero), tk); };
    Value lastDiag = plus(firstDiag, rows - 1);
    Blocks r;
    r.kEnd = right >= 0 ? clampToK(plus(lastDiag, right + 1)) : tk;
    Value fullHi = right >= 0 ? clampToK(plus(firstDiag, right + 1)) : tk;
    r.end = arith::CeilDivUIOp::create(b, loc, r.kEnd, bk);
    r.first = r.full = zero;
    if (left >= 0) {
      Value kBegin = clampToK(plus(firstDiag, -left));
      Value fullLo = clampToK(plus(lastDiag, -left));
      r.first = minI(arith::DivUIOp::create(b, loc, kBegin, bk), r.end);
      r.full = minI(
          maxI(arith::CeilDivUIOp::create(b, loc, fullLo, bk), r.first), r.end);
    }
    r.fullEnd =
        minI(maxI(arith::DivUIOp::create(b, loc, fullHi, bk), r.full), r.end);
    return r;
  }
};

} // namespace mlir::attn::detail

#endif // ATTN_PASSES_LIB_SDPAINDEXING_H
