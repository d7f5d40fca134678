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

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Signals.h"
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
  mlir::MlirOptMainConfig config =
      mlir::MlirOptMainConfig::createFromCLOptions();
  // To stdout, and the listings (which write no output file): upstream's.
  if (output == "-" || config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, input, "-", registry));
  // -o FILE: written to a file of its own first and moved into place only
  // when everything succeeded, so that a failure keeps what FILE held (the
  // input itself, rewritten in place with -o naming it); a failed write is
  // an error naming FILE.
  llvm::InitLLVM initLLVM(argc, argv);
  auto fail = [](const std::string &message) {
    llvm::errs() << "attention-opt: error: " << message << "\n";
    return 1;
  };
  if (attnrt::Status s = attnrt::checkOutputPaths({output}); !s)
    return fail(s.message());
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> file = mlir::openInputFile(input, &error);
  if (!file)
    return fail(error);
  std::string staging = attnrt::createStagingFile(output);
  if (staging.empty())
    return fail(output + ": cannot create a file to write it in: " +
                std::strerror(errno));
  llvm::sys::RemoveFileOnSignal(staging);
  auto discard = [&] {
    std::remove(staging.c_str());
    llvm::sys::DontRemoveFileOnSignal(staging);
  };
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(staging, ec);
    if (ec) {
      discard();
      return fail(output + ": cannot write: " + ec.message());
    }
    bool ok =
        succeeded(mlir::MlirOptMain(os, std::move(file), registry, config));
    os.close();
    ec = os.error();
    os.clear_error(); // (reported below, not as a fatal error)
    if (!ok) {
      discard();
      return 1;
    }
  }
  if (ec) {
    discard();
    return fail(output + ": write failed: " + ec.message());
  }
  attnrt::Status placed = attnrt::placeFile(staging, output);
  llvm::sys::DontRemoveFileOnSignal(staging);
  if (!placed)
    return fail(placed.message());
  return 0;
}
