//===- SerializeNestedParallelLoops.cpp - attn-serialize-nested-parallel-loops ===//
//
// One parallel region per loop nest: inner scf.parallel ops become scf.for
// nests so that the OpenMP lowering forks threads once, at the outermost
// (coarsest) level.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "ParallelLoopWork.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSERIALIZENESTEDPARALLELLOOPSPASS
#include "attn/Passes.h.inc"

namespace {

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
      detail::serializeParallelLoop(par);
  }
};

} // namespace
} // namespace mlir::attn
