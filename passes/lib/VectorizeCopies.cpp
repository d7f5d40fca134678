//===- VectorizeCopies.cpp - attn-vectorize-copies ------------------------===//
//
// Bufferization writes every buffer copy as a `linalg.copy` (attn-bufferize):
// a KV cache's present = concat(past, new) becomes one copy per input into
// a subview of the result. convert-linalg-to-parallel-loops turns such a
// copy into one parallel loop over all of its dims, collapsed by OpenMP,
// which recomputes every index from the flat iteration number and moves one
// element at a time: GPT-2's decode step (12 heads x 1023 x 64 past keys
// and values) spent 1.7 ms copying 12.6 MB, 20x its attention.
//
// This pass rewrites a copy between strided memrefs by the runs the two
// share: the innermost dims that are contiguous in both (a size-1 dim is
// contiguous everywhere; an identity layout is contiguous throughout) form
// one run of N elements per index of the outer dims. Each run is copied
// as 64-byte vectors (vector.load/store on 1-D views of the buffers,
// memref.reinterpret_cast at the run's offset) and a scalar tail. At the
// top level of a function the runs are split into chunks of 32 Ki
// elements and the (outer index, chunk) pairs become an scf.forall, so
// that both threads copy even when there is a single run (a packed [B, T,
// H * d] cache); inside other loops the copy stays serial. Copies of i1 or
// of non-strided memrefs are left to the default lowering.
//
// A linalg.transpose that leaves its innermost dims in place (a head split
// or merge, [B, T, H, d] <-> [B, H, T, d]) is the same kind of copy: runs
// over those dims, each read at the permuted outer index. The default
// lowering moved it one scalar at a time (the four transposes around a
// Llama layer's rotary embedding held 10% of its perf samples).
//
// A linalg.transpose of 32-bit elements that moves the innermost dim (K^T;
// a transposed operand of a contraction, which attn-vectorize-contractions
// transposes once; channels-last to channels-first) is copied in 16 x 16
// blocks transposed in vector registers (TransposeBuilder).
//
//===----------------------------------------------------------------------===//

#include "RegisterTranspose.h"
#include "attn/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNVECTORIZECOPIESPASS
#include "attn/Passes.h.inc"

namespace {

/// Elements per scf.forall chunk of a top-level copy.
constexpr int64_t kChunk = 32 * 1024;
/// Bytes per vector of the copy loop (one AVX-512 register, two AVX2 ones).
constexpr int64_t kVectorBytes = 64;

/// The first dim of the contiguous row-major suffix of `type`: dims
/// [result, rank) are one run of elements in memory.
int64_t contiguousFrom(MemRefType type) {
  int64_t rank = type.getRank();
  if (type.getLayout().isIdentity())
    return 0;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)))
    return rank;
  int64_t expected = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    int64_t size = type.getDimSize(i);
    if (size == 1)
      continue;
    if (ShapedType::isDynamic(strides[i]) || strides[i] != expected)
      return i + 1;
    if (ShapedType::isDynamic(size))
      return i; // dim i is contiguous, but nothing outside it is known to be
    expected *= size;
  }
  return 0;
}

/// The first dim of the suffix that `perm` (dst dim i = src dim perm[i])
/// leaves in place; the rank for a permutation that moves the last dim.
int64_t fixedFrom(ArrayRef<int64_t> perm) {
  int64_t i = perm.size();
  while (i > 0 && perm[i - 1] == i - 1)
    --i;
  return i;
}

/// Serial loops over [0, sizes[d]) for every d, `body` called innermost
/// with the indices (directly for no sizes).
void serialLoops(OpBuilder &b, Location loc, ArrayRef<Value> sizes,
                 function_ref<void(ValueRange)> body,
                 SmallVector<Value> idx = {}) {
  if (idx.size() == sizes.size()) {
    body(idx);
    return;
  }
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto loop = scf::ForOp::create(b, loc, zero, sizes[idx.size()], one);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  idx.push_back(loop.getInductionVar());
  serialLoops(b, loc, sizes, body, idx);
}

