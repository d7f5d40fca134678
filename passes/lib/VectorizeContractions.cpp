//===- VectorizeContractions.cpp - attn-vectorize-contractions ------------===//
//
// Register-blocked CPU code for the projections and P V products:
// C[..., m, n] += A[..., m, k] * B[..., k, n] (n contiguous in B and C).
//
//   scf.forall over groups of B's rows: pack all of B into panels
//                                 (pack-b-once: a weight two or more m
//                                 blocks share)
//   scf.for over n blocks         (a shared weight whose K rows take more
//                                 than 4 MiB, cache-n: the m blocks of an
//                                 n block read its part from L3)
//   scf.forall over m blocks (cache-m rows, or one block per sequence of
//                                 up to 2 x cache-m rows in a batch of a
//                                 multiple of 4; the parallel loop of the
//                                 op; with fewer than split-n-items
//                                 blocks: one block of all rows, chunks
//                                 of N)
//     scf.for over k blocks (cache-k: the A block stays in L2)
//       scf.for over n tiles (register-n columns: a B micro-panel in L1)
//         scf.for over k: copy the panel's rows (pack-b without the packed
//                         B above: contiguous)
//         scf.for over m tiles (register-m rows), peeled: full tiles
//           scf.for over k (1)      <- one B row load, per row one
//                                      broadcast of A and FMAs; the C tile
//                                      held in registers
//         scf.for over the rows past the last full tile, in tiles of 4,
//                         2 and 1 rows (each at most once for register-m
//                         up to 8)
//           scf.for over k (1)      <- the same, fewer rows
//
// All of it is vector code (one broadcast of A and n_r / 8 (AVX2) or n_r /
// 16 (AVX-512) FMAs per row and k), the remainder rows included. A
// zero-fill init (and a bias add after the contraction) becomes the first
// k block's starting value, so C is written once, by the contraction. This
// is the BLIS loop order with the B micro-panel packed, the schedule
// upstream MLIR reaches ~95% of peak with on a matmul
// (shared/docs/anchors.md).
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"
#include "attn/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

#include <cstdlib>
#include <cstring>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNVECTORIZECONTRACTIONSPASS
#include "attn/Passes.h.inc"

namespace {

/// Memory for a packed constant of `bytes`. From 2 MiB on it is 2 MiB
/// aligned and asked for on huge pages before it is first written, as the
/// JIT's own memory for constants linked as data is: the JIT then adopts
/// it instead of copying it (takeExternalConstants in runtime/jit). 64-byte
/// aligned below.
AsmResourceBlob allocatePackedBlob(size_t bytes) {
  constexpr size_t kHugePage = size_t(2) << 20;
  size_t alignment = bytes >= kHugePage ? kHugePage : 64;
  size_t rounded = std::max(llvm::alignTo(bytes, alignment), alignment);
  auto *data = static_cast<char *>(std::aligned_alloc(alignment, rounded));
  if (!data)
    llvm::report_bad_alloc_error("out of memory for a packed constant");
#if defined(__linux__)
  if (alignment == kHugePage)
    ::madvise(data, rounded, MADV_HUGEPAGE);
#endif
  return AsmResourceBlob(
      ArrayRef<char>(data, bytes), alignment,
      [](void *p, size_t, size_t) { std::free(p); }, /*dataIsMutable=*/true);
}

/// Loop dims of a candidate: m and n parallel, k the single reduction.
struct ContractionDims {
  int64_t m = -1, n = -1, k = -1;
};

/// Which operands a contraction reads with their last two dims swapped:
/// A as [..., k, m] (ONNX Gemm's transA), B as [..., n, k] (transB, a
/// MatMul of a transposed weight, Q K^T written as an einsum).
struct TransposedOperands {
  bool a = false, b = false;
};

/// C[..., m, n] += A[..., m, k] * B[..., k, n] on f32 tensors, any n. With
/// `transposed`, A may also be [..., k, m] and B [..., n, k], and it says
/// which are.
std::optional<ContractionDims>
matchContraction(linalg::LinalgOp op,
                 TransposedOperands *transposed = nullptr) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1)
    return std::nullopt;
  // Exactly out + a * b (isMulAccBody). linalg::isaContractionOpInterface
  // would also turn down the broadcast dims indexed by 0 taken below.
  if (!detail::isMulAccBody(op))
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands()) {
    auto t = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!t || !t.getElementType().isF32() || t.getRank() < 2)
      return std::nullopt;
  }
  // Results are loop dims, or 0 for a size-1 dim that broadcasts (the ONNX
  // importer's MatMul of [1, T, K] by [B, K, N], say); the last two of
  // each operand are dims.
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (AffineMap m : maps)
    if (!m.isProjectedPermutation(/*allowZeroInResults=*/true) ||
        m.getNumResults() < 2 ||
        !isa<AffineDimExpr>(m.getResult(m.getNumResults() - 1)) ||
        !isa<AffineDimExpr>(m.getResult(m.getNumResults() - 2)))
      return std::nullopt;
  // C's 0 results must be dims of size 1: on a larger dim C[0] alone would
  // be written, and the rest of C is the init, which a fused zero fill
  // would leave unwritten.
  auto cType = cast<RankedTensorType>(op.getDpsInits()[0].getType());
  for (unsigned r = 0; r < maps[2].getNumResults(); ++r)
    if (!isa<AffineDimExpr>(maps[2].getResult(r)) && cType.getDimSize(r) != 1)
      return std::nullopt;
  auto lastDims = [](AffineMap m, unsigned back) {
    return cast<AffineDimExpr>(m.getResult(m.getNumResults() - 1 - back))
        .getPosition();
  };
  ContractionDims dims;
  dims.n = lastDims(maps[2], 0);
  dims.m = lastDims(maps[2], 1);
  TransposedOperands swapped;
  swapped.a = lastDims(maps[0], 0) == unsigned(dims.m);
  dims.k = lastDims(maps[0], swapped.a ? 1 : 0);
  if (lastDims(maps[0], swapped.a ? 0 : 1) != unsigned(dims.m))
    return std::nullopt;
  swapped.b = lastDims(maps[1], 0) == unsigned(dims.k);
  if (lastDims(maps[1], swapped.b ? 1 : 0) != unsigned(dims.n) ||
      lastDims(maps[1], swapped.b ? 0 : 1) != unsigned(dims.k))
    return std::nullopt;
  if ((swapped.a || swapped.b) && !transposed)
    return std::nullopt;
  if (transposed)
    *transposed = swapped;
  // n only in B and C, m only in A and C, k only in A and B; every other
  // dim (batch, heads) in C, so that each C element has one writer.
  if (maps[0].isFunctionOfDim(dims.n) || maps[1].isFunctionOfDim(dims.m) ||
      maps[2].isFunctionOfDim(dims.k) || dims.m == dims.n)
    return std::nullopt;
  for (unsigned d = 0; d < op.getNumLoops(); ++d)
    if (d != unsigned(dims.k) && !maps[2].isFunctionOfDim(d))
      return std::nullopt;
  auto iters = op.getIteratorTypesArray();
  int64_t reductions = llvm::count(iters, utils::IteratorType::reduction);
  if (reductions != 1 || iters[dims.k] != utils::IteratorType::reduction)
    return std::nullopt;
  return dims;
}

/// A contraction the register tiles take: n a static multiple of
/// `registerN`.
std::optional<ContractionDims> matchCandidate(linalg::LinalgOp op,
                                              int64_t registerN) {
  std::optional<ContractionDims> dims = matchContraction(op);
  if (!dims)
    return std::nullopt;
  // (A static size of 0 leaves nothing to tile: the tiling crashed on it.
  // The op's own lowering gives the init.)
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t n = ranges[dims->n];
  if (ShapedType::isDynamic(n) || n % registerN != 0 ||
      llvm::is_contained(ranges, 0))
    return std::nullopt;
  return dims;
}

/// How the accumulator starts. A contraction whose init is a zero fill of
/// a tensor.empty, optionally followed by one elementwise add of a bias
/// vector along n (out_proj's bias), starts its first k block from zeros
/// (or the bias row) in registers: no fill pass over C, no bias pass, and
/// no shared zero tensor for bufferization to copy per contraction.
struct InitFusion {
  linalg::FillOp zeroFill;   // the init, when it is a zero fill; or null
  Value bias;                // 1-D along n, or null
  linalg::GenericOp biasAdd; // the add to fold away, or null
};

