//===- VectorizeRowReductions.cpp - attn-vectorize-row-reductions ---------===//
//
// Row sums (ReduceSum/ReduceMean over the last axis; LayerNorm's mean and
// variance, imported or written out by torch) are linalg.generic ops whose
// innermost dim is the reduction. Lowered as loops, each row is one chain
// of dependent scalar additions through memory: LLVM may not reorder float
// additions, so it vectorizes nothing, and every element waits for the
// previous one's addition (4 cycles). On GPT-2's [1024, 768] rows a
// LayerNorm's two reductions took three times its two elementwise passes.
//
// This pass tiles each such op on buffers by 1 along its parallel dims (an
// scf.parallel over the rows, as attn-parallelize-outer-dims does for
// elementwise ops) and writes each row as vector code: the body (whatever
// elementwise arith/math computes the summand, e.g. (x - mean)^2) on
// vector<16xf32> loads, summed into four independent vector accumulators,
// then one 16-wide accumulator, a horizontal add, and a scalar tail for the
// last N mod 16 elements. The order of the additions changes (pairwise
// partial sums, usually closer to the exact sum than the sequential one).
// Row maxima and minima (a softmax's max when it is not fused) take the
// same form with their own combiner; their result does not depend on the
// order.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNVECTORIZEROWREDUCTIONSPASS
#include "attn/Passes.h.inc"

