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

#include "attnrt/Npy.h"

#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

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
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, argv, "attention-opt: the attention compiler's pass driver\n",
      registry);
  if (output == "-")
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, input, output, registry));
  // -o FILE: written to a file of its own first and moved into place only
  // when everything succeeded, so that a failure keeps what FILE held (the
  // input itself, rewritten in place with -o naming it).
  auto fail = [](const std::string &message) {
    llvm::errs() << "attention-opt: error: " << message << "\n";
    return 1;
  };
  if (attnrt::Status s = attnrt::checkOutputPaths({output}); !s)
    return fail(s.message());
  std::string staging = attnrt::createStagingFile(output);
  if (staging.empty())
    return fail(output + ": cannot create a file to write it in: " +
                std::strerror(errno));
  if (failed(mlir::MlirOptMain(argc, argv, input, staging, registry))) {
    std::remove(staging.c_str());
    return 1;
  }
  if (attnrt::Status s = attnrt::placeFile(staging, output); !s)
    return fail(s.message());
  return 0;
}
