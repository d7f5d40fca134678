//===- ApproximateMath.cpp - attn-approximate-math ------------------------===//
//
// The softmax evaluates Tq x Tk exponentials; as libm calls they run one at
// a time. MLIR's polynomial approximation of exp is plain arithmetic that
// LLVM vectorizes like the rest of the loop body. erf (an imported exact
// GELU) has no LLVM lowering at all, so it is approximated in any case.
//
// Only ops on scalars and vectors are rewritten: upstream's patterns build
// their constants and compares for those, and on a whole tensor they made
// a compare of a tensor with a scalar. Tensor ops are left to
// convert-elementwise-to-linalg, which the CPU pipeline runs first, so that
// they reach this pass as scalars in a linalg.generic body.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNAPPROXIMATEMATHPASS
#include "attn/Passes.h.inc"

namespace {
struct AttnApproximateMathPass
    : impl::AttnApproximateMathPassBase<AttnApproximateMathPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // exp2(x) -> exp(x * ln 2), then exp -> polynomial (in f32).
    if (expAndTanh)
      math::populateExpansionPatterns(patterns, {"exp2", "math.exp2"});
    // exp (softmax), tanh (soft-capped scores, GELU's tanh form) and erf
    // (the exact GELU), which convert-math-to-llvm cannot lower at all.
    // expm1 in any case too: convert-math-to-llvm writes it as exp(x) - 1,
    // which cancels a small x away (a 1% error at 1e-5); upstream's form
    // is (u - 1) * x / log(u) with u = exp(x), accurate to a few ulp.
    bool approximateExpAndTanh = expAndTanh;
    auto selected = [approximateExpAndTanh](StringRef name) {
      if (name == "erf" || name == "math.erf" || name == "expm1" ||
          name == "math.expm1")
        return true;
      return approximateExpAndTanh && (name == "exp" || name == "math.exp" ||
                                       name == "tanh" || name == "math.tanh");
    };
    // powf by a constant 2, 3, 0.5, -1, ... (the book's GELU cubes x with
    // torch.pow, a libm call per element): multiplications, sqrt, division.
    populateMathAlgebraicSimplificationPatterns(patterns);
    populateMathF32ExpansionPatterns(patterns, selected);
    populateMathPolynomialApproximationPatterns(patterns, selected);
    SmallVector<Operation *> scalarAndVectorOps;
    getOperation()->walk([&](Operation *op) {
      auto isTensor = [](Type type) { return isa<TensorType>(type); };
      Dialect *dialect = op->getDialect(); // (null: an unregistered op)
      if (!dialect || !isa<arith::ArithDialect, math::MathDialect>(dialect) ||
          llvm::any_of(op->getOperandTypes(), isTensor) ||
          llvm::any_of(op->getResultTypes(), isTensor))
        return;
      scalarAndVectorOps.push_back(op);
    });
    // The ops the patterns create are scalars and vectors too.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    if (failed(applyOpPatternsGreedily(scalarAndVectorOps, std::move(patterns),
                                       config)))
      signalPassFailure();
  }
};
} // namespace
} // namespace mlir::attn