/// The indices of the row-major flat index `flat` over `sizes`.
SmallVector<Value> unflatten(OpBuilder &b, Location loc, Value flat,
                             ArrayRef<Value> sizes) {
  SmallVector<Value> idx(sizes.size());
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    idx[i] = arith::RemUIOp::create(b, loc, flat, sizes[i]);
    flat = arith::DivUIOp::create(b, loc, flat, sizes[i]);
  }
  return idx;
}

class CopyBuilder {
public:
  /// Copies `src` to `dst`, dst dim i reading src dim perm[i] (all dims in
  /// place for an empty `perm`).
  CopyBuilder(OpBuilder &b, Location loc, Value src, Value dst,
              ArrayRef<int64_t> perm = {})
      : b(b), loc(loc), src(src), dst(dst),
        type(cast<MemRefType>(src.getType())), perm(perm) {
    if (perm.empty())
      this->perm = llvm::to_vector(llvm::seq<int64_t>(0, type.getRank()));
  }

  /// Replaces the copy at the builder's insertion point.
  void build(bool parallel) {
    int64_t rank = type.getRank();
    // Runs: the dims left in place that are contiguous in both.
    int64_t inner = std::max({contiguousFrom(type),
                              contiguousFrom(cast<MemRefType>(dst.getType())),
                              fixedFrom(perm)});
    auto srcMeta = memref::ExtractStridedMetadataOp::create(b, loc, src);
    auto dstMeta = memref::ExtractStridedMetadataOp::create(b, loc, dst);
    // Run length and outer sizes (the destination's: the loops index it).
    Value runLength = cIdx(1);
    for (int64_t i = inner; i < rank; ++i)
      runLength = mul(runLength, dstMeta.getSizes()[i]);
    SmallVector<Value> outerSizes(dstMeta.getSizes().begin(),
                                  dstMeta.getSizes().begin() + inner);
    auto runAt = [&](OpBuilder &nb, ValueRange outerIdx, Value lo, Value hi) {
      OpBuilder::InsertionGuard guard(b);
      b.restoreInsertionPoint(nb.saveInsertionPoint());
      SmallVector<Value> srcStrides;
      for (int64_t i = 0; i < inner; ++i)
        srcStrides.push_back(srcMeta.getStrides()[perm[i]]);
      Value from = view(srcMeta, srcStrides, outerIdx, runLength);
      Value to = view(dstMeta, dstMeta.getStrides(), outerIdx, runLength);
      copyRange(from, to, lo, hi);
    };
    if (!parallel) {
      serialLoops(b, loc, outerSizes, [&](ValueRange idx) {
        runAt(b, idx, cIdx(0), runLength);
      });
      return;
    }
    // (flat outer index, chunk of the run) pairs, in parallel.
    Value numOuter = cIdx(1);
    for (Value s : outerSizes)
      numOuter = mul(numOuter, s);
    Value chunk = cIdx(kChunk);
    Value numChunks = arith::CeilDivUIOp::create(b, loc, runLength, chunk);
    auto forall = scf::ForallOp::create(
        b, loc, ArrayRef<OpFoldResult>{numOuter, numChunks}, ValueRange{},
        std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    SmallVector<Value> idx =
        unflatten(b, loc, forall.getInductionVar(0), outerSizes);
    Value lo = mul(forall.getInductionVar(1), chunk);
    Value hi = arith::MinUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, lo, chunk), runLength);
    runAt(b, idx, lo, hi);
  }

