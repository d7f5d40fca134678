//===- ReshapeReductions.cpp - attn-reshape-reductions --------------------===//
//
// attn-vectorize-row-reductions writes a reduction as vector code when its
// innermost dim is its only reduction dim: one row per index of the parallel
// dims, the rows spread over the threads. Two kinds of ONNX reductions
// missed that and ran as scalar loops, each output one chain of dependent
// additions (or maxima):
// - several trailing axes reduced (ReduceMax over axes [1, 2] of [B, T, C],
//   any reduction over all axes). The trailing reduction dims are collapsed
//   into one (linalg::collapseOpIterationDims): where every operand reads
//   them as contiguous trailing dims in order, this is a reshape of the
//   inputs, no copy for a contiguous buffer;
// - too few rows for the threads (a reduction over all axes has one). The
//   reduction dim is split into 16 rows of partial results and a final
//   reduction of the 16 (linalg::splitReduction): the rows run on every
//   thread, each as vector code. 16 divides the rows evenly over 1, 2, 4,
//   8 or 16 threads, and fixing the split at compile time keeps the result
//   the same whatever the number of threads.
// Both change only the order of the additions (partial sums, closer to the
// exact sum than the sequential chain: a ReduceL2 over [4, 512, 768] was
// 5e-4 off in f32 before). A third form, column sums (leading axes
// reduced), loops over blocks of columns so that the innermost loop runs
// along memory (reduceColumnsInBlocks).
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNRESHAPEREDUCTIONSPASS
#include "attn/Passes.h.inc"

namespace {

/// Partial rows of a split reduction, and the fewest rows (the product of
/// the parallel dims) that are left unsplit.
constexpr int64_t kSplitRows = 16;
constexpr int64_t kEnoughRows = 8;
/// The shortest reduction worth splitting: below this, a row's vector loop
/// is over before the threads would start.
constexpr int64_t kMinSplitLength = 16 * 1024;
/// Columns per block of a column reduction (four AVX-512 vectors).
constexpr int64_t kColumnBlock = 64;

/// A reduction on tensors with one result: its loops parallel, then
/// reductions only, every map a projected permutation (the init's may
/// also have 0 results: keepdims). Returns the number of trailing
/// reduction loops, or 0.
int64_t trailingReductions(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() < 1)
    return 0;
  for (OpOperand *in : op.getDpsInputOperands())
    if (!op.getMatchingIndexingMap(in).isProjectedPermutation())
      return 0;
  if (!op.getMatchingIndexingMap(op.getDpsInitOperand(0))
           .isProjectedPermutation(/*allowZeroInResults=*/true))
    return 0;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  int64_t n = iters.size(), r = 0;
  while (r < n && iters[n - 1 - r] == utils::IteratorType::reduction)
    ++r;
  for (int64_t i = 0; i < n - r; ++i)
    if (iters[i] != utils::IteratorType::parallel)
      return 0;
  return r;
}

/// `op` with the unit dims that its init indexes by 0 (ONNX's keepdims:
/// [B, 1, 1] for axes [1, 2]) collapsed away, the result expanded back
/// after it: both rewrites below want every init map result a loop dim.
/// Returns `op` itself, changed in place, or null when an init map result
/// is neither a dim nor 0.
linalg::GenericOp dropKeptUnitDims(RewriterBase &rewriter,
                                   linalg::GenericOp op) {
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap map = op.getMatchingIndexingMap(init);
  auto type = cast<RankedTensorType>(init->get().getType());
  SmallVector<AffineExpr> dims;
  SmallVector<ReassociationIndices> groups;
  for (unsigned i = 0; i < map.getNumResults(); ++i) {
    AffineExpr e = map.getResult(i);
    if (isa<AffineDimExpr>(e)) {
      dims.push_back(e);
      // (Unit dims before the first loop dim join its group.)
      if (groups.empty() || dims.size() > 1)
        groups.emplace_back();
      groups.back().push_back(i);
      continue;
    }
    auto zero = dyn_cast<AffineConstantExpr>(e);
    if (!zero || zero.getValue() != 0 || type.getDimSize(i) != 1)
      return nullptr;
    if (groups.empty())
      groups.emplace_back();
    groups.back().push_back(i);
  }
  if (dims.size() == map.getNumResults())
    return op;
  // All unit dims (a reduction over every axis): a rank-0 init.
  if (dims.empty())
    groups.clear();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value collapsed =
      tensor::CollapseShapeOp::create(rewriter, loc, init->get(), groups);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.back() = AffineMap::get(map.getNumDims(), 0, dims, op.getContext());
  Value result = op->getResult(0);
  rewriter.modifyOpInPlace(op, [&] {
    init->set(collapsed);
    op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    result.setType(collapsed.getType());
  });
  rewriter.setInsertionPointAfter(op);
  auto expanded =
      tensor::ExpandShapeOp::create(rewriter, loc, type, result, groups);
  rewriter.replaceAllUsesExcept(result, expanded, expanded);
  return op;
}

