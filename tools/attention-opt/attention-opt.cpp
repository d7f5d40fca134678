//===- attention-opt.cpp - the attention compiler's opt driver -------------===//
//
// MlirOptMain with the attn dialect, every upstream dialect and pass, and
// every pass and pipeline of this project.
//
//===----------------------------------------------------------------------===//

#include "attn/AttnDialect.h"
#include "attn/Passes.h"
#include "attn/Pipelines.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::attn::AttnDialect>();
  // gpu-module-to-binary translates kernels to LLVM IR inside the pipeline.
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::registerAllPasses();
  mlir::attn::registerAttnPasses();
  mlir::attn::registerAttnPipelines();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "attention-opt: the attention compiler's pass driver\n",
      registry));
}
