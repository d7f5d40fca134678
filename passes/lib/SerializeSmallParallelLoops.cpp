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
      // Outermost loops without reductions; a loop of unknown work stays.
      if (par->getParentOfType<scf::ParallelOp>() || !par.getInitVals().empty())
        return;
      // (A loop of one iteration and unknown work stays too: it has
      // nothing to share out, but as an OpenMP region its code is
      // outlined, and the same region of every transformer block is
      // compiled once; serial, each block's copy in the entry function was
      // compiled on its own, 0.2 s more for 2 GPT blocks.
      // attn-guided-omp-schedule gives it the static schedule.)
      std::optional<int64_t> work = detail::estimateParallelLoopWork(par);
      if (work && *work < minWork)
        small.push_back(par);
    });
    for (scf::ParallelOp par : small)
      detail::serializeParallelLoop(par);
  }
};

} // namespace
} // namespace mlir::attn
