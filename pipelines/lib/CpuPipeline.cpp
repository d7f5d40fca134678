//===- CpuPipeline.cpp - attn-lower-to-cpu-pipeline ------------------------===//
//
// The CPU pipeline: attn -> linalg on tensors -> one-shot bufferization ->
// loops -> LLVM dialect. Each stage is a named upstream or project pass, so
// `-mlir-print-ir-after-all` shows the whole journey.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"
#include "attn/Pipelines.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/TargetParser/Host.h"

namespace mlir::attn {

void addAttnRewrites(OpPassManager &pm, bool fuseHeads, bool decompose,
                     bool foldHeadTransposes, bool foldMask) {
  // Composes the transpose pairs an imported graph may hold, so that the
  // head-transpose folding sees one transpose per operand.
  pm.addPass(createCanonicalizerPass());
  if (fuseHeads)
    pm.addPass(createAttnFuseHeadsPass());
  if (decompose)
    pm.addPass(createAttnDecomposePass());
  if (foldHeadTransposes)
    pm.addPass(createAttnFoldHeadTransposesPass());
  if (foldMask)
    pm.addPass(createAttnFoldMaskPass());
}

/// Whether the CPU this process runs on executes avx512_bf16 instructions.
static bool hostHasAvx512Bf16() {
  llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
  auto it = features.find("avx512bf16");
  return it != features.end() && it->second;
}

void buildAttnLowerToCpuPipeline(OpPassManager &pm,
                                 const CpuPipelineOptions &options) {
  // Upstream passes are added by name: their options are then spelled the
  // same way in this file as on the attention-opt command line.
  auto add = [&](StringRef stages) {
    if (failed(parsePassPipeline(stages, pm, llvm::errs())))
      llvm::report_fatal_error("attn-lower-to-cpu-pipeline: bad stage list");
  };
  // attn-level optimizations, each with its own off switch so that the
  // plain lowering stays available as the numerical reference.
  if (options.optimize) {
    addAttnRewrites(pm, options.fuseHeads, options.decompose,
                    options.foldHeadTransposes, options.foldMask);
    // f32 cores become register-blocked vector code; what it does not take
    // (masks, dropout, windows, other types) gets the linalg flash form.
    if (options.vectorizeSdpa) {
      AttnVectorizeSdpaPassOptions vec;
      vec.blockQ = options.sdpaBlockQ;
      vec.blockKV = options.sdpaBlockKV;
      vec.registerKeys = options.sdpaRegisterKeys;
      vec.registerRows = options.sdpaRegisterRows;
      vec.polynomialExp = options.fastExp;
      // The JIT compiles for this host: use vdpbf16ps only where it exists.
      vec.bf16Dot = options.bf16Dot && hostHasAvx512Bf16();
      pm.addPass(createAttnVectorizeSdpaPass(vec));
    }
    if (options.fuseSoftmax) {
      AttnFuseSoftmaxPassOptions flash;
      flash.blockQ = options.flashBlockQ;
      flash.blockKV = options.flashBlockKV;
      pm.addPass(createAttnFuseSoftmaxPass(flash));
    }
  }
  pm.addPass(createConvertAttnToLinalgPass());
  pm.addPass(createAttnDecomposeLinalgAggregatesPass());
  // Transposes that only exist at the linalg level (unfused imported
  // graphs, head splits that could not be folded at the attn level).
  if (options.optimize && options.foldHeadTransposes)
    pm.addPass(createAttnFoldHeadTransposesPass());
  // Register-blocked vector code for the projections and P V products.
  if (options.optimize && options.vectorizeContractions)
    pm.addPass(createAttnVectorizeContractionsPass());
  if (options.fastExp)
    pm.addPass(createAttnApproximateMathPass());
  if (options.emitCInterface)
    pm.addPass(createAttnEmitCInterfacePass());
  // Elementwise arith/math on whole tensors (e.g. a residual add around the
  // attention block) becomes linalg so that it bufferizes.
  add("func.func(convert-elementwise-to-linalg),canonicalize,cse");
  pm.addPass(createAttnBufferizePass());
  add("buffer-deallocation-pipeline,convert-bufferization-to-memref");
  if (options.parallel) {
    add("scf-forall-to-parallel,"
        "func.func(convert-linalg-to-parallel-loops),"
        "func.func(attn-serialize-nested-parallel-loops),"
        "convert-scf-to-openmp,canonicalize");
  } else {
    add("scf-forall-to-for,func.func(convert-linalg-to-loops)");
  }
  add("expand-strided-metadata,lower-affine,convert-scf-to-cf,"
      "convert-vector-to-llvm{enable-x86vector},"
      "finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,"
      "convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
      "convert-openmp-to-llvm,reconcile-unrealized-casts,canonicalize,cse");
}

void registerAttnPipelines() {
  PassPipelineRegistration<CpuPipelineOptions>(
      "attn-lower-to-cpu-pipeline",
      "Lower attn/linalg IR to the LLVM dialect for the host CPU",
      buildAttnLowerToCpuPipeline);
  PassPipelineRegistration<NvvmPipelineOptions>(
      "attn-lower-to-nvvm-pipeline",
      "Lower attn IR to host LLVM code launching tensor-core kernels (NVVM, "
      "embedded cubin/PTX)",
      buildAttnLowerToNvvmPipeline);
}

} // namespace mlir::attn
