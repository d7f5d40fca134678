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
    bufferization::BufferizationState state;
    if (failed(bufferization::runOneShotModuleBufferize(getOperation(), options,
                                                        state)))
      signalPassFailure();
  }
};
} // namespace
} // namespace mlir::attn
