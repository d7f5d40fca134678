//===- Jit.h - compiling MLIR modules for the runtime ------------*- C++ -*-===//
//
// The runtime's only MLIR-dependent layer: parse a module (attn, linalg or
// lower), run the CPU pipeline on it, embed entry-point signatures, and JIT
// it with MLIR's ExecutionEngine, or save it as a shared object that the
// runtime core loads without the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNRT_JIT_H
#define ATTNRT_JIT_H

#include "attnrt/Module.h"

#include "llvm/Support/LogicalResult.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
class ExecutionEngine;
namespace func {
class FuncOp;
} // namespace func
} // namespace mlir

namespace attnrt {

struct CompileOptions {
  /// Options of attn-lower-to-cpu-pipeline, as on the command line
  /// ("" for the defaults).
  std::string pipelineOptions;
  /// Print the IR after every pass to stderr.
  bool printIRAfterAll = false;
  /// Verify the IR after every pass of the pipeline. By default it is
  /// verified once, after the last pass (as clang verifies LLVM IR): on the
  /// 12-block GPT-2, verifying after each pass took a third of the
  /// pipeline's time.
  bool verifyEachPass = false;
  /// Print per-pass timing to stderr.
  bool timing = false;
  /// ONNX input: raise recognised attention subgraphs to attn ops.
  bool onnxRaise = true;
  /// What to compile for: "cpu", or "cuda" (GPU kernels launched through
  /// the runtime's CUDA backend, attnrt/Cuda.h).
  std::string target = "cpu";
  /// The CPU a "cpu" module is compiled for: "host" (this machine), or an
  /// x86-64 CPU name as for clang's -march ("x86-64-v3", "znver4"). Code
  /// for a CPU whose extensions this host lacks can only be saved
  /// (compileOnly with a shared object path).
  std::string targetCpu = "host";
  /// Compile (and save, with a shared object path) without loading GPU
  /// kernels into a driver or checking the host's CPU: for other machines.
  bool compileOnly = false;
  /// CPU modules: constants (weights) of at least this many bytes are not
  /// compiled by LLVM but linked beside the code as data
  /// (attn-externalize-constant-globals): in memory for the JIT, as a
  /// read-only section of a saved shared object. Only constants the
  /// pipeline holds as byte strings qualify (attn-byte-constant-globals
  /// retypes those of 4 KiB and more; 1-D i8 constants are bytes already);
  /// a size above the largest constant keeps them all in LLVM.
  uint64_t inlineConstantsBelow = 65536;
};

class JitModule : public CompiledModule {
public:
  ~JitModule() override;
  void *lookupSymbol(const std::string &name) override;

  /// Seconds spent importing an ONNX file (0 for MLIR), in the pass
  /// pipeline and in LLVM code generation.
  double importSeconds = 0, pipelineSeconds = 0, codegenSeconds = 0;
  /// The constants linked as data outside LLVM, and their bytes.
  size_t externalConstants = 0;
  uint64_t externalConstantBytes = 0;

private:
  friend Status compileFile(const std::string &, const CompileOptions &,
                            std::unique_ptr<JitModule> &, const std::string &);
  /// The constants' bytes, which the JIT's code reads (freed after it).
  std::vector<std::shared_ptr<const char>> externalData_;
  std::unique_ptr<mlir::ExecutionEngine> engine_;
};

/// The signature that compileFile embeds for entry point `fn` (tensor
/// types, dynamic dims that must be equal; `gpu`: how the runtime sizes
/// the results it allocates). Diagnoses types the runtime cannot pass.
llvm::LogicalResult entrySignature(mlir::func::FuncOp fn, bool gpu,
                                   FunctionSignature &sig);

/// Compiles the MLIR file at `path`. Diagnostics go to stderr with file,
/// line and column. If `sharedObjectPath` is not empty the compiled code is
/// also saved there (atomically) as a loadable shared object.
Status compileFile(const std::string &path, const CompileOptions &options,
                   std::unique_ptr<JitModule> &out,
                   const std::string &sharedObjectPath = "");

} // namespace attnrt

#endif // ATTNRT_JIT_H
