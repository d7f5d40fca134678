//===- ImportAttention.cpp - the ONNX Attention op ------------------------===//
//
// The standard Attention operator (opsets 23-25) as attn.sdpa plus the
// linalg ops for KV-cache concatenation, nonpad lengths and qk outputs.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

namespace mlir::attn::onnx_import {

void Importer::importAttention(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  Value q = input(n, 0), k = input(n, 1), v = input(n, 2);
  Value mask = input(n, 3);
  if (failed)
    return;
  if (!q || !k || !v) {
    nodeError(n) << "needs Q, K and V";
    return;
  }
  Value pastK = input(n, 4), pastV = input(n, 5);
  if (failed)
    return;
  if (!!pastK != !!pastV) {
    nodeError(n) << "past_key and past_value go together";
    return;
  }
  // Opset 25's windows do not exist before it (ONNX Runtime refuses such a
  // model too): dropping them would run full attention.
  if (opset < 25)
    for (const char *w : {"left_window_size", "right_window_size"})
      if (attr(n, w)) {
        nodeError(n) << w << " exists from opset 25; the model imports opset "
                     << opset;
        return;
      }
  // Opset 24 added the seventh input; an Attention-23 node has six.
  if (opset < 24 && n.input_size() > 6 && !n.input(6).empty()) {
    nodeError(n) << "nonpad_kv_seqlen exists from opset 24; the model "
                    "imports opset "
                 << opset;
    return;
  }
  Value nonpad = input(n, 6);
  if (failed)
    return;
  if (nonpad && pastK) {
    nodeError(n) << "nonpad_kv_seqlen together with past_key/past_value is "
                    "not supported yet";
    return;
  }
  auto qt = cast<RankedTensorType>(q.getType());
  auto kt = cast<RankedTensorType>(k.getType());
  auto vt = cast<RankedTensorType>(v.getType());
  if (qt.getRank() != kt.getRank() || qt.getRank() != vt.getRank() ||
      (qt.getRank() != 3 && qt.getRank() != 4)) {
    nodeError(n) << "Q, K and V must all be 3-D or all 4-D, got ranks "
                 << qt.getRank() << ", " << kt.getRank() << ", "
                 << vt.getRank();
    return;
  }
  // The query's and the new keys' lengths (static, or one SSA size when
  // equal by dim_param or by how the graph computed them).
  int64_t seqDim = qt.getRank() == 3 ? 1 : 2;
  bool newKeysAsLongAsQuery =
      isEqualConstantIntOrValue(dimOf(q, seqDim), dimOf(k, seqDim));
  HeadLayout layout = HeadLayout::heads_major;
  bool transposedOut = false;
  if (qt.getRank() == 3) {
    // [B, S, H*D] viewed as [B, S, H, D]: the seq_major layout, no copy.
    int64_t hq = intAttr(n, "q_num_heads", 0),
            hkv = intAttr(n, "kv_num_heads", 0);
    if (hq <= 0 || hkv <= 0) {
      nodeError(n) << "3-D Q/K/V need q_num_heads and kv_num_heads";
      return;
    }
    // (One error for the first input that does not split.)
    for (auto [x, heads] : {std::make_pair(&q, hq), std::make_pair(&k, hkv),
                            std::make_pair(&v, hkv)}) {
      *x = splitHeads(n, *x, heads);
      if (failed)
        return;
    }
    int64_t dq = typeOf(q).getDimSize(3), dk = typeOf(k).getDimSize(3);
    if (dq != dk) {
      nodeError(n) << "Q's head size " << dq << " (hidden " << qt.getDimSize(2)
                   << " / q_num_heads " << hq << ") differs from K's " << dk
                   << " (hidden " << kt.getDimSize(2) << " / kv_num_heads "
                   << hkv << ")";
      return;
    }
    layout = HeadLayout::seq_major;
  }
  if (pastK) {
    // KV cache: present = concat(past, new) along the sequence, in the
    // heads-major layout the cache uses ([B, Hkv, S, D]).
    auto pk = cast<RankedTensorType>(pastK.getType());
    if (pk.getRank() != 4 ||
        cast<RankedTensorType>(pastV.getType()).getRank() != 4) {
      nodeError(n)
          << "past_key/past_value must be 4-D [B, kv_heads, past, head]";
      return;
    }
    if (layout == HeadLayout::seq_major) {
      q = swapHeadsAndTokens(loc, q);
      k = swapHeadsAndTokens(loc, k);
      v = swapHeadsAndTokens(loc, v);
      layout = HeadLayout::heads_major;
      transposedOut = true;
    }
    // The cache and the new keys must agree on all but the length: the
    // concatenation would not verify (or, dynamic, read out of bounds).
    for (auto [name, past, fresh] : {std::make_tuple("past_key", pastK, k),
                                     std::make_tuple("past_value", pastV, v)}) {
      auto pt = cast<RankedTensorType>(past.getType());
      auto ft = cast<RankedTensorType>(fresh.getType());
      for (int64_t d : {0, 1, 3})
        if (!pt.isDynamicDim(d) && !ft.isDynamicDim(d) &&
            pt.getDimSize(d) != ft.getDimSize(d)) {
          nodeError(n) << name << " has "
                       << (d == 0   ? "batch "
                           : d == 1 ? "kv heads "
                                    : "head size ")
                       << pt.getDimSize(d) << ", the new "
                       << (fresh == k ? "keys " : "values ")
                       << ft.getDimSize(d);
          return;
        }
    }
    k = tensor::ConcatOp::create(b, loc, /*dim=*/2, ValueRange{pastK, k});
    v = tensor::ConcatOp::create(b, loc, /*dim=*/2, ValueRange{pastV, v});
    define(n, 1, k);
    define(n, 2, v);
  } else if (wantsOutput(n, 1) || wantsOutput(n, 2)) {
    // No cache yet (the first, prefill step): present is the new keys and
    // values, in the cache's heads-major layout [B, Hkv, S, D].
    define(n, 1,
           layout == HeadLayout::seq_major ? swapHeadsAndTokens(loc, k) : k);
    define(n, 2,
           layout == HeadLayout::seq_major ? swapHeadsAndTokens(loc, v) : v);
  }
  auto q4 = cast<RankedTensorType>(q.getType());
  auto v4 = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> outShape(q4.getShape());
  outShape.back() = v4.getShape().back();
  auto outType = RankedTensorType::get(outShape, q4.getElementType());

  MaskKind maskKind = MaskKind::masked_where_true;
  if (mask) {
    auto mt = cast<RankedTensorType>(mask.getType());
    maskKind = mt.getElementType().isInteger(1) ? MaskKind::attend_where_true
                                                : MaskKind::additive;
    if (maskKind == MaskKind::additive &&
        !isa<FloatType>(mt.getElementType())) {
      nodeError(n) << "attn_mask must be bool or of Q's float type, got "
                   << mt.getElementType();
      return;
    }
    if (maskKind == MaskKind::additive &&
        mt.getElementType() != q4.getElementType()) {
      nodeError(n) << "float attn_mask type " << mt.getElementType()
                   << " differs from Q's " << q4.getElementType();
      return;
    }
    mask = fitMaskToKeys(n, mask, k, layout == HeadLayout::seq_major ? 1 : 2,
                         maskKind == MaskKind::additive);
    if (!mask)
      return;
  }
  FloatAttr scale, softcap;
  if (auto s = floatAttr(n, "scale"))
    scale = b.getF32FloatAttr(*s);
  if (auto c = floatAttr(n, "softcap"); c && *c != 0.0f)
    softcap = b.getF32FloatAttr(*c);
  // ONNX's band: query i sees key j when d = j - (i + past) satisfies
  // d <= 0 (is_causal), d <= right and d >= -left (opset 25 windows),
  // where past is the KV cache length. Without a cache that is causal
  // top-left plus windows; with one, the same band shifted by the (static)
  // past length, expressed as a window around the top-left diagonal.
  bool isCausal = intAttr(n, "is_causal", 0) != 0;
  int64_t l = opset >= 25 ? intAttr(n, "left_window_size", -1) : -1;
  int64_t r = opset >= 25 ? intAttr(n, "right_window_size", -1) : -1;
  // A window wider than any sequence (2^40 keys would be terabytes) hides
  // nothing: no bound, so that shifting it by the past length below cannot
  // overflow.
  constexpr int64_t kFarKey = int64_t(1) << 40;
  if (l > kFarKey)
    l = -1;
  if (r > kFarKey)
    r = -1;
  CausalKind causal = isCausal ? CausalKind::top_left : CausalKind::none;
  int64_t past =
      pastK ? cast<RankedTensorType>(pastK.getType()).getDimSize(2) : 0;
  if (pastK && ShapedType::isDynamic(past) && isCausal) {
    // A dynamic cache length: when the new keys are as many as the query
    // rows, past = Tk - Tq, so the band shifted by past is the causal
    // diagonal aligned bottom-right, and the windows are relative to it
    // (attn.sdpa's offset for causal(bottom_right)).
    if (!newKeysAsLongAsQuery) {
      nodeError(n) << "a causal mask with a dynamic KV cache length needs "
                      "the new keys as long as the query (the same static "
                      "size or dim_param name), so that past = Tk - Tq";
      return;
    }
    causal = CausalKind::bottom_right;
    if (r >= 0)
      r = std::min<int64_t>(r, 0);
  } else if (pastK && (isCausal || l >= 0 || r >= 0)) {
    if (ShapedType::isDynamic(past)) {
      nodeError(n) << "a window without is_causal over a dynamic KV cache "
                      "length is not supported yet (with is_causal=1 it is)";
      return;
    }
    int64_t upper = isCausal ? (r >= 0 ? std::min<int64_t>(r, 0) : 0) : r;
    if (upper >= 0 || isCausal)
      upper += past;
    causal = CausalKind::none;
    if (l >= 0 && l - past < 0) {
      // The window ends before the cache does: the band no longer touches
      // the top-left diagonal, so it becomes an explicit mask.
      mask = buildBandMask(loc, q, k, /*len=*/Value(), past, mask, maskKind,
                           isCausal, l, r);
      if (cast<RankedTensorType>(mask.getType()).getElementType().isInteger(1))
        maskKind = MaskKind::attend_where_true;
      l = r = -1;
    } else {
      r = upper;
      l = l >= 0 ? l - past : -1;
    }
  }
  if (nonpad) {
    // Per-batch key lengths: keys j >= len[b] are padding, and the causal
    // diagonal / windows sit at offset len[b] - Sq. Both vary per batch, so
    // they become one explicit mask, combined with attn_mask.
    if (layout == HeadLayout::seq_major) {
      nodeError(n) << "nonpad_kv_seqlen with 3-D inputs is not supported yet";
      return;
    }
    auto lt = cast<RankedTensorType>(nonpad.getType());
    int64_t batch = cast<RankedTensorType>(q.getType()).getDimSize(0);
    if (lt.getRank() != 1 ||
        (!lt.isDynamicDim(0) && !ShapedType::isDynamic(batch) &&
         lt.getDimSize(0) != batch)) {
      nodeError(n) << "nonpad_kv_seqlen must be [batch] = [" << batch
                   << "], got " << lt;
      return;
    }
    mask = buildBandMask(loc, q, k, nonpad, /*pastLen=*/0, mask, maskKind,
                         isCausal, l, r);
    if (!mask)
      return;
    if (cast<RankedTensorType>(mask.getType()).getElementType().isInteger(1))
      maskKind = MaskKind::attend_where_true;
    causal = CausalKind::none;
    l = r = -1;
  }
  IntegerAttr left, right;
  if (l >= 0)
    left = b.getI64IntegerAttr(l);
  if (r >= 0)
    right = b.getI64IntegerAttr(r);
  Value o = SdpaOp::create(
      b, loc, outType, q, k, v, mask, CausalKindAttr::get(ctx, causal),
      MaskKindAttr::get(ctx, maskKind), HeadLayoutAttr::get(ctx, layout), left,
      right, softcap, scale, b.getF32FloatAttr(0.0f), b.getI64IntegerAttr(0));
  if (verifyNodeOp(n, o.getDefiningOp()).failed())
    return;
  if (wantsOutput(n, 3)) {
    int64_t mode = intAttr(n, "qk_matmul_output_mode", 0);
    if (mode < 0 || mode > 3) {
      nodeError(n) << "qk_matmul_output_mode must be 0..3, got " << mode;
      return;
    }
    Value qh = q, kh = k;
    if (layout == HeadLayout::seq_major) {
      qh = swapHeadsAndTokens(loc, q);
      kh = swapHeadsAndTokens(loc, k);
    }
    double sc = scale ? scale.getValueAsDouble()
                      : 1.0 / std::sqrt(double(q4.getShape().back()));
    double cap = softcap ? softcap.getValueAsDouble() : 0.0;
    define(n, 3,
           buildScores(loc, qh, kh, mask, maskKind, causal,
                       left ? left.getInt() : -1, right ? right.getInt() : -1,
                       sc, cap, mode, q4.getElementType()));
  }
  if (transposedOut)
    o = swapHeadsAndTokens(loc, o);
  if (layout == HeadLayout::seq_major || transposedOut)
    o = tensor::CollapseShapeOp::create(
        b, loc, o, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  define(n, 0, o);
}

/// The ONNX qk_matmul_output tensor [B, Hq, Sq, Sk] for `mode`:
/// 0 scaled Q K^T, 1 after softcap, 2 after softcap and bias (mask,
/// causal, window: -inf where masked), 3 softmax probabilities (0 on
/// fully masked rows). Computed in f32, cast to Q's element type.
Value Importer::buildScores(Location loc, Value q, Value k, Value mask,
                            MaskKind kind, CausalKind causal, int64_t left,
                            int64_t right, double scale, double softcap,
                            int64_t mode, Type elem) {
  using utils::IteratorType;
  auto f32 = b.getF32Type();
  auto cst = [&](OpBuilder &nb, Location l, double v) -> Value {
    return arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(float(v)));
  };
  auto ext = [&](OpBuilder &nb, Location l, Value v) -> Value {
    return v.getType() == f32 ? v : arith::ExtFOp::create(nb, l, f32, v);
  };
  auto qt = cast<RankedTensorType>(q.getType());
  auto kt = cast<RankedTensorType>(k.getType());
  int64_t hq = qt.getDimSize(1), hkv = kt.getDimSize(1);
  int64_t group = hq == hkv ? 1 : hq / hkv;
  SmallVector<OpFoldResult> sizes = sizesOf(q);
  sizes[3] = dimOf(k, 2);
  Value zero = tensor::EmptyOp::create(b, loc, sizes, f32);
  zero = linalg::FillOp::create(b, loc, ValueRange{cst(b, loc, 0.0)},
                                ValueRange{zero})
             .getResult(0);
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  AffineExpr hk = group == 1 ? d(1) : d(1).floorDiv(group);
  SmallVector<AffineMap> qkMaps{
      AffineMap::get(5, 0, {d(0), d(1), d(2), d(4)}, ctx),
      AffineMap::get(5, 0, {d(0), hk, d(3), d(4)}, ctx),
      AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, ctx)};
  SmallVector<IteratorType> qkIters(4, IteratorType::parallel);
  qkIters.push_back(IteratorType::reduction);
  Value s = linalg::GenericOp::create(
                b, loc, TypeRange{zero.getType()}, ValueRange{q, k},
                ValueRange{zero}, qkMaps, qkIters,
                [&](OpBuilder &nb, Location l, ValueRange a) {
                  Value p = arith::MulFOp::create(nb, l, ext(nb, l, a[0]),
                                                  ext(nb, l, a[1]));
                  linalg::YieldOp::create(
                      nb, l, ValueRange{arith::AddFOp::create(nb, l, a[2], p)});
                })
                .getResult(0);
  // Elementwise: scale, softcap, bias.
  AffineMap id = b.getMultiDimIdentityMap(4);
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  if (mask && mode >= 2) {
    auto mt = cast<RankedTensorType>(mask.getType());
    SmallVector<AffineExpr> e;
    for (int64_t a = 0; a < mt.getRank(); ++a)
      e.push_back(mt.getDimSize(a) == 1
                      ? b.getAffineConstantExpr(0)
                      : d(static_cast<unsigned>(4 - mt.getRank() + a)));
    ins.push_back(mask);
    maps.push_back(AffineMap::get(4, 0, e, ctx));
  }
  maps.push_back(id);
  Value off;
  if (causal == CausalKind::bottom_right)
    off = arith::SubIOp::create(b, loc, tensor::DimOp::create(b, loc, k, 2),
                                tensor::DimOp::create(b, loc, q, 2));
  const double ninf = -std::numeric_limits<double>::infinity();
  s = linalg::GenericOp::create(
          b, loc, TypeRange{s.getType()}, ins, ValueRange{s}, maps,
          SmallVector<IteratorType>(4, IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange a) {
            Value x = arith::MulFOp::create(nb, l, a.back(), cst(nb, l, scale));
            if (mode >= 1 && softcap > 0.0) {
              Value t = math::TanhOp::create(
                  nb, l,
                  arith::MulFOp::create(nb, l, x, cst(nb, l, 1.0 / softcap)));
              x = arith::MulFOp::create(nb, l, t, cst(nb, l, softcap));
            }
            if (mode >= 2) {
              if (mask) {
                if (kind == MaskKind::additive)
                  x = arith::AddFOp::create(nb, l, x, ext(nb, l, a[0]));
                else
                  x = arith::SelectOp::create(nb, l, a[0], x, cst(nb, l, ninf));
              }
              if (causal != CausalKind::none || left >= 0 || right >= 0) {
                Value i = linalg::IndexOp::create(nb, l, 2);
                Value j = linalg::IndexOp::create(nb, l, 3);
                if (off)
                  i = arith::AddIOp::create(nb, l, i, off);
                Value dd = arith::SubIOp::create(nb, l, j, i);
                auto idx = [&](int64_t v) -> Value {
                  return arith::ConstantIndexOp::create(nb, l, v);
                };
                Value out = arith::ConstantIntOp::create(nb, l, 0, 1);
                int64_t r = right;
                if (causal != CausalKind::none)
                  r = r < 0 ? 0 : std::min<int64_t>(r, 0);
                if (r >= 0)
                  out = arith::OrIOp::create(
                      nb, l, out,
                      arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sgt,
                                            dd, idx(r)));
                if (left >= 0)
                  out = arith::OrIOp::create(
                      nb, l, out,
                      arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt,
                                            dd, idx(-left)));
                x = arith::SelectOp::create(nb, l, out, cst(nb, l, ninf), x);
              }
            }
            linalg::YieldOp::create(nb, l, ValueRange{x});
          })
          .getResult(0);
  if (mode == 3) {
    // Softmax over keys; rows with no visible key are 0, not NaN.
    SmallVector<OpFoldResult> rowSizes(sizes.begin(), sizes.end() - 1);
    AffineMap row = AffineMap::get(4, 0, {d(0), d(1), d(2)}, ctx);
    SmallVector<IteratorType> red(3, IteratorType::parallel);
    red.push_back(IteratorType::reduction);
    auto reduce = [&](Value init, bool isMax, Value in) {
      return linalg::GenericOp::create(
                 b, loc, TypeRange{init.getType()}, ValueRange{in},
                 ValueRange{init}, SmallVector<AffineMap>{id, row}, red,
                 [&](OpBuilder &nb, Location l, ValueRange a) {
                   Value r =
                       isMax
                           ? Value(arith::MaximumFOp::create(nb, l, a[0], a[1]))
                           : Value(arith::AddFOp::create(nb, l, a[0], a[1]));
                   linalg::YieldOp::create(nb, l, ValueRange{r});
                 })
          .getResult(0);
    };
    auto rowInit = [&](double v) {
      Value e = tensor::EmptyOp::create(b, loc, rowSizes, f32);
      return linalg::FillOp::create(b, loc, ValueRange{cst(b, loc, v)},
                                    ValueRange{e})
          .getResult(0);
    };
    Value mx = reduce(rowInit(ninf), true, s);
    Value e =
        linalg::GenericOp::create(
            b, loc, TypeRange{s.getType()}, ValueRange{mx}, ValueRange{s},
            SmallVector<AffineMap>{row, id},
            SmallVector<IteratorType>(4, IteratorType::parallel),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value dead = arith::CmpFOp::create(
                  nb, l, arith::CmpFPredicate::OEQ, a[0], cst(nb, l, ninf));
              Value x = math::ExpOp::create(
                  nb, l, arith::SubFOp::create(nb, l, a[1], a[0]));
              linalg::YieldOp::create(nb, l,
                                      ValueRange{arith::SelectOp::create(
                                          nb, l, dead, cst(nb, l, 0.0), x)});
            })
            .getResult(0);
    Value sum = reduce(rowInit(0.0), false, e);
    s = linalg::GenericOp::create(
            b, loc, TypeRange{s.getType()}, ValueRange{sum}, ValueRange{e},
            SmallVector<AffineMap>{row, id},
            SmallVector<IteratorType>(4, IteratorType::parallel),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value z = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                              a[0], cst(nb, l, 0.0));
              Value x = arith::DivFOp::create(nb, l, a[1], a[0]);
              linalg::YieldOp::create(nb, l,
                                      ValueRange{arith::SelectOp::create(
                                          nb, l, z, cst(nb, l, 0.0), x)});
            })
            .getResult(0);
  }
  if (elem != f32) {
    Value out = tensor::EmptyOp::create(b, loc, sizes, elem);
    s = linalg::GenericOp::create(
            b, loc, TypeRange{out.getType()}, ValueRange{s}, ValueRange{out},
            SmallVector<AffineMap>{id, id},
            SmallVector<IteratorType>(4, IteratorType::parallel),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              linalg::YieldOp::create(
                  nb, l,
                  ValueRange{arith::TruncFOp::create(nb, l, elem, a[0])});
            })
            .getResult(0);
  }
  return s;
}

