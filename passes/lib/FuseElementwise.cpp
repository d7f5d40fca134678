//===- FuseElementwise.cpp - attn-fuse-elementwise ------------------------===//
//
// An imported graph spells each elementwise step as its own op: the book's
// GELU, 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), is nine
// linalg.generic ops, each a pass over a [T, 4 d] tensor in memory. This
// pass fuses an all-parallel producer into an all-parallel consumer (a
// single-use producer, so nothing is computed twice), which leaves one pass
// per chain. Reductions and contractions are never consumers: an
// elementwise op fused into a matmul's operand would turn it into
// out + f(a) * b, which attn-vectorize-contractions no longer recognises.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSEELEMENTWISEPASS
#include "attn/Passes.h.inc"

namespace {

bool allParallel(Operation *op) {
  auto linalgOp = dyn_cast_if_present<linalg::GenericOp>(op);
  return linalgOp && linalgOp.getNumLoops() == linalgOp.getNumParallelLoops();
}

struct AttnFuseElementwisePass
    : impl::AttnFuseElementwisePassBase<AttnFuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    linalg::ControlFusionFn control = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return allParallel(producer) && allParallel(fused->getOwner()) &&
             producer->hasOneUse();
    };
    linalg::populateElementwiseOpsFusionPatterns(patterns, control);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::attn
