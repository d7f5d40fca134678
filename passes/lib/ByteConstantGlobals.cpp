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
// every llvm.getelementptr on it names its own element type. (The bytes are
// in the host's order, which is the target's: the pipeline compiles on and
// for x86 only. A cross-endian target would need them swapped.)
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNBYTECONSTANTGLOBALSPASS
#include "attn/Passes.h.inc"

namespace {

/// A (nested) LLVM array of integers or floats of 1, 2, 4, 8 or 16 bytes:
/// its size in bytes and its element's size. Those widths are stored in
/// memory exactly as MLIR's dense data holds them; others are padded in
/// memory (f80 takes 16 bytes, i24 4) and are not retyped.
struct ByteLayout {
  int64_t bytes;
  int64_t elementBytes;
};
std::optional<ByteLayout> byteLayout(Type type) {
  int64_t count = 1;
  while (auto array = dyn_cast<LLVM::LLVMArrayType>(type)) {
    count *= array.getNumElements();
    type = array.getElementType();
  }
  if (!isa<IntegerType, FloatType>(type))
    return std::nullopt;
  unsigned bits = type.getIntOrFloatBitWidth();
  if (bits < 8 || bits > 128 || !llvm::isPowerOf2_32(bits))
    return std::nullopt;
  return ByteLayout{count * (bits / 8), bits / 8};
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
      std::optional<ByteLayout> layout = byteLayout(global.getGlobalType());
      if (!layout || layout->bytes < minBytes)
        return;
      Attribute value = asBytes(global.getValueOrNull(), layout->bytes);
      if (!value)
        return;
      global.setGlobalType(LLVM::LLVMArrayType::get(
          IntegerType::get(&getContext(), 8), layout->bytes));
      global.setValueAttr(value);
      // An i8 array's ABI alignment is 1: keep at least the element's
      // (its size, for these widths), which LLVM gave the original type.
      uint64_t align = global.getAlignment().value_or(0);
      if (align < uint64_t(layout->elementBytes))
        global.setAlignment(layout->elementBytes);
    });
  }
};

} // namespace
} // namespace mlir::attn
