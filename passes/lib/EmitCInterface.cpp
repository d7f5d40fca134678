//===- EmitCInterface.cpp - attn-emit-c-interface --------------------------===//
//
// Marks public functions so the LLVM lowering emits `_mlir_ciface_` wrappers,
// the calling convention the runtime uses for every entry point.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEMITCINTERFACEPASS
#include "attn/Passes.h.inc"

namespace {
struct AttnEmitCInterfacePass
    : impl::AttnEmitCInterfacePassBase<AttnEmitCInterfacePass> {
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (fn.isPublic() && !fn.isExternal())
        fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    UnitAttr::get(&getContext()));
  }
};
} // namespace
} // namespace mlir::attn
