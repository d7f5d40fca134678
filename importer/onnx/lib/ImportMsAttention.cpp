//===- ImportMsAttention.cpp - com.microsoft.MultiHeadAttention -----------===//
//
// ONNX Runtime's contrib MultiHeadAttention, the op its transformer optimizer
// fuses attention into, as attn.sdpa: heads split from [B, S, N*h] (or the
// packed [B, S, N, 3, h] QKV), the input-projection bias added, past K/V
// concatenated (present outputs), key padding and attention_bias folded
// into one additive mask, `unidirectional` as a causal attribute.
//
//===----------------------------------------------------------------------===//

#include "Importer.h"

namespace mlir::attn::onnx_import {

void Importer::importMsMultiHeadAttention(const onnx::NodeProto &n) {
  Location loc = nodeLoc(n);
  Value query = input(n, 0), key = input(n, 1), value = input(n, 2);
  Value bias = input(n, 3), padding = input(n, 4), attnBias = input(n, 5);
  Value pastK = input(n, 6), pastV = input(n, 7);
  if (failed)
    return;
  for (int i = 8; i < n.input_size(); ++i)
    if (!n.input(i).empty()) {
      nodeError(n) << "input #" << i
                   << " (past_sequence_length / cache_indirection) is not "
                      "supported";
      return;
    }
  int64_t heads = intAttr(n, "num_heads", 0);
  if (heads <= 0) {
    nodeError(n) << "num_heads must be positive, got " << heads;
    return;
  }
  if (!query || (!key) != (!value) || (!pastK) != (!pastV)) {
    nodeError(n) << "needs query, and key with value (or neither: packed "
                    "QKV), and past_key with past_value";
    return;
  }
  auto qt = typeOf(query);
  Type elem = qt.getElementType();
  if (!isa<FloatType>(elem)) {
    nodeError(n) << "query must be float, got " << elem;
    return;
  }
  Value q, k, v;
  if (!key) {
    // Packed [B, S, N, 3, h]: slice each of Q, K, V and drop the 3.
    if (qt.getRank() != 5 || qt.getDimSize(3) != 3 ||
        qt.getDimSize(2) != heads || bias) {
      nodeError(n) << "packed QKV must be [B, S, num_heads, 3, head] without "
                      "bias, got "
                   << qt;
      return;
    }
    for (int64_t i = 0; i < 3; ++i) {
      SmallVector<OpFoldResult> offsets(5, b.getIndexAttr(0)),
          sizes = sizesOf(query), strides(5, b.getIndexAttr(1));
      offsets[3] = b.getIndexAttr(i);
      sizes[3] = b.getIndexAttr(1);
      auto sliceType = RankedTensorType::get(
          {qt.getDimSize(0), qt.getDimSize(1), heads, qt.getDimSize(4)}, elem);
      Value part = tensor::ExtractSliceOp::create(b, loc, sliceType, query,
                                                  offsets, sizes, strides);
      (i == 0 ? q : i == 1 ? k : v) = swapHeadsAndTokens(loc, part);
    }
  } else {
    auto kt = typeOf(key), vt = typeOf(value);
    if (qt.getRank() != 3 || kt.getRank() != 3 || vt.getRank() != 3) {
      nodeError(n) << "query, key and value must be 3-D [B, S, num_heads * "
                      "head] (4-D pre-split key/value are not supported), got "
                   << qt << ", " << kt << ", " << vt;
      return;
    }
    int64_t d = qt.getDimSize(2), dv = vt.getDimSize(2);
    if (ShapedType::isDynamic(d) || ShapedType::isDynamic(dv) ||
        kt.getDimSize(2) != d || kt.getElementType() != elem ||
        vt.getElementType() != elem) {
      nodeError(n) << "key must match query's static hidden size and all "
                      "must have one float type, got "
                   << qt << ", " << kt << ", " << vt;
      return;
    }
    q = query;
    k = key;
    v = value;
    if (bias) {
      auto bt = typeOf(bias);
      if (bt.getRank() != 1 || bt.getDimSize(0) != 2 * d + dv ||
          bt.getElementType() != elem) {
        nodeError(n) << "bias must be [" << 2 * d + dv << "] " << elem
                     << ", got " << bt;
        return;
      }
      // x + bias[off : off + width], broadcast over [B, S].
      auto addBias = [&](Value x, int64_t off, int64_t width) {
        Value part = tensor::ExtractSliceOp::create(
            b, loc, RankedTensorType::get({width}, elem), bias,
            ArrayRef<OpFoldResult>{b.getIndexAttr(off)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(width)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
        return broadcastGeneric(
            n, {x, part}, elem,
            [](OpBuilder &nb, Location l, ValueRange a) -> Value {
              return arith::AddFOp::create(nb, l, a[0], a[1]);
            });
      };
      q = addBias(q, 0, d);
      k = addBias(k, d, d);
      v = addBias(v, 2 * d, dv);
      if (failed)
        return;
    }
    q = swapHeadsAndTokens(loc, splitHeads(n, q, heads));
    k = swapHeadsAndTokens(loc, splitHeads(n, k, heads));
    v = swapHeadsAndTokens(loc, splitHeads(n, v, heads));
    if (failed)
      return;
  }
  if (pastK) {
    // (A dynamic past length, as exported decoders declare it, is fine:
    // the concatenation and the bottom-right diagonal take it as it is.)
    auto pk = typeOf(pastK), pv = typeOf(pastV);
    if (pk.getRank() != 4 || pv.getRank() != 4 || pk.getDimSize(1) != heads) {
      nodeError(n) << "past_key/past_value must be [B, num_heads, past, head], "
                      "got "
                   << pk << " and " << pv;
      return;
    }
    k = tensor::ConcatOp::create(b, loc, /*dim=*/2, ValueRange{pastK, k});
    v = tensor::ConcatOp::create(b, loc, /*dim=*/2, ValueRange{pastV, v});
  }
  if (wantsOutput(n, 1) || wantsOutput(n, 2)) {
    if (!pastK) {
      nodeError(n) << "present_key/present_value need past_key/past_value";
      return;
    }
    define(n, 1, k);
    define(n, 2, v);
  }
  // Causal: key j is hidden from query i when j > i + past. With a past
  // that is the bottom-right diagonal only when this step's query and key
  // lengths agree.
  CausalKind causal = CausalKind::none;
  // (ONNX Runtime applies the causal mask only to a query of more than one
  // token: one token sees every key, also without a past.)
  bool oneQueryToken = isConstantIntValue(dimOf(q, 2), 1);
  if (intAttr(n, "unidirectional", 0) && !oneQueryToken) {
    causal = CausalKind::top_left;
    if (pastK) {
      auto s = dimOf(q, 2), l = dimOf(key ? key : query, 1);
      if (!isEqualConstantIntOrValue(s, l)) {
        nodeError(n) << "unidirectional with a past needs equal query and key "
                        "lengths";
        return;
      }
      causal = CausalKind::bottom_right;
    }
  }
  // One additive mask [B|1, N|1, S, total]: padding then attention_bias.
  float filter = floatAttr(n, "mask_filter_value").value_or(-10000.0f);
  Value mask;
  OpFoldResult total = dimOf(k, 2);
  if (padding) {
    auto pt = typeOf(padding);
    if (!isa<IntegerType>(pt.getElementType()) ||
        pt.getElementType().isInteger(1) ||
        (pt.getRank() != 1 && pt.getRank() != 2)) {
      nodeError(n) << "key_padding_mask must be int [B] (lengths) or [B, "
                      "total] (1 keep / 0 pad), got "
                   << pt;
      return;
    }
    // Its batch must be the query's, a 2-D mask's length the keys' (past
    // included): equal sizes, or the mask would be read out of bounds.
    bool sizesOk = isEqualConstantIntOrValue(dimOf(padding, 0), dimOf(q, 0)) &&
                   (pt.getRank() == 1 ||
                    isEqualConstantIntOrValue(dimOf(padding, 1), total));
    if (!sizesOk) {
      nodeError(n) << "key_padding_mask " << pt
                   << " does not match the batch and total key length (or they "
                      "cannot be proven equal)";
      return;
    }
    SmallVector<OpFoldResult> sizes{dimOf(padding, 0), b.getIndexAttr(1),
                                    b.getIndexAttr(1), total};
    Value init = tensor::EmptyOp::create(b, loc, sizes, elem);
    bool lengths = pt.getRank() == 1;
    AffineExpr d0 = b.getAffineDimExpr(0), d3 = b.getAffineDimExpr(3);
    SmallVector<AffineMap> maps{
        AffineMap::get(4, 0,
                       lengths ? ArrayRef<AffineExpr>{d0}
                               : ArrayRef<AffineExpr>{d0, d3},
                       ctx),
        b.getMultiDimIdentityMap(4)};
    mask =
        linalg::GenericOp::create(
            b, loc, TypeRange{init.getType()}, ValueRange{padding},
            ValueRange{init}, maps,
            SmallVector<utils::IteratorType>(4, utils::IteratorType::parallel),
            [&](OpBuilder &nb, Location l, ValueRange a) {
              Value hidden;
              Value zeroI = arith::ConstantOp::create(
                  nb, l, nb.getZeroAttr(a[0].getType()));
              if (lengths) {
                Value j = arith::IndexCastOp::create(
                    nb, l, a[0].getType(), linalg::IndexOp::create(nb, l, 3));
                hidden = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge,
                                               j, a[0]);
              } else {
                // ORT keeps keys whose mask entry is > 0.
                hidden = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sle,
                                               a[0], zeroI);
              }
              Value f = arith::ConstantOp::create(
                  nb, l, nb.getFloatAttr(elem, filter));
              Value z = arith::ConstantOp::create(nb, l, nb.getZeroAttr(elem));
              linalg::YieldOp::create(
                  nb, l, Value(arith::SelectOp::create(nb, l, hidden, f, z)));
            })
            .getResult(0);
  }
  if (attnBias) {
    auto at = typeOf(attnBias);
    if (at.getRank() != 4 || at.getElementType() != elem) {
      nodeError(n) << "attention_bias must be 4-D [B|1, N|1, S, total] " << elem
                   << ", got " << at;
      return;
    }
    mask = !mask ? attnBias
                 : broadcastGeneric(
                       n, {mask, attnBias}, elem,
                       [](OpBuilder &nb, Location l, ValueRange a) -> Value {
                         return arith::AddFOp::create(nb, l, a[0], a[1]);
                       });
    if (failed)
      return;
  }
  FloatAttr scale;
  if (auto s = floatAttr(n, "scale"); s && *s != 0.0f)
    scale = b.getF32FloatAttr(*s);
  auto q4 = typeOf(q), v4 = typeOf(v);
  SmallVector<int64_t> outShape(q4.getShape());
  outShape.back() = v4.getShape().back();
  auto sdpa = SdpaOp::create(b, loc, RankedTensorType::get(outShape, elem), q,
                             k, v, mask, CausalKindAttr::get(ctx, causal),
                             MaskKindAttr::get(ctx, MaskKind::additive),
                             HeadLayoutAttr::get(ctx, HeadLayout::heads_major),
                             IntegerAttr(), IntegerAttr(), FloatAttr(), scale,
                             b.getF32FloatAttr(0.0f), b.getI64IntegerAttr(0));
  if (verifyNodeOp(n, sdpa).failed())
    return;
  // [B, N, S, hv] -> [B, S, N * hv].
  Value merged = swapHeadsAndTokens(loc, sdpa);
  auto mt = typeOf(merged);
  int64_t width = ShapedType::isDynamic(mt.getDimSize(3))
                      ? ShapedType::kDynamic
                      : mt.getDimSize(2) * mt.getDimSize(3);
  define(n, 0,
         tensor::CollapseShapeOp::create(
             b, loc,
             RankedTensorType::get({mt.getDimSize(0), mt.getDimSize(1), width},
                                   elem),
             merged, SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}}));
}

} // namespace mlir::attn::onnx_import