/// The trailing reduction loops of `op` as one, where every operand reads
/// them as its trailing dims in order; `op` itself otherwise.
linalg::GenericOp collapseReductions(RewriterBase &rewriter,
                                     linalg::GenericOp op) {
  int64_t r = trailingReductions(op);
  if (r < 2)
    return op;
  int64_t n = op.getNumLoops();
  ReassociationIndices group;
  for (int64_t d = n - r; d < n; ++d)
    group.push_back(d);
  // Each input reads the group as its last dims (a run of memory per row),
  // or not at all (one value per row, or a bias along the parallel dims).
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    if (!map.isFunctionOfDim(n - 1))
      continue;
    int64_t results = map.getNumResults();
    if (results < r)
      return op;
    for (int64_t i = 0; i < r; ++i) {
      auto dim = dyn_cast<AffineDimExpr>(map.getResult(results - r + i));
      if (!dim || dim.getPosition() != unsigned(n - r + i))
        return op;
    }
  }
  if (!linalg::areDimSequencesPreserved(
          ArrayRef(op.getIndexingMapsArray()).drop_back(), {group}) ||
      !dropKeptUnitDims(rewriter, op))
    return op;
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(op, {group}, rewriter);
  if (failed(collapsed))
    return op;
  rewriter.replaceOp(op, collapsed->results);
  return dyn_cast<linalg::GenericOp>(collapsed->collapsedOp.getOperation());
}

