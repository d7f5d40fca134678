//===- LinalgBuilders.h - plain linalg forms of attention pieces -*- C++ -*-===//
//
// Small builders shared by the attn lowerings: each emits one textbook step
// (projection, head split/merge, the SDPA core) as linalg on tensors, with
// dynamic sizes taken from the operands. All arithmetic is f32.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_PASSES_LINALGBUILDERS_H
#define ATTN_PASSES_LINALGBUILDERS_H

#include "attn/AttnDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Value.h"

namespace mlir::attn::detail {

/// What the SDPA core needs beyond its operands.
struct SdpaConfig {
  CausalKind causal = CausalKind::none;
  MaskKind maskKind = MaskKind::masked_where_true;
  double scale = 1.0;
  double dropoutP = 0.0;
  uint64_t seed = 0;
  /// Soft cap c of the scaled scores (c * tanh(s / c)); 0 = none.
  double softcap = 0.0;
  /// Sliding window bounds (keys i-L .. i+R), -1 = unbounded.
  int64_t windowLeft = -1, windowRight = -1;

  /// Whether scores are masked by position (causal and/or window).
  bool hasBand() const {
    return causal != CausalKind::none || windowLeft >= 0 || windowRight >= 0;
  }
};

/// Fills the causal/window fields of `cfg` from an attn.sdpa's attributes.
void setBand(SdpaConfig &cfg, CausalKind causal, std::optional<uint64_t> left,
             std::optional<uint64_t> right);

/// i1: key `j` lies outside the band query `i` may see; `i` is already
/// shifted by the alignment offset (Tk - Tq for bottom-right).
Value buildOutsideBand(OpBuilder &b, Location loc, Value i, Value j,
                       const SdpaConfig &cfg);

/// linalg.generic with one output `out`; returns its result.
Value generic(OpBuilder &b, Location loc, ValueRange ins, Value out,
              ArrayRef<AffineMap> maps, ArrayRef<utils::IteratorType> iters,
              function_ref<void(OpBuilder &, Location, ValueRange)> body);

/// An f32 tensor of `sizes` filled with `init`.
Value filled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
             double init);

/// Affine map over `numDims` loops selecting `dims`.
AffineMap dimsMap(OpBuilder &b, unsigned numDims, ArrayRef<unsigned> dims);

/// Converts a float tensor to element type `elem` (extf/truncf), or returns it.
Value convertElementType(OpBuilder &b, Location loc, Value t, Type elem);

/// [..., T, K] x [K, N] (+ bias [N]) -> [..., T, N].
Value buildProjection(OpBuilder &b, Location loc, Value x, Value w,
                      Value bias);

/// [..., T, H*d] -> [..., H, T, d] (expand_shape + transpose).
Value buildSplitHeads(OpBuilder &b, Location loc, Value x, int64_t heads);

/// [..., H, T, d] -> [..., T, H*d] (transpose + collapse_shape).
Value buildMergeHeads(OpBuilder &b, Location loc, Value x);

/// softmax(scale * Q K^T + mask) V with causal masking and dropout; f32
/// operands of rank >= 2 shaped as documented on attn.sdpa.
Value buildSdpa(OpBuilder &b, Location loc, Value q, Value k, Value v,
                Value mask, const SdpaConfig &cfg);

/// The flash form of buildSdpa (see FuseSoftmax.cpp): rank >= 3 operands in
/// `layout`, parallel over (batch, head, query block), online softmax over
/// key/value blocks.
Value buildFlashSdpa(OpBuilder &b, Location loc, Value q, Value k, Value v,
                     Value mask, const SdpaConfig &cfg, HeadLayout layout,
                     int64_t blockQ, int64_t blockKV);

/// c * tanh(s / c): the soft cap of scaled scores.
Value buildSoftcap(OpBuilder &b, Location loc, Value s, double c);

/// Applies one element `m` of an explicit mask of `kind` to score `s`:
/// -inf where a bool mask hides it, `s + m` for an additive mask.
Value buildApplyMask(OpBuilder &b, Location loc, Value s, Value m,
                     MaskKind kind);

/// acc + w * v, where a zero weight adds nothing even if v is NaN or inf
/// (a masked, dropped or underflowed key does not reach the output).
Value buildWeightedAdd(OpBuilder &b, Location loc, Value w, Value v, Value acc);

/// Whether the body of `op` (a structured op with two inputs and one init)
/// is exactly `out + a * b` on its block arguments, either operand order:
/// the form attn-vectorize-contractions turns into FMAs. (Not
/// linalg::isaContractionOpInterface, which lets unary ops through, e.g.
/// out + exp(a) * b, whose exp the FMAs would drop.)
bool isMulAccBody(Operation *op);

/// Builds the high 32 bits of the 32 x 32-bit product of two i32 values.
using MulHiBuilder =
    llvm::function_ref<Value(OpBuilder &, Location, Value, Value)>;

/// Philox-4x32-10 of the 64-bit `counter` under `seed`, mapped to a uniform
/// f32 in [0, 1) from the top 24 bits of the first output word. A vector
/// of i64 counters gives a vector of f32 (lane by lane the same numbers).
/// A scalar counter's products are arith.mului_extended, or with `mulHi`
/// (a target's multiply-high instruction) arith.muli for the low words and
/// `mulHi` for the high ones.
Value buildPhiloxUniform(OpBuilder &b, Location loc, Value counter,
                         uint64_t seed, MulHiBuilder mulHi = nullptr);

} // namespace mlir::attn::detail

#endif // ATTN_PASSES_LINALGBUILDERS_H