/// The explicit mask [B, Hq, Sq, Sk] of an Attention node whose band the
/// attributes cannot express. With `len` (nonpad_kv_seqlen): key j is
/// visible to query i of batch b iff j < len[b] and, when causal /
/// windowed, -left <= j - (i + len[b] - Sq) <= right (0 for causal).
/// Without it the diagonal sits at i + pastLen. Combined with `userMask`:
/// bool masks are and-ed, float masks keep their values where visible and
/// -inf elsewhere. The user mask covers all Sk keys (fitMaskToKeys padded
/// an opset-24 short one).
Value Importer::buildBandMask(Location loc, Value q, Value k, Value len,
                              int64_t pastLen, Value userMask, MaskKind kind,
                              bool causal, int64_t left, int64_t right) {
  using utils::IteratorType;
  SmallVector<OpFoldResult> sizes = sizesOf(q);
  sizes[3] = dimOf(k, 2);
  bool additive = userMask && kind == MaskKind::additive;
  Type elem = additive
                  ? cast<RankedTensorType>(userMask.getType()).getElementType()
                  : b.getI1Type();
  Value init = tensor::EmptyOp::create(b, loc, sizes, elem);
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  SmallVector<Value> ins;
  SmallVector<AffineMap> maps;
  if (len) {
    ins.push_back(len);
    maps.push_back(AffineMap::get(4, 0, {d(0)}, ctx));
  }
  if (userMask) {
    auto mt = cast<RankedTensorType>(userMask.getType());
    SmallVector<AffineExpr> e;
    for (int64_t a = 0; a < mt.getRank(); ++a)
      e.push_back(mt.getDimSize(a) == 1
                      ? b.getAffineConstantExpr(0)
                      : d(static_cast<unsigned>(4 - mt.getRank() + a)));
    ins.push_back(userMask);
    maps.push_back(AffineMap::get(4, 0, e, ctx));
  }
  maps.push_back(b.getMultiDimIdentityMap(4));
  Value sq = tensor::DimOp::create(b, loc, q, 2);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ins, ValueRange{init}, maps,
             SmallVector<IteratorType>(4, IteratorType::parallel),
             [&](OpBuilder &nb, Location l, ValueRange a) {
               auto idx = [&](int64_t v) -> Value {
                 return arith::ConstantIndexOp::create(nb, l, v);
               };
               Value i = linalg::IndexOp::create(nb, l, 2);
               Value j = linalg::IndexOp::create(nb, l, 3);
               Value ok, off;
               if (len) {
                 Value L =
                     arith::IndexCastOp::create(nb, l, nb.getIndexType(), a[0]);
                 ok = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, j,
                                            L);
                 off = arith::SubIOp::create(nb, l, L, sq);
               } else {
                 ok = arith::ConstantIntOp::create(nb, l, 1, 1);
                 off = idx(pastLen);
               }
               Value user = userMask ? a[len ? 1 : 0] : Value();
               Value dd = arith::SubIOp::create(
                   nb, l, j, arith::AddIOp::create(nb, l, i, off));
               int64_t r = causal
                               ? (right >= 0 ? std::min<int64_t>(right, 0) : 0)
                               : right;
               if (r >= 0)
                 ok = arith::AndIOp::create(
                     nb, l, ok,
                     arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle, dd,
                                           idx(r)));
               if (left >= 0)
                 ok = arith::AndIOp::create(
                     nb, l, ok,
                     arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, dd,
                                           idx(-left)));
               Value out = ok;
               if (userMask && !additive)
                 out = arith::AndIOp::create(nb, l, ok, user);
               if (additive) {
                 Value ninf = arith::ConstantOp::create(
                     nb, l,
                     nb.getFloatAttr(elem,
                                     -std::numeric_limits<double>::infinity()));
                 out = arith::SelectOp::create(nb, l, ok, user, ninf);
               }
               linalg::YieldOp::create(nb, l, ValueRange{out});
             })
      .getResult(0);
}

