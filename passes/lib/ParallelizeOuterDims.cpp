//===- ParallelizeOuterDims.cpp - attn-parallelize-outer-dims -------------===//
//
// convert-linalg-to-parallel-loops makes every parallel dim of a linalg op
// one dim of a single scf.parallel, which convert-scf-to-openmp collapses
// into one OpenMP loop: each iteration then recovers its indices with
// integer divisions, and LLVM vectorizes nothing (an imported GELU over
// [T, 3072] ran as scalar code with a div per element). This pass tiles
// each top-level linalg.generic on buffers whose innermost dim is parallel
// by 1 along its other parallel dims, as an scf.parallel: the threads split
// the outer dims, and the innermost dim stays a plain loop over contiguous
// elements (attn-serialize-nested-parallel-loops makes it an scf.for),
// which LLVM vectorizes. linalg.map and linalg.fill get the same. Ops whose
// innermost dim is a reduction (row sums) already get that form from
// convert-linalg-to-parallel-loops.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNPARALLELIZEOUTERDIMSPASS
#include "attn/Passes.h.inc"

namespace {

struct AttnParallelizeOuterDimsPass
    : impl::AttnParallelizeOuterDimsPassBase<AttnParallelizeOuterDimsPass> {
  void runOnOperation() override {
    // Ops directly in a function: those inside loops (the scalar rest of a
    // vectorized contraction) are already one thread's share of the work.
    // Fills too: tensor.pad's fill of its padding value bufferizes to a
    // linalg.map with no inputs, which ran as one collapsed scalar loop
    // (Pad on the last axis of [4, 512, 768]: 2.0 ms, against 0.2 ms on
    // the middle axis, where LLVM happened to vectorize the collapsed loop).
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::GenericOp, linalg::MapOp, linalg::FillOp>(op) &&
          isa<func::FuncOp>(op->getParentOp()) && op.hasPureBufferSemantics() &&
          op.getNumLoops() >= 2 &&
          op.getIteratorTypesArray().back() == utils::IteratorType::parallel)
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
      // 1 for every parallel dim but the innermost; reductions stay whole.
      SmallVector<int64_t> sizes;
      for (size_t i = 0; i + 1 < iters.size(); ++i)
        sizes.push_back(iters[i] == utils::IteratorType::parallel ? 1 : 0);
      sizes.push_back(0);
      // Outer dims that are all 1 ([1, 1, C]: a decode step's row) leave
      // nothing to split; the usual lowering splits C across threads.
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      bool nothingToSplit = true;
      for (size_t i = 0; i < sizes.size(); ++i)
        nothingToSplit &= sizes[i] == 0 || ranges[i] == 1;
      if (nothingToSplit)
        continue;
      linalg::LinalgTilingOptions options;
      options.setTileSizes(sizes).setLoopType(
          linalg::LinalgTilingLoopType::ParallelLoops);
      rewriter.setInsertionPoint(op);
      if (succeeded(linalg::tileLinalgOp(rewriter, op, options)))
        rewriter.eraseOp(op);
    }
  }
};

} // namespace
} // namespace mlir::attn
