//===- FenceStreamingStores.cpp - attn-fence-streaming-stores -------------===//
//
// Non-temporal (streaming) stores are weakly ordered on x86: the thread that
// joins a parallel loop may see its end before the workers' streaming
// stores. The documented pattern is a store fence (sfence) between the
// streaming stores and whatever publishes their data: this pass puts one at
// the end of every OpenMP loop body (a work item; its thread reports to the
// join after it) and before every return of a function that holds such
// stores.
//
// It runs once the loops are OpenMP loops and their alloca scopes are
// inlined: buffer deallocation rejects ops of unknown memory effects such
// as the fence (llvm.call_intrinsic), and the canonicalizer would keep a
// memref.alloca_scope around one, which convert-scf-to-cf then breaks.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFENCESTREAMINGSTORESPASS
#include "attn/Passes.h.inc"

namespace {

void fenceBefore(Operation *op) {
  OpBuilder b(op);
  LLVM::CallIntrinsicOp::create(
      b, op->getLoc(), b.getStringAttr("llvm.x86.sse.sfence"), ValueRange{});
}

struct AttnFenceStreamingStoresPass
    : impl::AttnFenceStreamingStoresPassBase<AttnFenceStreamingStoresPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    // The innermost OpenMP loop around each streaming store.
    llvm::SetVector<omp::LoopNestOp> loops;
    bool any = false;
    func.walk([&](vector::StoreOp store) {
      if (!store.getNontemporal())
        return;
      any = true;
      if (auto loop = store->getParentOfType<omp::LoopNestOp>())
        loops.insert(loop);
    });
    for (omp::LoopNestOp loop : loops)
      for (Block &block : loop.getRegion())
        if (isa<omp::YieldOp>(block.getTerminator()))
          fenceBefore(block.getTerminator());
    if (any)
      func.walk([](func::ReturnOp ret) { fenceBefore(ret); });
  }
};

} // namespace
} // namespace mlir::attn
