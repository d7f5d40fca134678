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
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

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