/// out[..., n] = out[..., n] + bias[n] (either operand order), all parallel.
bool isBiasAdd(linalg::GenericOp g, Value contraction, int64_t nPos) {
  if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getDpsInits()[0] != contraction || g.getNumReductionLoops() != 0 ||
      g->getNumResults() != 1)
    return false;
  auto biasType = dyn_cast<RankedTensorType>(g.getDpsInputs()[0].getType());
  if (!biasType || biasType.getRank() != 1 ||
      !biasType.getElementType().isF32())
    return false;
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  if (!maps[1].isIdentity() || maps[0].getNumResults() != 1)
    return false;
  auto d = dyn_cast<AffineDimExpr>(maps[0].getResult(0));
  if (!d || d.getPosition() != unsigned(nPos))
    return false;
  Block &body = g.getRegion().front();
  if (body.getOperations().size() != 2)
    return false;
  auto add = dyn_cast<arith::AddFOp>(&body.front());
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  return add && yield && yield->getOperand(0) == add.getResult() &&
         ((add.getLhs() == body.getArgument(0) &&
           add.getRhs() == body.getArgument(1)) ||
          (add.getLhs() == body.getArgument(1) &&
           add.getRhs() == body.getArgument(0)));
}

InitFusion matchInitFusion(linalg::LinalgOp op) {
  InitFusion f;
  // The fill's destination: a tensor.empty, or a slice of a larger result
  // (a part of a contraction split along n, written in place).
  auto fill = op.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
  if (!fill || !(fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>() ||
                 fill.getOutputs()[0].getDefiningOp<tensor::ExtractSliceOp>()))
    return f;
  auto zero = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto value = zero ? dyn_cast<FloatAttr>(zero.getValue()) : FloatAttr();
  if (!value || !value.getValue().isZero())
    return f;
  f.zeroFill = fill;
  Value result = op->getResult(0);
  int64_t nPos = cast<ShapedType>(result.getType()).getRank() - 1;
  if (result.hasOneUse())
    if (auto g = dyn_cast<linalg::GenericOp>(*result.getUsers().begin()))
      if (isBiasAdd(g, result, nPos)) {
        f.bias = g.getDpsInputs()[0];
        f.biasAdd = g;
      }
  return f;
}