private:
  Value cIdx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }

  /// The run at outer index `idx` (dim i of which steps by `strides[i]`)
  /// as a 1-D memref of `length` elements.
  Value view(memref::ExtractStridedMetadataOp meta, ValueRange strides,
             ValueRange idx, Value length) {
    Value offset = meta.getOffset();
    for (auto [i, v] : llvm::enumerate(idx))
      offset = arith::AddIOp::create(b, loc, offset, mul(v, strides[i]));
    auto flatType = MemRefType::get(
        {ShapedType::kDynamic}, type.getElementType(),
        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, {1}),
        type.getMemorySpace());
    return memref::ReinterpretCastOp::create(
        b, loc, flatType, meta.getBaseBuffer(), OpFoldResult(offset),
        ArrayRef<OpFoldResult>{length},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  }

  /// Copies elements [lo, hi) of `from` to `to`: whole vectors, then the
  /// remaining elements one by one.
  void copyRange(Value from, Value to, Value lo, Value hi) {
    Type elem = type.getElementType();
    int64_t lanes =
        std::max<int64_t>(1, kVectorBytes / (elem.getIntOrFloatBitWidth() / 8));
    Value step = cIdx(lanes);
    Value count = arith::SubIOp::create(b, loc, hi, lo);
    Value vecEnd = arith::AddIOp::create(
        b, loc, lo,
        mul(arith::DivUIOp::create(b, loc, count, step).getResult(), step));
    auto vecType = VectorType::get({lanes}, elem);
    auto vecLoop = scf::ForOp::create(b, loc, lo, vecEnd, step);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(vecLoop.getBody());
      Value i = vecLoop.getInductionVar();
      Value v = vector::LoadOp::create(b, loc, vecType, from, ValueRange{i});
      vector::StoreOp::create(b, loc, v, to, ValueRange{i});
    }
    auto tail = scf::ForOp::create(b, loc, vecEnd, hi, cIdx(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(tail.getBody());
    Value i = tail.getInductionVar();
    Value x = memref::LoadOp::create(b, loc, from, ValueRange{i});
    memref::StoreOp::create(b, loc, x, to, ValueRange{i});
  }

  OpBuilder &b;
  Location loc;
  Value src, dst;
  MemRefType type;
  SmallVector<int64_t> perm;
};

/// Lanes of the register blocks of a transposing copy (16 x 16 f32: 16 zmm,
/// or 32 ymm on AVX2, where LLVM splits them).
constexpr int64_t kBlock = 16;

/// A linalg.transpose of 32-bit elements that moves the innermost dim,
/// both innermost dims contiguous: K^T, a transposed weight, Gemm's
/// transA, channels-last to channels-first ([0, 3, 1, 2]), keys laid out
/// for Q K ([0, 2, 3, 1]). In the destination, dim `rowDim` reads the
/// source's innermost dim and the innermost dim reads source dim
/// perm[rank - 1]: for each index of the other dims, a 2-D transpose of
/// those two, copied in 16 x 16 blocks, 16 row loads from the source
/// (contiguous along its innermost dim), transposed in registers, 16 row
/// stores (contiguous along the destination's). The generic lowering moved
/// one scalar at a time, with the source read down a column (a 1024 x 768
/// f32 transpose: about 1.4 ms on two threads; [8, 64, 64, 128] by [0, 3,
/// 1, 2]: 3-4x ONNX Runtime's time). Rows and columns past the last whole
/// block are scalar loops. At the top level of a function the strips of
/// 16 destination rows (times the other dims) are an scf.forall.
class TransposeBuilder {
public:
  TransposeBuilder(OpBuilder &b, Location loc, Value src, Value dst,
                   ArrayRef<int64_t> perm)
      : b(b), loc(loc), src(src), dst(dst), perm(perm),
        rank(cast<MemRefType>(dst.getType()).getRank()),
        rowDim(llvm::find(perm, rank - 1) - perm.begin()) {}

  static bool takes(linalg::TransposeOp t) {
    ArrayRef<int64_t> perm = t.getPermutation();
    int64_t rank = perm.size();
    auto st = dyn_cast<MemRefType>(t.getInput().getType());
    auto dt = dyn_cast<MemRefType>(t.getInit().getType());
    if (!st || !dt || rank < 2 || perm[rank - 1] == rank - 1 ||
        !st.getElementType().isIntOrFloat() ||
        st.getElementType().getIntOrFloatBitWidth() != 32)
      return false;
    for (MemRefType mt : {st, dt}) {
      SmallVector<int64_t> strides;
      int64_t offset;
      if (failed(mt.getStridesAndOffset(strides, offset)) ||
          strides.back() != 1)
        return false;
    }
    return true;
  }

