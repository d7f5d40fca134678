//===- CpuPipeline.cpp - attn-lower-to-cpu-pipeline ------------------------===//
//
// The CPU pipeline: attn -> linalg on tensors -> one-shot bufferization ->
// loops -> LLVM dialect. Each stage is a named upstream or project pass, so
// `-mlir-print-ir-after-all` shows the whole journey.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"
#include "attn/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/X86TargetParser.h"

namespace mlir::attn {

void addAttnRewrites(OpPassManager &pm, bool fuseHeads, bool decompose,
                     bool foldRepeatedKv, bool foldHeadTransposes,
                     bool foldMask) {
  // Composes the transpose pairs an imported graph may hold, so that the
  // head-transpose folding sees one transpose per operand.
  pm.addPass(createCanonicalizerPass());
  if (fuseHeads)
    pm.addPass(createAttnFuseHeadsPass());
  if (decompose)
    pm.addPass(createAttnDecomposePass());
  // Before the head transposes fold: the repeat stands between K's and V's
  // head transposes and the sdpa, where FoldTransposedSdpa looks for them.
  if (foldRepeatedKv)
    pm.addPass(createAttnFoldRepeatedKvPass());
  if (foldHeadTransposes)
    pm.addPass(createAttnFoldHeadTransposesPass());
  if (foldMask)
    pm.addPass(createAttnFoldMaskPass());
}

FailureOr<llvm::StringMap<bool>> targetCpuFeatures(StringRef cpu) {
  if (cpu == "host")
    return llvm::sys::getHostCPUFeatures();
  if (llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) == llvm::X86::CK_None)
    return failure();
  // The CPU's own list leaves out what its extensions imply (x86-64-v4
  // lists avx512vl, not avx512f): close it over the implications.
  llvm::SmallVector<StringRef, 64> own;
  llvm::X86::getFeaturesForCPU(cpu, own, /*NeedPlus=*/false);
  llvm::StringMap<bool> features;
  for (StringRef f : own) {
    features[f] = true;
    llvm::X86::updateImpliedFeatures(f, true, features);
  }
  return features;
}

std::string resolveTargetCpu(StringRef cpu) {
  return cpu == "host" ? llvm::sys::getHostCPUName().str() : cpu.str();
}

namespace {
/// Fails with `message` at the root op: for a pipeline option found bad only
/// while the pipeline is built (a CPU name LLVM does not know).
struct RejectPipelineOptionPass
    : PassWrapper<RejectPipelineOptionPass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RejectPipelineOptionPass)
  explicit RejectPipelineOptionPass(std::string message)
      : message(std::move(message)) {}
  StringRef getArgument() const override {
    return "attn-reject-pipeline-option";
  }
  void runOnOperation() override {
    // At the location only: the module itself would be printed with an
    // op-attached diagnostic.
    mlir::emitError(getOperation()->getLoc(), message);
    signalPassFailure();
  }
  std::string message;
};
} // namespace

