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

using namespace mlir;

namespace mlir::attn::detail {

Value buildPhiloxUniform(OpBuilder &b, Location loc, Value counter,
                         uint64_t seed) {
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
  for (int round = 0; round < 10; ++round) {
    auto p0 = arith::MulUIExtendedOp::create(b, loc, c32(0xD2511F53u), ctr[0]);
    auto p1 = arith::MulUIExtendedOp::create(b, loc, c32(0xCD9E8D57u), ctr[2]);
    Value n0 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p1.getHigh(), ctr[1]), c32(key0));
    Value n2 = arith::XOrIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, p0.getHigh(), ctr[3]), c32(key1));
    ctr[0] = n0;
    ctr[1] = p1.getLow();
    ctr[2] = n2;
    ctr[3] = p0.getLow();
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