Value Importer::fitMaskToKeys(const onnx::NodeProto &n, Value mask, Value k,
                              int64_t keyDim, bool additive) {
  auto mt = cast<RankedTensorType>(mask.getType());
  int64_t r = mt.getRank();
  // One column broadcasts along the keys at opset 23 (the mask need only
  // broadcast to the scores). Opset 24 pads a shorter mask with masked
  // columns, one column too: the ONNX reference pads whenever the mask is
  // shorter than the keys, so only its first key keeps the mask's value.
  if (r == 0 || (mt.getDimSize(r - 1) == 1 && opset < 24))
    return mask;
  OpFoldResult have = dimOf(mask, r - 1), want = dimOf(k, keyDim);
  if (isEqualConstantIntOrValue(have, want))
    return mask;
  Location loc = nodeLoc(n);
  Type elem = mt.getElementType();
  Value fill = arith::ConstantOp::create(
      b, loc,
      additive ? cast<TypedAttr>(b.getFloatAttr(
                     elem, -std::numeric_limits<double>::infinity()))
               : cast<TypedAttr>(b.getBoolAttr(false)));
  std::optional<int64_t> haveN = getConstantIntValue(have),
                         wantN = getConstantIntValue(want);
  if (haveN && wantN) {
    if (*haveN > *wantN || opset < 24) {
      nodeError(n) << "attn_mask covers " << *haveN << " keys, the attention "
                   << "has " << *wantN << " (past and new)"
                   << (opset < 24 ? "; opset 24 pads shorter masks" : "");
      return Value();
    }
    // Opset 24: the missing columns are masked.
    SmallVector<OpFoldResult> lo(r, b.getIndexAttr(0)),
        hi(r, b.getIndexAttr(0));
    hi.back() = b.getIndexAttr(*wantN - *haveN);
    SmallVector<int64_t> shape(mt.getShape());
    shape.back() = *wantN;
    return tensor::PadOp::create(b, loc, RankedTensorType::get(shape, elem),
                                 mask, lo, hi, fill);
  }
  // Lengths known only while running (a mask with a KV cache: the key
  // count is past + new, which no dim of the mask can be shown to equal):
  // one check per call that the mask is not longer than the keys, then
  // the mask padded with masked columns to at least the key count and cut
  // to it, a copy of contiguous rows. (At opset 23, where the lengths must
  // be equal, a short mask is padded as opset 24 says.)
  std::string slot = indexErrorSlot(
      n, "attn_mask '" + n.input(3) +
             "': the keys it covers against the past and " + "new keys");
  Value haveV = getValueOrCreateConstantIndexOp(b, loc, have);
  Value wantV = getValueOrCreateConstantIndexOp(b, loc, want);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  checkAtMost(b, loc, slot, haveV, wantV);
  SmallVector<OpFoldResult> lo(r, b.getIndexAttr(0)), hi(r, b.getIndexAttr(0));
  hi.back() = arith::MaxSIOp::create(
                  b, loc, arith::SubIOp::create(b, loc, wantV, haveV), zero)
                  .getResult();
  SmallVector<int64_t> shape(mt.getShape());
  shape.back() = ShapedType::kDynamic;
  Value padded = tensor::PadOp::create(
      b, loc, RankedTensorType::get(shape, elem), mask, lo, hi, fill);
  SmallVector<OpFoldResult> sizes = sizesOf(mask);
  sizes.back() = want;
  return tensor::ExtractSliceOp::create(
      b, loc, padded, SmallVector<OpFoldResult>(r, b.getIndexAttr(0)), sizes,
      SmallVector<OpFoldResult>(r, b.getIndexAttr(1)));
}