  void build(bool parallel) {
    Value rows = dimOf(dst, rowDim), cols = dimOf(dst, rank - 1);
    SmallVector<Value> outerSizes;
    for (int64_t d = 0; d + 1 < rank; ++d)
      if (d != rowDim)
        outerSizes.push_back(dimOf(dst, d));
    Value strips = arith::CeilDivUIOp::create(b, loc, rows, cIdx(kBlock));
    if (!parallel) {
      serialLoops(b, loc, outerSizes, [&](ValueRange outer) {
        auto loop = scf::ForOp::create(b, loc, cIdx(0), strips, cIdx(1));
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(loop.getBody());
        strip(outer, loop.getInductionVar(), rows, cols);
      });
      return;
    }
    Value numOuter = cIdx(1);
    for (Value s : outerSizes)
      numOuter = mul(numOuter, s);
    auto forall =
        scf::ForallOp::create(b, loc, ArrayRef<OpFoldResult>{numOuter, strips},
                              ValueRange{}, std::nullopt);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(forall.getBody());
    SmallVector<Value> outer =
        unflatten(b, loc, forall.getInductionVar(0), outerSizes);
    strip(outer, forall.getInductionVar(1), rows, cols);
  }

private:
  Value cIdx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value dimOf(Value m, int64_t d) {
    return memref::DimOp::create(b, loc, m, d);
  }

  /// Destination indices of element (outer, i, j): i along rowDim, j along
  /// the innermost dim, `outer` along the others in order.
  SmallVector<Value> dstAt(ValueRange outer, Value i, Value j) {
    SmallVector<Value> idx;
    auto next = outer.begin();
    for (int64_t d = 0; d + 1 < rank; ++d)
      idx.push_back(d == rowDim ? i : Value(*next++));
    idx.push_back(j);
    return idx;
  }
  /// Source indices of the same element: dst dim d reads src dim perm[d].
  SmallVector<Value> srcAt(ValueRange outer, Value i, Value j) {
    SmallVector<Value> at = dstAt(outer, i, j), idx(rank);
    for (int64_t d = 0; d < rank; ++d)
      idx[perm[d]] = at[d];
    return idx;
  }

  /// dst(outer, i, j) = src(outer, i, j) (each at its own indices, above)
  /// for i in [iLo, iHi), j in [jLo, jHi).
  void scalars(ValueRange outer, Value iLo, Value iHi, Value jLo, Value jHi) {
    auto iLoop = scf::ForOp::create(b, loc, iLo, iHi, cIdx(1));
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(iLoop.getBody());
    auto jLoop = scf::ForOp::create(b, loc, jLo, jHi, cIdx(1));
    b.setInsertionPointToStart(jLoop.getBody());
    Value i = iLoop.getInductionVar(), j = jLoop.getInductionVar();
    Value x = memref::LoadOp::create(b, loc, src, srcAt(outer, i, j));
    memref::StoreOp::create(b, loc, x, dst, dstAt(outer, i, j));
  }

