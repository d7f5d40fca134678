//===- CaptureConstantAddresses.cpp - attn-capture-constant-addresses -----===//
//
// Passes the addresses of constant data globals (weights) into OpenMP
// parallel regions as values instead of naming the globals inside them.
//
// Translation to LLVM IR outlines every omp.parallel region into its own
// function. LLVM's code extractor passes the region the values it uses
// from outside, but a global's address is a constant, which the outlined
// code names directly. The twelve blocks of GPT-2 thus outline into twelve
// copies of each kernel that differ only in which weights they read:
// LLVM's optimizer and code generator compiled every copy, most of a
// 12-block model's codegen time. Laundered through
// llvm.intr.launder.invariant.group (no code) before the region, the
// address is an instruction's result, which the outlined function receives
// like any other captured value, and the copies become identical functions
// that the JIT merges (llvm::MergeFunctionsPass) before optimizing.
//
// The price: inside the outlined function the weights' pointer is an
// argument of unknown origin, so LLVM no longer knows that it points to
// constant memory (GPT-2 ran as fast without that, see the README).
// Splat constants, whose loads LLVM folds, are left alone.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNCAPTURECONSTANTADDRESSESPASS
#include "attn/Passes.h.inc"

namespace {

/// Whether `global` holds constant data whose contents LLVM could not fold
/// into the code anyway: non-splat elements (inline or a blob), or bytes
/// defined outside the module (attn-externalize-constant-globals).
bool isConstantData(LLVM::GlobalOp global) {
  // (A thread-local address taken outside a region would be the main
  // thread's; other address spaces are left as they are.)
  if (!global.getConstant() || global.getThreadLocal_() ||
      global.getAddrSpace() != 0)
    return false;
  Attribute value = global.getValueOrNull();
  if (!value)
    return !global.getInitializerBlock();
  if (auto elements = dyn_cast<ElementsAttr>(value))
    return !elements.isSplat();
  return false;
}

/// The outermost omp.parallel around `op`, if any.
Operation *outermostParallel(Operation *op) {
  Operation *outermost = nullptr;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (isa<omp::ParallelOp>(p))
      outermost = p;
  return outermost;
}

struct AttnCaptureConstantAddressesPass
    : impl::AttnCaptureConstantAddressesPassBase<
          AttnCaptureConstantAddressesPass> {
  using Base::Base;

  void runOnOperation() override {
    SymbolTableCollection symbols;
    getOperation()->walk([&](LLVM::LLVMFuncOp func) {
      bool parallel = false;
      func.walk([&](omp::ParallelOp) {
        parallel = true;
        return WalkResult::interrupt();
      });
      if (!parallel)
        return;
      SmallVector<LLVM::AddressOfOp> addresses;
      func.walk([&](LLVM::AddressOfOp address) {
        auto global =
            dyn_cast_or_null<LLVM::GlobalOp>(symbols.lookupNearestSymbolFrom(
                address, address.getGlobalNameAttr()));
        if (global && isConstantData(global))
          addresses.push_back(address);
      });
      // Inside a region: one laundered address per region and global, built
      // right before the outermost region (a nested one is outlined inside
      // its parent's function, which captures the value already).
      DenseMap<std::pair<Operation *, StringAttr>, Value> hoisted;
      for (LLVM::AddressOfOp address : addresses) {
        Operation *region = outermostParallel(address);
        if (!region) {
          // Outside (canonicalization hoists addresses to the function's
          // entry): the laundered value replaces every use, so that the
          // descriptors and offsets built from it are no constant
          // expressions either.
          OpBuilder builder(address->getContext());
          builder.setInsertionPointAfter(address);
          auto laundered = LLVM::LaunderInvariantGroupOp::create(
              builder, address.getLoc(), address);
          address.getResult().replaceAllUsesExcept(laundered, laundered);
          continue;
        }
        Value &value = hoisted[{region, address.getGlobalNameAttr().getAttr()}];
        if (!value) {
          OpBuilder builder(region);
          auto outside = LLVM::AddressOfOp::create(builder, address.getLoc(),
                                                   address.getType(),
                                                   address.getGlobalName());
          value = LLVM::LaunderInvariantGroupOp::create(
              builder, address.getLoc(), outside);
        }
        address.replaceAllUsesWith(value);
        address->erase();
      }
    });
  }
};

} // namespace
} // namespace mlir::attn
