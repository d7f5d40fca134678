//===- GuidedOmpSchedule.cpp - attn-guided-omp-schedule -------------------===//
//
// Every omp.wsloop without a schedule gets schedule(guided, 1): threads
// take chunks of the remaining iterations, large first and down to one item
// at the end, so that a thread that runs slower (a core shared with other
// work, or items of unequal cost) does not hold the call up with a fixed
// share. A static split made the call as slow as its slowest thread, and
// schedule(dynamic, 1) paid one atomic fetch per iteration, which cost more
// than the work in loops of tiny items (12288 row copies of a K/V layout
// change: GPT-2's block went from 38.7 to 42.4 ms).
//
// Except loops of one iteration, or of little work (below `static-below`
// estimated operations), which get schedule(static): each thread's request for
// the next chunk costs a few tenths of a microsecond in the OpenMP runtime
// (Debian's libomp formats its debug trace strings even when tracing is off),
// and a guided loop makes dozens of them (2.3 us for one iteration, 4.6 us for
// 24, 9.5 us for 3141 on 2 threads, against 1.0-1.9 us static), more than
// a slower thread could cost such a loop.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "ParallelLoopWork.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNGUIDEDOMPSCHEDULEPASS
#include "attn/Passes.h.inc"

namespace {

struct AttnGuidedOmpSchedulePass
    : impl::AttnGuidedOmpSchedulePassBase<AttnGuidedOmpSchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    if (chunk < 1) {
      mlir::emitError(getOperation().getLoc())
          << "attn-guided-omp-schedule: chunk must be at least 1, got "
          << int64_t(chunk);
      return signalPassFailure();
    }
    getOperation().walk([&](omp::WsloopOp loop) {
      // An explicit schedule (from the source or another pass) stays.
      if (loop.getScheduleKindAttr())
        return;
      OpBuilder b(loop);
      auto nest = cast<omp::LoopNestOp>(loop.getWrappedLoop());
      // (One iteration, whatever its work, has nothing to balance.)
      std::optional<int64_t> trips = detail::parallelLoopTripCount(nest);
      std::optional<int64_t> work = detail::estimateParallelLoopWork(nest);
      if ((trips && *trips <= 1) || (work && *work < staticBelow)) {
        loop.setScheduleKindAttr(omp::ClauseScheduleKindAttr::get(
            &getContext(), omp::ClauseScheduleKind::Static));
        return;
      }
      // The chunk operand has the type of the loop's induction variables.
      Type ivType = nest.getLoopLowerBounds().front().getType();
      Value chunkValue;
      if (isa<IndexType>(ivType))
        chunkValue = arith::ConstantIndexOp::create(b, loop.getLoc(), chunk);
      else
        chunkValue = LLVM::ConstantOp::create(
            b, loop.getLoc(), ivType, b.getIntegerAttr(ivType, chunk));
      loop.setScheduleKindAttr(omp::ClauseScheduleKindAttr::get(
          &getContext(), omp::ClauseScheduleKind::Guided));
      loop.getScheduleChunkMutable().assign(chunkValue);
    });
  }
};

} // namespace
} // namespace mlir::attn
