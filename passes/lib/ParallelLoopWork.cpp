//===- ParallelLoopWork.cpp - how much work a parallel loop does ----------===//

#include "ParallelLoopWork.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/CallInterfaces.h"

namespace mlir::attn::detail {

namespace {

using Work = std::optional<int64_t>;

/// Far above any threshold, and far from overflowing when added to.
constexpr int64_t kSaturated = int64_t(1) << 50;

Work times(Work a, Work b) {
  if (!a || !b)
    return std::nullopt;
  if (*a != 0 && *b > kSaturated / *a)
    return kSaturated;
  return std::min(*a * *b, kSaturated);
}

Work plus(Work a, Work b) {
  if (!a || !b)
    return std::nullopt;
  return std::min(*a + *b, kSaturated);
}

/// (ub - lb) / step rounded up, for constant bounds; nullopt otherwise.
Work tripCount(Value lb, Value ub, Value step) {
  std::optional<int64_t> l = getConstantIntValue(lb),
                         u = getConstantIntValue(ub),
                         s = getConstantIntValue(step);
  if (!l || !u || !s || *s <= 0)
    return std::nullopt;
  if (*u <= *l)
    return 0;
  // (In unsigned arithmetic: u - l fits, u - l + s - 1 may not.)
  uint64_t span = uint64_t(*u) - uint64_t(*l);
  return int64_t(std::min<uint64_t>(
      span / uint64_t(*s) + (span % uint64_t(*s) != 0), kSaturated));
}

Work trips(ValueRange lbs, ValueRange ubs, ValueRange steps) {
  Work n = 1;
  for (auto [lb, ub, step] : llvm::zip(lbs, ubs, steps))
    n = times(n, tripCount(lb, ub, step));
  return n;
}

Work regionWork(Region &region);

/// One op's count: 1 per 16 lanes of its widest vector, operand or result
/// (a store's vector is an operand).
int64_t vectorFactor(Operation *op) {
  int64_t lanes = 1;
  auto widen = [&](Type t) {
    if (auto v = dyn_cast<VectorType>(t))
      lanes = std::max(lanes, v.getNumElements());
  };
  llvm::for_each(op->getResultTypes(), widen);
  llvm::for_each(op->getOperandTypes(), widen);
  return std::max<int64_t>(1, lanes / 16);
}

Work opWork(Operation *op) {
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return times(
        tripCount(loop.getLowerBound(), loop.getUpperBound(), loop.getStep()),
        plus(regionWork(loop.getRegion()), 1));
  if (auto par = dyn_cast<scf::ParallelOp>(op))
    return times(trips(par.getLowerBound(), par.getUpperBound(), par.getStep()),
                 plus(regionWork(par.getRegion()), 1));
  if (auto branch = dyn_cast<scf::IfOp>(op)) {
    Work then = regionWork(branch.getThenRegion());
    Work other = regionWork(branch.getElseRegion());
    if (!then || !other)
      return std::nullopt;
    return std::max(*then, *other) + 1;
  }
  if (auto scope = dyn_cast<memref::AllocaScopeOp>(op))
    return regionWork(scope.getBodyRegion());
  if (auto copy = dyn_cast<memref::CopyOp>(op)) {
    auto t = dyn_cast<MemRefType>(copy.getSource().getType());
    if (!t || !t.hasStaticShape())
      return std::nullopt;
    return std::max<int64_t>(1, t.getNumElements() / 16);
  }
  if (isa<CallOpInterface>(op) || op->getNumRegions() > 0)
    return std::nullopt;
  if (isa<math::MathDialect>(op->getDialect()))
    return 16 * vectorFactor(op);
  return vectorFactor(op);
}

Work regionWork(Region &region) {
  Work total = 0;
  for (Block &block : region)
    for (Operation &op : block)
      total = plus(total, opWork(&op));
  return total;
}

} // namespace

std::optional<int64_t> parallelLoopTripCount(Operation *loop) {
  if (auto par = dyn_cast<scf::ParallelOp>(loop))
    return trips(par.getLowerBound(), par.getUpperBound(), par.getStep());
  if (auto nest = dyn_cast<omp::LoopNestOp>(loop))
    return trips(nest.getLoopLowerBounds(), nest.getLoopUpperBounds(),
                 nest.getLoopSteps());
  return std::nullopt;
}

std::optional<int64_t> estimateParallelLoopWork(Operation *loop) {
  if (auto par = dyn_cast<scf::ParallelOp>(loop))
    return opWork(par);
  if (auto nest = dyn_cast<omp::LoopNestOp>(loop))
    return times(parallelLoopTripCount(nest),
                 plus(regionWork(nest.getRegion()), 1));
  return std::nullopt;
}

void serializeParallelLoop(scf::ParallelOp par) {
  OpBuilder b(par);
  Location loc = par.getLoc();
  IRMapping map;
  for (auto [lb, ub, step, iv] :
       llvm::zip(par.getLowerBound(), par.getUpperBound(), par.getStep(),
                 par.getInductionVars())) {
    auto loop = scf::ForOp::create(b, loc, lb, ub, step);
    map.map(iv, loop.getInductionVar());
    b.setInsertionPoint(loop.getBody()->getTerminator());
  }
  for (Operation &op : par.getBody()->without_terminator())
    b.clone(op, map);
  par.erase();
}

} // namespace mlir::attn::detail
