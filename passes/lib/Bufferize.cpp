//===- Bufferize.cpp - attn-bufferize --------------------------------------===//
//
// One-shot module bufferization with identity layouts at function boundaries
// and linalg.copy for copies, so compiled modules need no MLIR runtime
// library.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNBUFFERIZEPASS
#include "attn/Passes.h.inc"

namespace {
struct AttnBufferizePass : impl::AttnBufferizePassBase<AttnBufferizePass> {
  void runOnOperation() override {
    bufferization::OneShotBufferizationOptions options;
    options.bufferizeFunctionBoundaries = true;
    options.setFunctionBoundaryTypeConversion(
        bufferization::LayoutMapOption::IdentityLayoutMap);
    // A loop whose body makes a new tensor each iteration (an attn.sdpa or
    // a linalg op into a fresh tensor.empty inside scf.for / scf.while)
    // yields a new buffer; without this, one-shot bufferization refuses
    // the loop ("Yield operand #0 is not equivalent to the corresponding
    // iter bbArg").
    options.allowReturnAllocsFromLoops = true;
    options.memCpyFn = [](OpBuilder &b, Location loc, Value from,
                          Value to) -> LogicalResult {
      linalg::CopyOp::create(b, loc, from, to);
      return success();
    };
    // Entry points never write their arguments: the caller's inputs are
    // const (attnrt's invoke, --repeat runs the same inputs again), so an
    // op that would update one in place (a ScatterND into a graph input, a
    // linalg op with an argument as init) works on a copy.
    getOperation().walk([](func::FuncOp f) {
      if (f.isExternal() || !f.isPublic())
        return;
      for (BlockArgument arg : f.getArguments())
        if (isa<TensorType>(arg.getType()) &&
            !f.getArgAttr(
                arg.getArgNumber(),
                bufferization::BufferizationDialect::kWritableAttrName))
          f.setArgAttr(arg.getArgNumber(),
                       bufferization::BufferizationDialect::kWritableAttrName,
                       BoolAttr::get(f.getContext(), false));
    });
    bufferization::BufferizationState state;
    if (failed(bufferization::runOneShotModuleBufferize(getOperation(), options,
                                                        state)))
      signalPassFailure();
  }
};
} // namespace
} // namespace mlir::attn