  /// Destination rows [16 s, 16 s + 16) (fewer in the last strip).
  void strip(ValueRange outer, Value s, Value rows, Value cols) {
    Value i0 = mul(s, cIdx(kBlock));
    Value iEnd = add(i0, cIdx(kBlock));
    Value whole =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule, iEnd, rows);
    Value colBlocksEnd =
        mul(arith::DivUIOp::create(b, loc, cols, cIdx(kBlock)), cIdx(kBlock));
    auto ifOp = scf::IfOp::create(b, loc, whole, /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    {
      auto blocks =
          scf::ForOp::create(b, loc, cIdx(0), colBlocksEnd, cIdx(kBlock));
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(blocks.getBody());
      Value j0 = blocks.getInductionVar();
      auto rowType = VectorType::get(
          {kBlock}, cast<MemRefType>(src.getType()).getElementType());
      SmallVector<Value> block;
      // Source row j0 + t, elements i0 .. i0 + 15 along its innermost dim.
      for (int64_t t = 0; t < kBlock; ++t)
        block.push_back(vector::LoadOp::create(
            b, loc, rowType, src, srcAt(outer, i0, add(j0, cIdx(t)))));
      detail::transposeInRegisters(b, loc, block);
      for (int64_t t = 0; t < kBlock; ++t)
        vector::StoreOp::create(b, loc, block[t], dst,
                                dstAt(outer, add(i0, cIdx(t)), j0));
    }
    scalars(outer, i0, iEnd, colBlocksEnd, cols);
    b.setInsertionPointToStart(ifOp.elseBlock());
    scalars(outer, i0, rows, cIdx(0), cols);
  }

  OpBuilder &b;
  Location loc;
  Value src, dst;
  ArrayRef<int64_t> perm;
  int64_t rank;
  int64_t rowDim;
};

/// Whether a copy from `src` to `dst` is one this pass takes.
bool takes(Value src, Value dst) {
  auto st = dyn_cast<MemRefType>(src.getType());
  auto dt = dyn_cast<MemRefType>(dst.getType());
  if (!st || !dt || st.getRank() != dt.getRank() || st.getRank() == 0 ||
      st.getElementType() != dt.getElementType())
    return false;
  Type elem = st.getElementType();
  if (!elem.isIntOrFloat() || elem.getIntOrFloatBitWidth() % 8 ||
      elem.getIntOrFloatBitWidth() > 8 * kVectorBytes)
    return false;
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(st.getStridesAndOffset(strides, offset)) &&
         succeeded(dt.getStridesAndOffset(strides, offset));
}

struct AttnVectorizeCopiesPass
    : impl::AttnVectorizeCopiesPassBase<AttnVectorizeCopiesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    struct Copy {
      Operation *op;
      Value src, dst;
      ArrayRef<int64_t> perm;
    };
    SmallVector<Copy> copies;
    SmallVector<linalg::TransposeOp> swaps;
    fn.walk([&](Operation *op) {
      if (auto c = dyn_cast<linalg::CopyOp>(op);
          c && c.hasPureBufferSemantics())
        copies.push_back({op, c.getInputs()[0], c.getOutputs()[0], {}});
      else if (auto c = dyn_cast<memref::CopyOp>(op))
        copies.push_back({op, c.getSource(), c.getTarget(), {}});
      // A transpose that moves the innermost dim has no runs to copy: one
      // of 32-bit elements is copied in blocks.
      else if (auto t = dyn_cast<linalg::TransposeOp>(op);
               t && t.hasPureBufferSemantics()) {
        if (fixedFrom(t.getPermutation()) < int64_t(t.getPermutation().size()))
          copies.push_back({op, t.getInput(), t.getInit(), t.getPermutation()});
        else if (TransposeBuilder::takes(t))
          swaps.push_back(t);
      }
    });
    for (linalg::TransposeOp t : swaps) {
      OpBuilder b(t);
      bool topLevel = parallel && t->getParentOp() == fn.getOperation();
      TransposeBuilder(b, t.getLoc(), t.getInput(), t.getInit(),
                       t.getPermutation())
          .build(topLevel);
      t->erase();
    }
    for (Copy &c : copies) {
      if (!takes(c.src, c.dst))
        continue;
      OpBuilder b(c.op);
      bool topLevel = parallel && c.op->getParentOp() == fn.getOperation();
      CopyBuilder(b, c.op->getLoc(), c.src, c.dst, c.perm).build(topLevel);
      c.op->erase();
    }
  }
};

} // namespace
} // namespace mlir::attn
