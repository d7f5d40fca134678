//===- Pipelines.h - end-to-end lowering pipelines -------------*- C++ -*-===//
//
// Registered pipelines that take attn (or linalg) IR to the LLVM dialect.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_PIPELINES_H
#define ATTN_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::attn {

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  PassOptions::Option<bool> emitCInterface{
      *this, "emit-c-interface",
      llvm::cl::desc("Emit _mlir_ciface_ wrappers for public functions"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> parallel{
      *this, "parallel",
      llvm::cl::desc("Run the outermost parallel loops of each op on the "
                     "OpenMP thread pool"),
      llvm::cl::init(true)};
};

/// attn or linalg-on-tensors IR -> LLVM dialect for the host CPU.
void buildAttnLowerToCpuPipeline(OpPassManager &pm,
                                 const CpuPipelineOptions &options);

/// Registers every pipeline with the global pass registry.
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PIPELINES_H
