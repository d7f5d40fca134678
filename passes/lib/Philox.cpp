//===- Philox.cpp - counter-based random numbers in arith ------------------===//
//
// Dropout must be reproducible and independent of how loops are tiled or
// parallelised, so each attention weight draws its number from a
// counter-based generator (Philox-4x32-10, Salmon et al. 2011) applied to its
// flat index: no state travels between iterations.
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace mlir::attn::detail {

namespace {

/// The vector form: each lane's four 32-bit words live in the low halves
/// of i64 lanes, so that every 32 x 32 -> 64-bit product is one i64
/// multiply of operands masked to 32 bits (vpmuludq, which reads only the
/// low halves: the masks fold away) and its high word one shift. The high
/// halves of the other words carry garbage that no product or result
/// reads. (arith.mului_extended on i32 vectors widens, multiplies and
/// narrows every operand: about twice the instructions.)
Value philoxUniformVector(OpBuilder &b, Location loc, Value counter,
                          uint64_t seed) {
  auto vecType = cast<VectorType>(counter.getType());
  auto splat = [&](Type scalar, Attribute v) -> Value {
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(VectorType::get(vecType.getShape(), scalar), v));
  };
  Type i64 = b.getI64Type();
  auto c64 = [&](uint64_t v) { return splat(i64, b.getIntegerAttr(i64, v)); };
  Value low32 = c64(0xFFFFFFFFu), shift32 = c64(32);
  auto mulWide = [&](uint32_t m, Value x) {
    Value xLow = arith::AndIOp::create(b, loc, x, low32);
    return arith::MulIOp::create(b, loc, c64(m), xLow).getResult();
  };
  Value ctr[4] = {counter, arith::ShRUIOp::create(b, loc, counter, shift32),
                  c64(0), c64(0)};
  uint32_t key0 = static_cast<uint32_t>(seed),
           key1 = static_cast<uint32_t>(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    Value p0 = mulWide(0xD2511F53u, ctr[0]);
    Value p1 = mulWide(0xCD9E8D57u, ctr[2]);
    Value hi0 = arith::ShRUIOp::create(b, loc, p0, shift32);
    Value hi1 = arith::ShRUIOp::create(b, loc, p1, shift32);
    Value n0 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, hi1, ctr[1]), c64(key0));
    Value n2 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, hi0, ctr[3]), c64(key1));
    ctr[0] = n0;
    ctr[1] = p1;
    ctr[2] = n2;
    ctr[3] = p0;
    key0 += 0x9E3779B9u;
    key1 += 0xBB67AE85u;
  }
  // Bits 8-31 of the first word -> [0, 1), as the scalar form.
  Value top = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, ctr[0], c64(8)), c64(0xFFFFFF));
  Value top32 = arith::TruncIOp::create(
      b, loc, VectorType::get(vecType.getShape(), b.getI32Type()), top);
  Value f = arith::SIToFPOp::create(
      b, loc, VectorType::get(vecType.getShape(), b.getF32Type()), top32);
  return arith::MulFOp::create(
      b, loc, f, splat(b.getF32Type(), b.getF32FloatAttr(1.0f / 16777216.0f)));
}

} // namespace

Value buildPhiloxUniform(OpBuilder &b, Location loc, Value counter,
                         uint64_t seed, MulHiBuilder mulHi) {
  if (isa<VectorType>(counter.getType()))
    return philoxUniformVector(b, loc, counter, seed);
  Type i32 = b.getI32Type(), i64 = b.getI64Type();
  auto c32 = [&](uint32_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(i32, v));
  };
  Value lo = arith::TruncIOp::create(b, loc, i32, counter);
  Value hi = arith::TruncIOp::create(
      b, loc, i32,
      arith::ShRUIOp::create(b, loc, counter,
                             arith::ConstantOp::create(
                                 b, loc, b.getIntegerAttr(i64, 32))));
  Value ctr[4] = {lo, hi, c32(0), c32(0)};
  uint32_t key0 = static_cast<uint32_t>(seed),
           key1 = static_cast<uint32_t>(seed >> 32);
  // (low, high) words of m * x.
  auto mulWide = [&](uint32_t m, Value x) -> std::pair<Value, Value> {
    if (matchPattern(x, m_Zero())) // round 0's third word
      return {c32(0), c32(0)};
    if (mulHi)
      return {arith::MulIOp::create(b, loc, c32(m), x),
              mulHi(b, loc, c32(m), x)};
    auto p = arith::MulUIExtendedOp::create(b, loc, c32(m), x);
    return {p.getLow(), p.getHigh()};
  };
  for (int round = 0; round < 10; ++round) {
    auto [lo0, hi0] = mulWide(0xD2511F53u, ctr[0]);
    auto [lo1, hi1] = mulWide(0xCD9E8D57u, ctr[2]);
    Value n0 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, hi1, ctr[1]), c32(key0));
    Value n2 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, hi0, ctr[3]), c32(key1));
    ctr[0] = n0;
    ctr[1] = lo1;
    ctr[2] = n2;
    ctr[3] = lo0;
    key0 += 0x9E3779B9u;
    key1 += 0xBB67AE85u;
  }
  // Top 24 bits -> [0, 1) exactly representable in f32.
  Value top = arith::ShRUIOp::create(b, loc, ctr[0], c32(8));
  Value f = arith::UIToFPOp::create(b, loc, b.getF32Type(), top);
  return arith::MulFOp::create(
      b, loc, f,
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f / 16777216.0f)));
}

} // namespace mlir::attn::detail
