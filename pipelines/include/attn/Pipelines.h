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
  PassOptions::Option<bool> optimize{
      *this, "optimize",
      llvm::cl::desc("Run the attn optimization passes (false: the plain "
                     "reference lowering)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseHeads{
      *this, "fuse-heads", llvm::cl::desc("Run attn-fuse-heads"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> decompose{
      *this, "decompose", llvm::cl::desc("Run attn-decompose"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> foldHeadTransposes{
      *this, "fold-head-transposes",
      llvm::cl::desc("Run attn-fold-head-transposes"), llvm::cl::init(true)};
  PassOptions::Option<bool> foldMask{
      *this, "fold-mask", llvm::cl::desc("Run attn-fold-mask"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseSoftmax{
      *this, "fuse-softmax",
      llvm::cl::desc("Run attn-fuse-softmax (flash-style SDPA)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> flashBlockQ{
      *this, "flash-block-q",
      llvm::cl::desc("attn-fuse-softmax: query rows per task"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> flashBlockKV{
      *this, "flash-block-kv",
      llvm::cl::desc("attn-fuse-softmax: keys per online-softmax step"),
      llvm::cl::init(128)};
  PassOptions::Option<bool> fastExp{
      *this, "fast-exp",
      llvm::cl::desc("Expand exp into a vectorizable polynomial "
                     "(attn-approximate-math) instead of calling libm"),
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