namespace {

/// Lanes per vector (one AVX-512 register, two AVX2 ones) and independent
/// accumulators in the main loop (enough to cover the addition's latency).
constexpr int64_t kLanes = 16;
constexpr int64_t kAccumulators = 4;

/// How an input is read along the row: a contiguous run (its last index is
/// the reduction dim) or one value for the whole row (no reduction dim).
enum class InputKind { Run, PerRow };

/// What the rewrite needs from a matching op.
struct RowReduction {
  SmallVector<InputKind> inputs;
  Value summand;       // what the body combines into the output argument
  Operation *combiner; // out + summand, max(out, summand), ...
  vector::CombiningKind kind;
  float identity; // of the combiner: -0.0 for sums, -inf for max, NaN for
                  // maxnumf and minnumf, ...
};

/// The combiners whose order does not matter to the result (up to float
/// rounding for the sum): their vector.reduction kind and identity.
std::optional<std::pair<vector::CombiningKind, float>>
combinerKind(Operation *op) {
  float inf = std::numeric_limits<float>::infinity();
  // maxnumf and minnumf pass over NaN, so NaN is their identity; an
  // infinity is not (minnumf(+inf, NaN) is +inf): a row of NaN alone
  // reduced from a NaN start would come out an infinity instead of NaN.
  // Under nnan (the combiner's flags go with it) a NaN operand is poison,
  // and there are no NaN rows: the infinity then.
  bool noNaN = false;
  if (auto fm = dyn_cast<arith::ArithFastMathInterface>(op))
    noNaN = arith::bitEnumContainsAll(fm.getFastMathFlagsAttr().getValue(),
                                      arith::FastMathFlags::nnan);
  float nan = std::numeric_limits<float>::quiet_NaN();
  // -0.0: x + -0.0 is x for every x, -0.0 included.
  if (isa<arith::AddFOp>(op))
    return std::make_pair(vector::CombiningKind::ADD, -0.0f);
  if (isa<arith::MaximumFOp>(op))
    return std::make_pair(vector::CombiningKind::MAXIMUMF, -inf);
  if (isa<arith::MaxNumFOp>(op))
    return std::make_pair(vector::CombiningKind::MAXNUMF, noNaN ? -inf : nan);
  if (isa<arith::MinimumFOp>(op))
    return std::make_pair(vector::CombiningKind::MINIMUMF, inf);
  if (isa<arith::MinNumFOp>(op))
    return std::make_pair(vector::CombiningKind::MINNUMF, noNaN ? inf : nan);
  return std::nullopt;
}

/// The buffer `v` is a view of (through subviews, casts, ...).
Value rootBuffer(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

bool lastStrideIsOne(Value memref) {
  auto type = cast<MemRefType>(memref.getType());
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(type.getStridesAndOffset(strides, offset)) &&
         strides.back() == 1;
}

/// An op whose scalar form can be applied lane by lane to vectors.
bool isLanewise(Operation *op) {
  return op->hasTrait<OpTrait::Elementwise>() &&
         op->hasTrait<OpTrait::Vectorizable>() && op->getNumRegions() == 0 &&
         llvm::all_of(op->getOperandTypes(),
                      [](Type t) { return t.isIntOrIndexOrFloat(); }) &&
         llvm::all_of(op->getResultTypes(),
                      [](Type t) { return t.isF32() || t.isInteger(1); });
}

std::optional<RowReduction> match(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumDpsInputs() < 1 || op.getNumLoops() < 1)
    return std::nullopt;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  unsigned last = iters.size() - 1;
  for (unsigned i = 0; i < last; ++i)
    if (iters[i] != utils::IteratorType::parallel)
      return std::nullopt;
  if (iters[last] != utils::IteratorType::reduction)
    return std::nullopt;
  // One output element per row: every parallel dim indexes the output (the
  // rows are then independent, and may run on different threads), the
  // reduction dim does not.
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap initMap = op.getMatchingIndexingMap(init);
  if (!cast<MemRefType>(init->get().getType()).getElementType().isF32() ||
      initMap.isFunctionOfDim(last))
    return std::nullopt;
  for (unsigned i = 0; i < last; ++i)
    if (!initMap.isFunctionOfDim(i))
      return std::nullopt;
  RowReduction r;
  Value outBuffer = rootBuffer(init->get());
  for (OpOperand *in : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(in->get().getType());
    if (!type || !type.getElementType().isIntOrIndexOrFloat())
      return std::nullopt;
    // The rewrite reads the inputs and the initial value up front: an
    // output that may alias an input (a view of the same buffer) would see
    // other values than the loops it replaces.
    if (rootBuffer(in->get()) == outBuffer)
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(in);
    if (!map.isFunctionOfDim(last)) {
      r.inputs.push_back(InputKind::PerRow);
      continue;
    }
    // The reduction dim as the last index, and only there: consecutive
    // elements of the row are consecutive in memory.
    auto lastExpr = dyn_cast<AffineDimExpr>(map.getResults().back());
    bool onlyLast = lastExpr && lastExpr.getPosition() == last;
    for (unsigned i = 0; onlyLast && i + 1 < map.getNumResults(); ++i)
      onlyLast = !map.getResult(i).isFunctionOfDim(last);
    if (!onlyLast || !lastStrideIsOne(in->get()) ||
        !type.getElementType().isF32())
      return std::nullopt;
    r.inputs.push_back(InputKind::Run);
  }
  if (!llvm::is_contained(r.inputs, InputKind::Run))
    return std::nullopt; // nothing gives the row's length
  // Body: lanewise ops, then combiner(out, summand) (either order),
  // yielded.
  Block *body = op.getBlock();
  BlockArgument out = body->getArguments().back();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Operation *combiner = yield.getOperand(0).getDefiningOp();
  if (!combiner || combiner->getBlock() != body || !out.hasOneUse() ||
      !combiner->getResult(0).hasOneUse() || combiner->getNumOperands() != 2)
    return std::nullopt;
  auto kind = combinerKind(combiner);
  if (!kind)
    return std::nullopt;
  r.combiner = combiner;
  std::tie(r.kind, r.identity) = *kind;
  if (combiner->getOperand(0) == out)
    r.summand = combiner->getOperand(1);
  else if (combiner->getOperand(1) == out)
    r.summand = combiner->getOperand(0);
  else
    return std::nullopt;
  // A summand from outside the body is one value for every element (the
  // default lowering handles that degenerate case).
  if (r.summand.getParentBlock() != body)
    return std::nullopt;
  for (Operation &inner : body->without_terminator()) {
    if (&inner == combiner)
      continue;
    bool scalarConstant = isa<arith::ConstantOp>(inner) &&
                          inner.getResult(0).getType().isIntOrIndexOrFloat();
    if (!scalarConstant && !isLanewise(&inner))
      return std::nullopt;
  }
  return r;
}

/// Writes the row of a tiled op (every parallel dim of size 1) as vector
/// code at the op, which it replaces.
class RowBuilder {
public:
  RowBuilder(OpBuilder &b, linalg::GenericOp op, const RowReduction &r)
      : b(b), loc(op.getLoc()), op(op), r(r),
        vecType(VectorType::get({kLanes}, b.getF32Type())) {}