/// A column reduction: its one input reads the reduction loops as its
/// leading dims and the parallel loops as its trailing dims, each in loop
/// order (ReduceSum over axes [0, 1] of [B, T, C]); the init reads the
/// parallel loops in order (and keepdims' zeros). Static sizes, the columns
/// a multiple of 16, at least 32, and a body that does not read its
/// indices. As loops (columns outer, reduction inner) each column was one
/// scalar chain down a stride of C. Rewritten as out[nb, ni] += x[k, nb,
/// ni] over blocks of up to kColumnBlock columns, two blocks at least: the
/// blocks are the parallel loop, the reduction steps through the block's part
/// of each row in order, and the innermost loop runs along contiguous columns,
/// plain elementwise code that LLVM vectorizes. Each column sums in the same
/// order as before. Returns whether `op` was rewritten.
bool reduceColumnsInBlocks(RewriterBase &rewriter, linalg::GenericOp op) {
  int64_t r = trailingReductions(op), n = op.getNumLoops(), p = n - r;
  if (r < 1 || p < 1 || op.getNumDpsInputs() != 1 || op.hasIndexSemantics())
    return false;
  AffineMap in = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  if (in.getNumResults() != n)
    return false;
  for (int64_t i = 0; i < n; ++i) {
    auto dim = dyn_cast<AffineDimExpr>(in.getResult(i));
    if (!dim || dim.getPosition() != unsigned(i < r ? p + i : i - r))
      return false;
  }
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  int64_t next = 0;
  for (AffineExpr e : out.getResults())
    if (auto dim = dyn_cast<AffineDimExpr>(e);
        dim && dim.getPosition() != unsigned(next++))
      return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (next != p || llvm::any_of(ranges, ShapedType::isDynamic))
    return false;
  int64_t columns = 1, length = 1;
  for (int64_t d = 0; d < n; ++d)
    (d < p ? columns : length) *= ranges[d];
  // (At least two blocks: one would leave the threads nothing to share.)
  int64_t block = 0;
  for (int64_t b : {kColumnBlock, int64_t(32), int64_t(16)})
    if (!block && columns % b == 0 && columns / b >= 2)
      block = b;
  if (!block || columns < 32 || !dropKeptUnitDims(rewriter, op))
    return false;
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  rewriter.setInsertionPoint(op);
  Value x = op.getDpsInputs()[0], init = op.getDpsInits()[0];
  auto initType = cast<RankedTensorType>(init.getType());
  // x as [length, columns / block, block], the init as [columns / block,
  // block].
  SmallVector<ReassociationIndices> xGroups(2), initGroups(1);
  for (int64_t i = 0; i < n; ++i)
    xGroups[i < r ? 0 : 1].push_back(i);
  for (int64_t i = 0; i < p; ++i)
    initGroups[0].push_back(i);
  Value rows = tensor::ExpandShapeOp::create(
      rewriter, loc,
      RankedTensorType::get({length, columns / block, block},
                            cast<ShapedType>(x.getType()).getElementType()),
      tensor::CollapseShapeOp::create(rewriter, loc, x, xGroups),
      ArrayRef<ReassociationIndices>{{0}, {1, 2}});
  auto blocksType = RankedTensorType::get({columns / block, block},
                                          initType.getElementType());
  Value initBlocks = tensor::ExpandShapeOp::create(
      rewriter, loc, blocksType,
      tensor::CollapseShapeOp::create(rewriter, loc, init, initGroups),
      ArrayRef<ReassociationIndices>{{0, 1}});
  AffineExpr nb, k, ni;
  bindDims(ctx, nb, k, ni);
  auto blocked = linalg::GenericOp::create(
      rewriter, loc, TypeRange{blocksType}, ValueRange{rows},
      ValueRange{initBlocks},
      ArrayRef<AffineMap>{AffineMap::get(3, 0, {k, nb, ni}, ctx),
                          AffineMap::get(3, 0, {nb, ni}, ctx)},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel,
                                    utils::IteratorType::reduction,
                                    utils::IteratorType::parallel});
  rewriter.inlineRegionBefore(op.getRegion(), blocked.getRegion(),
                              blocked.getRegion().end());
  Value result = tensor::ExpandShapeOp::create(
      rewriter, loc, initType,
      tensor::CollapseShapeOp::create(rewriter, loc, blocked.getResult(0),
                                      ArrayRef<ReassociationIndices>{{0, 1}}),
      initGroups);
  rewriter.replaceOp(op, result);
  return true;
}

/// Splits the single, innermost reduction loop of `op` into kSplitRows
/// partial rows when its parallel loops make fewer than kEnoughRows rows
/// (static sizes, a length that kSplitRows divides, at least
/// kMinSplitLength) and its body does not read the loop indices.
void splitFewRows(RewriterBase &rewriter, linalg::GenericOp op) {
  // (Not a body that reads its indices, ArgMax's: after the split,
  // linalg.index of the reduction dim would count within a partial row.)
  if (trailingReductions(op) != 1 || op.hasIndexSemantics())
    return;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t length = ranges.back(), rows = 1;
  for (int64_t d = 0; d + 1 < int64_t(ranges.size()); ++d) {
    if (ShapedType::isDynamic(ranges[d]))
      return;
    rows *= ranges[d];
  }
  if (rows >= kEnoughRows || ShapedType::isDynamic(length) ||
      length < kMinSplitLength || length % kSplitRows != 0)
    return;
  if (!dropKeptUnitDims(rewriter, op))
    return;
  // The partial results' new dim after the output's dims: [..., 16].
  unsigned outputRank =
      cast<ShapedType>(op.getDpsInits()[0].getType()).getRank();
  rewriter.setInsertionPoint(op);
  // (Fails, leaving `op` as it is, on a combiner it has no identity for.)
  (void)linalg::splitReduction(rewriter, op, [&](linalg::LinalgOp) {
    return linalg::SplitReductionOptions{kSplitRows, outputRank,
                                         /*innerParallel=*/false};
  });
}

struct AttnReshapeReductionsPass
    : impl::AttnReshapeReductionsPassBase<AttnReshapeReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> reductions;
    getOperation().walk([&](linalg::GenericOp op) {
      if (trailingReductions(op) > 0)
        reductions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : reductions) {
      if (reduceColumnsInBlocks(rewriter, op))
        continue;
      if (linalg::GenericOp collapsed = collapseReductions(rewriter, op))
        splitFewRows(rewriter, collapsed);
    }
  }
};

} // namespace
} // namespace mlir::attn
