//===- FuseSoftmax.cpp - attn-fuse-softmax ---------------------------------===//
//
// Lowers attn.sdpa to the flash form: one task per (batch, head, query
// block); each walks the key/value blocks with an online softmax, so scale,
// masking, softmax and dropout are fused and no Tq x Tk score matrix exists.
//
// For a query block Q_b (rows q0 .. q0+Br) the loop over key/value blocks
// (columns j0 .. j0+Bc) keeps, per row, the running maximum m, the running
// sum l of exp2(s - m) and the unnormalised output acc:
//
//   s      = (Q_b * scale) K_j^T
//   s      = mask(s)                            -inf where masked
//   m'     = max(m, rowmax(s))
//   p      = exp(s - m')                        0 where m' = -inf
//   alpha  = exp(m - m')                        1 where m' = -inf
//   l      = l * alpha + rowsum(p)
//   acc    = acc * alpha + dropout(p) V_j      (zero weights add nothing)
//   m      = m'
//   O_b    = acc / l                            0 where l = 0 (fully masked)
//
// Folding the scale into Q costs Br x d multiplies per block instead of
// Br x Tk. (Folding log2(e) there too, to use exp2, costs ~1e-4 relative
// accuracy on logits near 1e4; exp is expanded into a vectorizable
// polynomial later, at the same cost as exp2.) Causal attention never visits a
// key block above the diagonal: the key loop ends at the last key any row of
// the block may see, and is split in two so that only blocks crossing the
// diagonal evaluate the per-element predicate. Dropout draws from the same
// Philox counter (the weight's flat index in [B..., H, Tq, Tk]) as the plain
// lowering, so both give identical masks.
//
//===----------------------------------------------------------------------===//

#include "attn/AttnOps.h"
#include "attn/Passes.h"
#include "LinalgBuilders.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

#include <cmath>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSESOFTMAXPASS
#include "attn/Passes.h.inc"