  void build() {
    unsigned last = op.getNumLoops() - 1;
    Value zeroIdx = arith::ConstantIndexOp::create(b, loc, 0);
    // The row's length: the extent of the first contiguous input's last dim
    // (or any input's, for a row summand that only reads per-row values).
    Value n;
    for (OpOperand *in : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(in);
      for (unsigned i = 0; i < map.getNumResults() && !n; ++i)
        if (auto d = dyn_cast<AffineDimExpr>(map.getResult(i));
            d && d.getPosition() == last)
          n = memref::DimOp::create(b, loc, in->get(), i);
    }
    // Per-row values, loaded once.
    for (auto [i, in] : llvm::enumerate(op.getDpsInputOperands()))
      if (r.inputs[i] == InputKind::PerRow)
        perRow[i] = memref::LoadOp::create(b, loc, in->get(),
                                           indices(in, zeroIdx, /*j=*/nullptr));
    OpOperand *init = op.getDpsInitOperand(0);
    SmallVector<Value> outIdx = indices(init, zeroIdx, nullptr);
    Value start = memref::LoadOp::create(b, loc, init->get(), outIdx);

    Value lanes = arith::ConstantIndexOp::create(b, loc, kLanes);
    Value wide = arith::ConstantIndexOp::create(b, loc, kLanes * kAccumulators);
    auto roundDown = [&](Value v, Value m) {
      return arith::SubIOp::create(b, loc, v,
                                   arith::RemUIOp::create(b, loc, v, m));
    };
    Value nWide = roundDown(n, wide), nLanes = roundDown(n, lanes);
    Value identity = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vecType, b.getF32FloatAttr(r.identity)));

    // kAccumulators independent partial results over 64 elements a step.
    SmallVector<Value> accs(kAccumulators, identity);
    auto wideLoop = scf::ForOp::create(
        b, loc, zeroIdx, nWide, wide, accs,
        [&](OpBuilder &lb, Location, Value j, ValueRange iter) {
          SmallVector<Value> next;
          for (int64_t a = 0; a < kAccumulators; ++a) {
            Value at = arith::AddIOp::create(
                lb, loc, j,
                arith::ConstantIndexOp::create(lb, loc, a * kLanes));
            next.push_back(combine(lb, iter[a], summand(lb, zeroIdx, at)));
          }
          scf::YieldOp::create(lb, loc, next);
        });
    Value acc = wideLoop.getResult(0);
    for (int64_t a = 1; a < kAccumulators; ++a)
      acc = combine(b, acc, wideLoop.getResult(a));
    // Then 16 at a time.
    auto laneLoop = scf::ForOp::create(
        b, loc, nWide, nLanes, lanes, ValueRange{acc},
        [&](OpBuilder &lb, Location, Value j, ValueRange iter) {
          scf::YieldOp::create(
              lb, loc,
              ValueRange{combine(lb, iter[0], summand(lb, zeroIdx, j))});
        });
    Value sum =
        vector::ReductionOp::create(b, loc, r.kind, laneLoop.getResult(0));
    Value total = combine(b, start, sum);
    // The scalar tail: the original body, element by element.
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto tail = scf::ForOp::create(
        b, loc, nLanes, n, one, ValueRange{total},
        [&](OpBuilder &lb, Location, Value j, ValueRange iter) {
          IRMapping map;
          for (auto [i, in] : llvm::enumerate(op.getDpsInputOperands()))
            map.map(op.getBlock()->getArgument(i),
                    r.inputs[i] == InputKind::PerRow
                        ? perRow[i]
                        : Value(memref::LoadOp::create(
                              lb, loc, in->get(), indices(in, zeroIdx, j))));
          for (Operation &inner : op.getBlock()->without_terminator())
            if (&inner != r.combiner)
              lb.clone(inner, map);
          scf::YieldOp::create(
              lb, loc, ValueRange{combine(lb, iter[0], map.lookup(r.summand))});
        });
    memref::StoreOp::create(b, loc, tail.getResult(0), init->get(), outIdx);
  }

