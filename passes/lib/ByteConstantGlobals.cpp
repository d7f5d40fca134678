//===- ByteConstantGlobals.cpp - attn-byte-constant-globals ---------------===//
//
// Retypes large constant LLVM globals as flat byte arrays. A packed weight
// of the d_model 1600 projections is a 41 MB global of nested arrays
// (panels x K x 32 floats): MLIR's translation builds one LLVM constant
// per 32-float row (80,000 of them, each hashed and uniqued), and the
// AsmPrinter emits a float array element by element, while an i8 array is
// a "string" it writes in one copy. Both costs were most of the codegen
// time of such a module (1.4 s of its 1.7 s compile). The bytes are the
// same, and no use changes: the global's address is an opaque pointer, and
// every llvm.getelementptr on it names its own element type.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNBYTECONSTANTGLOBALSPASS
#include "attn/Passes.h.inc"

namespace {

/// The size in bytes of a (nested) LLVM array of integers or floats whose
/// width is a whole number of bytes; nullopt for anything else.
std::optional<int64_t> byteSize(Type type) {
  int64_t count = 1;
  while (auto array = dyn_cast<LLVM::LLVMArrayType>(type)) {
    count *= array.getNumElements();
    type = array.getElementType();
  }
  if (!isa<IntegerType, FloatType>(type))
    return std::nullopt;
  unsigned bits = type.getIntOrFloatBitWidth();
  if (bits % 8 != 0)
    return std::nullopt;
  return count * (bits / 8);
}

/// The global's value as `bytes` i8 values, sharing a blob's storage; or
/// null when the value is not non-splat dense data of that many bytes.
Attribute asBytes(Attribute value, int64_t bytes) {
  auto byteType =
      RankedTensorType::get({bytes}, IntegerType::get(value.getContext(), 8));
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob || int64_t(blob->getData().size()) != bytes)
      return {};
    return DenseResourceElementsAttr::get(byteType, resource.getRawHandle());
  }
  auto dense = dyn_cast<DenseIntOrFPElementsAttr>(value);
  if (!dense || dense.isSplat() || int64_t(dense.getRawData().size()) != bytes)
    return {};
  return DenseElementsAttr::getFromRawBuffer(byteType, dense.getRawData());
}

struct AttnByteConstantGlobalsPass
    : impl::AttnByteConstantGlobalsPassBase<AttnByteConstantGlobalsPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation().walk([&](LLVM::GlobalOp global) {
      if (!global.getConstant() || !global.getValueOrNull())
        return;
      std::optional<int64_t> bytes = byteSize(global.getGlobalType());
      if (!bytes || *bytes < minBytes)
        return;
      Attribute value = asBytes(global.getValueOrNull(), *bytes);
      if (!value)
        return;
      global.setGlobalType(
          LLVM::LLVMArrayType::get(IntegerType::get(&getContext(), 8), *bytes));
      global.setValueAttr(value);
    });
  }
};

} // namespace
} // namespace mlir::attn