namespace {
using namespace detail;
using utils::IteratorType;

const double kNegInf = -std::numeric_limits<double>::infinity();

/// Small helpers for index and f32 arithmetic.
struct Ix {
  OpBuilder &b;
  Location loc;
  Value c(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value floorDiv(Value x, Value y) {
    return arith::FloorDivSIOp::create(b, loc, x, y);
  }
  Value ceilDiv(Value x, Value y) {
    return arith::CeilDivSIOp::create(b, loc, x, y);
  }
  Value dim(Value t, int64_t i) { return tensor::DimOp::create(b, loc, t, i); }
  Value f(double v) {
    return arith::ConstantOp::create(b, loc,
                                     b.getF32FloatAttr(static_cast<float>(v)));
  }
};

/// One map per dim list over `n` loops.
SmallVector<AffineMap> maps(OpBuilder &b, unsigned n,
                            ArrayRef<SmallVector<unsigned>> dims) {
  SmallVector<AffineMap> r;
  for (const auto &ds : dims)
    r.push_back(dimsMap(b, n, ds));
  return r;
}

/// Everything a key/value step needs to know about its query block.
struct BlockContext {
  SdpaConfig cfg;
  Value qTile;             // [rows, d], pre-scaled by the scale
  Value k, v, mask;        // whole operands (f32; mask i1 or f32)
  SmallVector<Value> bIdx; // batch indices
  Value h, hk, q0, rows;   // head, key/value head, first row, row count
  Value tq, tk, causalOffset;
  int64_t hDim, sDim, rank;
  SmallVector<Value> scoreDims; // [B..., Hq, Tq, Tk] sizes, for dropout
  int64_t blockKV;
};

/// Offsets/sizes of a [count, width] tile of `t` at (batch, head, row0) in
/// the operand layout; the tile is rank-reduced to 2-D.
Value tile2d(OpBuilder &b, Location loc, Value t, const BlockContext &c,
             Value head, Value row0, Value count) {
    int64_t r = c.rank;
  SmallVector<OpFoldResult> offs(r, b.getIndexAttr(0)), sizes(r, b.getIndexAttr(1)),
      strides(r, b.getIndexAttr(1));
  for (int64_t i = 0; i < r - 3; ++i)
    offs[i] = c.bIdx[i];
  offs[c.hDim] = head;
  offs[c.sDim] = row0;
  sizes[c.sDim] = count;
  sizes[r - 1] = tensor::getMixedSize(b, loc, t, r - 1);
  auto ty = cast<RankedTensorType>(t.getType());
  auto tileTy = RankedTensorType::get({ShapedType::kDynamic, ty.getShape().back()},
                                      ty.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, tileTy, t, offs, sizes, strides);
}

/// One key/value block [j0, j0 + cols) folded into (m, l, acc).
SmallVector<Value> kvStep(OpBuilder &b, Location loc, const BlockContext &c,
                          Value j0, Value cols, bool causalPredicate,
                          ValueRange state) {
    Value m = state[0], l = state[1], acc = state[2];
  Value kTile = tile2d(b, loc, c.k, c, c.hk, j0, cols);
  Value vTile = tile2d(b, loc, c.v, c, c.hk, j0, cols);
  auto fm = arith::FastMathFlagsAttr::get(
      b.getContext(), arith::FastMathFlags::contract | arith::FastMathFlags::reassoc);
  SmallVector<IteratorType> par2(2, IteratorType::parallel);

  // s = q K^T: loops (i, j, c).
  SmallVector<IteratorType> qkIters{IteratorType::parallel,
                                    IteratorType::parallel,
                                    IteratorType::reduction};
  Value s = generic(b, loc, ValueRange{c.qTile, kTile},
                    filled(b, loc, {c.rows, cols}, 0.0),
                    maps(b, 3, {{0, 2}, {1, 2}, {0, 1}}), qkIters,
                    [&](OpBuilder &nb, Location l2, ValueRange a) {
                      Value p = arith::MulFOp::create(nb, l2, a[0], a[1], fm);
                      linalg::YieldOp::create(
                          nb, l2, ValueRange{arith::AddFOp::create(nb, l2, a[2], p, fm)});
                    });

  // Masking: the causal predicate on diagonal blocks, the mask operand on
  // every block.
  if (causalPredicate || c.mask || c.cfg.softcap > 0.0) {
    SmallVector<Value> ins;
    SmallVector<AffineMap> ms;
    if (c.mask) {
      // The mask's [.., Tq, Tk] window for this block; broadcast dims read 0.
      auto mt = cast<RankedTensorType>(c.mask.getType());
      int64_t mr = mt.getRank(), r = c.rank;
      SmallVector<OpFoldResult> offs, sizes, strides(mr, b.getIndexAttr(1));
      SmallVector<AffineExpr> e;
      for (int64_t a = 0; a < mr; ++a) {
        int64_t sd = r - mr + a; // score dim in [B..., H, Tq, Tk]
        bool bcast = mt.getDimSize(a) == 1;
        OpFoldResult off = b.getIndexAttr(0), size = b.getIndexAttr(1);
        if (!bcast) {
          if (sd == r - 1) {
            off = j0;
            size = cols;
          } else if (sd == r - 2) {
            off = c.q0;
            size = c.rows;
          } else if (sd == r - 3) {
            off = c.h;
          } else {
            off = c.bIdx[sd];
          }
        }
        offs.push_back(off);
        sizes.push_back(size);
        e.push_back(bcast || sd < r - 2 ? b.getAffineConstantExpr(0)
                                        : b.getAffineDimExpr(sd - (r - 2)));
      }
      ins.push_back(tensor::ExtractSliceOp::create(b, loc, c.mask, offs, sizes,
                                                   strides));
      ms.push_back(AffineMap::get(2, 0, e, b.getContext()));
    }
    ms.push_back(b.getMultiDimIdentityMap(2));
    s = generic(b, loc, ins, s, ms, par2,
                [&](OpBuilder &nb, Location l2, ValueRange a) {
                  Ix n{nb, l2};
                  Value x = a.back(), ninf = n.f(kNegInf);
                  if (c.cfg.softcap > 0.0)
                    x = buildSoftcap(nb, l2, x, c.cfg.softcap);
                  if (c.mask)
                    x = buildApplyMask(nb, l2, x, a[0], c.cfg.maskKind);
                  if (causalPredicate) {
                    Value i = n.add(linalg::IndexOp::create(nb, l2, 0), c.q0);
                    Value j = n.add(linalg::IndexOp::create(nb, l2, 1), j0);
                    if (c.causalOffset)
                      i = n.add(i, c.causalOffset);
                    x = arith::SelectOp::create(
                        nb, l2, buildOutsideBand(nb, l2, i, j, c.cfg), ninf, x);
                  }
                  linalg::YieldOp::create(nb, l2, ValueRange{x});
                });
  }

  // Every update of (m, l, acc) below is written into the loop-carried
  // tensor itself, after its last read, so bufferization keeps the three
  // buffers in place across the whole key loop.
  //
  // mt = rowmax(s); alpha = exp2(m - max(m, mt)), 1 where nothing is seen
  // yet; then m = max(m, mt).
  SmallVector<IteratorType> rowIters{IteratorType::parallel,
                                     IteratorType::reduction};
  SmallVector<IteratorType> par1{IteratorType::parallel};
  Value mt = generic(b, loc, ValueRange{s}, filled(b, loc, {c.rows}, kNegInf),
                     maps(b, 2, {{0, 1}, {0}}), rowIters,
                     [&](OpBuilder &nb, Location l2, ValueRange a) {
                       linalg::YieldOp::create(
                           nb, l2,
                           ValueRange{arith::MaximumFOp::create(nb, l2, a[0], a[1])});
                     });
  Value alpha = generic(
      b, loc, ValueRange{m, mt},
      tensor::EmptyOp::create(b, loc, ArrayRef<OpFoldResult>{c.rows},
                              b.getF32Type()),
      maps(b, 1, {{0}, {0}, {0}}), par1,
      [&](OpBuilder &nb, Location l2, ValueRange a) {
        Ix n{nb, l2};
        Value mx = arith::MaximumFOp::create(nb, l2, a[0], a[1]);
        Value dead = arith::CmpFOp::create(nb, l2, arith::CmpFPredicate::OEQ,
                                           mx, n.f(kNegInf));
        Value e = math::ExpOp::create(nb, l2,
                                      arith::SubFOp::create(nb, l2, a[0], mx));
        linalg::YieldOp::create(
            nb, l2, ValueRange{arith::SelectOp::create(nb, l2, dead, n.f(1), e)});
      });
  Value mNew = generic(b, loc, ValueRange{mt}, m, maps(b, 1, {{0}, {0}}), par1,
                       [&](OpBuilder &nb, Location l2, ValueRange a) {
                         linalg::YieldOp::create(
                             nb, l2,
                             ValueRange{arith::MaximumFOp::create(nb, l2, a[0], a[1])});
                       });
  // p = exp2(s - m), 0 on rows with nothing to attend yet; written over s.
  Value p = generic(
      b, loc, ValueRange{mNew}, s, maps(b, 2, {{0}, {0, 1}}), par2,
      [&](OpBuilder &nb, Location l2, ValueRange a) {
        Ix n{nb, l2};
        Value dead = arith::CmpFOp::create(nb, l2, arith::CmpFPredicate::OEQ,
                                           a[0], n.f(kNegInf));
        Value e = math::ExpOp::create(nb, l2,
                                      arith::SubFOp::create(nb, l2, a[1], a[0]));
        linalg::YieldOp::create(
            nb, l2, ValueRange{arith::SelectOp::create(nb, l2, dead, n.f(0), e)});
      });
  // l = l * alpha + rowsum(p).
  Value lScaled = generic(b, loc, ValueRange{alpha}, l, maps(b, 1, {{0}, {0}}),
                          par1, [&](OpBuilder &nb, Location l2, ValueRange a) {
                            linalg::YieldOp::create(
                                nb, l2, ValueRange{arith::MulFOp::create(nb, l2, a[1], a[0])});
                          });
  Value lNew = generic(b, loc, ValueRange{p}, lScaled, maps(b, 2, {{0, 1}, {0}}),
                       rowIters, [&](OpBuilder &nb, Location l2, ValueRange a) {
                         linalg::YieldOp::create(
                             nb, l2, ValueRange{arith::AddFOp::create(nb, l2, a[1], a[0])});
                       });
  // Dropout on the weights that reach V (the normaliser keeps them all).
  if (c.cfg.dropoutP > 0.0) {
    p = generic(b, loc, ValueRange{}, p, {b.getMultiDimIdentityMap(2)}, par2,
                [&](OpBuilder &nb, Location l2, ValueRange a) {
                  Ix n{nb, l2};
                  Value i = n.add(linalg::IndexOp::create(nb, l2, 0), c.q0);
                  Value j = n.add(linalg::IndexOp::create(nb, l2, 1), j0);
                  // Flat index in [B..., Hq, Tq, Tk].
                  Value flat = c.bIdx.empty() ? c.h : c.bIdx[0];
                  for (size_t d = 1; d < c.bIdx.size(); ++d)
                    flat = n.add(n.mul(flat, c.scoreDims[d]), c.bIdx[d]);
                  if (!c.bIdx.empty())
                    flat = n.add(n.mul(flat, c.scoreDims[c.bIdx.size()]), c.h);
                  flat = n.add(n.mul(flat, c.tq), i);
                  flat = n.add(n.mul(flat, c.tk), j);
                  Value ctr = arith::IndexCastUIOp::create(nb, l2, nb.getI64Type(), flat);
                  Value u = buildPhiloxUniform(nb, l2, ctr, c.cfg.seed);
                  Value keep = arith::CmpFOp::create(nb, l2, arith::CmpFPredicate::OGE,
                                                     u, n.f(c.cfg.dropoutP));
                  Value scaled = arith::MulFOp::create(
                      nb, l2, a[0], n.f(1.0 / (1.0 - c.cfg.dropoutP)));
                  linalg::YieldOp::create(
                      nb, l2, ValueRange{arith::SelectOp::create(nb, l2, keep, scaled, n.f(0))});
                });
  }
  // acc = acc * alpha + p V: loops (i, j, e) with e innermost.
  Value accScaled = generic(b, loc, ValueRange{alpha}, acc,
                            maps(b, 2, {{0}, {0, 1}}), par2,
                            [&](OpBuilder &nb, Location l2, ValueRange a) {
                              linalg::YieldOp::create(
                                  nb, l2, ValueRange{arith::MulFOp::create(nb, l2, a[1], a[0])});
                            });
  SmallVector<IteratorType> pvIters{IteratorType::parallel,
                                    IteratorType::reduction,
                                    IteratorType::parallel};
  Value accNew = generic(b, loc, ValueRange{p, vTile}, accScaled,
                         maps(b, 3, {{0, 1}, {1, 2}, {0, 2}}), pvIters,
                         [&](OpBuilder &nb, Location l2, ValueRange a) {
                           linalg::YieldOp::create(
                               nb, l2, ValueRange{buildWeightedAdd(nb, l2, a[0], a[1], a[2])});
                         });
  return {mNew, lNew, accNew};
}

/// The key/value loop over [begin, end) in steps of blockKV.
SmallVector<Value> kvLoop(OpBuilder &b, Location loc, const BlockContext &c,
                          Value begin, Value end, bool causalPredicate,
                          ValueRange state) {
  Ix ix{b, loc};
  auto loop = scf::ForOp::create(
      b, loc, begin, end, ix.c(c.blockKV), state,
      [&](OpBuilder &nb, Location l2, Value j0, ValueRange iter) {
        Ix n{nb, l2};
        Value cols = n.min(n.c(c.blockKV), n.sub(end, j0));
        SmallVector<Value> next = kvStep(nb, l2, c, j0, cols, causalPredicate, iter);
        scf::YieldOp::create(nb, l2, next);
      });
  return loop.getResults();
}

} // namespace

namespace detail {
Value buildFlashSdpa(OpBuilder &b, Location loc, Value q, Value k, Value v,
                     Value mask, const SdpaConfig &cfg, HeadLayout layout,
                     int64_t blockQ, int64_t blockKV) {
  Ix ix{b, loc};
  auto qt = cast<RankedTensorType>(q.getType());
  int64_t r = qt.getRank();
  int64_t hDim = layout == HeadLayout::seq_major ? r - 2 : r - 3;
  int64_t sDim = layout == HeadLayout::seq_major ? r - 3 : r - 2;
  int64_t hq = qt.getDimSize(hDim);
  int64_t hkv = cast<RankedTensorType>(k.getType()).getDimSize(hDim);
  int64_t group = (hq == hkv) ? 1 : hq / hkv;

  Value tq = ix.dim(q, sDim), tk = ix.dim(k, sDim);
  SmallVector<OpFoldResult> outSizes = tensor::getMixedSizes(b, loc, q);
  outSizes.back() = tensor::getMixedSize(b, loc, v, r - 1);
  Value out = tensor::EmptyOp::create(b, loc, outSizes, b.getF32Type());

  // Parallel over (batch..., head, query block).
  SmallVector<OpFoldResult> ubs;
  for (int64_t i = 0; i < r - 3; ++i)
    ubs.push_back(tensor::getMixedSize(b, loc, q, i));
  ubs.push_back(tensor::getMixedSize(b, loc, q, hDim));
  ubs.push_back(ix.ceilDiv(tq, ix.c(blockQ)));
  auto forall = scf::ForallOp::create(b, loc, ubs, ValueRange{out}, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getBody()->getTerminator());
  SmallVector<Value> ivs = forall.getInductionVars();

  BlockContext c;
  c.cfg = cfg;
  c.k = k;
  c.v = v;
  c.mask = mask;
  c.rank = r;
  c.hDim = hDim;
  c.sDim = sDim;
  c.blockKV = blockKV;
  c.tq = tq;
  c.tk = tk;
  for (int64_t i = 0; i < r - 3; ++i)
    c.bIdx.push_back(ivs[i]);
  c.h = ivs[r - 3];
  c.hk = group == 1 ? c.h : ix.floorDiv(c.h, ix.c(group));
  c.q0 = ix.mul(ivs[r - 2], ix.c(blockQ));
  c.rows = ix.min(ix.c(blockQ), ix.sub(tq, c.q0));
  for (int64_t i = 0; i < r - 3; ++i)
    c.scoreDims.push_back(ix.dim(q, i));
  c.scoreDims.push_back(ix.dim(q, hDim));

  // Q block, scaled once.
  Value qRaw = tile2d(b, loc, q, c, c.h, c.q0, c.rows);
  c.qTile = generic(
      b, loc, ValueRange{qRaw},
      tensor::EmptyOp::create(b, loc, tensor::getMixedSizes(b, loc, qRaw),
                              b.getF32Type()),
      maps(b, 2, {{0, 1}, {0, 1}}), SmallVector<IteratorType>(2, IteratorType::parallel),
      [&](OpBuilder &nb, Location l2, ValueRange a) {
        linalg::YieldOp::create(
            nb, l2,
            ValueRange{arith::MulFOp::create(nb, l2, a[0],
                                             Ix{nb, l2}.f(cfg.scale))});
      });

  OpFoldResult dv = tensor::getMixedSize(b, loc, v, r - 1);
  SmallVector<Value> state{filled(b, loc, {c.rows}, kNegInf),
                           filled(b, loc, {c.rows}, 0.0),
                           filled(b, loc, {c.rows, dv}, 0.0)};
  Value zero = ix.c(0);
  if (!cfg.hasBand()) {
    state = kvLoop(b, loc, c, zero, tk, /*causalPredicate=*/false, state);
  } else if (cfg.windowLeft < 0 && cfg.windowRight < 0) {
    // Causal: row i sees keys j <= i + off. The block's last row bounds the
    // loop; its first row decides which blocks lie fully below the
    // diagonal and need no predicate.
    Value off = zero;
    if (cfg.causal == CausalKind::bottom_right) {
      off = ix.sub(tk, tq);
      c.causalOffset = off;
    }
    Value kvEnd = ix.max(zero, ix.min(tk, ix.add(ix.add(c.q0, c.rows), off)));
    Value fullEnd = ix.mul(
        ix.floorDiv(ix.add(ix.add(c.q0, off), ix.c(1)), ix.c(blockKV)),
        ix.c(blockKV));
    fullEnd = ix.max(zero, ix.min(fullEnd, kvEnd));
    state = kvLoop(b, loc, c, zero, fullEnd, /*causalPredicate=*/false, state);
    state = kvLoop(b, loc, c, fullEnd, kvEnd, /*causalPredicate=*/true, state);
  } else {
    // Sliding window: only keys in [q0 + off - L, q0 + rows - 1 + off + R]
    // can be seen by any row of the block; visit just those, with the
    // predicate.
    Value off = zero;
    if (cfg.causal == CausalKind::bottom_right) {
      off = ix.sub(tk, tq);
      c.causalOffset = off;
    }
    int64_t right = cfg.windowRight;
    if (cfg.causal != CausalKind::none)
      right = right < 0 ? 0 : std::min<int64_t>(right, 0);
    Value kvBegin = zero;
    if (cfg.windowLeft >= 0)
      kvBegin = ix.max(zero, ix.sub(ix.add(c.q0, off), ix.c(cfg.windowLeft)));
    Value kvEnd = tk;
    if (right >= 0)
      kvEnd = ix.max(zero, ix.min(tk, ix.add(ix.add(ix.add(c.q0, c.rows), off),
                                             ix.c(right))));
    kvBegin = ix.min(kvBegin, kvEnd);
    state = kvLoop(b, loc, c, kvBegin, kvEnd, /*causalPredicate=*/true, state);
  }

  // O = acc / l; rows that attended nothing are 0.
  Value o = generic(
      b, loc, ValueRange{state[1]}, state[2], maps(b, 2, {{0}, {0, 1}}),
      SmallVector<IteratorType>(2, IteratorType::parallel),
      [&](OpBuilder &nb, Location l2, ValueRange a) {
        Ix n{nb, l2};
        Value empty = arith::CmpFOp::create(nb, l2, arith::CmpFPredicate::OEQ,
                                            a[0], n.f(0));
        Value x = arith::DivFOp::create(nb, l2, a[1], a[0]);
        linalg::YieldOp::create(
            nb, l2, ValueRange{arith::SelectOp::create(nb, l2, empty, n.f(0), x)});
      });

  // Write the block into the result.
  SmallVector<OpFoldResult> offs(r, b.getIndexAttr(0)), sizes(r, b.getIndexAttr(1)),
      strides(r, b.getIndexAttr(1));
  for (int64_t i = 0; i < r - 3; ++i)
    offs[i] = c.bIdx[i];
  offs[hDim] = c.h;
  offs[sDim] = c.q0;
  sizes[sDim] = c.rows;
  sizes[r - 1] = dv;
  OpBuilder tb = OpBuilder::atBlockEnd(forall.getTerminator().getBody());
  tensor::ParallelInsertSliceOp::create(tb, loc, o, forall.getRegionIterArgs()[0],
                                        offs, sizes, strides);
  return forall.getResult(0);
}
} // namespace detail

namespace {

struct FlashSdpaLowering : OpConversionPattern<SdpaOp> {
  FlashSdpaLowering(MLIRContext *ctx, int64_t bq, int64_t bkv)
      : OpConversionPattern(ctx), blockQ(bq), blockKV(bkv) {}
  LogicalResult
  matchAndRewrite(SdpaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto f32 = [&](Value v) -> Value {
      if (!v || cast<RankedTensorType>(v.getType()).getElementType().isInteger(1))
        return v;
      return convertElementType(rewriter, loc, v, rewriter.getF32Type());
    };
    Value q = f32(adaptor.getQuery()), k = f32(adaptor.getKey()),
          v = f32(adaptor.getValue()), mask = f32(adaptor.getMask());
    HeadLayout layout = op.getLayout();
    // A single head [T, d]: view it as [1, T, d].
    bool rank2 = op.getQuery().getType().getRank() == 2;
    auto addHead = [&](Value t) -> Value {
      auto ty = cast<RankedTensorType>(t.getType());
      SmallVector<int64_t> shape{1};
      shape.append(ty.getShape().begin(), ty.getShape().end());
      SmallVector<OpFoldResult> sizes{rewriter.getIndexAttr(1)};
      llvm::append_range(sizes, tensor::getMixedSizes(rewriter, loc, t));
      return tensor::ExpandShapeOp::create(
          rewriter, loc, RankedTensorType::get(shape, ty.getElementType()), t,
          SmallVector<ReassociationIndices>{{0, 1}, {2}}, sizes);
    };
    if (rank2) {
      q = addHead(q);
      k = addHead(k);
      v = addHead(v);
    }
    SdpaConfig cfg;
    setBand(cfg, op.getCausal(), op.getWindowLeft(), op.getWindowRight());
    cfg.softcap = op.getSoftcap() ? op.getSoftcap()->convertToDouble() : 0.0;
    cfg.maskKind = op.getMaskKind();
    cfg.scale = op.getEffectiveScale();
    cfg.dropoutP = op.getDropoutP().convertToFloat();
    cfg.seed = static_cast<uint64_t>(op.getSeed());
    Value o = buildFlashSdpa(rewriter, loc, q, k, v, mask, cfg, layout, blockQ,
                             blockKV);
    if (rank2)
      o = tensor::CollapseShapeOp::create(
          rewriter, loc, o, SmallVector<ReassociationIndices>{{0, 1}, {2}});
    Type elem = op.getType().getElementType();
    o = convertElementType(rewriter, loc, o, elem);
    if (o.getType() != op.getType())
      o = tensor::CastOp::create(rewriter, loc, op.getType(), o);
    rewriter.replaceOp(op, o);
    return success();
  }
  int64_t blockQ, blockKV;
};

struct AttnFuseSoftmaxPass
    : impl::AttnFuseSoftmaxPassBase<AttnFuseSoftmaxPass> {
  using Base::Base;
  void runOnOperation() override {
    if (blockQ < 1 || blockKV < 1) {
      mlir::emitError(getOperation().getLoc())
          << "attn-fuse-softmax: block sizes must be "
             ">= 1, got block-q="
          << static_cast<int64_t>(blockQ)
          << " block-kv=" << static_cast<int64_t>(blockKV);
      return signalPassFailure();
    }
    MLIRContext *ctx = &getContext();
    ConversionTarget target(*ctx);
    target.addIllegalOp<SdpaOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    RewritePatternSet patterns(ctx);
    patterns.add<FlashSdpaLowering>(ctx, blockQ, blockKV);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::attn