private:
  /// The combiner of the body (with its fast-math flags) on `acc` and
  /// `x`, scalars or vectors.
  Value combine(OpBuilder &cb, Value acc, Value x) {
    OperationState state(loc, r.combiner->getName(), ValueRange{acc, x},
                         TypeRange{acc.getType()}, r.combiner->getAttrs());
    return cb.create(state)->getResult(0);
  }

  /// The indices of `operand` at position j of the row (j null: its
  /// indexing map does not involve the reduction dim). Every parallel dim
  /// of the tiled op has size 1, so it is index 0.
  SmallVector<Value> indices(OpOperand *operand, Value zero, Value j) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    unsigned last = op.getNumLoops() - 1;
    SmallVector<Value> idx;
    for (AffineExpr e : map.getResults()) {
      if (auto d = dyn_cast<AffineDimExpr>(e); d && d.getPosition() == last)
        idx.push_back(j);
      else if (auto c = dyn_cast<AffineConstantExpr>(e))
        idx.push_back(arith::ConstantIndexOp::create(b, loc, c.getValue()));
      else
        idx.push_back(zero); // a parallel dim (of size 1) or a map of them
    }
    return idx;
  }

  /// The body's summand on the 16 elements at j, as a vector.
  Value summand(OpBuilder &lb, Value zero, Value j) {
    IRMapping map;
    Block *body = op.getBlock();
    auto splat = [&](Value scalar) -> Value {
      return vector::BroadcastOp::create(
          lb, loc, VectorType::get({kLanes}, scalar.getType()), scalar);
    };
    for (auto [i, in] : llvm::enumerate(op.getDpsInputOperands()))
      map.map(body->getArgument(i),
              r.inputs[i] == InputKind::PerRow
                  ? splat(perRow[i])
                  : Value(vector::LoadOp::create(lb, loc, vecType, in->get(),
                                                 indices(in, zero, j))));
    for (Operation &inner : body->without_terminator()) {
      if (&inner == r.combiner)
        continue; // the accumulation itself
      if (auto c = dyn_cast<arith::ConstantOp>(inner)) {
        map.map(c.getResult(), splat(lb.clone(inner)->getResult(0)));
        continue;
      }
      SmallVector<Value> operands;
      for (Value v : inner.getOperands())
        operands.push_back(map.contains(v) ? map.lookup(v) : splat(v));
      SmallVector<Type> types;
      for (Type t : inner.getResultTypes())
        types.push_back(VectorType::get({kLanes}, t));
      OperationState state(loc, inner.getName(), operands, types,
                           inner.getAttrs());
      map.map(inner.getResults(), lb.create(state)->getResults());
    }
    return map.lookup(r.summand);
  }

  OpBuilder &b;
  Location loc;
  linalg::GenericOp op;
  const RowReduction &r;
  VectorType vecType;
  DenseMap<unsigned, Value> perRow;
};

struct AttnVectorizeRowReductionsPass
    : impl::AttnVectorizeRowReductionsPassBase<AttnVectorizeRowReductionsPass> {
  void runOnOperation() override {
    // Ops directly in a function, in branches there (the in-place branch
    // of attn-vectorize-contractions' choice on M), or in the body of an
    // scf.forall (an imported op's per-row work: TopK's block extremes),
    // where attn-serialize-nested-parallel-loops makes the row loop serial
    // (unless the forall has one item and folds away: then it runs on the
    // threads as at the top level). Those inside other loops are other
    // passes' concern.
    auto topLevel = [](Operation *op) {
      Operation *parent = op->getParentOp();
      while (isa<scf::IfOp, scf::ForallOp>(parent))
        parent = parent->getParentOp();
      return isa<func::FuncOp>(parent);
    };
    SmallVector<std::pair<linalg::GenericOp, RowReduction>> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (topLevel(op))
        if (std::optional<RowReduction> r = match(op))
          ops.emplace_back(op, std::move(*r));
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, r] : ops) {
      linalg::GenericOp row = op;
      if (op.getNumLoops() > 1) {
        // One tile per row: 1 along every parallel dim, the reduction whole.
        SmallVector<int64_t> sizes(op.getNumLoops(), 1);
        sizes.back() = 0;
        linalg::LinalgTilingOptions options;
        options.setTileSizes(sizes).setLoopType(
            linalg::LinalgTilingLoopType::ParallelLoops);
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::TiledLinalgOp> tiled =
            linalg::tileLinalgOp(rewriter, op, options);
        if (failed(tiled))
          continue;
        row = cast<linalg::GenericOp>(tiled->op.getOperation());
      }
      // The tile has the same body and its operands are subviews that keep
      // the row contiguous: it matches as the op did.
      std::optional<RowReduction> rowMatch = match(row);
      if (!rowMatch) {
        if (row != op)
          rewriter.eraseOp(row); // cannot happen; keep the op whole
        continue;
      }
      rewriter.setInsertionPoint(row);
      RowBuilder(rewriter, row, *rowMatch).build();
      rewriter.eraseOp(row);
      if (row != op)
        rewriter.eraseOp(op);
    }
  }
};

} // namespace
} // namespace mlir::attn
