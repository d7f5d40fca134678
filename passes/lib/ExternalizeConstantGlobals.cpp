//===- ExternalizeConstantGlobals.cpp - attn-externalize-constant-globals -===//
//
// Takes the data of large constant byte-array globals out of the code that
// LLVM compiles. Even as one byte string (attn-byte-constant-globals), a
// weight passes through LLVM several times: translation copies it into an
// LLVM constant, the object writer into a growing section buffer (copied
// again each time it grows), and the JIT linker into executable memory. For
// a 2-block GPT-2 large file (370 MB of weights) that was 8.7 s of a 10 s
// compile, spent in memmove and page faults, and 3.4 GB of resident memory.
//
// Each such global becomes an external declaration of the same name, type
// and alignment; its bytes move to the discardable attribute
// `attn.external_data`. The code generator (attnrt's JIT) reads them from
// there and defines the symbol itself: in memory for the JIT, as a data
// section assembled from the raw bytes for a shared object.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNEXTERNALIZECONSTANTGLOBALSPASS
#include "attn/Passes.h.inc"

namespace {

/// The byte count of `value` when it is non-splat dense i8 data (inline or
/// a blob with data) of `bytes` bytes, the form attn-byte-constant-globals
/// gives large constants; otherwise 0.
int64_t byteDataSize(Attribute value, int64_t bytes) {
  auto type = dyn_cast<RankedTensorType>(cast<TypedAttr>(value).getType());
  if (!type || !type.getElementType().isInteger(8) ||
      type.getNumElements() != bytes)
    return 0;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    return blob && int64_t(blob->getData().size()) == bytes ? bytes : 0;
  }
  auto dense = dyn_cast<DenseIntElementsAttr>(value);
  return dense && !dense.isSplat() ? bytes : 0;
}

struct AttnExternalizeConstantGlobalsPass
    : impl::AttnExternalizeConstantGlobalsPassBase<
          AttnExternalizeConstantGlobalsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (minBytes < 0) {
      getOperation().emitError()
          << "attn-externalize-constant-globals: min-bytes must be >= 0, got "
          << static_cast<int64_t>(minBytes);
      return signalPassFailure();
    }
    MLIRContext *ctx = &getContext();
    getOperation().walk([&](LLVM::GlobalOp global) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      Attribute value = global.getValueOrNull();
      // Only the module's own plain constants (the pipeline's are private):
      // a public one would lose its export, thread-local, placed or
      // address-space-qualified ones their meaning as plain data.
      bool local = global.getLinkage() == LLVM::Linkage::Private ||
                   global.getLinkage() == LLVM::Linkage::Internal;
      if (!global.getConstant() || !local || global.getThreadLocal_() ||
          global.getExternallyInitialized() || global.getSection() ||
          global.getComdat() || global.getAddrSpace() != 0 || !value ||
          !isa<TypedAttr>(value) || !array ||
          !array.getElementType().isInteger(8) ||
          int64_t(array.getNumElements()) < minBytes ||
          !byteDataSize(value, array.getNumElements()))
        return;
      global->setAttr(kExternalDataAttrName, value);
      global.removeValueAttr();
      // A declaration, defined by whoever links the code; private
      // globals become external ones. (attnrt defines them hidden in a
      // shared object: they stay out of its exported symbols.)
      global.setLinkage(LLVM::Linkage::External);
      // Default visibility: a hidden declaration would be assumed within
      // 2 GiB of the code, which heap data in a JIT process need not be.
      global.setVisibility_(LLVM::Visibility::Default);
      global.setUnnamedAddrAttr(
          LLVM::UnnamedAddrAttr::get(ctx, LLVM::UnnamedAddr::None));
      global.setDsoLocal(false);
    });
  }
};

} // namespace
} // namespace mlir::attn