/// [B, X, Y, D] -> [B, Y, X, D] (a copy).
Value Importer::swapHeadsAndTokens(Location loc, Value x) {
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> sizes = sizesOf(x);
  std::swap(sizes[1], sizes[2]);
  Value init = tensor::EmptyOp::create(b, loc, sizes, t.getElementType());
  return linalg::TransposeOp::create(b, loc, x, init,
                                     ArrayRef<int64_t>{0, 2, 1, 3})
      .getResult()[0];
}

/// [B, S, H*D] -> [B, S, H, D] (a view).
Value Importer::splitHeads(const onnx::NodeProto &n, Value x, int64_t heads) {
  auto t = cast<RankedTensorType>(x.getType());
  int64_t width = t.getShape().back();
  if (ShapedType::isDynamic(width)) {
    nodeError(n) << "3-D inputs need a static hidden size (the last dim) to "
                    "split into "
                 << heads << " heads, got a dynamic one";
    return x;
  }
  if (width % heads != 0) {
    nodeError(n) << "hidden size " << width << " is not a multiple of " << heads
                 << " heads";
    return x;
  }
  SmallVector<OpFoldResult> sizes = sizesOf(x);
  sizes.back() = b.getIndexAttr(heads);
  sizes.push_back(b.getIndexAttr(width / heads));
  return tensor::ExpandShapeOp::create(
      b, nodeLoc(n),
      RankedTensorType::get(
          {t.getDimSize(0), t.getDimSize(1), heads, width / heads},
          t.getElementType()),
      x, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}}, sizes);
}

} // namespace mlir::attn::onnx_import
