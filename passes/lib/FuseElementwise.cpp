//===- FuseElementwise.cpp - attn-fuse-elementwise ------------------------===//
//
// An imported graph spells each elementwise step as its own op: the book's
// GELU, 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), is nine
// linalg.generic ops, each a pass over a [T, 4 d] tensor in memory. This
// pass fuses an all-parallel producer into an all-parallel consumer (a
// producer read by that consumer only, so no intermediate tensor remains),
// which leaves one pass over memory per chain. Reductions and contractions are
// never consumers: an elementwise op fused into a matmul's operand would turn
// it into out + f(a) * b, which attn-vectorize-contractions no longer
// recognises.
//
// Scalar constants of the graph (0.5, 0.044715, the exponent 3 of x^3)
// arrive as splat tensor operands; an all-parallel op reads them as
// arith.constant scalars in its body instead, so that later folds see
// them: math.powf(x, 3) becomes two multiplies only with a constant
// exponent.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNFUSEELEMENTWISEPASS
#include "attn/Passes.h.inc"

namespace {

bool allParallel(Operation *op) {
  auto linalgOp = dyn_cast_if_present<linalg::GenericOp>(op);
  return linalgOp && linalgOp.getNumLoops() == linalgOp.getNumParallelLoops();
}

/// Whether `fused` (an operand of its owner) may take its producer in: both
/// all-parallel, the producer read by this consumer only. The producer must
/// not read its own init: a bias add written into a
/// contraction's result (out_proj's, which attn-vectorize-contractions
/// folds into its registers) would otherwise become a second result of the
/// fused op and no longer be recognised.
bool fusable(OpOperand *fused) {
  auto producer = fused->get().getDefiningOp<linalg::GenericOp>();
  if (!producer || !allParallel(producer) || !allParallel(fused->getOwner()))
    return false;
  // Every use in this consumer: no intermediate tensor is left (a value
  // read twice is recomputed in registers, not stored).
  if (!llvm::all_of(producer->getUsers(),
                    [&](Operation *user) { return user == fused->getOwner(); }))
    return false;
  for (OpOperand &init : producer.getDpsInitsMutable())
    if (producer.payloadUsesValueFromOperand(&init))
      return false;
  return linalg::areElementwiseOpsFusable(fused);
}

/// Upstream's producer-consumer fusion of elementwise ops, alone: not the
/// other patterns of populateElementwiseOpsFusionPatterns, which ignore the
/// control function (folding a splat constant into a contraction's body,
/// say, which attn-vectorize-contractions would then not recognise).
struct FuseProducer : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    for (OpOperand &operand : consumer->getOpOperands()) {
      if (!fusable(&operand))
        continue;
      Operation *producer = operand.get().getDefiningOp();
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &use) {
          // (The producer's own results keep their other uses.)
          return use.get().getDefiningOp() != producer;
        });
      rewriter.eraseOp(consumer);
      return success();
    }
    return failure();
  }
};

/// An all-parallel op's splat constant inputs become scalar constants in
/// its body. Only when the inits' maps are permutations: they alone then
/// give every loop its size, so dropping an input changes no loop range.
struct FoldSplatInputs : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!allParallel(op) || !op.hasPureTensorSemantics() ||
        !llvm::all_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
          return op.getMatchingIndexingMap(&init).isPermutation();
        }))
      return failure();
    SmallVector<std::pair<unsigned, TypedAttr>> splats;
    for (OpOperand *in : op.getDpsInputOperands()) {
      DenseElementsAttr dense;
      if (matchPattern(in->get(), m_Constant(&dense)) && dense.isSplat() &&
          dense.getElementType().isIntOrFloat())
        splats.push_back({in->getOperandNumber(),
                          cast<TypedAttr>(dense.getSplatValue<Attribute>())});
    }
    if (splats.empty())
      return failure();
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (OpOperand *in : op.getDpsInputOperands())
      if (!llvm::is_contained(llvm::make_first_range(splats),
                              in->getOperandNumber())) {
        inputs.push_back(in->get());
        maps.push_back(op.getMatchingIndexingMap(in));
      }
    for (OpOperand &init : op.getDpsInitsMutable())
      maps.push_back(op.getMatchingIndexingMap(&init));
    auto folded = linalg::GenericOp::create(
        rewriter, op.getLoc(), op.getResultTypes(), inputs, op.getDpsInits(),
        maps, op.getIteratorTypesArray());
    rewriter.inlineRegionBefore(op.getRegion(), folded.getRegion(),
                                folded.getRegion().begin());
    Block &body = folded.getRegion().front();
    rewriter.setInsertionPointToStart(&body);
    // Block arguments are numbered as the operands; erase from the back.
    for (auto [number, value] : llvm::reverse(splats)) {
      BlockArgument arg = body.getArgument(number);
      rewriter.replaceAllUsesWith(
          arg, arith::ConstantOp::create(rewriter, op.getLoc(), value));
      body.eraseArgument(number);
    }
    rewriter.replaceOp(op, folded.getResults());
    return success();
  }
};

struct AttnFuseElementwisePass
    : impl::AttnFuseElementwisePassBase<AttnFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseProducer, FoldSplatInputs>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
} // namespace mlir::attn
