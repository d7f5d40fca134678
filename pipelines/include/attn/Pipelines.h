//===- Pipelines.h - end-to-end lowering pipelines -------------*- C++ -*-===//
//
// Registered pipelines that take attn (or linalg) IR to the LLVM dialect.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_PIPELINES_H
#define ATTN_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::attn {

/// How the CPU pipeline lowers f32 <-> bf16 conversions.
enum class Bf16Conversions {
  Auto,   ///< native where the target CPU has avx512_bf16, else expand
  Native, ///< LLVM fptrunc/fpext (vcvtneps2bf16 with avx512_bf16; a
          ///< compiler-rt call without it)
  Expand, ///< integer arithmetic (round to nearest even)
};

struct CpuPipelineOptions : public PassPipelineOptions<CpuPipelineOptions> {
  PassOptions::Option<std::string> targetCpu{
      *this, "target-cpu",
      llvm::cl::desc("The CPU the code is for: host (this machine), or an "
                     "x86-64 CPU name as for clang's -march (x86-64-v3, "
                     "x86-64-v4, znver4, sapphirerapids, ...); its "
                     "extensions pick the per-CPU defaults below"),
      llvm::cl::init("host")};
  PassOptions::Option<bool> emitCInterface{
      *this, "emit-c-interface",
      llvm::cl::desc("Emit _mlir_ciface_ wrappers for public functions"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> optimize{
      *this, "optimize",
      llvm::cl::desc("Run the attn optimization passes (false: the plain "
                     "reference lowering)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseHeads{*this, "fuse-heads",
                                      llvm::cl::desc("Run attn-fuse-heads"),
                                      llvm::cl::init(true)};
  PassOptions::Option<bool> decompose{*this, "decompose",
                                      llvm::cl::desc("Run attn-decompose"),
                                      llvm::cl::init(true)};
  PassOptions::Option<bool> foldRepeatedKv{
      *this, "fold-repeated-kv", llvm::cl::desc("Run attn-fold-repeated-kv"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> foldHeadTransposes{
      *this, "fold-head-transposes",
      llvm::cl::desc("Run attn-fold-head-transposes"), llvm::cl::init(true)};
  PassOptions::Option<bool> foldMask{*this, "fold-mask",
                                     llvm::cl::desc("Run attn-fold-mask"),
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
  PassOptions::Option<bool> vectorizeSdpa{
      *this, "vectorize-sdpa",
      llvm::cl::desc("Run attn-vectorize-sdpa (register-blocked vector "
                     "flash attention for f32 SDPA cores; the rest goes "
                     "to attn-fuse-softmax)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> sdpaBlockQ{
      *this, "sdpa-block-q",
      llvm::cl::desc(
          "attn-vectorize-sdpa: query rows per task (a multiple "
          "of 16; 0: by the target CPU, 64 with AVX-512, 32 with AVX2)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> sdpaBlockKV{
      *this, "sdpa-block-kv",
      llvm::cl::desc("attn-vectorize-sdpa: keys per online-softmax step (0: "
                     "by the target CPU, 128 with AVX-512, 64 with AVX2)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> sdpaRegisterKeys{
      *this, "sdpa-register-keys",
      llvm::cl::desc("attn-vectorize-sdpa: keys per score register tile"),
      llvm::cl::init(4)};
  PassOptions::Option<int64_t> sdpaRegisterRows{
      *this, "sdpa-register-rows",
      llvm::cl::desc("attn-vectorize-sdpa: query rows per output register "
                     "tile"),
      llvm::cl::init(4)};
  PassOptions::Option<int64_t> sdpaMaskCopyLimitMiB{
      *this, "sdpa-mask-copy-limit-mib",
      llvm::cl::desc("attn-vectorize-sdpa: largest f32 mask shared by "
                     "several batches or heads that is copied transposed "
                     "once per call (MiB; larger static ones are "
                     "transposed per key block, without the copy; -1: by "
                     "the target CPU, 0 with AVX-512, 64 with AVX2)"),
      llvm::cl::init(-1)};
  PassOptions::Option<int64_t> sdpaAccumulators{
      *this, "sdpa-accumulators",
      llvm::cl::desc(
          "attn-vectorize-sdpa: most vector<16xf32> accumulators "
          "per register tile (0: by the target CPU, 24 with AVX-512, "
          "4 with AVX2)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> bf16Dot{
      *this, "bf16-dot",
      llvm::cl::desc("attn-vectorize-sdpa computes bf16 cores with "
                     "avx512_bf16 dot products when the target CPU has them "
                     "(false, or a CPU without them: the f32 kernel on "
                     "operands widened as they are loaded)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> avx512Scalef{
      *this, "avx512-scalef",
      llvm::cl::desc("attn-vectorize-sdpa's inline 2^x scales by 2^n with "
                     "vscalefps when the target CPU has AVX-512F (false: "
                     "2^n from the exponent bits, as on AVX2)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> streamingStores{
      *this, "streaming-stores",
      llvm::cl::desc("attn-vectorize-sdpa writes an output that is only "
                     "returned with non-temporal stores (false: ordinary "
                     "stores)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Run attn-fuse-elementwise (chains of elementwise ops "
                     "of imported graphs become one loop nest)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> parallelizeOuterDims{
      *this, "parallelize-outer-dims",
      llvm::cl::desc("Run attn-parallelize-outer-dims (elementwise ops "
                     "left as linalg: threads over the outer dims, the "
                     "innermost dim a vectorizable loop)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> vectorizeRowReductions{
      *this, "vectorize-row-reductions",
      llvm::cl::desc("Run attn-vectorize-row-reductions (last-dim row sums "
                     "such as LayerNorm's mean and variance: vector "
                     "accumulators, rows in parallel)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> vectorizeContractions{
      *this, "vectorize-contractions",
      llvm::cl::desc("Run attn-vectorize-contractions (register-blocked "
                     "vector code for projections and P V)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> contractionCacheM{
      *this, "contraction-cache-m",
      llvm::cl::desc("attn-vectorize-contractions: rows per parallel block"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> contractionCacheK{
      *this, "contraction-cache-k",
      llvm::cl::desc("attn-vectorize-contractions: reduction block (0: by "
                     "the target CPU, 2048 with AVX-512: all of K = 768 or "
                     "1600 in one block; 256 with AVX2)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> contractionCacheN{
      *this, "contraction-cache-n",
      llvm::cl::desc("attn-vectorize-contractions: at most this many "
                     "columns per sequential n block around the m blocks, "
                     "for a shared weight (0: the columns of which K rows "
                     "take up to 4 MiB; below register-n: none)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> contractionRegisterM{
      *this, "contraction-register-m",
      llvm::cl::desc("attn-vectorize-contractions: rows per register tile "
                     "(0: by the target CPU, 8 with AVX-512, 6 with AVX2)"),
      llvm::cl::init(0)};
  PassOptions::Option<int64_t> contractionRegisterN{
      *this, "contraction-register-n",
      llvm::cl::desc(
          "attn-vectorize-contractions: columns per register "
          "tile (0: by the target CPU, 32 with AVX-512, 16 with AVX2)"),
      llvm::cl::init(0)};
  PassOptions::Option<bool> contractionPackB{
      *this, "contraction-pack-b",
      llvm::cl::desc("attn-vectorize-contractions: copy each B micro-panel "
                     "to a contiguous buffer before its m tiles"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> contractionPackBOnce{
      *this, "contraction-pack-b-once",
      llvm::cl::desc("attn-vectorize-contractions: pack a weight shared by "
                     "all m blocks once per call, before them"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> contractionPackBOnceBlocks{
      *this, "contraction-pack-b-once-blocks",
      llvm::cl::desc("attn-vectorize-contractions: the fewest m blocks for "
                     "which a non-constant weight is packed once per call"),
      llvm::cl::init(8)};
  PassOptions::Option<int64_t> contractionSplitNItems{
      *this, "contraction-split-n-items",
      llvm::cl::desc("attn-vectorize-contractions: contractions with fewer "
                     "m blocks than this take all rows in one block and "
                     "split N into this many work items; a dynamic M "
                     "chooses at run time (0: never)"),
      llvm::cl::init(4)};
  PassOptions::Option<bool> fastExp{
      *this, "fast-exp",
      llvm::cl::desc("Expand exp and tanh into vectorizable polynomials "
                     "(attn-approximate-math) instead of calling libm (erf "
                     "is expanded in any case)"),
      llvm::cl::init(true)};
  PassOptions::Option<Bf16Conversions> bf16Conversions{
      *this, "bf16-conversions",
      llvm::cl::desc("How f32 <-> bf16 conversions are lowered"),
      llvm::cl::init(Bf16Conversions::Auto),
      llvm::cl::values(
          clEnumValN(Bf16Conversions::Auto, "auto",
                     "expand (native conversions keep LLVM's loop "
                     "vectorizer to narrow vectors on elementwise bf16 "
                     "loops; the attention kernel's own are x86vector "
                     "ops either way)"),
          clEnumValN(Bf16Conversions::Native, "native",
                     "LLVM fptrunc/fpext (a compiler-rt call on CPUs "
                     "without avx512_bf16)"),
          clEnumValN(Bf16Conversions::Expand, "expand",
                     "integer arithmetic, rounding to nearest even"))};
  PassOptions::Option<bool> parallel{
      *this, "parallel",
      llvm::cl::desc("Run the outermost parallel loops of each op on the "
                     "OpenMP thread pool"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> guidedSchedule{
      *this, "guided-schedule",
      llvm::cl::desc("OpenMP work items shared out as threads get free "
                     "(attn-guided-omp-schedule; false: the runtime's "
                     "static split)"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> serialWorkBelow{
      *this, "serial-work-below",
      llvm::cl::desc("Parallel loops of fewer estimated operations run on "
                     "the calling thread, without an OpenMP region "
                     "(attn-serialize-small-parallel-loops; 0: none)"),
      llvm::cl::init(4096)};
  PassOptions::Option<int64_t> staticScheduleBelow{
      *this, "static-schedule-below",
      llvm::cl::desc("Parallel loops of fewer estimated operations get "
                     "OpenMP's static schedule instead of the guided one "
                     "(attn-guided-omp-schedule's static-below; 0: none)"),
      llvm::cl::init(262144)};
  PassOptions::Option<unsigned> regionsPerFunction{
      *this, "regions-per-function",
      llvm::cl::desc("Split functions with more OpenMP parallel regions than "
                     "this into parts of about this many "
                     "(attn-split-parallel-functions: LLVM's outlining of "
                     "each region scans its whole function; the 12-block "
                     "GPT-2 compiles about 1 s faster, the kernels are the "
                     "same code); 0: never"),
      llvm::cl::init(8)};
  PassOptions::Option<bool> checkedAllocations{
      *this, "checked-allocations",
      llvm::cl::desc("Allocate and free through _mlir_memref_to_llvm_alloc "
                     "and _mlir_memref_to_llvm_free, which the runtime's "
                     "JIT defines through a table the runtime points at "
                     "its checked functions: a failed allocation fails the "
                     "call instead of crashing it (attention-run and the "
                     "JIT turn it on; false: malloc and free, "
                     "self-contained for mlir-runner)"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> captureConstantAddresses{
      *this, "capture-constant-addresses",
      llvm::cl::desc("Run attn-capture-constant-addresses (parallel regions "
                     "that differ only in the weights they read outline "
                     "into identical functions, compiled once)"),
      llvm::cl::init(true)};
};

/// The attn-level rewrites both pipelines start with: canonicalize, then
/// attn-fuse-heads, attn-decompose, attn-fold-repeated-kv,
/// attn-fold-head-transposes and attn-fold-mask (each can be left out).
void addAttnRewrites(OpPassManager &pm, bool fuseHeads = true,
                     bool decompose = true, bool foldRepeatedKv = true,
                     bool foldHeadTransposes = true, bool foldMask = true);

/// The x86 extensions of `cpu` (LLVM's names, with the ones they imply:
/// "avx512vl" brings "avx512f", "avx2" brings "avx"): for "host" those of
/// this machine, else those of the named CPU. Fails for names LLVM does not
/// know as x86-64 CPUs.
FailureOr<llvm::StringMap<bool>> targetCpuFeatures(StringRef cpu);

/// `cpu` with "host" replaced by this machine's CPU name.
std::string resolveTargetCpu(StringRef cpu);

/// attn or linalg-on-tensors IR -> LLVM dialect for the CPU of the
/// target-cpu option.
void buildAttnLowerToCpuPipeline(OpPassManager &pm,
                                 const CpuPipelineOptions &options);

struct NvvmPipelineOptions : public PassPipelineOptions<NvvmPipelineOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("GPU architecture (sm_90, sm_80, ...)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features", llvm::cl::desc("PTX features (PTX ISA version)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<int> optLevel{
      *this, "opt-level", llvm::cl::desc("LLVM/ptxas optimization level"),
      llvm::cl::init(3)};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What the kernels become: fatbin (cubin + PTX, needs "
                     "ptxas and fatbinary), bin (cubin), isa (PTX text, "
                     "compiled by the driver at load)"),
      llvm::cl::init("fatbin")};
  PassOptions::Option<std::string> toolkit{
      *this, "toolkit",
      llvm::cl::desc("CUDA toolkit root holding bin/ptxas and nvvm/libdevice"),
      llvm::cl::init("/usr/local/cuda")};
  PassOptions::Option<bool> optimize{
      *this, "optimize", llvm::cl::desc("Run the attn optimization passes"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> ldmatrix{
      *this, "ldmatrix",
      llvm::cl::desc("convert-attn-to-gpu: load K/V fragments with ldmatrix"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> warps{
      *this, "warps",
      llvm::cl::desc("convert-attn-to-gpu: warps per block (16 query rows "
                     "each)"),
      llvm::cl::init(4)};
  PassOptions::Option<int64_t> blockKV{
      *this, "block-kv",
      llvm::cl::desc("convert-attn-to-gpu: keys per staged K/V tile"),
      llvm::cl::init(64)};
  PassOptions::Option<int64_t> stages{
      *this, "stages",
      llvm::cl::desc("convert-attn-to-gpu: 2 = cp.async double buffering, "
                     "1 = synchronous staging"),
      llvm::cl::init(2)};
};

/// attn IR -> LLVM dialect host code that launches tensor-core kernels
/// embedded as a GPU binary.
void buildAttnLowerToNvvmPipeline(OpPassManager &pm,
                                  const NvvmPipelineOptions &options);

/// Registers every pipeline with the global pass registry.
void registerAttnPipelines();

} // namespace mlir::attn

#endif // ATTN_PIPELINES_H
