//===- AttnOps.cpp - verifiers of the attn operations ----------------------===//
//
// Each verifier rejects what cannot be lowered and names the offending
// operand, the dimension and what was expected, so that a user reading the
// diagnostic knows which tensor of their model is wrong.
//
//===----------------------------------------------------------------------===//

#include "attn/AttnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <sstream>

using namespace mlir;
using namespace mlir::attn;

#define GET_OP_CLASSES
#include "attn/AttnOps.cpp.inc"

namespace {

/// Formats one dimension for a diagnostic ("?" for dynamic).
std::string dimStr(int64_t d) {
  return ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d);
}

/// Two dimensions agree unless both are static and different.
bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Checks that `dims` of `a` and `b` agree; reports `what` otherwise.
LogicalResult expectDim(Operation *op, StringRef aName, RankedTensorType a,
                        int64_t ai, StringRef bName, RankedTensorType b,
                        int64_t bi, StringRef what) {
  int64_t x = a.getDimSize(ai), y = b.getDimSize(bi);
  if (compatible(x, y))
    return success();
  return op->emitOpError() << what << " mismatch: " << aName << " dim " << ai
                           << " is " << dimStr(x) << " but " << bName
                           << " dim " << bi << " is " << dimStr(y);
}

/// Shortest readable spelling of a float for diagnostics ("0.5", "inf").
std::string floatStr(double v) {
  if (std::isnan(v))
    return "nan";
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  std::ostringstream os;
  os << v;
  return os.str();
}

LogicalResult verifyDropout(Operation *op, float p) {
  if (!(p >= 0.0f && p < 1.0f))
    return op->emitOpError() << "dropout_p must be in [0, 1), got "
                             << floatStr(p);
  return success();
}

LogicalResult verifyScale(Operation *op, std::optional<APFloat> scale) {
  if (scale && !scale->isFinite())
    return op->emitOpError() << "scale must be finite, got "
                             << floatStr(scale->convertToDouble());
  return success();
}

/// All float operands and the result share one element type.
LogicalResult verifySameElementType(Operation *op) {
  Type elem;
  for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults())) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || t.getElementType().isInteger(1))
      continue;
    if (!elem) {
      elem = t.getElementType();
      continue;
    }
    if (t.getElementType() != elem)
      return op->emitOpError()
             << "expects one element type for all float operands and the "
                "result, found "
             << elem << " and " << t.getElementType();
  }
  return success();
}

/// Checks that `result` has exactly `expected`: dims equal, or dynamic in
/// the result. A static result dim where the operands leave it dynamic
/// would be a size nothing checks while running (the result would have the
/// operands' size whatever its type says).
LogicalResult verifyResultShape(Operation *op, RankedTensorType result,
                                ArrayRef<int64_t> expected) {
  auto fmt = [](ArrayRef<int64_t> s) {
    std::string r = "[";
    for (auto [i, d] : llvm::enumerate(s))
      r += (i ? ", " : "") + dimStr(d);
    return r + "]";
  };
  bool ok = result.getRank() == static_cast<int64_t>(expected.size());
  for (int64_t i = 0; ok && i < result.getRank(); ++i)
    ok = compatible(result.getDimSize(i), expected[i]);
  if (!ok)
    return op->emitOpError()
           << "result shape " << fmt(result.getShape())
           << " does not match the expected shape " << fmt(expected);
  for (int64_t i = 0; i < result.getRank(); ++i)
    if (!result.isDynamicDim(i) && ShapedType::isDynamic(expected[i]))
      return op->emitOpError()
             << "result dim " << i << " is static (" << result.getDimSize(i)
             << ") but the operands leave it dynamic (expected shape "
             << fmt(expected) << "): make it ?, or give the operands its size";
  return success();
}

