//===- OnnxImportFuzzer.cpp - libFuzzer target for the ONNX importer -------===//
//
// Feeds arbitrary bytes to the ONNX importer as a serialized ModelProto;
// what imports is verified. Errors are expected; crashes, assertion failures
// and sanitizer reports are bugs.
//
//===----------------------------------------------------------------------===//

#include "attn/OnnxImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 20)
    return 0;
  mlir::DialectRegistry registry;
  mlir::attn::registerOnnxImportDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  auto module = mlir::attn::importOnnxModel(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.onnx",
      &context);
  if (module && mlir::verify(*module).failed())
    __builtin_trap(); // the importer must only produce valid IR
  return 0;
}
