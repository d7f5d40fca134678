//===- SerializeNestedParallelLoops.cpp - attn-serialize-nested-parallel-loops ===//
//
// One parallel region per loop nest: inner scf.parallel ops become scf.for
// nests so that the OpenMP lowering forks threads once, at the outermost
// (coarsest) level.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSERIALIZENESTEDPARALLELLOOPSPASS
#include "attn/Passes.h.inc"

namespace {

/// Replaces a reduction-free scf.parallel by an equivalent scf.for nest.
void serialize(scf::ParallelOp par) {
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

struct AttnSerializeNestedParallelLoopsPass
    : impl::AttnSerializeNestedParallelLoopsPassBase<
          AttnSerializeNestedParallelLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> inner;
    getOperation().walk([&](scf::ParallelOp par) {
      if (par->getParentOfType<scf::ParallelOp>() && par.getInitVals().empty())
        inner.push_back(par);
    });
    // Walk order is post-order: innermost loops come first, so erasing a
    // loop never invalidates one still to be visited.
    for (scf::ParallelOp par : inner)
      serialize(par);
  }
};

} // namespace
} // namespace mlir::attn