/// No operand or result has a static dim of 0 (the lowerings' tiles assume
/// at least one element per static dim; a dynamic dim may be 0 while
/// running).
LogicalResult verifyNoEmptyDims(Operation *op) {
  auto check = [&](Type type, StringRef what, unsigned index) -> LogicalResult {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t)
      return success();
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (t.getDimSize(i) == 0)
        return op->emitOpError()
               << what << " #" << index << " (" << t << ") dim " << i
               << " is 0: empty operands are not supported";
    return success();
  };
  for (OpOperand &o : op->getOpOperands())
    if (failed(check(o.get().getType(), "operand", o.getOperandNumber())))
      return failure();
  for (OpResult r : op->getResults())
    if (failed(check(r.getType(), "result", r.getResultNumber())))
      return failure();
  return success();
}

/// A projection weight must be rank 2 with rows == `dIn`.
LogicalResult verifyWeight(Operation *op, StringRef name, Value w,
                           int64_t dIn) {
  auto t = cast<RankedTensorType>(w.getType());
  if (t.getRank() != 2)
    return op->emitOpError() << name << " must be rank 2 [d_in, d_out], got rank "
                             << t.getRank();
  if (!compatible(t.getDimSize(0), dIn))
    return op->emitOpError() << name << " has " << dimStr(t.getDimSize(0))
                             << " rows but the input's last dim (d_in) is "
                             << dimStr(dIn);
  return success();
}

/// A bias must be rank 1 with `n` elements.
LogicalResult verifyBias(Operation *op, StringRef name, Value b, int64_t n,
                         StringRef against) {
  if (!b)
    return success();
  auto t = cast<RankedTensorType>(b.getType());
  if (t.getRank() != 1)
    return op->emitOpError() << name << " must be rank 1, got rank "
                             << t.getRank();
  if (!compatible(t.getDimSize(0), n))
    return op->emitOpError() << name << " has " << dimStr(t.getDimSize(0))
                             << " elements but " << against << " is "
                             << dimStr(n);
  return success();
}

/// The three qkv biases are given together or not at all.
LogicalResult verifyBiasTriple(Operation *op, Value bq, Value bk, Value bv) {
  int n = !!bq + !!bk + !!bv;
  if (n != 0 && n != 3)
    return op->emitOpError()
           << "expects all three of b_query, b_key, b_value or none, got " << n;
  return success();
}

/// What causal_attention and multi_head_attention share: an input of rank
/// >= 2, attribute ranges, Q/K/V weights reading d_in, all-or-no biases.
template <typename OpT> LogicalResult verifyProjectedAttention(OpT op) {
  auto in = op.getInput().getType();
  if (in.getRank() < 2)
    return op.emitOpError()
           << "input must have rank >= 2 ([..., T, d_in]), got rank "
           << in.getRank();
  int64_t dIn = in.getShape().back();
  if (failed(verifyNoEmptyDims(op)) || failed(verifySameElementType(op)) ||
      failed(verifyScale(op, op.getScale())) ||
      failed(verifyDropout(op, op.getDropoutP().convertToFloat())) ||
      failed(verifyWeight(op, "w_query", op.getWQuery(), dIn)) ||
      failed(verifyWeight(op, "w_key", op.getWKey(), dIn)) ||
      failed(verifyWeight(op, "w_value", op.getWValue(), dIn)) ||
      failed(
          verifyBiasTriple(op, op.getBQuery(), op.getBKey(), op.getBValue())))
    return failure();
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// SelfAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult SelfAttentionOp::verify() {
  auto in = getInput().getType();
  if (in.getRank() < 2)
    return emitOpError() << "input must have rank >= 2 ([..., T, D]), got rank "
                         << in.getRank();
  if (failed(verifyNoEmptyDims(*this)) ||
      failed(verifySameElementType(*this)) ||
      failed(verifyScale(*this, getScale())))
    return failure();
  return verifyResultShape(*this, getResult().getType(), in.getShape());
}

//===----------------------------------------------------------------------===//
// SdpaOp
//===----------------------------------------------------------------------===//

double SdpaOp::getEffectiveScale() {
  if (auto s = getScale())
    return s->convertToDouble();
  int64_t d = getQuery().getType().getShape().back();
  return 1.0 / std::sqrt(static_cast<double>(d));
}

