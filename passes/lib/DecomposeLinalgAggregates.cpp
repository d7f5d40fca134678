//===- DecomposeLinalgAggregates.cpp - attn-decompose-linalg-aggregates ----===//
//
// linalg.softmax (and any other op implementing AggregatedOpInterface) has
// no loop lowering of its own: left in the IR it would reach the LLVM
// conversion unlowered. This pass replaces each by the sequence of
// structured linalg ops it stands for (for softmax: max, sub + exp, sum,
// div), which the rest of the pipeline lowers like any other.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNDECOMPOSELINALGAGGREGATESPASS
#include "attn/Passes.h.inc"

namespace {
struct AttnDecomposeLinalgAggregatesPass
    : impl::AttnDecomposeLinalgAggregatesPassBase<
          AttnDecomposeLinalgAggregatesPass> {
  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> ops;
    getOperation().walk(
        [&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
    for (linalg::AggregatedOpInterface op : ops) {
      OpBuilder b(op);
      FailureOr<SmallVector<Value>> parts = op.decomposeOperation(b);
      if (failed(parts)) {
        op->emitOpError() << "could not be decomposed into structured ops";
        return signalPassFailure();
      }
      op->replaceAllUsesWith(*parts);
      op->erase();
    }
  }
};
} // namespace
} // namespace mlir::attn