struct AttnVectorizeContractionsPass
    : impl::AttnVectorizeContractionsPassBase<AttnVectorizeContractionsPass> {
  using Base::Base;

  /// Tiles `op` by `sizes` (0 = untiled) in loop order `order`.
  FailureOr<scf::SCFTilingResult> tile(RewriterBase &rewriter,
                                       TilingInterface op,
                                       ArrayRef<int64_t> sizes,
                                       ArrayRef<int64_t> order, bool parallel) {
    scf::SCFTilingOptions options;
    options.setTileSizes(getAsIndexOpFoldResult(op.getContext(), sizes));
    options.setInterchange(order);
    options.setLoopType(parallel ? scf::SCFTilingOptions::LoopType::ForallOp
                                 : scf::SCFTilingOptions::LoopType::ForOp);
    rewriter.setInsertionPoint(op);
    auto result = scf::tileUsingSCF(rewriter, op, options);
    if (failed(result))
      return failure();
    rewriter.replaceOp(op, result->replacements);
    return result;
  }

  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    // (Register tiles are unrolled: beyond 64 rows or 256 columns the
    // code would take minutes to compile and spill anyway.)
    if (cacheM < 1 || cacheK < 1 || registerM < 1 || registerN < 1 ||
        registerM > 64 || registerN > 256) {
      mlir::emitError(getOperation().getLoc())
          << "attn-vectorize-contractions: tile sizes must be positive, "
             "register-m at most 64 and register-n at most 256, got "
             "cache-m="
          << int64_t(cacheM) << " cache-k=" << int64_t(cacheK)
          << " register-m=" << int64_t(registerM)
          << " register-n=" << int64_t(registerN);
      return signalPassFailure();
    }
    if (cacheN < 0) {
      mlir::emitError(getOperation().getLoc())
          << "attn-vectorize-contractions: cache-n must be 0 (by size) or "
             "positive, got "
          << int64_t(cacheN);
      return signalPassFailure();
    }
    tailWidth.clear();
    untransposeOperands();
    splitRaggedN();
    transposeForDotProducts();
    packedConstants.clear();
    // (op, dims, register-n: the option's, or a split tail's narrower one;
    // whether its rows are known to fit in fewer than split-n-items m
    // blocks, see branchOnRows)
    SmallVector<std::tuple<linalg::LinalgOp, ContractionDims, int64_t, bool>>
        candidates;
    getOperation().walk([&](linalg::LinalgOp op) {
      int64_t width = tailWidth.lookup(op);
      if (auto dims = matchCandidate(op, width ? width : registerN))
        candidates.emplace_back(op, *dims, width ? width : registerN, false);
    });
    IRRewriter rewriter(ctx);
    // (By index: branchOnRows appends the copy of its small-M branch.)
    for (size_t c = 0; c < candidates.size(); ++c) {
      linalg::LinalgOp op = std::get<0>(candidates[c]);
      ContractionDims dims = std::get<1>(candidates[c]);
      int64_t width = std::get<2>(candidates[c]);
      bool rowsFit = std::get<3>(candidates[c]);
      rn = width;
      if (!rowsFit)
        if (std::optional<int64_t> rows = maxRowsToSplitN(op, dims)) {
          auto [few, many] = branchOnRows(rewriter, op, dims, *rows);
          candidates.emplace_back(few, dims, width, true);
          op = many;
        }
      unsigned rank = op.getNumLoops();
      // Other parallel dims (batch, heads): one at a time in the outermost
      // tiling, untouched after.
      auto sizes = [&](int64_t m, int64_t n, int64_t k, int64_t others = 0) {
        SmallVector<int64_t> s(rank, others);
        s[dims.m] = m;
        s[dims.n] = n;
        s[dims.k] = k;
        return s;
      };
      auto order = [&](ArrayRef<int64_t> inner) {
        SmallVector<int64_t> o;
        for (unsigned d = 0; d < rank; ++d)
          if (!llvm::is_contained(inner, int64_t(d)))
            o.push_back(d);
        o.append(inner.begin(), inner.end());
        return o;
      };
      // A k block longer than a static K is all of K: one block, and a
      // panel buffer of K rows rather than cache-k.
      int64_t kLength = op.getStaticLoopRanges()[dims.k];
      int64_t kBlock = ShapedType::isDynamic(kLength)
                           ? int64_t(cacheK)
                           : std::min<int64_t>(cacheK, kLength);
      // The init becomes a fresh tensor.empty of its own, or the slice the
      // fill wrote; the first k block writes every element. Not with a
      // dynamic K: at 0 there is no first k block, and the result would be
      // the empty tensor's garbage, not zeros (or the bias); the fill and
      // the bias add stay.
      InitFusion init =
          ShapedType::isDynamic(kLength) ? InitFusion() : matchInitFusion(op);
      if (init.zeroFill) {
        Value dest = init.zeroFill.getOutputs()[0];
        // (Beside the original: outside the scf.if of branchOnRows, whose
        // results then bufferize to that one buffer, not to one per branch
        // that a cast and a copy reconcile.)
        if (auto empty = dest.getDefiningOp<tensor::EmptyOp>()) {
          rewriter.setInsertionPointAfter(empty);
          dest = rewriter.clone(*empty)->getResult(0);
        }
        rewriter.modifyOpInPlace(op,
                                 [&] { op.getDpsInitsMutable()[0].set(dest); });
      }
      // `op` is replaced by the first tiling: keep what is needed after.
      Location loc = op.getLoc();
      Value prepacked;
      if (packB && packBOnce && isSharedWeight(op, dims)) {
        rewriter.setInsertionPoint(op);
        prepacked = packConstantB(rewriter, loc, op.getDpsInputs()[1]);
        if (!prepacked && packingPaysAtRunTime(op, dims))
          prepacked = prepackB(rewriter, loc, op.getDpsInputs()[1]);
      }
      // 1. Parallel m blocks (and batch dims): the threads' work items;
      // with few of them, one block of all M rows and chunks of N instead.
      // A wide shared weight first gets sequential n blocks around them.
      // (All M rows in one block: untiled along m, dynamic M included.)
      int64_t nChunk = splitNChunk(op, dims, rowsFit);
      int64_t nBlock = nChunk ? 0 : blockColumns(op, dims);
      int64_t mBlock = nChunk ? 0 : blockRows(op, dims);
      // Should a tiling fail, the op (or its tile) keeps the zero fill the
      // register tiles would have replaced.
      auto refill = [&](linalg::LinalgOp o) {
        if (!init.zeroFill)
          return;
        rewriter.setInsertionPoint(o);
        Value zeros =
            linalg::FillOp::create(rewriter, loc, init.zeroFill.getInputs(),
                                   o.getDpsInits()[0])
                .getResult(0);
        rewriter.modifyOpInPlace(o,
                                 [&] { o.getDpsInitsMutable()[0].set(zeros); });
      };
      linalg::LinalgOp toBlock = op;
      Value nBase;
      if (nBlock) {
        auto nBlocks = tile(rewriter, cast<TilingInterface>(op.getOperation()),
                            sizes(0, nBlock, 0), order({dims.n}), false);
        if (failed(nBlocks)) {
          refill(op);
          continue;
        }
        toBlock = cast<linalg::LinalgOp>(nBlocks->tiledOps.front());
        nBase = offsetAlongN(rewriter, toBlock, dims);
      }
      auto blocks =
          tile(rewriter, cast<TilingInterface>(toBlock.getOperation()),
               sizes(mBlock, nChunk, 0, /*others=*/1),
               nChunk ? order({dims.m, dims.n}) : order({dims.m}),
               /*parallel=*/true);
      if (failed(blocks)) {
        refill(toBlock);
        continue;
      }
      Value nOffset = offsetAlongN(
          rewriter, cast<linalg::LinalgOp>(blocks->tiledOps.front()), dims);
      if (nBase)
        nOffset = arith::AddIOp::create(rewriter, loc, nBase, nOffset);
      // 2. k blocks.
      auto kBlocks =
          tile(rewriter, cast<TilingInterface>(blocks->tiledOps.front()),
               sizes(0, 0, kBlock), order({dims.k}), false);
      if (failed(kBlocks)) {
        refill(cast<linalg::LinalgOp>(blocks->tiledOps.front()));
        continue;
      }
      // 3. Register tiles, generated directly as vector code.
      auto kLoop = cast<scf::ForOp>(kBlocks->loops.front().getOperation());
      Value isFirstK;
      if (init.zeroFill) {
        rewriter.setInsertionPointToStart(kLoop.getBody());
        isFirstK = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::eq, kLoop.getInductionVar(),
            kLoop.getLowerBound());
      }
      emitRegisterTiles(rewriter,
                        cast<linalg::LinalgOp>(kBlocks->tiledOps.front()), dims,
                        isFirstK, init.bias, prepacked, kLoop.getInductionVar(),
                        nOffset, kBlock);
      // The bias is in the accumulators already.
      if (init.biasAdd)
        rewriter.replaceOp(init.biasAdd, init.biasAdd.getDpsInits()[0]);
    }
    cleanUp();
  }

  /// packConstantB's constants by weight and register-n.
  DenseMap<std::pair<Value, int64_t>, Value> packedConstants;

  /// The width of the N chunks that replace m blocks as work items, or 0.
  /// With fewer than split-n-items m blocks (times batch), as in a
  /// projection of 128 tokens, every m block reads all of B: on two
  /// threads each thread reads all of W, and each B panel copy serves only
  /// cache-m rows. One block of all M rows split into split-n-items chunks
  /// of N has each thread read its share of B once. (x[128, 1600] @ W[1600,
  /// 1600] on one thread: 8.5 ms in two 64-row blocks, 7.6 ms in one
  /// 128-row block.) Static shapes, M of at least one register tile
  /// (fewer rows, a decode step's, are not split), or `rowsFit`: the
  /// branch of a dynamic M that branchOnRows made for few rows.
  int64_t splitNChunk(linalg::LinalgOp op, ContractionDims dims, bool rowsFit) {
    if (splitNItems < 2)
      return 0;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t panels = ranges[dims.n] / rn;
    if (panels < 2)
      return 0;
    if (!rowsFit) {
      std::optional<int64_t> items = staticMBlocks(op, dims);
      if (!items || *items >= splitNItems)
        return 0;
    }
    return llvm::divideCeil(panels, int64_t(splitNItems)) * rn;
  }

  /// For a dynamic M, the most rows that still make fewer than
  /// split-n-items m blocks (times the batch), or nullopt when that cannot
  /// happen (or the other dims are dynamic, or N has fewer than two
  /// panels). A model exported with a dynamic sequence length runs its
  /// projections with M known only at run time; in m blocks, up to
  /// cache-m rows are one work item, and one thread does all of it.
  /// x[M, 768] @ W[768, 3072] on 2 threads, M = 16: 0.67 ms with a
  /// dynamic M, 0.34 ms with the same M static (split along N).
  std::optional<int64_t> maxRowsToSplitN(linalg::LinalgOp op,
                                         ContractionDims dims) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    std::optional<int64_t> batch = staticBatch(op, dims);
    if (splitNItems < 2 || !ShapedType::isDynamic(ranges[dims.m]) ||
        ShapedType::isDynamic(ranges[dims.n]) ||
        ShapedType::isDynamic(ranges[dims.k]) || !batch || *batch < 1 ||
        *batch >= splitNItems || ranges[dims.n] / rn < 2)
      return std::nullopt;
    // ceil(M / cache-m) * batch < split-n-items.
    return (int64_t(splitNItems) - 1) / *batch * int64_t(cacheM);
  }

  /// `op` in an scf.if on its number of rows: up to `rows`, a copy that
  /// splits N (returned first), else a copy in m blocks. An elementwise
  /// bias add that matchInitFusion would fuse moves into both branches,
  /// so that each copy still starts from the bias (when it is in the same
  /// block). The pass generates each such contraction twice: twelve
  /// [T, 256] x [256, 256] projections with T dynamic compiled in 0.60 s
  /// instead of 0.35 s.
  std::pair<linalg::LinalgOp, linalg::LinalgOp>
  branchOnRows(RewriterBase &rewriter, linalg::LinalgOp op,
               ContractionDims dims, int64_t rows) {
    linalg::GenericOp biasAdd = matchInitFusion(op).biasAdd;
    // (A bias add in another block, a loop's say, stays there: moved into
    // the branches, it would take the contraction into the loop.)
    if (biasAdd && biasAdd->getBlock() != op->getBlock())
      biasAdd = nullptr;
    Operation *last = biasAdd ? biasAdd.getOperation() : op.getOperation();
    rewriter.setInsertionPoint(last);
    Location loc = op.getLoc();
    Value few = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::sle, rowCount(rewriter, op, dims),
        arith::ConstantIndexOp::create(rewriter, loc, rows));
    linalg::LinalgOp copies[2];
    auto copy = [&](int index) {
      return [&, index](OpBuilder &b, Location l) {
        IRMapping map;
        copies[index] = cast<linalg::LinalgOp>(b.clone(*op, map));
        Operation *result = copies[index];
        if (biasAdd)
          result = b.clone(*biasAdd, map);
        scf::YieldOp::create(b, l, result->getResults());
      };
    };
    auto branch = scf::IfOp::create(rewriter, loc, few, copy(0), copy(1));
    rewriter.replaceOp(last, branch.getResults());
    if (biasAdd)
      rewriter.eraseOp(op);
    return {copies[0], copies[1]};
  }

  /// Columns per sequential n block around the parallel m blocks, or 0 for
  /// none. Every m block reads all of B; once B is larger than what stays
  /// in the last-level cache between two m blocks, each of them streams it
  /// from memory again. In n blocks of at most cache-n columns (0: the
  /// columns of which K rows take up to kNBlockBytes), every m block of an
  /// n block reads the same part of B, which the threads share in L3, and
  /// only A (kept in L2 per m block, cache-m rows) is read once per n
  /// block. x[1, 1024, 2048] @ W[2048, 5632] on 2 threads (Zen 5): 77-89
  /// ms in one block, 61 ms in 11 blocks of 512 columns (4 MiB of B each),
  /// 66 ms in 22 of 256, 68-71 ms in 4 of 1408. For a weight shared by all
  /// m blocks (as pack-b-once), at least two m blocks (or a dynamic M;
  /// static shapes with fewer than split-n-items split N instead, and are
  /// not asked). As few blocks as fit, each of ceil(tiles / blocks)
  /// register tiles but the last, which takes the rest (N = 1570 tiles with
  /// 42 that fit: 38 blocks, 37 of 42 tiles and one of 16); none when
  /// cache-n is below register-n.
  int64_t blockColumns(linalg::LinalgOp op, ContractionDims dims) {
    static constexpr int64_t kNBlockBytes = 4 << 20;
    if (!isSharedWeight(op, dims))
      return 0;
    std::optional<int64_t> mBlocks = staticMBlocks(op, dims);
    if (mBlocks && *mBlocks < 2)
      return 0;
    // K from B's type, static by isSharedWeight (the loop range may come
    // from a dynamic A).
    int64_t k = cast<ShapedType>(op.getDpsInputs()[1].getType()).getDimSize(0);
    int64_t panels = op.getStaticLoopRanges()[dims.n] / rn;
    if (k < 1)
      return 0;
    int64_t fit = cacheN > 0 ? int64_t(cacheN) / rn
                             : kNBlockBytes / (k * rn * int64_t(sizeof(float)));
    if (fit < 1 || panels <= fit)
      return 0;
    // As few blocks as fit, of ceil(tiles / blocks) tiles: the last one
    // may be narrower (a dynamic width, as split-n's last chunk).
    int64_t blocks = llvm::divideCeil(panels, fit);
    return llvm::divideCeil(panels, blocks) * rn;
  }

  /// Rows per m block: cache-m, or all of a static M of up to two blocks
  /// when the batch dims are a multiple of 4. Every m block reads all of B,
  /// so cutting 65-128 rows (a batch of 128-token sequences) into two
  /// blocks reads each weight twice per sequence. The batch dims then give
  /// the work items, and as a multiple of 4 they divide evenly over 1, 2
  /// or 4 threads (5 items on 2 threads would leave one thread 3, 20% more
  /// than half; smaller batches keep their 64-row blocks). On the AVX2
  /// host (2 threads, median of per-round ratios, 10-14 rounds, new against
  /// old code) the blocks at B = 4, T = 128 with constant weights took
  /// 0.97x-1.02x (d_model = 1600, full; two runs), 0.95x (causal) and
  /// 0.97x (d_model = 768, full) the time; with the weights as arguments,
  /// where the 4 blocks then copy panels per n tile instead of packing
  /// first, 0.89x (d_model = 1600) and 0.98x (768).
  int64_t blockRows(linalg::LinalgOp op, ContractionDims dims) {
    int64_t m = op.getStaticLoopRanges()[dims.m];
    std::optional<int64_t> batch = staticBatch(op, dims);
    if (ShapedType::isDynamic(m) || m <= cacheM || m > 2 * cacheM || !batch ||
        *batch % 4)
      return cacheM;
    return m;
  }

  /// The product of the other parallel (batch) dims, or nullopt when one
  /// of them is dynamic.
  std::optional<int64_t> staticBatch(linalg::LinalgOp op,
                                     ContractionDims dims) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    int64_t batch = 1;
    for (unsigned d = 0; d < ranges.size(); ++d) {
      if (d == unsigned(dims.m) || d == unsigned(dims.n) ||
          d == unsigned(dims.k))
        continue;
      if (ShapedType::isDynamic(ranges[d]))
        return std::nullopt;
      batch *= ranges[d];
    }
    return batch;
  }

  /// The work items of the m-block tiling, m blocks of blockRows rows times
  /// the other parallel (batch) dims, for static shapes.
  std::optional<int64_t> staticMBlocks(linalg::LinalgOp op,
                                       ContractionDims dims) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return std::nullopt;
    return llvm::divideCeil(ranges[dims.m], blockRows(op, dims)) *
           *staticBatch(op, dims);
  }

  /// Where the tiled contraction's columns start in the original's: the
  /// offset along n of its C slice (0 when n was not tiled).
  Value offsetAlongN(RewriterBase &rewriter, linalg::LinalgOp tiled,
                     ContractionDims dims) {
    Location loc = tiled.getLoc();
    rewriter.setInsertionPoint(tiled);
    AffineMap cMap = tiled.getIndexingMapsArray()[2];
    if (auto slice =
            tiled.getDpsInits()[0].getDefiningOp<tensor::ExtractSliceOp>())
      for (unsigned r = 0; r < cMap.getNumResults(); ++r)
        if (auto d = dyn_cast<AffineDimExpr>(cMap.getResult(r));
            d && d.getPosition() == unsigned(dims.n))
          return getValueOrCreateConstantIndexOp(rewriter, loc,
                                                 slice.getMixedOffsets()[r]);
    return arith::ConstantIndexOp::create(rewriter, loc, 0);
  }

  /// B is a static [K, N] indexed by k and n only: a weight that every m
  /// block and batch shares. A static M below register-m (a decode step's
  /// few rows, which read B about once anyway) is not worth a packed copy.
  bool isSharedWeight(linalg::LinalgOp op, ContractionDims dims) {
    AffineMap bMap = op.getIndexingMapsArray()[1];
    // (Both results are dims: matchCandidate checked the last two.)
    if (bMap.getNumResults() != 2 ||
        cast<AffineDimExpr>(bMap.getResult(0)).getPosition() !=
            unsigned(dims.k) ||
        cast<AffineDimExpr>(bMap.getResult(1)).getPosition() !=
            unsigned(dims.n) ||
        !cast<ShapedType>(op.getDpsInputs()[1].getType()).hasStaticShape())
      return false;
    int64_t m = op.getStaticLoopRanges()[dims.m];
    return ShapedType::isDynamic(m) || m >= registerM;
  }

  /// Whether packing all of a shared weight at run time, before the m
  /// blocks, beats the per-panel copy: static shapes and at least
  /// pack-b-once-blocks m blocks. The per-panel copies read B once per m
  /// block, spread over the threads; packing first reads it once, writes
  /// it and reads it back. On the AVX2 host, x[M, 768] @ W[768, 768] on
  /// two threads was faster with per-panel copies at 2 and 4 blocks of 64
  /// rows (M = 128, 256) and faster packed at 8 and 16.
  bool packingPaysAtRunTime(linalg::LinalgOp op, ContractionDims dims) {
    std::optional<int64_t> blocks = staticMBlocks(op, dims);
    return blocks && *blocks >= packBOnceBlocks;
  }

  /// A constant B (an ONNX initializer, say) packed at compile time into
  /// prepackB's layout, as a new constant; or null when B is not an f32
  /// constant whose values are at hand. This costs nothing per call, so it
  /// is done whatever the number of m blocks. B may be a static slice of
  /// such a constant (a part of a contraction split along n).
  Value packConstantB(RewriterBase &rewriter, Location loc, Value b) {
    // Once per weight and width, at the start of the function: both
    // copies of branchOnRows read it.
    Value &packedValue = packedConstants[{b, rn}];
    if (!packedValue) {
      OpBuilder::InsertionGuard guard(rewriter);
      Operation *parent = rewriter.getInsertionBlock()->getParentOp();
      auto function = dyn_cast<FunctionOpInterface>(parent);
      if (!function)
        function = parent->getParentOfType<FunctionOpInterface>();
      if (function)
        rewriter.setInsertionPointToStart(&function.getFunctionBody().front());
      packedValue = packConstant(rewriter, loc, b);
    }
    return packedValue;
  }

  Value packConstant(RewriterBase &rewriter, Location loc, Value b) {
    auto bType = cast<RankedTensorType>(b.getType());
    int64_t kSize = bType.getDimSize(0), nSize = bType.getDimSize(1);
    int64_t panels = nSize / rn;
    // (Widths split off a ragged N reach here as whole panels.)
    if (nSize % rn != 0)
      return Value();
    auto packedType =
        RankedTensorType::get({panels, kSize, rn}, rewriter.getF32Type());
    // Packed straight into the memory of a blob: a weight of hundreds of
    // megabytes (GPT-2's vocabulary head) is not held twice more while it
    // is packed.
    size_t count = kSize * nSize;
    AsmResourceBlob blob = allocatePackedBlob(count * sizeof(float));
    auto *packed = reinterpret_cast<float *>(blob.getMutableData().data());
    auto attr = constantRows(b, [&](int64_t k, const char *row) {
      for (int64_t panel = 0; panel < panels; ++panel)
        std::memcpy(&packed[(panel * kSize + k) * rn],
                    row + panel * rn * sizeof(float), rn * sizeof(float));
    });
    if (!attr)
      return Value();
    // The packed constant keeps the kind of the original: a resource blob
    // (how the ONNX importer holds initializers) or inline dense values.
    TypedAttr packedAttr;
    if (isa<DenseF32ResourceElementsAttr>(*attr))
      packedAttr = DenseResourceElementsAttr::get(packedType, "packed_weight",
                                                  std::move(blob));
    else
      packedAttr =
          DenseElementsAttr::get(packedType, ArrayRef<float>(packed, count));
    return arith::ConstantOp::create(rewriter, loc, packedAttr);
  }

  /// A static M below register-m by a constant 2-D B: dot products
  /// (transposeForDotProducts), whatever N.
  bool fewRowsOfConstant(linalg::LinalgOp op, ContractionDims dims) {
    int64_t m = op.getStaticLoopRanges()[dims.m];
    Value b = op.getDpsInputs()[1];
    auto bType = cast<RankedTensorType>(b.getType());
    return !ShapedType::isDynamic(m) && m < registerM && bType.getRank() == 2 &&
           bType.hasStaticShape() && isConstantRows(b);
  }

  /// Whether `b` is a constant whose values constantRows reaches (a
  /// constant, or static unit-stride slices of one), without reading them.
  bool isConstantRows(Value b) {
    Value source = b;
    while (auto slice = source.getDefiningOp<tensor::ExtractSliceOp>()) {
      if (!slice.hasUnitStride() ||
          ShapedType::isDynamicShape(slice.getStaticOffsets()))
        return false;
      source = slice.getSource();
    }
    return matchPattern(source, m_Constant());
  }

  /// Calls `each(k, row)` for every row of the 2-D f32 `b`, with `row`
  /// pointing to the bytes of its N contiguous values: `b` is a constant,
  /// or a static unit-stride slice of one. Returns the constant's
  /// attribute, or nullopt (and no call) when the values are not at hand.
  /// (Whole rows, copied with memcpy: per element, packing GPT-2's weights
  /// took 1.4 s. Bytes, because a blob that views an ONNX file in place
  /// has the alignment of the weight's offset there.)
  std::optional<ElementsAttr>
  constantRows(Value b, function_ref<void(int64_t, const char *)> each) {
    int64_t row0 = 0, col0 = 0;
    Value source = b;
    // (A slice of a slice: the parts split off a split part.)
    while (auto slice = source.getDefiningOp<tensor::ExtractSliceOp>()) {
      if (!slice.hasUnitStride() || slice.getSourceType().getRank() != 2 ||
          slice.getType().getRank() != 2 ||
          ShapedType::isDynamicShape(slice.getStaticOffsets()))
        return std::nullopt;
      row0 += slice.getStaticOffsets()[0];
      col0 += slice.getStaticOffsets()[1];
      source = slice.getSource();
    }
    ElementsAttr attr;
    if (!matchPattern(source, m_Constant(&attr)))
      return std::nullopt;
    auto bType = cast<RankedTensorType>(b.getType());
    auto sourceType = cast<RankedTensorType>(source.getType());
    if (!bType.hasStaticShape() || !sourceType.hasStaticShape() ||
        !sourceType.getElementType().isF32())
      return std::nullopt;
    int64_t kSize = bType.getDimSize(0), nSize = bType.getDimSize(1);
    int64_t columns = sourceType.getDimSize(1);
    const char *data = nullptr;
    std::vector<float> splatRow;
    if (auto resource = dyn_cast<DenseF32ResourceElementsAttr>(attr)) {
      AsmResourceBlob *blob = resource.getRawHandle().getBlob();
      if (!blob || int64_t(blob->getData().size()) !=
                       sourceType.getNumElements() * int64_t(sizeof(float)))
        return std::nullopt;
      data = blob->getData().data();
    } else if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
      if (dense.isSplat()) {
        // Every row the same: one row of the value, at offset 0.
        splatRow.assign(nSize, dense.getSplatValue<float>());
        for (int64_t k = 0; k < kSize; ++k)
          each(k, reinterpret_cast<const char *>(splatRow.data()));
        return attr;
      }
      ArrayRef<char> raw = dense.getRawData();
      if (int64_t(raw.size()) !=
          sourceType.getNumElements() * int64_t(sizeof(float)))
        return std::nullopt;
      data = raw.data();
    } else {
      return std::nullopt;
    }
    for (int64_t k = 0; k < kSize; ++k)
      each(k, data + ((k + row0) * columns + col0) * sizeof(float));
    return attr;
  }

  /// Packs B[K, N] into tensor<N / register-n x K x register-n>: each
  /// register-n column panel becomes K consecutive rows of register-n
  /// floats, and a k block's panel is one contiguous range of it. The copy
  /// is an scf.forall over groups of B's rows, so both threads pack, and
  /// each group reads whole rows of B in order (the hardware prefetchers
  /// follow it; a panel's column slice, one cache line every N floats,
  /// crosses a page every row or two and is not prefetched).
  Value prepackB(RewriterBase &rewriter, Location loc, Value b) {
    auto bType = cast<RankedTensorType>(b.getType());
    int64_t kSize = bType.getDimSize(0), nSize = bType.getDimSize(1);
    int64_t panels = nSize / rn;
    // Rows per task: a divisor of K, so that every slice is static.
    int64_t group = 16;
    while (kSize % group != 0)
      group /= 2;
    auto f32 = rewriter.getF32Type();
    auto rowType = VectorType::get({rn}, f32);
    Value packedInit = tensor::EmptyOp::create(
        rewriter, loc, ArrayRef<int64_t>{panels, kSize, rn}, f32);
    auto forall = scf::ForallOp::create(
        rewriter, loc,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(kSize / group)},
        ValueRange{packedInit}, std::nullopt);
    rewriter.setInsertionPointToStart(forall.getBody());
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value nr = arith::ConstantIndexOp::create(rewriter, loc, rn);
    Value pad =
        arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0));
    Value k0 = arith::MulIOp::create(
        rewriter, loc, forall.getInductionVars()[0],
        arith::ConstantIndexOp::create(rewriter, loc, group));
    SmallVector<OpFoldResult> offsets{rewriter.getIndexAttr(0), k0,
                                      rewriter.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes{rewriter.getIndexAttr(panels),
                                    rewriter.getIndexAttr(group),
                                    rewriter.getIndexAttr(rn)};
    SmallVector<OpFoldResult> strides(3, rewriter.getIndexAttr(1));
    Value tile = tensor::ExtractSliceOp::create(
        rewriter, loc, forall.getRegionIterArgs()[0], offsets, sizes, strides);
    auto rowLoop =
        scf::ForOp::create(rewriter, loc, zero,
                           arith::ConstantIndexOp::create(rewriter, loc, group),
                           one, ValueRange{tile});
    rewriter.setInsertionPointToStart(rowLoop.getBody());
    Value r = rowLoop.getInductionVar();
    Value k = arith::AddIOp::create(rewriter, loc, k0, r);
    auto panelLoop = scf::ForOp::create(
        rewriter, loc, zero,
        arith::ConstantIndexOp::create(rewriter, loc, panels), one,
        ValueRange{rowLoop.getRegionIterArgs()[0]});
    rewriter.setInsertionPointToStart(panelLoop.getBody());
    Value p = panelLoop.getInductionVar();
    Value n = arith::MulIOp::create(rewriter, loc, p, nr);
    Value row = vector::TransferReadOp::create(
        rewriter, loc, rowType, b, ValueRange{k, n}, pad, ArrayRef<bool>{true});
    Value written = vector::TransferWriteOp::create(
                        rewriter, loc, row, panelLoop.getRegionIterArgs()[0],
                        ValueRange{p, r, zero}, ArrayRef<bool>{true})
                        .getResult();
    scf::YieldOp::create(rewriter, loc, written);
    rewriter.setInsertionPointAfter(panelLoop);
    scf::YieldOp::create(rewriter, loc, panelLoop.getResult(0));
    rewriter.setInsertionPointToStart(forall.getTerminator().getBody());
    tensor::ParallelInsertSliceOp::create(rewriter, loc, rowLoop.getResult(0),
                                          forall.getRegionIterArgs()[0],
                                          offsets, sizes, strides);
    rewriter.setInsertionPointAfter(forall);
    return forall.getResult(0);
  }

  /// Replaces the k-block contraction `op` (other parallel dims of extent
  /// 1) by: for n tiles, for full m tiles: C rows in `registerM` vector
  /// registers of `rn` lanes, for k: one B row load and, per row, one
  /// broadcast of A and one FMA. The rows past the last full m tile follow
  /// as tiles of 4, 2 and 1 rows.
  ///
  /// With `isFirstK` (the contraction's init was a zero fill), the first k
  /// block starts from zeros, or from `bias` along n, instead of reading C.
  /// With `prepacked` (prepackB's result), the register tiles read B's
  /// panel rows there, from row `kOffset` (the k block's start) on. `op`'s
  /// columns start at `nOffset` of the original's (the bias's and the
  /// prepacked panels').
  void emitRegisterTiles(RewriterBase &rewriter, linalg::LinalgOp op,
                         ContractionDims dims, Value isFirstK, Value bias,
                         Value prepacked, Value kOffset, Value nOffset,
                         int64_t kBlock) {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
    Value c = op.getDpsInits()[0];
    auto sizeOf = [&](Value t, AffineMap map, int64_t dim) -> Value {
      for (unsigned r = 0; r < map.getNumResults(); ++r)
        if (auto d = dyn_cast<AffineDimExpr>(map.getResult(r));
            d && d.getPosition() == dim)
          return rewriter.createOrFold<tensor::DimOp>(loc, t, r);
      return Value();
    };
    Value mSize = sizeOf(c, maps[2], dims.m);
    Value nSize = sizeOf(c, maps[2], dims.n);
    Value kSize = sizeOf(a, maps[0], dims.k);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
    Value mr = arith::ConstantIndexOp::create(rewriter, loc, registerM);
    Value nr = arith::ConstantIndexOp::create(rewriter, loc, rn);
    Value mFull = arith::SubIOp::create(
        rewriter, loc, mSize, arith::RemUIOp::create(rewriter, loc, mSize, mr));
    // The bias of op's columns.
    if (bias)
      bias = tensor::ExtractSliceOp::create(
          rewriter, loc, bias,
          ArrayRef<OpFoldResult>{getAsOpFoldResult(nOffset)},
          ArrayRef<OpFoldResult>{getAsOpFoldResult(nSize)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
    auto f32 = rewriter.getF32Type();
    auto rowType = VectorType::get({rn}, f32);
    Value pad =
        arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0));
    // Indices of operand `map` at loop values (m, n, k); other dims are 0.
    auto indices = [&](AffineMap map, Value m, Value n, Value k) {
      SmallVector<Value> idx;
      for (AffineExpr e : map.getResults()) {
        auto dimExpr = dyn_cast<AffineDimExpr>(e);
        int64_t d = dimExpr ? int64_t(dimExpr.getPosition()) : -1;
        idx.push_back(d == dims.m   ? m
                      : d == dims.n ? n
                      : d == dims.k ? k
                                    : zero);
      }
      return idx;
    };
    // The B micro-panel (k block x register-n columns) is copied to a
    // contiguous buffer before the m tiles read it. In place its rows are N
    // floats apart: at N = 768 (3 KiB, 48 cache lines) all 256 rows of the
    // panel fall into 4 of L1's 64 sets, and every k step of every m tile
    // misses; packed, the panel is 256 consecutive rows in L1. One buffer
    // serves every n tile (an iteration value of the n loop).
    bool packPanel = packB && !prepacked;
    Value packInit, packRows;
    if (packPanel) {
      packInit = tensor::EmptyOp::create(rewriter, loc,
                                         ArrayRef<int64_t>{kBlock, rn}, f32);
      // The tiles that read the copy have at least min(register-m, 2)
      // rows; a block of fewer (a decode step's row) reads B once anyway,
      // and copying the panel would double the pass over W.
      Value readers = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::uge, mSize,
          arith::ConstantIndexOp::create(rewriter, loc,
                                         std::min<int64_t>(registerM, 2)));
      packRows = arith::SelectOp::create(rewriter, loc, readers, kSize, zero);
    }
    SmallVector<Value> nInit{c};
    if (packPanel)
      nInit.push_back(packInit);
    auto nLoop = scf::ForOp::create(rewriter, loc, zero, nSize, nr, nInit);
    rewriter.setInsertionPointToStart(nLoop.getBody());
    Value n0 = nLoop.getInductionVar();
    Value panel =
        prepacked ? arith::DivUIOp::create(
                        rewriter, loc,
                        arith::AddIOp::create(rewriter, loc, nOffset, n0), nr)
                        .getResult()
                  : Value();
    Value packed;
    if (packPanel) {
      auto packLoop =
          scf::ForOp::create(rewriter, loc, zero, packRows, one,
                             ValueRange{nLoop.getRegionIterArgs()[1]});
      rewriter.setInsertionPointToStart(packLoop.getBody());
      Value kk = packLoop.getInductionVar();
      Value row = vector::TransferReadOp::create(rewriter, loc, rowType, b,
                                                 indices(maps[1], zero, n0, kk),
                                                 pad, ArrayRef<bool>{true});
      Value written = vector::TransferWriteOp::create(
                          rewriter, loc, row, packLoop.getRegionIterArgs()[0],
                          ValueRange{kk, zero}, ArrayRef<bool>{true})
                          .getResult();
      scf::YieldOp::create(rewriter, loc, written);
      rewriter.setInsertionPointAfter(packLoop);
      packed = packLoop.getResult(0);
    }
    // One loop of register tiles of `tileRows` rows over C's rows [lb, ub)
    // in steps of `tileRows`: C rows in vector registers of `rn`
    // lanes across the k loop, per k one B row load and, per row, one
    // broadcast of A and one FMA. `fromPanel` reads B's rows from the
    // packed panel (this n tile's copy, or the prepacked panels), else
    // from B itself.
    auto tileLoop = [&](int64_t tileRows, Value lb, Value ub, Value cIn,
                        bool fromPanel) -> Value {
      auto mLoop = scf::ForOp::create(
          rewriter, loc, lb, ub,
          arith::ConstantIndexOp::create(rewriter, loc, tileRows),
          ValueRange{cIn});
      rewriter.setInsertionPointToStart(mLoop.getBody());
      Value m0 = mLoop.getInductionVar();
      Value cTile = mLoop.getRegionIterArgs()[0];
      SmallVector<Value> rows, acc;
      for (int64_t i = 0; i < tileRows; ++i)
        rows.push_back(arith::AddIOp::create(
            rewriter, loc, m0,
            arith::ConstantIndexOp::create(rewriter, loc, i)));
      auto readC = [&]() {
        SmallVector<Value> tile;
        for (int64_t i = 0; i < tileRows; ++i)
          tile.push_back(vector::TransferReadOp::create(
              rewriter, loc, rowType, cTile,
              indices(maps[2], rows[i], n0, zero), pad, ArrayRef<bool>{true}));
        return tile;
      };
      if (!isFirstK) {
        acc = readC();
      } else {
        SmallVector<Type> types(tileRows, rowType);
        auto ifOp = scf::IfOp::create(rewriter, loc, types, isFirstK,
                                      /*withElseRegion=*/true);
        rewriter.setInsertionPointToStart(ifOp.thenBlock());
        Value start =
            bias ? vector::TransferReadOp::create(rewriter, loc, rowType, bias,
                                                  ValueRange{n0}, pad,
                                                  ArrayRef<bool>{true})
                       .getResult()
                 : arith::ConstantOp::create(
                       rewriter, loc, DenseElementsAttr::get(rowType, 0.0f))
                       .getResult();
        scf::YieldOp::create(rewriter, loc,
                             SmallVector<Value>(tileRows, start));
        rewriter.setInsertionPointToStart(ifOp.elseBlock());
        scf::YieldOp::create(rewriter, loc, readC());
        rewriter.setInsertionPointAfter(ifOp);
        acc.assign(ifOp.getResults().begin(), ifOp.getResults().end());
      }
      auto kLoop = scf::ForOp::create(rewriter, loc, zero, kSize, one, acc);
      rewriter.setInsertionPointToStart(kLoop.getBody());
      Value kk = kLoop.getInductionVar();
      Value bRow;
      if (fromPanel && prepacked) {
        Value k = arith::AddIOp::create(rewriter, loc, kOffset, kk);
        bRow = vector::TransferReadOp::create(rewriter, loc, rowType, prepacked,
                                              ValueRange{panel, k, zero}, pad,
                                              ArrayRef<bool>{true});
      } else if (fromPanel && packPanel) {
        bRow = vector::TransferReadOp::create(rewriter, loc, rowType, packed,
                                              ValueRange{kk, zero}, pad,
                                              ArrayRef<bool>{true});
      } else {
        bRow = vector::TransferReadOp::create(rewriter, loc, rowType, b,
                                              indices(maps[1], zero, n0, kk),
                                              pad, ArrayRef<bool>{true});
      }
      SmallVector<Value> next;
      for (int64_t i = 0; i < tileRows; ++i) {
        Value aElem = tensor::ExtractOp::create(
            rewriter, loc, a, indices(maps[0], rows[i], n0, kk));
        Value aRow = vector::BroadcastOp::create(rewriter, loc, rowType, aElem);
        next.push_back(vector::FMAOp::create(rewriter, loc, aRow, bRow,
                                             kLoop.getRegionIterArgs()[i]));
      }
      scf::YieldOp::create(rewriter, loc, next);
      rewriter.setInsertionPointAfter(kLoop);
      Value updated = cTile;
      for (int64_t i = 0; i < tileRows; ++i)
        updated = vector::TransferWriteOp::create(
                      rewriter, loc, kLoop.getResult(i), updated,
                      indices(maps[2], rows[i], n0, zero), ArrayRef<bool>{true})
                      .getResult();
      scf::YieldOp::create(rewriter, loc, updated);
      rewriter.setInsertionPointAfter(mLoop);
      return mLoop.getResult(0);
    };
    // Full tiles, then the rows past the last one (fewer than register-m)
    // in tiles of 4, 2 and 1 rows (each at most once up to register-m =
    // 8): vector code all of it. A 6-row tile in 64-row blocks leaves 4
    // rows per block, which a 4-row tile takes at nearly full speed (in
    // a 128-row block, 2 rows: a 2-row tile, at about half of it);
    // one-row tiles run at a quarter of it (two FMA chains of 4 cycles'
    // latency). The full tiles and the rest tiles of two or more rows read
    // the panel copy (made when the block has min(register-m, 2) rows or
    // more) or the prepacked panels; a single rest row reads B itself
    // unless prepacked, so a packed constant weight is the only copy of it
    // the module keeps.
    Value cRows = tileLoop(registerM, zero, mFull, nLoop.getRegionIterArgs()[0],
                           /*fromPanel=*/true);
    Value lb = mFull;
    for (int64_t h : {int64_t(4), int64_t(2), int64_t(1)}) {
      if (h >= registerM)
        continue;
      // [lb, M - (M - lb) % h): whole tiles of h rows (M itself for h = 1,
      // once folded).
      Value left = arith::SubIOp::create(rewriter, loc, mSize, lb);
      Value ub = arith::SubIOp::create(
          rewriter, loc, mSize,
          arith::RemUIOp::create(
              rewriter, loc, left,
              arith::ConstantIndexOp::create(rewriter, loc, h)));
      cRows = tileLoop(h, lb, ub, cRows,
                       /*fromPanel=*/h > 1 || bool(prepacked));
      lb = ub;
    }
    SmallVector<Value> nYield{cRows};
    if (packPanel)
      nYield.push_back(packed);
    scf::YieldOp::create(rewriter, loc, nYield);
    rewriter.setInsertionPointAfter(nLoop);
    rewriter.replaceOp(op, nLoop.getResult(0));
  }

  /// A contraction that reads A as [..., k, m] or B as [..., n, k] (ONNX
  /// Gemm's transA / transB, a MatMul of a transposed operand, an einsum
  /// such as "mk,nk->mn") gets that operand transposed once into the
  /// layout the register tiles read: a constant at compile time, into a
  /// new constant; anything else by a linalg.transpose before the
  /// contraction (M K or K N moves for 2 M N K FLOPs). Left as it was, the
  /// op missed the register tiles: Gemm 1024x768x768 took 13.4 ms with
  /// transB (5.5 ms without) and 1.17 s with transA, on 2 threads.
  void untransposeOperands() {
    struct Found {
      linalg::LinalgOp op;
      TransposedOperands transposed;
      ContractionDims dims;
    };
    SmallVector<Found> found;
    getOperation().walk([&](linalg::LinalgOp op) {
      TransposedOperands transposed;
      std::optional<ContractionDims> dims = matchContraction(op, &transposed);
      if (!dims || !(transposed.a || transposed.b))
        return;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      // Only widths the register tiles then take, whole or split.
      int64_t n = ranges[dims->n];
      if (ShapedType::isDynamic(n) || (n % registerN != 0 && n < 8) ||
          llvm::is_contained(ranges, 0))
        return;
      // B read as [n, k] by few rows: the generic lowering's dot products
      // along k read each row of B once, contiguously, and beat the
      // register tiles below register-m rows (a decode step; Gemm transB
      // by a constant [1, 768] x [3072, 768]^T: 0.08 ms in place, 0.39 ms
      // through the tiles), and below minRowsToTranspose rows when B must
      // be transposed on every call (Gemm transB by an input [M, 768] x
      // [3072, 768]^T: 0.08, 0.40, 0.89, 1.75, 3.44 ms in place at M = 1,
      // 7, 16, 32, 64; 0.96, 6.6, 1.9, 2.6, 4.1 ms transposed first;
      // 1024 x 768 x 768: 13.4 ms in place, 6.0 ms transposed).
      int64_t m = ranges[dims->m];
      if (transposed.b && !ShapedType::isDynamic(m) &&
          m < minRowsForTransposedB(op))
        return;
      found.push_back({op, transposed, *dims});
    });
    IRRewriter rewriter(&getContext());
    for (Found &f : found) {
      linalg::GenericOp generic = asGeneric(rewriter, f.op);
      if (!generic)
        continue;
      // A B that is transposed at run time, for a number of rows known only
      // then: transposed from minRowsForTransposedB rows on, else read in
      // place as above (an scf.if on M, each branch a copy of the op).
      Value b = generic.getDpsInputs()[1];
      if (f.transposed.b &&
          ShapedType::isDynamic(generic.getStaticLoopRanges()[f.dims.m]) &&
          !isConstantRows(b)) {
        rewriter.setInsertionPoint(generic);
        Location loc = generic.getLoc();
        Value rows = rowCount(rewriter, generic, f.dims);
        Value enough = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::sge, rows,
            arith::ConstantIndexOp::create(rewriter, loc,
                                           minRowsForTransposedB(generic)));
        linalg::GenericOp tiled;
        auto branch = scf::IfOp::create(
            rewriter, loc, enough,
            [&](OpBuilder &nb, Location l) {
              tiled = cast<linalg::GenericOp>(nb.clone(*generic));
              scf::YieldOp::create(nb, l, tiled->getResults());
            },
            [&](OpBuilder &nb, Location l) {
              scf::YieldOp::create(nb, l, nb.clone(*generic)->getResults());
            });
        rewriter.replaceOp(generic, branch.getResults());
        generic = tiled;
      }
      untranspose(rewriter, generic, f.transposed);
    }
  }

  /// Contractions the register tiles are not built for, given B as [n, k]
  /// for the generic lowering's dot products along contiguous k, each row
  /// of B read once, in parallel over the rows and columns:
  /// - a constant 2-D B (or a static slice of one) read by fewer rows than
  ///   a register tile (a decode step, static M), transposed at compile
  ///   time: the tiles run one thread down 32-column strips there. x[1, 1,
  ///   768] @ W[768, 3072]: 0.39 ms through them, 0.09 ms as dot products
  ///   (ONNX Runtime: 0.07 ms);
  /// - fewer than 8 columns (static N: a classifier head, the last columns
  ///   split off a ragged N), any B, transposed at compile time or by a
  ///   linalg.transpose of its K x N elements: the scalar loops read C on
  ///   every multiply-add. x[4096, 768] @ W[768, 7] took 8.8 ms (ONNX
  ///   Runtime: 0.46 ms).
  void transposeForDotProducts() {
    SmallVector<std::pair<linalg::LinalgOp, ContractionDims>> found;
    getOperation().walk([&](linalg::LinalgOp op) {
      std::optional<ContractionDims> dims = matchContraction(op);
      if (!dims)
        return;
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      if (llvm::is_contained(ranges, 0))
        return;
      int64_t n = ranges[dims->n];
      bool narrow = !ShapedType::isDynamic(n) && n < 8;
      if (fewRowsOfConstant(op, *dims) || narrow)
        found.emplace_back(op, *dims);
    });
    IRRewriter rewriter(&getContext());
    for (auto [op, dims] : found) {
      linalg::GenericOp generic = asGeneric(rewriter, op);
      if (!generic)
        continue;
      TransposedOperands b;
      b.b = true;
      untranspose(rewriter, generic, b);
    }
  }

  /// The rows from which a B read as [n, k] is transposed for the register
  /// tiles: register-m for a constant (transposed at compile time); for one
  /// transposed on every call, whose N x K moves the dot products in place
  /// avoid, 128 while an [n, k] matrix of B stays in the last-level cache
  /// (up to 16 MiB, half of the hosts' 32 MiB: read from memory once by the
  /// dot products of all rows; [M, 768] x [3072, 768]^T, 9 MiB, at M = 64:
  /// 3.4 ms in place, 4.1 ms transposed first),
  /// else register-m (every row's dot products stream it from memory:
  /// [M, 4096] x [4096, 4096]^T at M = 64 took 119 ms in place, 22.6 ms
  /// transposed first).
  int64_t minRowsForTransposedB(linalg::LinalgOp op) {
    static constexpr int64_t kRowsToTransposeAtRunTime = 128;
    static constexpr int64_t kCachedBytes = 16 << 20;
    Value b = op.getDpsInputs()[1];
    if (isConstantRows(b))
      return registerM;
    auto bType = cast<RankedTensorType>(b.getType());
    int64_t rank = bType.getRank();
    int64_t n = bType.getDimSize(rank - 2), k = bType.getDimSize(rank - 1);
    bool cached = !ShapedType::isDynamic(n) && !ShapedType::isDynamic(k) &&
                  n * k * int64_t(sizeof(float)) <= kCachedBytes;
    return cached ? kRowsToTransposeAtRunTime : int64_t(registerM);
  }

  /// The number of rows (M) of contraction `op`, from the size of the C
  /// dim that m indexes.
  Value rowCount(RewriterBase &rewriter, linalg::LinalgOp op,
                 ContractionDims dims) {
    // (From A, which m indexes too: C's init may be a zero fill that the
    // register tiles replace, and should not stay live for its size.)
    AffineMap aMap = op.getIndexingMapsArray()[0];
    unsigned position =
        *aMap.getResultPosition(rewriter.getAffineDimExpr(unsigned(dims.m)));
    return tensor::DimOp::create(rewriter, op.getLoc(), op.getDpsInputs()[0],
                                 position);
  }

  /// `op` as a linalg.generic (a named op generalized in its place), or
  /// null when it has no generic form.
  linalg::GenericOp asGeneric(RewriterBase &rewriter, linalg::LinalgOp op) {
    if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
      return generic;
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, op);
    return succeeded(g) ? *g : linalg::GenericOp();
  }

  /// `generic`'s transposed operands transposed before it, and its maps
  /// swapped to read them.
  void untranspose(RewriterBase &rewriter, linalg::GenericOp generic,
                   TransposedOperands transposed) {
    rewriter.setInsertionPoint(generic);
    SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
    for (unsigned i : {0u, 1u}) {
      if (!(i == 0 ? transposed.a : transposed.b))
        continue;
      OpOperand &operand = generic->getOpOperand(i);
      Value swapped =
          transposeLastTwo(rewriter, generic.getLoc(), operand.get());
      SmallVector<AffineExpr> results(maps[i].getResults());
      std::swap(results[results.size() - 1], results[results.size() - 2]);
      maps[i] = AffineMap::get(maps[i].getNumDims(), 0, results,
                               rewriter.getContext());
      rewriter.modifyOpInPlace(generic, [&] { operand.set(swapped); });
    }
    rewriter.modifyOpInPlace(generic, [&] {
      generic.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
  }

  /// `x` with its last two dims swapped: a new constant when `x` is a 2-D
  /// constant whose values are at hand (constantRows), else a
  /// linalg.transpose.
  Value transposeLastTwo(RewriterBase &rewriter, Location loc, Value x) {
    auto type = cast<RankedTensorType>(x.getType());
    int64_t rank = type.getRank();
    if (rank == 2 && type.hasStaticShape() && isConstantRows(x)) {
      int64_t rows = type.getDimSize(0), columns = type.getDimSize(1);
      AsmResourceBlob blob = allocatePackedBlob(rows * columns * sizeof(float));
      auto *out = reinterpret_cast<float *>(blob.getMutableData().data());
      // (Rows as bytes: see constantRows.)
      auto attr = constantRows(x, [&](int64_t r, const char *row) {
        for (int64_t c = 0; c < columns; ++c)
          std::memcpy(&out[c * rows + r], row + c * sizeof(float),
                      sizeof(float));
      });
      if (attr) {
        auto swappedType =
            RankedTensorType::get({columns, rows}, type.getElementType());
        TypedAttr swappedAttr;
        if (isa<DenseF32ResourceElementsAttr>(*attr))
          swappedAttr = DenseResourceElementsAttr::get(
              swappedType, "transposed_weight", std::move(blob));
        else
          swappedAttr = DenseElementsAttr::get(
              swappedType, ArrayRef<float>(out, rows * columns));
        return arith::ConstantOp::create(rewriter, loc, swappedAttr);
      }
    }
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(rewriter, loc, x);
    std::swap(sizes[rank - 1], sizes[rank - 2]);
    Value init =
        tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
    SmallVector<int64_t> permutation =
        llvm::to_vector(llvm::seq<int64_t>(0, rank));
    std::swap(permutation[rank - 1], permutation[rank - 2]);
    return linalg::TransposeOp::create(rewriter, loc, x, init, permutation)
        ->getResult(0);
  }

  /// The register-n of the candidate being emitted: the option's, or for
  /// a split tail its own narrower width.
  int64_t rn = 0;
  /// Tails split off by splitRaggedN -> their register-n.
  llvm::DenseMap<Operation *, int64_t> tailWidth;

  /// A static N that is not a multiple of register-n (a vocabulary head's
  /// 50257 columns) is split along n: the columns that are (register-n
  /// tiles), then at most one part each of register-n / 2, / 4, ... down
  /// to 8 columns (register tiles of that width), and the last columns
  /// (fewer than 8) as a linalg op of their own (dot products:
  /// transposeForDotProducts). Without the split all N columns ran as scalar
  /// loops: the GPT-2 head x[1024, 768] @ W[768, 50257] took 19.6 s on two
  /// cores. A zero-fill init gives every part a zero fill of its own slice of
  /// C, which the register tiles then start from in registers, writing the
  /// slice in place; the slices are of the fill's empty tensor: the parts write
  /// every element, so C is not filled first.
  void splitRaggedN() {
    MLIRContext *ctx = &getContext();
    SmallVector<std::pair<linalg::LinalgOp, ContractionDims>> ragged;
    getOperation().walk([&](linalg::LinalgOp op) {
      std::optional<ContractionDims> dims = matchContraction(op);
      if (!dims)
        return;
      // (Not those read as dot products in any case.)
      int64_t n = op.getStaticLoopRanges()[dims->n];
      if (!ShapedType::isDynamic(n) && n >= 8 && n % registerN != 0 &&
          !llvm::is_contained(op.getStaticLoopRanges(), 0) &&
          !fewRowsOfConstant(op, *dims))
        ragged.emplace_back(op, *dims);
    });
    IRRewriter rewriter(ctx);
    for (auto &candidate : ragged) {
      linalg::LinalgOp op = candidate.first;
      ContractionDims dims = candidate.second;
      int64_t n = op.getStaticLoopRanges()[dims.n];
      // Part widths and their register-n (0: the last columns, dot products).
      SmallVector<std::pair<int64_t, int64_t>> widths;
      int64_t left = n;
      if (left >= registerN)
        widths.emplace_back(left - left % registerN, int64_t(registerN));
      left %= registerN;
      for (int64_t w = registerN / 2; w >= 8; w /= 2)
        if (left >= w) {
          widths.emplace_back(w, w);
          left -= w;
        }
      if (left)
        widths.emplace_back(left, 0);
      // With a zero fill, the parts slice (and are inserted into) the
      // fill's empty tensor, and each fills its own slice below.
      linalg::FillOp zeroFill = matchInitFusion(op).zeroFill;
      if (zeroFill)
        rewriter.modifyOpInPlace(op, [&] {
          op.getDpsInitsMutable()[0].set(zeroFill.getOutputs()[0]);
        });
      SmallVector<std::pair<Operation *, int64_t>> parts;
      TilingInterface rest = cast<TilingInterface>(op.getOperation());
      for (auto [w, r] : ArrayRef(widths).drop_back()) {
        rewriter.setInsertionPoint(rest);
        auto [first, second] =
            linalg::splitOp(rewriter, rest, dims.n, rewriter.getIndexAttr(w));
        if (!first || !second)
          return signalPassFailure();
        parts.emplace_back(first, r);
        rest = second;
      }
      parts.emplace_back(rest, widths.back().second);
      // The last part's few columns of a constant B become a constant of
      // their own, so that the whole constant is not kept for them once the
      // other parts have packed their slices.
      if (!widths.back().second) {
        auto last = cast<linalg::LinalgOp>(rest.getOperation());
        Value b = last.getDpsInputs()[1];
        auto bType = cast<RankedTensorType>(b.getType());
        if (bType.getRank() == 2 && bType.hasStaticShape()) {
          std::vector<float> values(bType.getNumElements());
          int64_t columns = bType.getDimSize(1);
          if (auto attr = constantRows(b, [&](int64_t k, const char *row) {
                std::memcpy(&values[k * columns], row, columns * sizeof(float));
              })) {
            rewriter.setInsertionPoint(last);
            Value small = arith::ConstantOp::create(
                rewriter, last.getLoc(),
                DenseElementsAttr::get(bType, ArrayRef<float>(values)));
            rewriter.modifyOpInPlace(
                last, [&] { last.getDpsInputOperand(1)->set(small); });
          }
        }
      }
      for (auto [part, r] : parts) {
        if (r)
          tailWidth[part] = r;
        if (!zeroFill)
          continue;
        auto partOp = cast<linalg::LinalgOp>(part);
        rewriter.setInsertionPoint(part);
        Value fill =
            linalg::FillOp::create(rewriter, part->getLoc(),
                                   zeroFill.getInputs(), partOp.getDpsInits())
                .getResult(0);
        rewriter.modifyOpInPlace(
            part, [&] { partOp.getDpsInitsMutable()[0].set(fill); });
      }
    }
  }

  void cleanUp() {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns, ctx);
    vector::TransferWriteOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::populateFoldTensorSubsetIntoVectorTransferPatterns(patterns);
    scf::ForOp::getCanonicalizationPatterns(patterns, ctx);
    affine::AffineMinOp::getCanonicalizationPatterns(patterns, ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace mlir::attn
