//===- attention-translate.cpp - model formats in and out
//------------------===//
//
// attention-translate --import-onnx MODEL.onnx [-o OUT.mlir] prints the
// imported module (weight blobs over 1 KiB elided on stdout unless
// --print-weights). The output file is opened only once the import has
// succeeded: on any error no file is created.
//
//===----------------------------------------------------------------------===//

#include "attn/OnnxImporter.h"
#include "attnrt/Npy.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace llvm;

static cl::OptionCategory category("attention-translate options");
static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<model>"), cl::cat(category));
static cl::opt<bool> importOnnx("import-onnx",
                                cl::desc("Import an ONNX model to MLIR"),
                                cl::cat(category));
static cl::opt<bool>
    onnxRaise("onnx-raise", cl::desc("Raise attention subgraphs to attn ops"),
              cl::init(true), cl::cat(category));
static cl::opt<std::string>
    outputFile("o", cl::desc("Output file (default: stdout)"), cl::init("-"),
               cl::cat(category));
static cl::opt<bool> printWeights(
    "print-weights",
    cl::desc("Print weight blobs in full on stdout too (by default blobs over "
             "1 KiB are elided there; -o files always hold them)"),
    cl::init(false), cl::cat(category));

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv, "attention-translate\n");
  if (!importOnnx) {
    errs()
        << "attention-translate: error: choose a translation (--import-onnx)\n";
    return 1;
  }
  auto fail = [](const std::string &message) {
    errs() << "attention-translate: error: " << message << "\n";
    return 1;
  };
  // Before the import: an output that cannot be written, or that is the
  // model itself, would waste it or destroy the model.
  if (outputFile != "-") {
    if (attnrt::Status s = attnrt::checkOutputPaths({outputFile}); !s)
      return fail(s.message());
    // (The model's external weights too: they are read while importing.)
    std::vector<std::string> read = {inputFile};
    if (inputFile != "-" && llvm::sys::fs::exists(outputFile))
      for (std::string &file : mlir::attn::onnxExternalDataFiles(inputFile))
        read.push_back(std::move(file));
    if (attnrt::Status s = attnrt::checkOutputsAreNotInputs({outputFile}, read);
        !s)
      return fail(s.message());
  }
  // ("-": the model comes on standard input.)
  auto buffer = MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/false);
  if (!buffer) {
    errs() << "attention-translate: error: " << inputFile << ": "
           << buffer.getError().message() << "\n";
    return 1;
  }
  mlir::MLIRContext context;
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, errs());
  mlir::attn::OnnxImportOptions options;
  options.raise = onnxRaise;
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::attn::importOnnxModel(
      (*buffer)->getBuffer(), inputFile, &context, options);
  if (!module) {
    errs() << "attention-translate: error: " << inputFile
           << ": import failed (see the diagnostics above)\n";
    return 1;
  }
  // Weights are dense resource blobs; on a terminal their hex would drown
  // the IR, in a file they make it complete (parseable, runnable).
  mlir::OpPrintingFlags flags;
  if (outputFile == "-") {
    if (!printWeights)
      flags.elideLargeResourceString(1024);
    module->print(outs(), flags);
    outs().flush();
    if (outs().has_error()) {
      outs().clear_error();
      errs() << "attention-translate: error: writing the output failed\n";
      return 1;
    }
    return 0;
  }
  // A file of its own first, moved into place once complete: a failed
  // write keeps what the output held.
  std::string staging = attnrt::createStagingFile(outputFile);
  if (staging.empty())
    return fail(outputFile + ": cannot create a file to write it in: " +
                std::strerror(errno));
  // (Removed if the process is interrupted meanwhile.)
  sys::RemoveFileOnSignal(staging);
  std::error_code ec;
  {
    raw_fd_ostream os(staging, ec);
    if (!ec) {
      module->print(os, flags);
      os.close();
      ec = os.error();
      os.clear_error();
    }
  }
  if (ec) {
    std::remove(staging.c_str());
    sys::DontRemoveFileOnSignal(staging);
    return fail(outputFile + ": write failed: " + ec.message());
  }
  attnrt::Status placed = attnrt::placeFile(staging, outputFile);
  sys::DontRemoveFileOnSignal(staging);
  if (!placed)
    return fail(placed.message());
  return 0;
}