int64_t SdpaOp::getHeadDimIndex() {
  int64_t r = getQuery().getType().getRank();
  return getLayout() == HeadLayout::seq_major ? r - 2 : r - 3;
}

int64_t SdpaOp::getSeqDimIndex() {
  int64_t r = getQuery().getType().getRank();
  return getLayout() == HeadLayout::seq_major ? r - 3 : r - 2;
}

/// The type with dims r-3 and r-2 swapped: seq_major operands are checked in
/// the heads_major frame.
static RankedTensorType toHeadsMajor(RankedTensorType t) {
  SmallVector<int64_t> shape(t.getShape());
  int64_t r = t.getRank();
  std::swap(shape[r - 3], shape[r - 2]);
  return RankedTensorType::get(shape, t.getElementType());
}

LogicalResult SdpaOp::verify() {
  auto q = getQuery().getType(), k = getKey().getType(),
       v = getValue().getType();
  int64_t r = q.getRank();
  auto resultType = getResult().getType();
  if (getLayout() == HeadLayout::seq_major) {
    if (r < 3 || k.getRank() != r || v.getRank() != r ||
        resultType.getRank() != r)
      return emitOpError() << "layout(seq_major) needs operands and result of "
                              "one rank >= 3 ([B..., T, H, d])";
    q = toHeadsMajor(q);
    k = toHeadsMajor(k);
    v = toHeadsMajor(v);
    resultType = toHeadsMajor(resultType);
  }
  if (r < 2)
    return emitOpError() << "query must have rank >= 2 ([..., T, d]), got rank "
                         << r;
  if (k.getRank() != r || v.getRank() != r)
    return emitOpError() << "query, key and value must have the same rank, got "
                         << r << ", " << k.getRank() << " and " << v.getRank();
  // An empty head dim would make the default scale 1/sqrt(0), and the
  // lowerings' tiles assume at least one element per dim.
  for (auto [name, t] : {std::make_pair("query", q), std::make_pair("key", k),
                         std::make_pair("value", v)})
    for (int64_t i = 0; i < r; ++i)
      if (t.getDimSize(i) == 0)
        return emitOpError() << name << " dim " << i
                             << " is 0: empty operands are not supported";
  // (The mask and the result.)
  if (failed(verifyNoEmptyDims(*this)))
    return failure();
  // The mask's element type follows its kind, not the operands'.
  if (Value m = getMask()) {
    auto mt = cast<RankedTensorType>(m.getType());
    bool isBool = mt.getElementType().isInteger(1);
    bool wantBool = getMaskKind() != MaskKind::additive;
    if (isBool != wantBool)
      return emitOpError() << "mask of kind '"
                           << stringifyMaskKind(getMaskKind()) << "' must have "
                           << (wantBool ? "i1" : "float")
                           << " elements, got " << mt.getElementType();
    if (!isBool && mt.getElementType() != q.getElementType())
      return emitOpError() << "additive mask element type "
                           << mt.getElementType()
                           << " differs from the query's "
                           << q.getElementType();
  }
  if (failed(verifySameElementType(*this)) ||
      failed(verifyScale(*this, getScale())) ||
      failed(verifyDropout(*this, getDropoutP().convertToFloat())))
    return failure();
  if (ShapedType::isDynamic(q.getShape().back()) && !getScale())
    return emitOpError() << "needs a static head dim or an explicit scale";
  if (auto c = getSoftcap()) {
    double v = c->convertToDouble();
    if (!(v > 0.0) || !std::isfinite(v))
      return emitOpError() << "softcap must be finite and > 0, got "
                           << floatStr(v);
  }
  for (auto [name, w] : {std::make_pair("window_left", getWindowLeft()),
                         std::make_pair("window_right", getWindowRight())})
    if (w && static_cast<int64_t>(*w) < 0)
      return emitOpError() << name << " must be >= 0, got "
                           << static_cast<int64_t>(*w);
  // Batch dims.
  for (int64_t i = 0; i + 3 < r; ++i) {
    if (failed(expectDim(*this, "query", q, i, "key", k, i, "batch dim")) ||
        failed(expectDim(*this, "query", q, i, "value", v, i, "batch dim")))
      return failure();
  }
  if (failed(expectDim(*this, "query", q, r - 1, "key", k, r - 1, "head dim")) ||
      failed(expectDim(*this, "key", k, r - 2, "value", v, r - 2,
                       "key/value sequence length")))
    return failure();
  int64_t hq = 1, hkv = 1;
  if (r >= 3) {
    if (failed(expectDim(*this, "key", k, r - 3, "value", v, r - 3,
                         "key/value head count")))
      return failure();
    hq = q.getDimSize(r - 3);
    hkv = k.getDimSize(r - 3);
    if (ShapedType::isDynamic(hkv))
      hkv = v.getDimSize(r - 3);
    if (hq != hkv) {
      if (ShapedType::isDynamic(hq) || ShapedType::isDynamic(hkv))
        return emitOpError()
               << "grouped-query attention needs static head counts, got Hq = "
               << dimStr(hq) << " and Hkv = " << dimStr(hkv);
      if (hkv == 0 || hq % hkv != 0)
        return emitOpError() << "query heads (" << hq
                             << ") must be a multiple of key/value heads ("
                             << hkv << ")";
    }
  }
  // Expected result [B..., Hq, Tq, dv].
  SmallVector<int64_t> expected(q.getShape());
  expected.back() = v.getShape().back();
  if (failed(verifyResultShape(*this, resultType, expected)))
    return failure();

  if (Value m = getMask()) {
    auto mt = cast<RankedTensorType>(m.getType());
    // Broadcast target [B..., Hq, Tq, Tk].
    SmallVector<int64_t> target(q.getShape());
    target.back() = k.getDimSize(r - 2);
    if (mt.getRank() > r)
      return emitOpError() << "mask rank " << mt.getRank()
                           << " exceeds the score rank " << r;
    for (int64_t i = 0; i < mt.getRank(); ++i) {
      int64_t md = mt.getDimSize(mt.getRank() - 1 - i);
      int64_t td = target[r - 1 - i];
      if (md != 1 && !compatible(md, td))
        return emitOpError()
               << "mask dim " << (mt.getRank() - 1 - i) << " (" << dimStr(md)
               << ") does not broadcast to score dim " << (r - 1 - i) << " ("
               << dimStr(td) << "); scores are [B..., Hq, Tq, Tk]";
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// CausalAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult CausalAttentionOp::verify() {
  auto in = getInput().getType();
  if (failed(verifyProjectedAttention(*this)))
    return failure();
  auto wq = getWQuery().getType(), wk = getWKey().getType(),
       wv = getWValue().getType();
  if (failed(expectDim(*this, "w_query", wq, 1, "w_key", wk, 1,
                       "query/key width (d_out)")))
    return failure();
  if (ShapedType::isDynamic(wq.getDimSize(1)) &&
      ShapedType::isDynamic(wk.getDimSize(1)) && !getScale())
    return emitOpError() << "needs a static d_out (w_query's or w_key's "
                            "second dim) or an explicit scale";
  if (failed(verifyBias(*this, "b_query", getBQuery(), wq.getDimSize(1),
                        "w_query's d_out")) ||
      failed(verifyBias(*this, "b_key", getBKey(), wk.getDimSize(1),
                        "w_key's d_out")) ||
      failed(verifyBias(*this, "b_value", getBValue(), wv.getDimSize(1),
                        "w_value's d_out")))
    return failure();
  SmallVector<int64_t> expected(in.getShape());
  expected.back() = wv.getDimSize(1);
  return verifyResultShape(*this, getResult().getType(), expected);
}

//===----------------------------------------------------------------------===//
// MultiHeadAttentionOp
//===----------------------------------------------------------------------===//

LogicalResult MultiHeadAttentionOp::verify() {
  auto in = getInput().getType();
  if (failed(verifyProjectedAttention(*this)))
    return failure();
  auto wq = getWQuery().getType(), wk = getWKey().getType(),
       wv = getWValue().getType();
  if (failed(expectDim(*this, "w_query", wq, 1, "w_key", wk, 1, "d_out")) ||
      failed(expectDim(*this, "w_query", wq, 1, "w_value", wv, 1, "d_out")))
    return failure();
  int64_t dOut = wq.getDimSize(1);
  for (auto [name, w] :
       {std::make_pair("w_query", wq), std::make_pair("w_key", wk),
        std::make_pair("w_value", wv)})
    if (ShapedType::isDynamic(w.getDimSize(1)))
      return emitOpError() << "needs a static d_out (" << name
                           << "'s second dim), to split into heads";
  int64_t heads = getNumHeads();
  if (dOut % heads != 0)
    return emitOpError() << "d_out (" << dOut
                         << ") must be divisible by num_heads (" << heads
                         << ")";
  for (auto [name, b] : {std::make_pair("b_query", getBQuery()),
                         std::make_pair("b_key", getBKey()),
                         std::make_pair("b_value", getBValue())})
    if (failed(verifyBias(*this, name, b, dOut, "d_out")))
      return failure();
  int64_t dModel = dOut;
  if (Value wo = getWOut()) {
    auto wot = cast<RankedTensorType>(wo.getType());
    if (wot.getRank() != 2)
      return emitOpError() << "w_out must be rank 2 [d_out, d_model], got rank "
                           << wot.getRank();
    if (!compatible(wot.getDimSize(0), dOut))
      return emitOpError() << "w_out has " << dimStr(wot.getDimSize(0))
                           << " rows but d_out is " << dOut;
    dModel = wot.getDimSize(1);
    if (failed(verifyBias(*this, "b_out", getBOut(), dModel,
                          "w_out's d_model")))
      return failure();
  } else if (getBOut()) {
    return emitOpError() << "b_out needs w_out";
  }
  SmallVector<int64_t> expected(in.getShape());
  expected.back() = dModel;
  return verifyResultShape(*this, getResult().getType(), expected);
}

//===----------------------------------------------------------------------===//
// SplitHeadsOp / MergeHeadsOp
//===----------------------------------------------------------------------===//

LogicalResult SplitHeadsOp::verify() {
  auto in = getInput().getType();
  if (in.getRank() < 2)
    return emitOpError() << "input must have rank >= 2 ([..., T, H*d]), got rank "
                         << in.getRank();
  if (failed(verifyNoEmptyDims(*this)) || failed(verifySameElementType(*this)))
    return failure();
  int64_t width = in.getShape().back(), heads = getNumHeads();
  if (ShapedType::isDynamic(width))
    return emitOpError() << "needs a static last dim to split into heads";
  if (width % heads != 0)
    return emitOpError() << "last dim (" << width
                         << ") must be divisible by num_heads (" << heads << ")";
  SmallVector<int64_t> expected(in.getShape().drop_back(2));
  expected.append({heads, in.getDimSize(in.getRank() - 2), width / heads});
  return verifyResultShape(*this, getResult().getType(), expected);
}

LogicalResult MergeHeadsOp::verify() {
  auto in = getInput().getType();
  if (in.getRank() < 3)
    return emitOpError() << "input must have rank >= 3 ([..., H, T, d]), got rank "
                         << in.getRank();
  if (failed(verifyNoEmptyDims(*this)) || failed(verifySameElementType(*this)))
    return failure();
  int64_t r = in.getRank();
  int64_t h = in.getDimSize(r - 3), d = in.getDimSize(r - 1);
  if (ShapedType::isDynamic(h) || ShapedType::isDynamic(d))
    return emitOpError() << "needs static head count and head dim, got "
                         << dimStr(h) << " and " << dimStr(d);
  int64_t width = 0;
  if (llvm::MulOverflow(h, d, width) || width > (int64_t(1) << 40))
    return emitOpError() << "head count " << h << " times head dim " << d
                         << " is too large a width";
  SmallVector<int64_t> expected(in.getShape().drop_back(3));
  expected.append({in.getDimSize(r - 2), width});
  return verifyResultShape(*this, getResult().getType(), expected);
}
