//===- NvvmPipeline.cpp - attn-lower-to-nvvm-pipeline ---------------------===//
//
// The GPU pipeline: attn -> (attn optimizations) -> convert-attn-to-gpu
// (host launch + gpu.module with the flash kernel) -> NVVM -> a binary for
// the chosen chip, embedded in the host module (gpu-module-to-binary), and
// the host side to LLVM calling the mgpu* runtime functions that the
// attention runtime provides (runtime/core/lib/Cuda.cpp).
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"
#include "attn/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/ErrorHandling.h"

namespace mlir::attn {

void buildAttnLowerToNvvmPipeline(OpPassManager &pm,
                                  const NvvmPipelineOptions &options) {
  auto add = [&](const std::string &stages) {
    if (failed(parsePassPipeline(stages, pm, llvm::errs())))
      llvm::report_fatal_error("attn-lower-to-nvvm-pipeline: bad stage list");
  };
  // The same attn-level rewrites as on the CPU: they turn imported or
  // hand-written graphs into plain attn.sdpa (triangular masks into
  // `causal`, head transposes into layouts) that the kernel generator takes.
  if (options.optimize)
    addAttnRewrites(pm);
  ConvertAttnToGpuPassOptions gpu;
  gpu.useLdmatrix = options.ldmatrix;
  gpu.warps = options.warps;
  gpu.blockKV = options.blockKV;
  gpu.stages = options.stages;
  pm.addPass(createConvertAttnToGpuPass(gpu));
  add("canonicalize,cse");
  add("nvvm-attach-target{chip=" + options.chip + " features=" +
      options.features + " O=" + std::to_string(options.optLevel) + "}");
  // Kernel side.
  add("gpu.module(convert-nvgpu-to-nvvm,convert-vector-to-scf,"
      "convert-scf-to-cf,expand-strided-metadata,lower-affine,"
      "convert-gpu-to-nvvm,canonicalize,cse,reconcile-unrealized-casts)");
  // Host side: launches become mgpu* calls; the kernels become a binary.
  add("expand-strided-metadata,lower-affine,convert-scf-to-cf,"
      "gpu-to-llvm,finalize-memref-to-llvm,convert-arith-to-llvm,"
      "convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
      "reconcile-unrealized-casts,canonicalize,cse");
  std::string binary = "gpu-module-to-binary{format=" + options.format;
  if (!options.toolkit.empty())
    binary += " toolkit=" + options.toolkit;
  add(binary + "}");
}

} // namespace mlir::attn
