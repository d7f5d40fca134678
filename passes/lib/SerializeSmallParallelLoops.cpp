//===- SerializeSmallParallelLoops.cpp - small loops as plain loops ------===//
//
// A parallel loop whose whole work is a few thousand operations (a fill of
// a few buffers, a one-row scan, a gather of a handful of indices) runs
// faster on the calling thread than as an OpenMP region: forking and
// joining the team takes about a microsecond, waking a sleeping worker
// more, and the loop is done in less. Such loops become scf.for nests.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "ParallelLoopWork.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSERIALIZESMALLPARALLELLOOPSPASS
#include "attn/Passes.h.inc"

namespace {

struct AttnSerializeSmallParallelLoopsPass
    : impl::AttnSerializeSmallParallelLoopsPassBase<
          AttnSerializeSmallParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> small;
    getOperation().walk([&](scf::ParallelOp par) {
      // Outermost loops without reductions; a loop of unknown work and
      // more than one iteration stays.
      if (par->getParentOfType<scf::ParallelOp>() || !par.getInitVals().empty())
        return;
      // One iteration (or none) has nothing to share out, whatever its
      // work (a copy loop over chunks of a short output: one chunk).
      std::optional<int64_t> trips = detail::parallelLoopTripCount(par);
      std::optional<int64_t> work = detail::estimateParallelLoopWork(par);
      if ((trips && *trips <= 1) || (work && *work < minWork))
        small.push_back(par);
    });
    for (scf::ParallelOp par : small)
      detail::serializeParallelLoop(par);
  }
};

} // namespace
} // namespace mlir::attn