void buildAttnLowerToCpuPipeline(OpPassManager &pm,
                                 const CpuPipelineOptions &options) {
  // Upstream passes are added by name: their options are then spelled the
  // same way in this file as on the attention-opt command line.
  auto add = [&](StringRef stages) {
    if (failed(parsePassPipeline(stages, pm, llvm::errs())))
      llvm::report_fatal_error("attn-lower-to-cpu-pipeline: bad stage list");
  };
  // The target CPU's extensions pick the defaults (the JIT compiles for the
  // same CPU: attnrt::compileFile passes it on).
  FailureOr<llvm::StringMap<bool>> features =
      targetCpuFeatures(options.targetCpu);
  if (failed(features)) {
    pm.addPass(std::make_unique<RejectPipelineOptionPass>(
        "attn-lower-to-cpu-pipeline: unknown target-cpu '" + options.targetCpu +
        "' (expected host, or an x86-64 CPU name as for clang's -march: "
        "x86-64-v3, x86-64-v4, znver4, sapphirerapids, ...)"));
    return;
  }
  auto has = [&](StringRef feature) { return features->lookup(feature); };
  bool avx512 = has("avx512f");
  bool avx512Bf16 = has("avx512bf16");
  // attn-level optimizations, each with its own off switch so that the
  // plain lowering stays available as the numerical reference.
  // A size option's value, or for 0 the target CPU's default.
  auto byCpu = [&](int64_t option, int64_t withAvx512, int64_t withAvx2) {
    return option ? option : (avx512 ? withAvx512 : withAvx2);
  };
  if (options.optimize) {
    addAttnRewrites(pm, options.fuseHeads, options.decompose,
                    options.foldRepeatedKv, options.foldHeadTransposes,
                    options.foldMask);
    // f32 cores become register-blocked vector code; what it does not take
    // (masks, dropout, windows, other types) gets the linalg flash form.
    if (options.vectorizeSdpa) {
      AttnVectorizeSdpaPassOptions vec;
      // AVX2 blocks are half as tall and half as long: with 8 ymm of
      // accumulators a score tile is 2 keys x 32 rows (6 loads per 8 FMAs
      // rather than 9 for 1 key x 64 rows, which is bound by two loads a
      // cycle), and V's block (16 KiB at dv = 64) with the weights (8 KiB)
      // stays in L1 while the 2-row output tiles stream it.
      vec.blockQ = byCpu(options.sdpaBlockQ, 64, 32);
      vec.blockKV = byCpu(options.sdpaBlockKV, 128, 64);
      vec.registerKeys = options.sdpaRegisterKeys;
      vec.registerRows = options.sdpaRegisterRows;
      // vector<16xf32> is one zmm but two ymm: AVX2's 16 ymm hold 4
      // accumulators next to the operands (24 would spill on every key).
      vec.accumulators = byCpu(options.sdpaAccumulators, 24, 4);
      vec.polynomialExp = options.fastExp;
      vec.avx512Scalef = options.avx512Scalef && avx512;
      // vdpbf16ps only where the target CPU has it.
      vec.bf16Dot = options.bf16Dot && avx512Bf16;
      vec.streamingStores = options.streamingStores;
      vec.parallel = options.parallel;
      // A shared f32 mask: with AVX-512 the per-block transposes of each
      // item measured faster than one transposed copy per call (GPT-2's
      // core under a [1, 1, T, T] mask: 0.967 of the time at T = 1024,
      // 0.986 at 2048) and need no second copy; the AVX2 code, whose
      // transposes take two ymm per row, is faster with the copy (0.959).
      // (-1 is "by the target CPU"; other negative values reach the pass,
      // which refuses them.)
      vec.maskCopyLimitMiB = options.sdpaMaskCopyLimitMiB != -1
                                 ? int64_t(options.sdpaMaskCopyLimitMiB)
                                 : (avx512 ? 0 : 64);
      // Elsewhere bf16 cores run the f32 kernel on widened loads: the
      // same memory traffic as bf16, f32 FMAs.
      vec.bf16Widen = true;
      // f16 likewise (vcvtph2ps is F16C, on every AVX2 and AVX-512 CPU).
      vec.f16Widen = true;
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
  // One loop nest per elementwise chain (GELU, LayerNorm's tail, bias and
  // residual adds): fewer passes over memory. Contractions stay as they are.
  if (options.optimize && options.fuseElementwise)
    pm.addPass(createAttnFuseElementwisePass());
  // Reductions over several trailing axes as one row each, and those with
  // too few rows for the threads split into 16 partial rows: the forms
  // attn-vectorize-row-reductions writes as vector code, after
  // bufferization.
  if (options.optimize && options.vectorizeRowReductions)
    pm.addNestedPass<func::FuncOp>(createAttnReshapeReductionsPass());
  // Register-blocked vector code for the projections and P V products.
  if (options.optimize && options.vectorizeContractions) {
    AttnVectorizeContractionsPassOptions tiles;
    // Register tiles sized to the register file: 8 x 32 is 16 of
    // AVX-512's 32 zmm. AVX2 has 16 ymm: 6 x 16 keeps 12 accumulators plus
    // the B row (2) and a broadcast, the BLIS Haswell/Zen shape (8 x 32
    // spills every k step). 4 x 16's 8 accumulators are exactly the FMA
    // latency (4 cycles) times its two ports, so any stall idles a port, and
    // it loads 6 times per 8 FMAs against 8 per 12. x[576, 1600] @ W[1600,
    // 1600] on one thread: 38.0 -> 34.6 ms best (85% of the 1-thread FMA
    // peak); at 768 columns 7.59 -> 7.41 ms. Row blocks stay 64 rows (10
    // tiles of 6 and one of 4): T = 512, 1024, 2048 then split into an
    // even number of blocks, which 48-row blocks (10.7 at T = 512) would
    // not. (A batch of a multiple of 4 sequences of 65-128 rows takes one
    // block per sequence: attn-vectorize-contractions' blockRows.)
    tiles.cacheM = options.contractionCacheM;
    // All of K in one block with AVX-512 (K up to 2048: every d_model of
    // the benchmark): the C tile is loaded and stored once instead of once
    // per 256-row block, and the m tiles read the packed panel (K x 32
    // floats, 96-200 KiB) from the 1-2 MiB L2 of those cores. On the Zen 5
    // host, K = 768 and 1600, against 256: the GPT-2 block 0.970 of the
    // time, d_model 1600 at T = 1024 0.965, at T = 128 0.978, d_model 768
    // at B = 4, T = 128 0.940 (compare_options). AVX2 keeps 256: a Zen 3
    // core's 512 KiB L2 would not hold a 64-row A block of K = 1600 (400
    // KiB) next to its panel.
    tiles.cacheK = byCpu(options.contractionCacheK, 2048, 256);
    tiles.cacheN = options.contractionCacheN;
    tiles.registerM = byCpu(options.contractionRegisterM, 8, 6);
    tiles.registerN = byCpu(options.contractionRegisterN, 32, 16);
    tiles.packB = options.contractionPackB;
    tiles.packBOnce = options.contractionPackBOnce;
    tiles.packBOnceBlocks = options.contractionPackBOnceBlocks;
    tiles.splitNItems = options.contractionSplitNItems;
    pm.addPass(createAttnVectorizeContractionsPass(tiles));
  }
  // Elementwise arith/math on whole tensors (e.g. a residual add around the
  // attention block) becomes linalg so that it bufferizes, and before the
  // approximations, which rewrite scalars and vectors only.
  add("func.func(convert-elementwise-to-linalg),canonicalize,cse");
  // Math on f16/bf16 in f32 (extf, the op, truncf): LLVM's lowerings work
  // in the op's type, log1p as log(1 + x), where 1 + x rounded to f16 or
  // bf16 lost most of a small x (a 2.4% error in bf16).
  add("math-extend-to-supported-types");
  // (erf in any case: LLVM cannot lower it.)
  pm.addPass(createAttnApproximateMathPass({/*expAndTanh=*/options.fastExp}));
  if (options.emitCInterface)
    pm.addPass(createAttnEmitCInterfacePass());
  pm.addPass(createAttnBufferizePass());
  add("buffer-deallocation-pipeline,convert-bufferization-to-memref");
  // Buffer copies (a KV cache's concatenations) as vector copies of their
  // contiguous runs, in parallel chunks.
  pm.addNestedPass<func::FuncOp>(
      createAttnVectorizeCopiesPass({/*parallel=*/options.parallel}));
  // Row sums (LayerNorm's statistics, ReduceSum/ReduceMean over the last
  // axis): vector accumulators per row instead of a chain of dependent
  // scalar additions. Its scf.parallel over the rows runs on threads when
  // the pipeline is parallel and as plain loops otherwise.
  if (options.optimize && options.vectorizeRowReductions)
    pm.addNestedPass<func::FuncOp>(createAttnVectorizeRowReductionsPass());
  if (options.parallel) {
    // Elementwise ops left as linalg (LayerNorm's tail, GELU, residual
    // adds): threads over the outer dims, the innermost dim a loop that
    // LLVM vectorizes.
    if (options.optimize && options.parallelizeOuterDims)
      pm.addNestedPass<func::FuncOp>(createAttnParallelizeOuterDimsPass());
    add("scf-forall-to-parallel,"
        "func.func(convert-linalg-to-parallel-loops),"
        "func.func(attn-serialize-nested-parallel-loops)");
    // Loops of less work than an OpenMP region's fork and join as plain
    // loops (the top 50 of a one-row vocabulary: 0.074-0.092 -> 0.040-0.060
    // ms; docs/cpu.md).
    if (options.serialWorkBelow > 0)
      pm.addNestedPass<func::FuncOp>(createAttnSerializeSmallParallelLoopsPass(
          {/*minWork=*/options.serialWorkBelow}));
    add("convert-scf-to-openmp,canonicalize");
    if (options.guidedSchedule)
      pm.addPass(createAttnGuidedOmpSchedulePass(
          {/*chunk=*/1, /*staticBelow=*/options.staticScheduleBelow}));
  } else {
    add("scf-forall-to-for,func.func(convert-linalg-to-loops)");
  }
  // Store fences for streaming stores, once the loops are OpenMP loops.
  add("func.func(attn-fence-streaming-stores)");
  // f32 <-> bf16 conversions as integer arithmetic (round to nearest even,
  // the rounding of vcvtneps2bf16, denormals kept), unless asked for native
  // ones. Without avx512_bf16, LLVM turns a native f32 -> bf16 conversion
  // into a call of compiler-rt's __truncsfbf2, which neither the JIT nor
  // Debian 12's libgcc provides. With it, LLVM's loop vectorizer costs bf16
  // vector conversions so high that it vectorizes an elementwise bf16 loop
  // at a width of 2 to 8 instead of 16: Mul, Add, Tanh, Div, Exp over
  // [2048, 1024] bf16 took 4.1 ms native and 1.8 ms expanded on the Zen 4
  // host (avx512_bf16, 2 threads), 1.0 ms with the arithmetic emulated
  // below. The attention kernel's conversions
  // (vcvtneps2bf16 for its bf16 pairs) are x86vector ops, not these, and
  // its bf16 causal core [1, 12, 1024, 64] took the same time either way
  // (4.36 and 4.32 ms), as did a bf16 MatMul [1, 4096] x [4096, 4096].
  bool expandBf16 = options.bf16Conversions != Bf16Conversions::Native;
  // bf16 arithmetic (an op-by-op bf16 Mul) first becomes f32 arithmetic
  // between conversions, which are then expanded: left as bf16, LLVM
  // promotes it with conversions of its own, native ones (a call of
  // __truncsfbf2 without avx512_bf16: such a module did not link).
  if (expandBf16)
    add("func.func(arith-emulate-unsupported-floats{source-types=bf16 "
        "target-type=f32},arith-expand{include-bf16=true})");
  // A whole model's hundreds of parallel regions in parts of a few each:
  // LLVM's outlining of a region scans the whole function around it. LLVM
  // inlines the parts back into main, and every outlined kernel is the
  // same machine code as without the split (the 12-block GPT-2's .so
  // files: only main differs), so run time is unchanged.
  if (options.parallel && options.regionsPerFunction > 0)
    pm.addPass(createAttnSplitParallelFunctionsPass(
        {/*regionsPerPart=*/options.regionsPerFunction}));
  // Checked allocations go through the runtime's functions, which fail
  // the call when memory runs out (attnrt/Allocation.h).
  std::string memrefToLlvm =
      options.checkedAllocations
          ? "finalize-memref-to-llvm{use-generic-functions=true},"
          : "finalize-memref-to-llvm,";
  add("expand-strided-metadata,lower-affine,convert-scf-to-cf,"
      // (log1p not as log(1 + x), which loses a small x: libm's log1pf.)
      "convert-math-to-llvm{approximate-log1p=false},"
      // What LLVM has no intrinsic for (asinh, acosh, atanh, cbrt, erfc,
      // log1p) calls libm, element by element: on a vector (a row sum's
      // body) through vector.extract/insert, hence before vector-to-llvm.
      "convert-math-to-libm,"
      "convert-vector-to-llvm{enable-x86vector}," +
      memrefToLlvm +
      "convert-arith-to-llvm,"
      "convert-index-to-llvm,convert-cf-to-llvm,convert-func-to-llvm,"
      "convert-openmp-to-llvm,reconcile-unrealized-casts,canonicalize,cse");
  // Large constants (packed weights) as byte strings, which LLVM translates
  // and writes out in one copy each instead of row by row.
  pm.addPass(createAttnByteConstantGlobalsPass());
  // Weights reach the parallel regions as captured values, so that a
  // model's repeated blocks outline into identical functions, each
  // compiled once.
  if (options.parallel && options.captureConstantAddresses)
    pm.addPass(createAttnCaptureConstantAddressesPass());
}

namespace {
/// PassPipelineRegistration, with a check of where the pipeline is nested:
/// its passes run on the whole module, and adding them to a pass manager
/// of another op (`func.func(attn-lower-to-cpu-pipeline)`) would abort
/// the process instead of reporting the mistake.
template <typename Options>
void registerModulePipeline(StringRef arg, StringRef description,
                            void (*builder)(OpPassManager &, const Options &)) {
  registerPassPipeline(
      arg, description,
      [builder, name = arg.str()](
          OpPassManager &pm, StringRef optionsText,
          function_ref<LogicalResult(const Twine &)> errorHandler) {
        if (pm.getOpAnchorName() != ModuleOp::getOperationName() &&
            pm.getOpAnchorName() != OpPassManager::getAnyOpAnchorName())
          return errorHandler("'" + name + "' runs on a builtin.module, " +
                              "not nested under '" + pm.getOpAnchorName() +
                              "'");
        Options options;
        if (failed(options.parseFromString(optionsText)))
          return failure();
        builder(pm, options);
        return success();
      },
      [](function_ref<void(const detail::PassOptions &)> optionsHandler) {
        optionsHandler(Options());
      });
}
} // namespace

void registerAttnPipelines() {
  registerModulePipeline<CpuPipelineOptions>(
      "attn-lower-to-cpu-pipeline",
      "Lower attn/linalg IR to the LLVM dialect for a CPU (target-cpu: the "
      "host by default)",
      buildAttnLowerToCpuPipeline);
  registerModulePipeline<NvvmPipelineOptions>(
      "attn-lower-to-nvvm-pipeline",
      "Lower attn IR to host LLVM code launching tensor-core kernels (NVVM, "
      "embedded cubin/PTX)",
      buildAttnLowerToNvvmPipeline);
}

} // namespace mlir::attn
