//===- MlirPipelineFuzzer.cpp - libFuzzer target for parse + verify + lower -===//
//
// Feeds arbitrary text to the MLIR parser with the attn dialect; what parses
// and verifies goes through the default CPU pipeline. Diagnostics are
// expected; crashes, assertion failures and sanitizer reports are bugs.
//
//===----------------------------------------------------------------------===//

#include "attn/AttnDialect.h"
#include "attn/Passes.h"
#include "attn/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <string>

using namespace mlir;

static DialectRegistry &registry() {
  static DialectRegistry *r = [] {
    auto *reg = new DialectRegistry();
    registerAllDialects(*reg);
    registerAllExtensions(*reg);
    reg->insert<attn::AttnDialect>();
    registerAllPasses();
    attn::registerAttnPasses();
    attn::registerAttnPipelines();
    return reg;
  }();
  return *r;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16)
    return 0;
  std::string text(reinterpret_cast<const char *>(data), size);
  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Swallow diagnostics: malformed input is expected.
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
  if (!module)
    return 0;
  PassManager pm(&context);
  if (failed(parsePassPipeline("attn-lower-to-cpu-pipeline", pm)))
    __builtin_trap();
  (void)pm.run(*module);
  return 0;
}
