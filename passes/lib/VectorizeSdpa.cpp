//===- VectorizeSdpa.cpp - attn-vectorize-sdpa ----------------------------===//
//
// attn.sdpa (f32, or bf16 with avx512_bf16 dot products or widened to f32;
// either with an explicit mask) -> a register-blocked flash-attention loop nest
// in vector IR for x86 CPUs (AVX-512 or AVX2).
//
// One work item (an scf.forall iteration) is (batch, head, block of Br query
// rows). The item transposes its Q block once, scaled, into Qt [d, Br]: with
// query rows along the vector lanes, every per-row quantity of the online
// softmax (running max m, sum l, rescale factor alpha) is a vector of Br/16
// registers, and the row reductions become vertical max/add across key rows;
// no horizontal reduction and no transposed K are ever needed.
//
// Per block of Bc keys (j0 .. j0+Bc):
//
//   St[j, :]  = sum_c K[j, c] * Qt[c, :]        register tile: R keys x Br
//                                              rows (broadcast K[j, c],
//                                              FMA with the Qt row)
//   mx        = max_j St[j, :]                 vertical, fused in the tile
//   m'        = max(m, mx);  alpha = exp(m - m')
//   St[j, :]  = exp(St[j, :] - m');  l = l * alpha + sum_j St[j, :]
//   O[i, :]   = O[i, :] * alpha[i] + sum_j St[j, i] * V[j, :]
//                                              register tile: rows x dv
//                                              columns (broadcast St[j, i],
//                                              FMA with the V row)
//
// and finally out[i, :] = O[i, :] / l[i] (0 where l = 0: a row that sees no
// key). Causal attention stops the key loop at the last key the block's
// last row sees, and a sliding window starts it at the first key its first
// row sees; the element predicate is evaluated only in blocks that cross
// the diagonal, a window edge or the end of K; a key row past the end of K
// is read clamped to the last row and masked. Soft-capped scores (c tanh(s
// / c), math.tanh approximated later) are capped before any mask. Dropout
// zeroes weights after the row sums took them, before P V: Philox-4x32-10
// on each weight's flat index in [B, Hq, Tq, Tk], 16 lanes at a time, the
// same numbers as attn-fuse-softmax and the plain lowering draw. Everything
// the item touches besides K and V (Qt, St, O: 64 KiB at Br = 64, Bc = 128, d =
// 64) is its own, so the pass needs no Tq x Tk buffer and no transpose of K or
// V.
//
// An explicit mask is applied to the score tiles before their max. A mask
// that is the same for every query row (key padding, [B, 1, 1, Tk]) is one
// scalar per key, broadcast over the rows' lanes. One that varies along the
// query rows is read transposed, so that the rows of a key lie along the
// lanes as they do in St: an f32 mask of its own per (batch, head) per key
// block into Mt [Bc, Br] (16 x 16 blocks transposed in registers, as Qt);
// one that several items share, and any i1 or bf16 one, once per call into
// MtAll [.., Tq / Br, Tk, Br] (f32 as f32, bf16 as its 16 bits, i1 as a
// byte, 1 where the key is hidden), where each item's panel is contiguous. A
// mask broadcast along the keys (one value per query row, [B, 1, Tq, 1]) is
// widened to f32 rows [B, 1, Tq] once per call and loaded as one vector per 16
// rows once per work item.
//
// exp(x) is taken as 2^(x log2(e)), the multiply fused with the
// subtraction of the max, and 2^x is emitted inline (exp2NonPositive), or
// as math.exp2 with polynomial-exp=false. bf16 (bf16-dot): V is packed once
// into key pairs, Q^T and P are stored in pairs, and both products are
// x86vector.avx512.dot (vdpbf16ps); softmax and accumulators stay f32.
// bf16 without dot products (bf16-widen), and f16 (f16-widen; no CPU the
// pipeline targets below AVX512-FP16 multiplies f16): the f32 loop nest,
// every operand load widened to f32 and the output rounded to 16 bits. An
// f16 additive mask is widened to f32 once per call.
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"
#include "RegisterTranspose.h"
#include "SdpaIndexing.h"
#include "attn/AttnOps.h"
#include "attn/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNVECTORIZESDPAPASS
#include "attn/Passes.h.inc"

namespace {

constexpr int64_t kLanes = 16; // f32 lanes of a 512-bit register
/// Static query lengths below this stay with attn-fuse-softmax.
constexpr int64_t kMinQueryRows = 8;
/// A key threshold no lane index reaches: "no lane sees this key".
constexpr int32_t kNoLane = 1 << 30;

/// Whether a bf16 `op` takes the vdpbf16ps dot products (head dim a
/// multiple of 32, the pairs along d) rather than being widened to f32.
bool usesBf16Dot(SdpaOp op, bool bf16Dot) {
  return bf16Dot && op.getQuery().getType().getElementType().isBF16() &&
         op.getQuery().getType().getShape().back() % (2 * kLanes) == 0;
}

/// Why `op` stays with attn-fuse-softmax, or "" if this pass takes it.
std::string unsupportedReason(SdpaOp op, bool bf16Dot, bool bf16Widen,
                              bool f16Widen) {
  auto qt = op.getQuery().getType(), kt = op.getKey().getType(),
       vt = op.getValue().getType();
  Type e = qt.getElementType();
  if (kt.getElementType() != e || vt.getElementType() != e ||
      op.getResult().getType().getElementType() != e)
    return "mixed element types";
  if (!e.isF32() && !(e.isBF16() && (bf16Dot || bf16Widen)) &&
      !(e.isF16() && f16Widen))
    return "element type is not f32 (or bf16 with bf16-dot or bf16-widen, "
           "f16 with f16-widen)";
  if (qt.getRank() < 2 || qt.getRank() > 4 || kt.getRank() != qt.getRank() ||
      vt.getRank() != qt.getRank())
    return "rank is not 2 to 4";
  if (qt.getRank() >= 3) {
    int64_t h = op.getHeadDimIndex();
    if (qt.isDynamicDim(h) || kt.isDynamicDim(h) || vt.isDynamicDim(h))
      return "dynamic head count";
  }
  // Decode steps: with fewer query rows than half the vector lanes, the
  // row-wise linalg form (one row, keys along the lanes) is faster.
  int64_t seqDim = detail::SdpaIndexing(op).seqDim();
  if (!qt.isDynamicDim(seqDim) && qt.getDimSize(seqDim) < kMinQueryRows)
    return "fewer than 8 query rows";
  int64_t d = qt.getShape().back(), dk = kt.getShape().back(),
          dv = vt.getShape().back();
  if (ShapedType::isDynamic(d) || ShapedType::isDynamic(dv) || d <= 0 ||
      dv <= 0 || d % kLanes || dv % kLanes ||
      (!ShapedType::isDynamic(dk) && dk != d))
    return "head dims are not static positive multiples of 16";
  // bf16 dot products take pairs along d.
  if (e.isBF16() && !bf16Widen && !usesBf16Dot(op, bf16Dot))
    return "bf16 head dim is not a multiple of 32";
  return "";
}

/// Builds the loop nest replacing one attn.sdpa.
class CpuFlashBuilder : detail::SdpaIndexing {
public:
  CpuFlashBuilder(OpBuilder &builder, SdpaOp op, int64_t blockQ,
                  int64_t blockKV, int64_t registerKeys, int64_t registerRows,
                  int64_t accumulators, bool polynomialExp, bool avx512Scalef,
                  bool bf16Dot, bool streamingStores, bool parallel,
                  int64_t maskCopyLimitMiB)
      : SdpaIndexing(op), b(builder), loc(op.getLoc()), op(op), br(blockQ),
        bc(blockKV), band(op), polynomialExp(polynomialExp),
        avx512Scalef(avx512Scalef), parallel(parallel),
        maskCopyLimitMiB(maskCopyLimitMiB) {
    // Streaming stores only for a result that leaves the function as it
    // is: a consumer in the module would read the lines back from memory.
    streamOut = streamingStores &&
                llvm::all_of(op.getResult().getUsers(), [](Operation *u) {
                  return isa<func::ReturnOp>(u);
                });
    auto qt = op.getQuery().getType();
    ioElem = qt.getElementType();
    bf16 = usesBf16Dot(op, bf16Dot);
    d = qt.getShape().back();
    dv = op.getValue().getType().getShape().back();
    // Short static query lengths (decode steps, small prompts): items of
    // Tq rows rounded up to the vector width instead of mostly empty
    // blocks, with proportionally more keys per score tile so that the
    // tile keeps its accumulators.
    int64_t tqStatic = qt.getDimSize(seqDim());
    if (!ShapedType::isDynamic(tqStatic) && tqStatic < br) {
      int64_t rows = std::max<int64_t>(
          kLanes, llvm::divideCeil(tqStatic, kLanes) * kLanes);
      registerKeys = registerKeys * br / rows;
      br = rows;
    }
    qVecs = br / kLanes;
    // Register tiles: at most `accumulators` vectors (24 leave room for
    // the operand row and the broadcasts among AVX-512's 32 registers).
    // A requested size that does not fit or does not divide the block
    // becomes the largest one that does (6 keys in 128-key blocks: 4).
    rKeys = registerKeys;
    while (rKeys > 1 && (rKeys * qVecs > accumulators || bc % rKeys))
      --rKeys;
    // bf16: keys go in pairs (dot products over two keys in P V).
    if (bf16) {
      bc += bc % 2;
      if (rKeys % 2)
        rKeys = rKeys == 1 ? 2 : rKeys - 1;
      while (rKeys > 2 && bc % rKeys)
        rKeys -= 2;
    }
    // O tile: each step loads vVecs vectors of a V row and broadcasts
    // rRows weights for rRows * vVecs FMAs. Take the shape with the fewest
    // loads per FMA (ties: the wider one): with few accumulators (AVX2)
    // 2 rows x 2 vectors rather than 1 x 4 halves the V traffic, which
    // then comes from L2 once V's block and the weights outgrow L1.
    double bestCost = 0;
    for (int64_t cols = std::min<int64_t>(8, dv / kLanes); cols >= 1; --cols) {
      if ((dv / kLanes) % cols || cols > accumulators)
        continue;
      int64_t rows = registerRows;
      while (rows > 1 && (rows * cols > accumulators || br % rows))
        --rows;
      double cost = double(rows + cols) / double(rows * cols);
      if (!vVecs || cost < bestCost) {
        vVecs = cols;
        rRows = rows;
        bestCost = cost;
      }
    }
    vecType = VectorType::get({kLanes}, b.getF32Type());
  }

  /// Emits the loop nest before `op` and returns the result tensor.
  Value build();

private:
  // --- small builders ---
  Value cIdx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value cF32(float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value splat(float v) {
    return arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(vecType, b.getF32FloatAttr(v)));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t c) { return c ? add(x, cIdx(c)) : x; }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value mul(Value x, int64_t c) {
    return arith::MulIOp::create(b, loc, x, cIdx(c));
  }
  Value mul(Value x, Value y) { return arith::MulIOp::create(b, loc, x, y); }
  Value minI(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value maxI(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
  Value dimOf(Value memref, int64_t i) {
    return detail::memrefDim(b, loc, memref, i);
  }
  Value loadVec(Value mem, ValueRange idx) {
    return vector::LoadOp::create(b, loc, vecType, mem, idx);
  }
  void storeVec(Value v, Value mem, ValueRange idx) {
    vector::StoreOp::create(b, loc, v, mem, idx);
  }
  /// A vector<16xi8> of `x` (the bytes of i1 masks).
  Value byteSplat(int8_t x) {
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(VectorType::get({kLanes}, b.getI8Type()),
                               b.getI8IntegerAttr(x)));
  }
  Value bcast(Value scalar) {
    return vector::BroadcastOp::create(b, loc, vecType, scalar);
  }
  Value fma(Value x, Value y, Value acc) {
    return vector::FMAOp::create(b, loc, x, y, acc);
  }
  /// 2^x: the softmax takes exp(s - m) as 2^(s log2(e) - m log2(e)), the
  /// multiply fused into the subtraction, which leaves the exponent no
  /// Cody-Waite steps.
  Value exp2(Value x, bool roundedToBf16 = false) {
    return polynomialExp ? exp2NonPositive(x, roundedToBf16)
                         : math::Exp2Op::create(b, loc, x);
  }
  /// The highest-degree coefficient first.
  static constexpr double kExp2Degree5[] = {1.326472727e-03, 9.671512768e-03,
                                            5.550733744e-02, 2.402224208e-01,
                                            6.931469776e-01, 1.0};
  static constexpr double kExp2Degree3[] = {5.500891e-02, 2.42211e-01,
                                            6.9328293e-01, 1.0};
  /// 2^x for x <= 0 or NaN (every exponent of the online softmax is a
  /// difference from a running max) in 13 vector ops, 6 of them on the FMA
  /// ports: t = x + 1.5 * 2^23 rounds n = round(x) into t's low bits; f =
  /// x - n, |f| <= 1/2, is exact; 2^f by a degree-5 minimax polynomial
  /// (relative error 9e-8, 2e-7 after f32 rounding); 2^n = (n + 127) << 23
  /// taken from t's bits with integer ops only. x is clamped at -127, where
  /// n = -127 gives the exponent field 0: exactly 0, so a masked score
  /// (-inf) weighs exactly 0. NaN stays NaN (the clamp's compare is false
  /// and NaN * anything is NaN).
  /// `roundedToBf16`: the result is rounded to bf16 next (relative error up
  /// to 2^-8, 3.9e-3), so a degree-3 polynomial (relative error 1.0e-4)
  /// does: 11 ops, 4 on the FMA ports.
  /// `avx512Scalef` (AVX-512F): 10 ops (8 with degree 3). x is clamped at
  /// -160, n = roundeven(x) is one vrndscaleps, and p(f) * 2^n one
  /// vscalefps, which also underflows: 2^-160 rounds to exactly 0, so a
  /// masked score still weighs 0 (x in about (-150, -126.5) now gives
  /// denormals instead of 0).
  Value exp2NonPositive(Value x, bool roundedToBf16 = false) {
    auto f32c = [&](double c) { return splat(static_cast<float>(c)); };
    auto i32Type = VectorType::get({kLanes}, b.getI32Type());
    auto i32c = [&](int32_t c) {
      return arith::ConstantOp::create(
          b, loc, DenseElementsAttr::get(i32Type, b.getI32IntegerAttr(c)));
    };
    Value low = f32c(avx512Scalef ? -160.0 : -127.0);
    Value below =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, low);
    x = arith::SelectOp::create(b, loc, below, low, x);
    // Minimax on [-1/2, 1/2] for the relative error, constant term 1.
    auto polynomial = [&](Value f) {
      ArrayRef<double> coefficients = roundedToBf16
                                          ? ArrayRef<double>(kExp2Degree3)
                                          : ArrayRef<double>(kExp2Degree5);
      Value p = f32c(coefficients.front());
      for (double c : coefficients.drop_front())
        p = fma(p, f, f32c(c));
      return p;
    };
    if (avx512Scalef) {
      Value n = math::RoundEvenOp::create(b, loc, x);
      Value p = polynomial(arith::SubFOp::create(b, loc, x, n));
      // All lanes (k = 0xFFFF), rounding 4: the current direction.
      // x86vector's mask.scalef hands its operands (src, a, b) to
      // llvm.x86.avx512.mask.scalef.ps.512, whose operands are (a, b,
      // passthrough), in that order: `src` is the value scaled, `a` the
      // exponent. (The execution tests check the result.)
      Value allLanes =
          arith::ConstantOp::create(b, loc, b.getI16IntegerAttr(-1));
      Value currentRounding =
          arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(4));
      return x86vector::MaskScaleFOp::create(b, loc, vecType, p, n, p, allLanes,
                                             currentRounding);
    }
    const float magic = 12582912.0f; // 1.5 * 2^23
    Value t = arith::AddFOp::create(b, loc, x, f32c(magic));
    Value n = arith::SubFOp::create(b, loc, t, f32c(magic));
    Value p = polynomial(arith::SubFOp::create(b, loc, x, n));
    // bits(t) = bits(magic) + n for |n| < 2^22.
    Value bits = arith::BitcastOp::create(b, loc, i32Type, t);
    Value biased =
        arith::SubIOp::create(b, loc, bits, i32c(0x4B400000 - 127)); // n + 127
    Value scale = arith::BitcastOp::create(
        b, loc, vecType, arith::ShLIOp::create(b, loc, biased, i32c(23)));
    return arith::MulFOp::create(b, loc, p, scale);
  }
  /// max(m, s) as one vmaxps: a NaN score leaves the running max alone (and
  /// still reaches the output through its weight, 2^NaN = NaN), where
  /// arith.maximumf would cost five more instructions per vector for its
  /// NaN and signed-zero rules.
  Value runningMax(Value m, Value s) {
    Value greater =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, s, m);
    return arith::SelectOp::create(b, loc, greater, s, m);
  }
  /// 16 elements of an operand row as f32.
  Value loadRow(Value mem, ValueRange idx) {
    if (ioElem.isF32())
      return loadVec(mem, idx);
    Value h = vector::LoadOp::create(b, loc, ioVecType(), mem, idx);
    return arith::ExtFOp::create(b, loc, vecType, h);
  }
  /// One operand element as f32.
  Value loadScalar(Value mem, ValueRange idx) {
    Value x = memref::LoadOp::create(b, loc, mem, idx);
    return ioElem.isF32() ? x
                          : arith::ExtFOp::create(b, loc, b.getF32Type(), x);
  }
  /// 16 lanes of the operands' element type.
  VectorType ioVecType() { return VectorType::get({kLanes}, ioElem); }
  /// A bf16 pair at `idx` broadcast to all 16 lanes: vector<32xbf16>.
  Value bcastPair(Value mem, ValueRange idx) {
    Value pair = vector::LoadOp::create(
        b, loc, VectorType::get({2}, b.getBF16Type()), mem, idx);
    auto i32 = b.getI32Type();
    Value word = vector::ExtractOp::create(
        b, loc,
        vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), pair),
        ArrayRef<int64_t>{0});
    Value words = vector::BroadcastOp::create(
        b, loc, VectorType::get({kLanes}, i32), word);
    return vector::BitCastOp::create(b, loc, pairType(), words);
  }
  /// Rounds two f32 vectors to bf16 and interleaves them into pairs:
  /// (lo[i], hi[i]) in 32-bit lane i, the operand layout of vdpbf16ps. Each
  /// is rounded alone (vcvtneps2bf16) and the halves interleaved by one
  /// vpermt2w: 3 ops. With arith.truncf instead (two truncf then the
  /// interleave, or a truncf of the f32 interleave or concatenation) LLVM
  /// emits the f32 shuffles first: 2 vpermt2ps, 2 vcvtneps2bf16 and an
  /// insert. The intrinsic keeps the rounding first.
  Value roundToPairs(Value lo, Value hi) {
    auto halfType = VectorType::get({kLanes}, b.getBF16Type());
    return vector::InterleaveOp::create(
        b, loc, x86vector::CvtPackedF32ToBF16Op::create(b, loc, halfType, lo),
        x86vector::CvtPackedF32ToBF16Op::create(b, loc, halfType, hi));
  }
  VectorType pairType() {
    return VectorType::get({2 * kLanes}, b.getBF16Type());
  }
  Value dot(Value accv, Value x, Value y) {
    return x86vector::DotBF16Op::create(b, loc, vecType, accv, x, y);
  }
  /// vPairs indices of key pair `pairRow` at column `col`.
  SmallVector<Value> pairIdx(Value pairRow, Value col) {
    return {rank == 4 ? batch : cIdx(0), rank >= 3 ? kvHead : cIdx(0), pairRow,
            col};
  }
  /// bf16: the weight P[j, i] as f32, from the pairs P V multiplies.
  Value pairWeight(Value j, Value i) {
    Value lane = add(mul(i, 2), arith::RemUIOp::create(b, loc, j, cIdx(2)));
    Value w =
        memref::LoadOp::create(b, loc, pPairs, ValueRange{pairRow(j), lane});
    return arith::ExtFOp::create(b, loc, b.getF32Type(), w);
  }
  /// The pair row of even key index `j`.
  Value pairRow(Value j) { return arith::DivUIOp::create(b, loc, j, cIdx(2)); }
  Value toBuffer(Value tensor);
  Value scratchBuffer(ArrayRef<int64_t> shape, Type elem = {}) {
    return memref::AllocOp::create(
        b, loc, MemRefType::get(shape, elem ? elem : b.getF32Type()),
        b.getI64IntegerAttr(64));
  }
  /// The scratch buffers of a work item: Qt (or the bf16 Q and P pairs),
  /// St, Mt where the mask is copied per key block, O and alpha, as
  /// (shape, element type), at 64-byte aligned offsets in one block.
  void planScratch();
  /// A worker's scratch block and the views of its buffers (see build()).
  void bindScratch();
  /// A counted loop whose body gets (induction variable, iteration values)
  /// and returns the next iteration values.
  SmallVector<Value>
  loop(Value lo, Value hi, int64_t step, ValueRange init,
       function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto forOp = scf::ForOp::create(
        b, loc, lo, hi, cIdx(step), init,
        [&](OpBuilder &, Location, Value iv, ValueRange iterArgs) {
          scf::YieldOp::create(b, loc, body(iv, iterArgs));
        });
    return SmallVector<Value>(forOp.getResults());
  }

  void packValuePairs();
  void packKeysValues(Value numBatch, Value numQBlocks);
  void checkValueBlocks(Value numBatch);
  Value valueBlockCheck(Value j0, Value nk);
  void emitWorkItem(Value batch, Value head, Value qBlock);
  void packQ(Value q0);
  /// Whether Q is scaled as it is packed. bf16 pairs are not: bf16(Q *
  /// scale) would round the (already bf16) Q a second time, and at a large
  /// scale (0.39 at d = 128) that error in the logits gave errors of 0.03
  /// in the output. Their scores are scaled in the exponent instead, unless
  /// an additive mask must be added to the scaled scores (or the scale is
  /// not positive, which would turn the max into a min).
  bool scaleInQ() {
    bool additive = op.getMask() && op.getMaskKind() == MaskKind::additive;
    return !bf16 || additive || op.getSoftcap() ||
           !(op.getEffectiveScale() > 0.0);
  }
  SmallVector<Value> emitKeyBlock(Value j0, ValueRange state, bool masked);
  void emitScores(Value j0, Value nkTiles, bool masked,
                  SmallVector<Value> &blockMax);
  void emitOutputUpdate(Value j0, Value nk, bool masked);
  void emitOutputTiles(Value j0, Value nk, bool masked, bool guardZeroWeights);
  void emitEpilogue(Value q0, ValueRange l);
  /// The explicit mask: the operand as a buffer, or MtAll (transposeMask),
  /// or f32 rows (a mask broadcast along the keys).
  void prepareMask();
  /// `m` as f32 (0 / -inf for an i1 mask with toZeroInf), without its last
  /// (key) dim with dropKeyDim, computed once per call.
  Value widenMask(Value m, bool dropKeyDim, bool toZeroInf);
  /// Mt[c, r] = mask[q0 + r, j0 + c] for the key block at j0 (rows past Tq
  /// read the last row, keys past Tk read 0).
  void packMask(Value j0);
  /// Whether a mask that varies along the query rows is transposed once per
  /// call rather than per key block of every item.
  bool transposeOnce(RankedTensorType maskType);
  /// MtAll [.., ceil(Tq / Br), Km rounded up to 16, Br]: the mask in the
  /// items' row blocks, each with its last two dims swapped; f32, i16 (the
  /// bits) for a bf16 mask, or i8 (1 where the key is hidden) for an i1
  /// mask.
  Value transposeMask(Value src);
  /// The mask's indices for query row `row` and key `key` (0 in its
  /// broadcast dims).
  SmallVector<Value> maskIndex(Value row, Value key);
  /// MtAll's indices of the item's row vector `i` for key `key`.
  SmallVector<Value> transposedMaskIndex(Value key, int64_t i);
  /// A key's mask value for every row (a mask that does not vary along the
  /// query rows), loaded once per key of a score tile.
  Value keyMaskValue(Value key);
  /// A mask broadcast along the keys: the f32 values of the item's row
  /// vectors (rows past Tq read 0), loaded once per item.
  void loadRowMask();
  /// Score vector `s` (St row `stRow`, key `key`, query rows q0 + 16 i ..
  /// + 15) under the explicit mask: `keyValue` (keyMaskValue), Mt's or
  /// MtAll's row or the row mask vector.
  Value applyMask(Value s, Value keyValue, Value stRow, Value key, int64_t i);
  /// Dropout on the weights `p` of row vector `i` for key `key`: each is
  /// kept (times 1 / (1 - p)) iff the Philox number of its flat index in
  /// [B, Hq, Tq, Tk] is >= p, the counters of attn-fuse-softmax and the
  /// plain lowering, so every form drops the same weights.
  Value dropWeights(Value p, Value key, int64_t i);
  /// c * tanh(s / c) on scaled scores (the op's softcap c).
  Value softcap(Value s) {
    double c = op.getSoftcap()->convertToDouble();
    Value t = math::TanhOp::create(
        b, loc, arith::MulFOp::create(b, loc, s, splat(float(1.0 / c))));
    return arith::MulFOp::create(b, loc, t, splat(float(c)));
  }

  OpBuilder &b;
  Location loc;
  SdpaOp op;
  int64_t br, bc;         // query rows per item, keys per block
  // The keys row i sees around its diagonal key i + offset.
  detail::KeyBand band;
  bool polynomialExp;     // 2^x inline (exp2NonPositive) or math.exp2
  bool avx512Scalef;      // exp2NonPositive's 2^n by vscalefps (AVX-512F)
  bool parallel;          // one worker per OpenMP thread (else one)
  int64_t maskCopyLimitMiB; // largest shared f32 mask copied transposed
  bool streamOut = false; // the output written with non-temporal stores
  int64_t d = 0, dv = 0;
  int64_t qVecs = 0; // vectors per key row of St (br / 16)
  int64_t rKeys = 0; // keys per St register tile
  int64_t vVecs = 0; // vectors per row of an O register tile
  int64_t rRows = 0; // query rows per O register tile
  VectorType vecType;
  Type ioElem;       // f32 or bf16
  bool bf16 = false; // bf16 operands and avx512_bf16 dot products (else a
                     // bf16 op is widened to f32 as it is loaded)
  // bf16 only: V with key pairs interleaved, [B, Hk, ceil(Tk / 2), 2 dv];
  // the item's Q^T and P in pairs, [d / 2, 2 br] and [bc / 2, 2 br].
  Value vPairs, qtPairs, pPairs;
  // [B, Hk, ceil(Tk / Bc)]: per key block of V, the sum of its values times
  // 0 (NaN iff one of them is not finite).
  Value vChecks;
  // Operands and per-item values.
  Value q, k, v, out, tq, tk, offset, batch, head, kvHead, kEnd, qStart,
      qBlockIdx;
  Value qt, st, acc, alpha; // scratch: Qt [d, br], St [bc, br], O, alpha
  // The scratch layout (planScratch).
  SmallVector<std::pair<SmallVector<int64_t, 2>, Type>> scratchParts;
  SmallVector<int64_t> scratchOffsets;
  int64_t scratchBytes = 0;
  // The explicit mask, if any: its buffer, whether it varies along the query
  // rows (then read through Mt [bc rounded up to 16, br] per key block, an
  // f32 operand, or, maskTransposed, as MtAll, indexed through the
  // operand's type maskOperandType; an i1 mask's MtAll holds bytes, 1 where
  // hidden, a bf16 mask's its bits), and whether it holds i1 values
  // (maskBool; maskWidened: as 0 / -inf f32;
  // both are applied by select so that a masked +inf or NaN score weighs
  // 0). A mask broadcast along the keys
  // (maskRows) is held as f32 rows without the key dim, and rowMask has the
  // item's vectors of it.
  Value mask, mt;
  bool maskVaries = false, maskRows = false, maskBool = false, maskBf16 = false,
       maskWidened = false, maskTransposed = false;
  MemRefType maskOperandType;
  SmallVector<Value> rowMask;
  Value iota;               // [0, 1, ..., 15] : vector<16xi32>
  // Dropout: the item's first score counter ((batch Hq + head) Tq + q0) Tk
  // and the lanes' offsets l Tk (vector<16xi64>; see dropWeights).
  Value dropBase, dropLanes;
};

/// The declaration of an OpenMP runtime function `() -> i32` in the module.
static func::FuncOp ompQuery(Operation *anchor, StringRef name) {
  auto module = anchor->getParentOfType<ModuleOp>();
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder mb = OpBuilder::atBlockBegin(module.getBody());
  auto f = func::FuncOp::create(mb, module.getLoc(), name,
                                mb.getFunctionType({}, {mb.getI32Type()}));
  f.setPrivate();
  return f;
}

Value CpuFlashBuilder::toBuffer(Value tensor) {
  auto tt = cast<RankedTensorType>(tensor.getType());
  // Any offset and outer strides (Q/K/V may be slices or reshaped
  // projections); the columns must be contiguous for vector loads.
  SmallVector<int64_t> strides(tt.getRank(), ShapedType::kDynamic);
  if (!strides.empty()) // (a rank-0 mask)
    strides.back() = 1;
  auto layout =
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, strides);
  auto mt = MemRefType::get(tt.getShape(), tt.getElementType(), layout);
  return bufferization::ToBufferOp::create(b, loc, mt, tensor,
                                           /*read_only=*/true);
}

Value CpuFlashBuilder::build() {
  q = toBuffer(op.getQuery());
  k = toBuffer(op.getKey());
  v = toBuffer(op.getValue());
  if (op.getMask())
    prepareMask();
  auto resultType = op.getResult().getType();
  SmallVector<Value> dynSizes;
  for (int64_t i = 0; i < rank; ++i)
    if (resultType.isDynamicDim(i))
      // The result is Q's shape with V's (static) head dim.
      dynSizes.push_back(i == rank - 1 ? cIdx(dv) : dimOf(q, i));
  out = memref::AllocOp::create(b, loc,
                                MemRefType::get(resultType.getShape(), ioElem),
                                dynSizes, b.getI64IntegerAttr(64));

  tq = dimOf(q, seqDim());
  tk = dimOf(k, seqDim());
  offset = op.getCausal() == CausalKind::bottom_right ? sub(tk, tq) : cIdx(0);
  Value numBatch = rank == 4 ? dimOf(q, 0) : cIdx(1);
  Value numHeads = rank >= 3 ? dimOf(q, headDim()) : cIdx(1);
  Value numQBlocks = arith::CeilDivUIOp::create(b, loc, tq, cIdx(br));
  if (bf16)
    packValuePairs();
  else if (seqMajor && rank >= 3)
    packKeysValues(numBatch, numQBlocks);
  checkValueBlocks(numBatch);
  // The items run on workers, one per thread of the OpenMP team (at most
  // omp_get_max_threads(), and no more than there are items), which take
  // chunks of consecutive items from a shared counter until none is left,
  // in the items' order. Each worker allocates its scratch buffers once:
  // one heap block per call and thread. With the items as the parallel
  // loop, each item allocated its own, a malloc and a free per item, and
  // each free of a block this size coalesces and checks for trimming in the
  // thread's arena: 1.2% of perf's samples of the causal core. (A stack
  // memref.alloca_scope would not survive convert-scf-to-cf inside an
  // OpenMP loop.)
  planScratch();
  Value numItems = mul(mul(numBatch, numHeads), numQBlocks);
  Value workers = cIdx(1);
  if (parallel && !op->getParentOfType<scf::ForallOp>() &&
      !op->getParentOfType<scf::ParallelOp>()) {
    // (Inside a parallel loop this one is serialized: one worker.)
    auto maxThreads =
        func::CallOp::create(b, loc, ompQuery(op, "omp_get_max_threads"));
    workers = maxI(cIdx(1), minI(numItems, arith::IndexCastOp::create(
                                               b, loc, b.getIndexType(),
                                               maxThreads.getResult(0))));
  }
  auto i64 = b.getI64Type();
  // The counter has its cache line (and the next) to itself: no false
  // sharing with the workers' data.
  Value next = memref::AllocOp::create(b, loc, MemRefType::get({16}, i64),
                                       b.getI64IntegerAttr(64));
  memref::StoreOp::create(b, loc, arith::ConstantIntOp::create(b, loc, i64, 0),
                          next, ValueRange{cIdx(0)});
  Value numItems64 = arith::IndexCastOp::create(b, loc, i64, numItems);
  scf::ForallOp::create(
      b, loc, ArrayRef<OpFoldResult>{workers}, ValueRange{}, std::nullopt,
      [&](OpBuilder &, Location, ValueRange) {
        OpBuilder::InsertionGuard guard(b);
        bindScratch();
        // Guided chunks: a worker takes max(1, left / (2 workers)) items at
        // once, as libomp's guided schedule does, so that a worker's items
        // are runs of consecutive items (see below) while the last ones
        // still spread one by one.
        auto chunkAfter = [&](Value taken) {
          Value left = arith::SubIOp::create(b, loc, numItems64, taken);
          Value share = arith::DivSIOp::create(
              b, loc, left,
              arith::IndexCastOp::create(b, loc, i64, mul(workers, 2)));
          return arith::MaxSIOp::create(
              b, loc, share, arith::ConstantIntOp::create(b, loc, i64, 1));
        };
        scf::WhileOp::create(
            b, loc, TypeRange{i64, i64}, ValueRange{},
            [&](OpBuilder &, Location, ValueRange) {
              // The chunk follows the count as read just before; taking it
              // is one atomic add, so chunks never overlap whatever the
              // other workers took in between. (memref.generic_atomic_rmw,
              // one compare-and-swap for both, is rejected by the buffer
              // deallocation pipeline.)
              auto atomicAdd = [&](Value c) -> Value {
                return memref::AtomicRMWOp::create(
                    b, loc, arith::AtomicRMWKind::addi, c, next,
                    ValueRange{cIdx(0)});
              };
              Value chunk = chunkAfter(
                  atomicAdd(arith::ConstantIntOp::create(b, loc, i64, 0)));
              Value first = atomicAdd(chunk);
              Value more = arith::CmpIOp::create(
                  b, loc, arith::CmpIPredicate::slt, first, numItems64);
              scf::ConditionOp::create(b, loc, more, ValueRange{first, chunk});
            },
            [&](OpBuilder &, Location, ValueRange args) {
              Value first =
                  arith::IndexCastOp::create(b, loc, b.getIndexType(), args[0]);
              Value last = minI(
                  numItems, add(first, arith::IndexCastOp::create(
                                           b, loc, b.getIndexType(), args[1])));
              loop(first, last, 1, {}, [&](Value item, ValueRange) {
                Value qBlock = arith::RemUIOp::create(b, loc, item, numQBlocks);
                Value rest = arith::DivUIOp::create(b, loc, item, numQBlocks);
                Value headIv = arith::RemUIOp::create(b, loc, rest, numHeads);
                Value batchIv = arith::DivUIOp::create(b, loc, rest, numHeads);
                // Causal: the query blocks of a head run from the last to
                // the first. A worker's items are runs of consecutive items,
                // so the keys of an item (a prefix of those of the item
                // before it) were just read by its thread (in its L2 while a
                // head's K and V fit), the diagonal block's included, where
                // in ascending order the last Br keys came cold from L3 into
                // narrow tiles that could not hide it; and the items that
                // end the call are the cheapest, which evens out the
                // workers' last chunks.
                if (op.getCausal() != CausalKind::none)
                  qBlock = sub(sub(numQBlocks, cIdx(1)), qBlock);
                emitWorkItem(batchIv, headIv, qBlock);
                return SmallVector<Value>{};
              });
              scf::YieldOp::create(b, loc);
            });
        scf::InParallelOp::create(b, loc);
      });
  return bufferization::ToTensorOp::create(b, loc, resultType, out,
                                           /*restrict=*/true,
                                           /*writable=*/true);
}

void CpuFlashBuilder::planScratch() {
  Type f32 = b.getF32Type(), bf16Ty = b.getBF16Type();
  if (bf16) {
    scratchParts.push_back({{d / 2, 2 * br}, bf16Ty});
    scratchParts.push_back({{bc / 2, 2 * br}, bf16Ty});
  } else {
    scratchParts.push_back({{d, br}, f32});
  }
  scratchParts.push_back({{bc, br}, f32});
  if (maskVaries && !maskTransposed)
    scratchParts.push_back(
        {{static_cast<int64_t>(llvm::alignTo(bc, kLanes)), br}, f32});
  scratchParts.push_back({{br, dv}, f32});
  scratchParts.push_back({{br}, f32});
  for (const auto &[shape, elem] : scratchParts) {
    scratchOffsets.push_back(scratchBytes);
    int64_t n = elem.getIntOrFloatBitWidth() / 8;
    for (int64_t size : shape)
      n *= size;
    scratchBytes += llvm::alignTo(n, 64);
  }
}

void CpuFlashBuilder::bindScratch() {
  Value block = scratchBuffer({scratchBytes}, b.getI8Type());
  SmallVector<Value> views;
  for (auto [part, offset] : llvm::zip(scratchParts, scratchOffsets))
    views.push_back(
        memref::ViewOp::create(b, loc, MemRefType::get(part.first, part.second),
                               block, cIdx(offset), ValueRange{}));
  unsigned next = 0;
  if (bf16) {
    qtPairs = views[next++];
    pPairs = views[next++];
  } else {
    qt = views[next++];
  }
  st = views[next++];
  if (maskVaries && !maskTransposed)
    mt = views[next++];
  acc = views[next++];
  alpha = views[next++];
}

void CpuFlashBuilder::packValuePairs() {
  // Once per call: vPairs[b, h, j / 2, 2 c + j % 2] = V[b, h, j, c], so that
  // one 32-element load holds 16 columns of two keys (the operand layout of
  // vdpbf16ps); an odd last key is paired with zeros.
  auto bf16Type = b.getBF16Type();
  Value numBatch = rank == 4 ? dimOf(v, 0) : cIdx(1);
  Value numKv = rank >= 3 ? dimOf(v, headDim()) : cIdx(1);
  Value numPairs = arith::CeilDivUIOp::create(b, loc, tk, cIdx(2));
  int64_t dyn = ShapedType::kDynamic;
  vPairs = memref::AllocOp::create(
      b, loc, MemRefType::get({dyn, dyn, dyn, 2 * dv}, bf16Type),
      ValueRange{numBatch, numKv, numPairs}, b.getI64IntegerAttr(64));
  auto halfType = VectorType::get({kLanes}, bf16Type);
  SmallVector<OpFoldResult> ubs{numBatch, numKv, numPairs};
  scf::ForallOp::create(
      b, loc, ubs, ValueRange{}, std::nullopt,
      [&](OpBuilder &, Location, ValueRange ivs) {
        OpBuilder::InsertionGuard guard(b);
        Value first = mul(ivs[2], 2), second = add(first, 1);
        Value hasSecond = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::slt, second, tk);
        Value secondRow = minI(second, sub(tk, cIdx(1)));
        Value zeros = arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(halfType, b.getZeroAttr(bf16Type)));
        for (int64_t c = 0; c < dv; c += kLanes) {
          Value r0 = vector::LoadOp::create(b, loc, halfType, v,
                                            at(ivs[0], ivs[1], first, cIdx(c)));
          Value r1 = vector::LoadOp::create(
              b, loc, halfType, v, at(ivs[0], ivs[1], secondRow, cIdx(c)));
          r1 = arith::SelectOp::create(b, loc, hasSecond, r1, zeros);
          storeVec(vector::InterleaveOp::create(b, loc, r0, r1), vPairs,
                   {ivs[0], ivs[1], ivs[2], cIdx(2 * c)});
        }
        scf::InParallelOp::create(b, loc);
      });
}

void CpuFlashBuilder::packKeysValues(Value numBatch, Value numQBlocks) {
  // K and V of layout(seq_major) ([.., T, H, d]) copied head-major
  // ([.., H, T, d]) once per call, and read through a transposed view of
  // the copy, so the indexing stays (token, head). In place, consecutive
  // keys are H * d elements apart; at 3 KiB (GPT-2's 12 x 64 floats) a key
  // block's rows fall into a sixteenth of the L1 sets and the L2 ways, and
  // the conflict misses cost more than the copy (one pass over K and V).
  // With a single query block per head K and V are read once anyway:
  // no copy (and no buffer) then.
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(perm[rank - 3], perm[rank - 2]); // its own inverse
  Value several = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt,
                                        numQBlocks, cIdx(1));
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{k.getType(), v.getType()},
                                several, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto headMajor = [&](Value src) -> Value {
      auto srcType = cast<MemRefType>(src.getType());
      SmallVector<int64_t> shape;
      SmallVector<Value> dynSizes;
      for (int64_t i = 0; i < rank; ++i) {
        shape.push_back(srcType.getDimSize(perm[i]));
        if (ShapedType::isDynamic(shape.back()))
          dynSizes.push_back(dimOf(src, perm[i]));
      }
      return memref::AllocOp::create(b, loc, MemRefType::get(shape, ioElem),
                                     dynSizes, b.getI64IntegerAttr(64));
    };
    Value kp = headMajor(k), vp = headMajor(v);
    auto packedAt = [&](ValueRange ivs, Value col) -> SmallVector<Value> {
      if (rank == 4)
        return {ivs[0], ivs[1], ivs[2], col};
      return {ivs[1], ivs[2], col};
    };
    SmallVector<OpFoldResult> ubs{numBatch, dimOf(k, headDim()), tk};
    scf::ForallOp::create(
        b, loc, ubs, ValueRange{}, std::nullopt,
        [&](OpBuilder &, Location, ValueRange ivs) {
          OpBuilder::InsertionGuard guard(b);
          // Copied in the operands' element type (bf16 stays bf16).
          auto copy = [&](Value src, Value dst, int64_t width) {
            for (int64_t c = 0; c < width; c += kLanes)
              storeVec(
                  vector::LoadOp::create(b, loc, ioVecType(), src,
                                         at(ivs[0], ivs[1], ivs[2], cIdx(c))),
                  dst, packedAt(ivs, cIdx(c)));
          };
          copy(k, kp, d);
          copy(v, vp, dv);
          scf::InParallelOp::create(b, loc);
        });
    SmallVector<unsigned> permU(perm.begin(), perm.end());
    auto view = [&](Value packed, Value like) -> Value {
      Value t = memref::TransposeOp::create(
          b, loc, packed,
          AffineMapAttr::get(
              AffineMap::getPermutationMap(permU, b.getContext())));
      return memref::CastOp::create(b, loc, like.getType(), t);
    };
    scf::YieldOp::create(b, loc, ValueRange{view(kp, k), view(vp, v)});
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, ValueRange{k, v});
  }
  k = ifOp.getResult(0);
  v = ifOp.getResult(1);
}

void CpuFlashBuilder::checkValueBlocks(Value numBatch) {
  // Once per call and key block of V (not once per query block that reads
  // it: 1/Br of the P V FMAs, 3.8% of the full core's samples on AVX2):
  // whether the block holds a value that is not finite. The key blocks are
  // those of the items' key loops (j0 a multiple of Bc); a masked block
  // that an item sees only in part is checked whole, which can only send
  // it to the guarded path, exact for any values.
  Value numKv = rank >= 3 ? dimOf(v, headDim()) : cIdx(1);
  Value numBlocks = arith::CeilDivUIOp::create(b, loc, tk, cIdx(bc));
  int64_t dyn = ShapedType::kDynamic;
  vChecks = memref::AllocOp::create(
      b, loc, MemRefType::get({dyn, dyn, dyn}, b.getF32Type()),
      ValueRange{numBatch, numKv, numBlocks}, b.getI64IntegerAttr(64));
  SmallVector<OpFoldResult> ubs{numBatch, numKv, numBlocks};
  scf::ForallOp::create(b, loc, ubs, ValueRange{}, std::nullopt,
                        [&](OpBuilder &, Location, ValueRange ivs) {
                          OpBuilder::InsertionGuard guard(b);
                          batch = ivs[0];
                          kvHead = ivs[1];
                          Value j0 = mul(ivs[2], bc);
                          Value nk = minI(cIdx(bc), sub(tk, j0));
                          memref::StoreOp::create(
                              b, loc, valueBlockCheck(j0, nk), vChecks, ivs);
                          scf::InParallelOp::create(b, loc);
                        });
}

Value CpuFlashBuilder::valueBlockCheck(Value j0, Value nk) {
  // The sum of V[j0 .. j0 + nk) * 0: NaN iff some value is not finite.
  Value zeroVec = splat(0.0f);
  // One accumulator per column vector: independent FMA chains.
  SmallVector<Value> partInit(dv / kLanes, zeroVec);
  SmallVector<Value> parts =
      bf16 ? loop(cIdx(0), arith::CeilDivUIOp::create(b, loc, nk, cIdx(2)), 1,
                  partInit,
                  [&](Value jp, ValueRange part) {
                    // The packed key pairs the dot products read, with the
                    // partner of an odd last key.
                    SmallVector<Value> next;
                    for (int64_t c = 0; c < dv / kLanes; ++c) {
                      Value pair = vector::LoadOp::create(
                          b, loc, pairType(), vPairs,
                          pairIdx(add(pairRow(j0), jp), cIdx(2 * c * kLanes)));
                      Value wide = arith::ExtFOp::create(
                          b, loc, VectorType::get({2 * kLanes}, b.getF32Type()),
                          pair);
                      Value lo = vector::ExtractStridedSliceOp::create(
                          b, loc, wide, ArrayRef<int64_t>{0},
                          ArrayRef<int64_t>{kLanes}, ArrayRef<int64_t>{1});
                      Value hi = vector::ExtractStridedSliceOp::create(
                          b, loc, wide, ArrayRef<int64_t>{kLanes},
                          ArrayRef<int64_t>{kLanes}, ArrayRef<int64_t>{1});
                      next.push_back(
                          fma(hi, zeroVec, fma(lo, zeroVec, part[c])));
                    }
                    return next;
                  })
           : loop(cIdx(0), nk, 1, partInit, [&](Value j, ValueRange part) {
               SmallVector<Value> next;
               for (int64_t c = 0; c < dv / kLanes; ++c)
                 next.push_back(fma(loadRow(v, at(batch, kvHead, add(j0, j),
                                                  cIdx(c * kLanes))),
                                    zeroVec, part[c]));
               return next;
             });
  Value sum = parts[0];
  for (int64_t c = 1; c < dv / kLanes; ++c)
    sum = arith::AddFOp::create(b, loc, sum, parts[c]);
  return vector::ReductionOp::create(b, loc, vector::CombiningKind::ADD, sum);
}

void CpuFlashBuilder::emitWorkItem(Value batchIv, Value headIv, Value qBlock) {
  batch = batchIv;
  head = headIv;
  if (rank >= 3) {
    int64_t hq = op.getQuery().getType().getDimSize(headDim());
    int64_t hk = op.getKey().getType().getDimSize(headDim());
    // GQA/MQA: query head h reads K/V head h / (Hq / Hk).
    kvHead = hq == hk
                 ? head
                 : Value(arith::DivUIOp::create(b, loc, head, cIdx(hq / hk)));
  } else {
    kvHead = head;
  }
  Value q0 = mul(qBlock, br);
  qStart = q0;
  qBlockIdx = qBlock;
  SmallVector<int32_t> lanes;
  for (int32_t i = 0; i < kLanes; ++i)
    lanes.push_back(i);
  iota = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(VectorType::get({kLanes}, b.getI32Type()),
                             ArrayRef<int32_t>(lanes)));
  if (op.getDropoutP().convertToDouble() != 0.0) {
    int64_t hq = rank >= 3 ? op.getQuery().getType().getDimSize(headDim()) : 1;
    dropBase = mul(add(mul(add(mul(batch, hq), head), tq), q0), tk);
    auto i64Vec = VectorType::get({kLanes}, b.getI64Type());
    Value tk64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), tk);
    dropLanes = arith::MulIOp::create(
        b, loc, arith::ExtSIOp::create(b, loc, i64Vec, iota),
        vector::BroadcastOp::create(b, loc, i64Vec, tk64));
  }

  if (maskRows)
    loadRowMask();
  packQ(q0);
  // O = 0.
  loop(cIdx(0), cIdx(br), 1, {}, [&](Value r, ValueRange) {
    for (int64_t c = 0; c < dv; c += kLanes)
      storeVec(splat(0.0f), acc, {r, cIdx(c)});
    return SmallVector<Value>{};
  });

  // The item's rows lie on the diagonal keys q0 + offset .. + br - 1. Key
  // blocks [full, fullEnd), seen whole by every row, skip the lane
  // predicate; [first, full) (a sliding window's left edge) and [fullEnd,
  // end) (the diagonal, a right window edge, the end of K) evaluate it;
  // the blocks outside [first, end) are not visited at all.
  detail::KeyBand::Blocks blocks =
      band.blocks(b, loc, add(q0, offset), br, tk, bc);
  kEnd = blocks.kEnd;

  SmallVector<Value> init(qVecs,
                          splat(-std::numeric_limits<float>::infinity()));
  init.append(qVecs, splat(0.0f));
  auto keyLoop = [&](Value lo, Value hi, ValueRange state, bool masked) {
    return loop(lo, hi, 1, state, [&](Value blk, ValueRange s) {
      return emitKeyBlock(mul(blk, bc), s, masked);
    });
  };
  SmallVector<Value> state(init.begin(), init.end());
  if (band.left >= 0)
    state = keyLoop(blocks.first, blocks.full, state, /*masked=*/true);
  state = keyLoop(blocks.full, blocks.fullEnd, state, /*masked=*/false);
  state = keyLoop(blocks.fullEnd, blocks.end, state, /*masked=*/true);
  emitEpilogue(q0, ArrayRef<Value>(state).drop_front(qVecs));
}

void CpuFlashBuilder::packQ(Value q0) {
  // Qt[c, r] = Q[q0 + r, c] * scale (bf16: qtPairs[c / 2, 2 r + c % 2] =
  // Q[q0 + r, c], scaled only with an additive mask, see scaleInQ); rows
  // past Tq repeat the last row (their
  // outputs are never stored). In 16 x 16 blocks transposed in registers
  // (16 row loads, 64 two-source shuffles, 16 stores): scalar copies became
  // scatters, 2.5% of the causal core.
  Value scaleVec =
      splat(scaleInQ() ? static_cast<float>(op.getEffectiveScale()) : 1.0f);
  Value lastRow = sub(tq, cIdx(1));
  loop(cIdx(0), cIdx(br), kLanes, {}, [&](Value r0, ValueRange) {
    loop(cIdx(0), cIdx(d), kLanes, {}, [&](Value c0, ValueRange) {
      SmallVector<Value> rows;
      for (int64_t l = 0; l < kLanes; ++l) {
        Value row = minI(add(q0, add(r0, cIdx(l))), lastRow);
        rows.push_back(arith::MulFOp::create(
            b, loc, loadRow(q, at(batch, head, row, c0)), scaleVec));
      }
      detail::transposeInRegisters(b, loc, rows);
      if (!bf16) {
        for (int64_t l = 0; l < kLanes; ++l)
          storeVec(rows[l], qt, {add(c0, cIdx(l)), r0});
        return SmallVector<Value>{};
      }
      // Columns c and c + 1 interleaved: the 16 rows' pairs.
      for (int64_t l = 0; l < kLanes; l += 2) {
        Value pair = roundToPairs(rows[l], rows[l + 1]);
        vector::StoreOp::create(
            b, loc, pair, qtPairs,
            ValueRange{
                add(arith::DivUIOp::create(b, loc, c0, cIdx(2)), cIdx(l / 2)),
                mul(r0, 2)});
      }
      return SmallVector<Value>{};
    });
    return SmallVector<Value>{};
  });
}

void CpuFlashBuilder::emitScores(Value j0, Value nkTiles, bool masked,
                                 SmallVector<Value> &blockMax) {
  Value lastKey = sub(tk, cIdx(1));
  float negInf = -std::numeric_limits<float>::infinity();
  Value minusInf = splat(negInf);
  SmallVector<Value> maxInit(qVecs, minusInf);
  // One score tile: rKeys keys x the row vectors [firstVec, qVecs); the
  // vectors before firstVec see none of its keys and get -inf.
  auto tileBody = [&](Value jt, ValueRange mx, int64_t firstVec) {
    int64_t nVecs = qVecs - firstVec;
    // The tile's key rows; in masked blocks a row past the end of K reads
    // the last row (its scores are masked below).
    SmallVector<Value> keys, rows;
    for (int64_t r = 0; r < rKeys; ++r) {
      Value key = add(add(j0, jt), r);
      keys.push_back(key);
      rows.push_back(masked ? minI(key, lastKey) : key);
    }
    SmallVector<Value> zeros(rKeys * nVecs, splat(0.0f));
    // bf16: two columns of d per step, vdpbf16ps on the broadcast pair
    // (K[j, 2 c2], K[j, 2 c2 + 1]) and the Qt pairs of 16 rows.
    auto dotPairs = [&](Value c2, ValueRange accs) {
      SmallVector<Value> qRow;
      for (int64_t i = firstVec; i < qVecs; ++i)
        qRow.push_back(vector::LoadOp::create(
            b, loc, pairType(), qtPairs, ValueRange{c2, cIdx(2 * i * kLanes)}));
      SmallVector<Value> next;
      for (int64_t r = 0; r < rKeys; ++r) {
        Value kb = bcastPair(k, at(batch, kvHead, rows[r], mul(c2, 2)));
        for (int64_t i = 0; i < nVecs; ++i)
          next.push_back(dot(accs[r * nVecs + i], kb, qRow[i]));
      }
      return next;
    };
    SmallVector<Value> tile =
        bf16 ? loop(cIdx(0), cIdx(d / 2), 1, zeros, dotPairs)
             : loop(cIdx(0), cIdx(d), 1, zeros, [&](Value c, ValueRange accs) {
                 SmallVector<Value> qRow;
                 for (int64_t i = firstVec; i < qVecs; ++i)
                   qRow.push_back(loadVec(qt, {c, cIdx(i * kLanes)}));
                 SmallVector<Value> next;
                 for (int64_t r = 0; r < rKeys; ++r) {
                   Value kb =
                       bcast(loadScalar(k, at(batch, kvHead, rows[r], c)));
                   for (int64_t i = 0; i < nVecs; ++i)
                     next.push_back(fma(kb, qRow[i], accs[r * nVecs + i]));
                 }
                 return next;
               });
    SmallVector<Value> nextMax(mx.begin(), mx.end());
    for (int64_t r = 0; r < rKeys; ++r) {
      Value keyMask =
          mask && !maskVaries && !maskRows ? keyMaskValue(rows[r]) : Value();
      for (int64_t i = 0; i < firstVec; ++i)
        storeVec(minusInf, st, {add(jt, r), cIdx(i * kLanes)});
      Value inK;
      if (masked)
        inK = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, keys[r],
                                    tk);
      for (int64_t i = firstVec; i < qVecs; ++i) {
        Value s = tile[r * nVecs + i - firstVec];
        // The cap before any mask (an additive mask is not capped).
        if (op.getSoftcap())
          s = softcap(s);
        // The mask first, as in the plain lowering: a key the causal
        // predicate or the end of K hides is -inf whatever its mask says.
        if (mask)
          s = applyMask(s, keyMask, add(jt, r), rows[r], i);
        if (masked) {
          // Lane l (row q0 + 16 i + l) sees the key iff the key is in K
          // and -band.left <= key - (q0 + 16 i + l + offset) <= band.right:
          // l >= key - q0 - 16 i - offset - band.right (the diagonal, a
          // right window edge) and l <= key - q0 - 16 i - offset +
          // band.left (a left window edge).
          Value diagKey = sub(sub(keys[r], add(qStart, i * kLanes)), offset);
          auto lanes = [&](Value threshold) {
            threshold = minI(maxI(threshold, cIdx(-kNoLane)), cIdx(kNoLane));
            return vector::BroadcastOp::create(
                b, loc, VectorType::get({kLanes}, b.getI32Type()),
                arith::IndexCastOp::create(b, loc, b.getI32Type(), threshold));
          };
          Value from =
              band.right >= 0 ? add(diagKey, -band.right) : cIdx(-kNoLane);
          from = arith::SelectOp::create(b, loc, inK, from, cIdx(kNoLane));
          Value sees = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                             iota, lanes(from));
          if (band.left >= 0)
            sees = arith::AndIOp::create(
                b, loc, sees,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, iota,
                                      lanes(add(diagKey, band.left))));
          s = arith::SelectOp::create(b, loc, sees, s, minusInf);
        }
        storeVec(s, st, {add(jt, r), cIdx(i * kLanes)});
        nextMax[i] = runningMax(nextMax[i], s);
      }
    }
    return nextMax;
  };
  if (!masked || band.right < 0) {
    blockMax =
        loop(cIdx(0), nkTiles, rKeys, maxInit,
             [&](Value jt, ValueRange mx) { return tileBody(jt, mx, 0); });
    return;
  }
  // A block on the diagonal (or a right window edge): row vector i sees no
  // key past q0 + 16 i + 15 + offset + band.right, so the tiles are split
  // into runs by the first
  // vector that sees any of their keys, and each run computes only the
  // vectors from there on (the key tiles of the upper triangle's 16 x 16
  // sub-blocks are not computed at all).
  Value tileStart = cIdx(0);
  blockMax = maxInit;
  for (int64_t first = 0; first < qVecs; ++first) {
    // Tiles starting before `end` have a key vector `first` sees.
    Value end = sub(
        add(add(qStart, cIdx((first + 1) * kLanes + band.right)), offset), j0);
    end =
        mul(arith::CeilDivUIOp::create(b, loc, maxI(end, cIdx(0)), cIdx(rKeys)),
            rKeys);
    end = minI(end, nkTiles);
    Value lo = tileStart;
    blockMax =
        loop(lo, maxI(lo, end), rKeys, blockMax,
             [&](Value jt, ValueRange mx) { return tileBody(jt, mx, first); });
    tileStart = maxI(lo, end);
  }
}

SmallVector<Value> CpuFlashBuilder::emitKeyBlock(Value j0, ValueRange state,
                                                 bool masked) {
  // Keys of this block that any row may see: all Bc of them in unmasked
  // blocks; in the masked ones up to kEnd, rounded up to whole key tiles.
  Value nk = masked ? minI(cIdx(bc), sub(kEnd, j0)) : cIdx(bc);
  Value nkTiles =
      masked ? mul(arith::CeilDivUIOp::create(b, loc, nk, cIdx(rKeys)), rKeys)
             : cIdx(bc);
  SmallVector<Value> blockMax;
  if (maskVaries && !maskTransposed)
    packMask(j0);
  emitScores(j0, nkTiles, masked, blockMax);

  // Online softmax update. A row that has seen no key yet keeps m = -inf;
  // exponents are then taken against 0 so that they give 0, not NaN.
  //
  // The exponents are in base 2: p = 2^(s log2(e) - m2) with m2 = fl(m'
  // log2(e)), s log2(e) exact inside the FMA. m2's rounding (|m'| 2^-24,
  // which matters for logits of 1e4) is a shift common to every weight of
  // the row as long as the rescale factor uses the very same m2 values:
  // alpha = 2^(fl(m log2(e)) - m2), each the value its block used.
  float negInf = -std::numeric_limits<float>::infinity();
  Value minusInf = splat(negInf), zeroVec = splat(0.0f);
  // Scores of unscaled Q (scaleInQ false) take the scale here, exactly
  // inside the FMA as log2(e) is; the max of the unscaled scores is the
  // scaled ones' max over the scale (> 0).
  double expScale = scaleInQ() ? 1.0 : op.getEffectiveScale();
  Value log2e = splat(static_cast<float>(1.4426950408889634 * expScale));
  auto safeMax = [&](Value m) {
    Value none =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, minusInf);
    return arith::SelectOp::create(b, loc, none, zeroVec, m);
  };
  // A row whose |m log2(e)| is huge (all its keys so far masked by
  // finfo.min, -1e30 or -1e10 additive masks; or an enormous scale) has an
  // m2 whose rounding alone exceeds 2^7, or overflows to -inf: its weights
  // would overflow to inf and NaN. Such rows take exact differences
  // instead, p = 2^((s - m) log2(e)) (a fully masked row's equal scores
  // then weigh 1 each, as in the plain lowering and torch), in a second
  // copy of the weight loop that runs only for blocks that hold one.
  Value hugeExponent = splat(static_cast<float>(1 << 26));
  SmallVector<Value> mNew, mSafe, negM2, alphas, huge;
  Value anyHuge;
  for (int64_t i = 0; i < qVecs; ++i) {
    Value m = runningMax(state[i], blockMax[i]);
    Value sm = safeMax(m);
    Value m2 = arith::MulFOp::create(b, loc, sm, log2e);
    Value h =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UGE,
                              math::AbsFOp::create(b, loc, m2), hugeExponent);
    // The previous block's m2 (-inf before the first key: alpha = 0).
    Value m2Old = arith::MulFOp::create(b, loc, state[i], log2e);
    // alpha is 2^(old shift - new shift), each block's own: m2 for a fast
    // block, exactly m log2(e) for a huge one. Between two fast blocks that
    // is m2Old - m2. Where either is huge (a row crossing 2^26, or -inf
    // before the first key), (mOld - m) log2(e) plus the fast shifts'
    // rounding, c = m2 - m log2(e) (exact: -fma(m, log2(e), -m2)).
    Value hOld = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UGE,
                                       math::AbsFOp::create(b, loc, m2Old),
                                       hugeExponent);
    auto rounding = [&](Value mv, Value mv2, Value isHuge) -> Value {
      Value c = arith::NegFOp::create(
          b, loc, fma(mv, log2e, arith::NegFOp::create(b, loc, mv2)));
      return arith::SelectOp::create(b, loc, isHuge, zeroVec, c);
    };
    Value mixed = arith::AddFOp::create(
        b, loc,
        arith::MulFOp::create(
            b, loc, arith::SubFOp::create(b, loc, state[i], sm), log2e),
        arith::SubFOp::create(b, loc, rounding(state[i], m2Old, hOld),
                              rounding(sm, m2, h)));
    Value eitherHuge = arith::OrIOp::create(b, loc, h, hOld);
    Value a = exp2(arith::SelectOp::create(
        b, loc, eitherHuge, mixed, arith::SubFOp::create(b, loc, m2Old, m2)));
    storeVec(a, alpha, {cIdx(i * kLanes)});
    mNew.push_back(m);
    mSafe.push_back(sm);
    negM2.push_back(arith::NegFOp::create(b, loc, m2));
    alphas.push_back(a);
    huge.push_back(h);
    Value rowHuge =
        vector::ReductionOp::create(b, loc, vector::CombiningKind::OR, h);
    anyHuge =
        anyHuge ? arith::OrIOp::create(b, loc, anyHuge, rowHuge) : rowHuge;
  }
  // P = 2^(St log2(e) - m2) in place, with its row sums.
  SmallVector<Value> sumInit(qVecs, zeroVec);
  // bf16: P in key pairs instead, for the dot products of P V.
  Value onePairs;
  if (bf16)
    onePairs = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(pairType(),
                               b.getFloatAttr(b.getBF16Type(), 1.0)));
  auto exponent = [&](Value s, int64_t i, bool exact) -> Value {
    Value fast = fma(s, log2e, negM2[i]);
    if (!exact)
      return fast;
    Value diff = arith::MulFOp::create(
        b, loc, arith::SubFOp::create(b, loc, s, mSafe[i]), log2e);
    return arith::SelectOp::create(b, loc, huge[i], diff, fast);
  };
  auto weightLoop = [&](bool exact) {
    return loop(
        cIdx(0), nkTiles, bf16 ? 2 : 1, sumInit, [&](Value j, ValueRange part) {
          SmallVector<Value> next;
          for (int64_t i = 0; i < qVecs; ++i) {
            SmallVector<Value> ps;
            for (int64_t e = 0; e < (bf16 ? 2 : 1); ++e) {
              Value row = add(j, e);
              // bf16: P is rounded to bf16 for P V and the row sums.
              ps.push_back(
                  exp2(exponent(loadVec(st, {row, cIdx(i * kLanes)}), i, exact),
                       /*roundedToBf16=*/bf16));
            }
            if (!bf16) {
              // l sums every weight; dropout then zeroes some of those that
              // reach V.
              next.push_back(arith::AddFOp::create(b, loc, part[i], ps[0]));
              if (dropBase)
                ps[0] = dropWeights(ps[0], add(j0, j), i);
              storeVec(ps[0], st, {j, cIdx(i * kLanes)});
              continue;
            }
            // The weights P V multiplies are bf16, and l sums the same
            // rounded values: a dot product of the pairs with ones adds both
            // keys of a row at once (one vdpbf16ps instead of widening each
            // half back to f32 and adding it). (The guarded path reads P
            // from the pairs, so St keeps the scores.)
            Value pairs = roundToPairs(ps[0], ps[1]);
            next.push_back(dot(part[i], pairs, onePairs));
            // Dropout: P V takes the pairs of the kept weights.
            if (dropBase)
              pairs = roundToPairs(dropWeights(ps[0], add(j0, j), i),
                                   dropWeights(ps[1], add(add(j0, j), 1), i));
            storeVec(pairs, pPairs, {pairRow(j), cIdx(2 * i * kLanes)});
          }
          return next;
        });
  };
  auto ifOp = scf::IfOp::create(b, loc, TypeRange(ValueRange(sumInit)), anyHuge,
                                /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    scf::YieldOp::create(b, loc, weightLoop(/*exact=*/true));
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, weightLoop(/*exact=*/false));
  }
  SmallVector<Value> sums(ifOp.getResults());
  emitOutputUpdate(j0, nk, masked);

  SmallVector<Value> next = mNew;
  for (int64_t i = 0; i < qVecs; ++i)
    next.push_back(fma(state[qVecs + i], alphas[i], sums[i]));
  return next;
}

void CpuFlashBuilder::emitOutputUpdate(Value j0, Value nk, bool masked) {
  // A key of weight exactly 0 (masked, or exp underflowed) must add nothing
  // even when its value is inf or NaN (0 * inf is NaN): the semantics of the
  // plain lowering. Guarding every FMA costs ~10%, so only key blocks of V
  // that hold non-finite values (checked once per call, checkValueBlocks)
  // take the guarded loop nest.
  Value total = memref::LoadOp::create(
      b, loc, vChecks,
      ValueRange{batch, kvHead, arith::DivUIOp::create(b, loc, j0, cIdx(bc))});
  Value finite =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ORD, total, total);
  auto ifOp = scf::IfOp::create(b, loc, finite, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    emitOutputTiles(j0, nk, masked, /*guardZeroWeights=*/false);
    b.setInsertionPointToStart(ifOp.elseBlock());
    emitOutputTiles(j0, nk, masked, /*guardZeroWeights=*/true);
  }
}

void CpuFlashBuilder::emitOutputTiles(Value j0, Value nk, bool masked,
                                      bool guardZeroWeights) {
  // O[i, :] = O[i, :] * alpha[i] + sum_j P[j, i] V[j, :], in register tiles
  // of rRows rows x vVecs vectors held across the block's keys.
  loop(cIdx(0), cIdx(br), rRows, {}, [&](Value i0, ValueRange) {
    // Blocks on the diagonal: the tile's rows see no key past
    // q0 + i0 + rRows - 1 + offset + band.right, whose weights are all 0
    // and add nothing; stopping there saves half of the block's FMAs.
    Value nkRows = nk;
    if (masked && band.right >= 0)
      nkRows =
          minI(nk, maxI(cIdx(0), sub(add(add(qStart, i0),
                                         add(offset, cIdx(rRows + band.right))),
                                     j0)));
    // Blocks on a left window edge: the tile's rows see no key before
    // q0 + i0 + offset - band.left either; bf16 starts at that key's pair.
    Value firstKey = cIdx(0);
    if (masked && band.left >= 0)
      firstKey = minI(
          maxI(cIdx(0), sub(add(add(qStart, i0), add(offset, -band.left)), j0)),
          nkRows);
    for (int64_t c0 = 0; c0 < dv; c0 += vVecs * kLanes) {
      SmallVector<Value> init;
      for (int64_t r = 0; r < rRows; ++r) {
        Value a = bcast(
            memref::LoadOp::create(b, loc, alpha, ValueRange{add(i0, r)}));
        for (int64_t c = 0; c < vVecs; ++c)
          init.push_back(arith::MulFOp::create(
              b, loc, loadVec(acc, {add(i0, r), cIdx(c0 + c * kLanes)}), a));
      }
      // bf16 (unguarded): key pairs, vdpbf16ps on 16 columns of V for two
      // keys and the broadcast pair (P[j, i], P[j + 1, i]).
      auto dotPairs = [&](Value jp, ValueRange o) {
        SmallVector<Value> vRow;
        for (int64_t c = 0; c < vVecs; ++c)
          vRow.push_back(vector::LoadOp::create(
              b, loc, pairType(), vPairs,
              pairIdx(add(pairRow(j0), jp), cIdx(2 * (c0 + c * kLanes)))));
        SmallVector<Value> next;
        for (int64_t r = 0; r < rRows; ++r) {
          Value pb = bcastPair(pPairs, {jp, mul(add(i0, r), 2)});
          for (int64_t c = 0; c < vVecs; ++c)
            next.push_back(dot(o[r * vVecs + c], vRow[c], pb));
        }
        return next;
      };
      SmallVector<Value> tile =
          bf16 && !guardZeroWeights
              ? loop(arith::DivUIOp::create(b, loc, firstKey, cIdx(2)),
                     arith::CeilDivUIOp::create(b, loc, nkRows, cIdx(2)), 1,
                     init, dotPairs)
              : loop(firstKey, nkRows, 1, init, [&](Value j, ValueRange o) {
                  SmallVector<Value> vRow;
                  for (int64_t c = 0; c < vVecs; ++c)
                    vRow.push_back(loadRow(v, at(batch, kvHead, add(j0, j),
                                                 cIdx(c0 + c * kLanes))));
                  SmallVector<Value> next;
                  for (int64_t r = 0; r < rRows; ++r) {
                    // bf16: P[j, i] is pPairs[j / 2, 2 i + j % 2].
                    Value p = bf16 ? pairWeight(j, add(i0, r))
                                   : memref::LoadOp::create(
                                         b, loc, st, ValueRange{j, add(i0, r)});
                    p = bcast(p);
                    // UNE: a NaN weight (inf - inf) still propagates.
                    Value nonZero;
                    if (guardZeroWeights)
                      nonZero = arith::CmpFOp::create(
                          b, loc, arith::CmpFPredicate::UNE, p, splat(0.0f));
                    for (int64_t c = 0; c < vVecs; ++c) {
                      Value prev = o[r * vVecs + c];
                      Value sum = fma(p, vRow[c], prev);
                      if (guardZeroWeights)
                        sum =
                            arith::SelectOp::create(b, loc, nonZero, sum, prev);
                      next.push_back(sum);
                    }
                  }
                  return next;
                });
      for (int64_t r = 0; r < rRows; ++r)
        for (int64_t c = 0; c < vVecs; ++c)
          storeVec(tile[r * vVecs + c], acc,
                   {add(i0, r), cIdx(c0 + c * kLanes)});
    }
    return SmallVector<Value>{};
  });
}

void CpuFlashBuilder::emitEpilogue(Value q0, ValueRange l) {
  // alpha's buffer is free now: it takes 1 / l (0 where l = 0).
  Value zeroVec = splat(0.0f);
  for (int64_t i = 0; i < qVecs; ++i) {
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l[i], zeroVec);
    Value inv = arith::SelectOp::create(
        b, loc, positive, arith::DivFOp::create(b, loc, splat(1.0f), l[i]),
        zeroVec);
    storeVec(inv, alpha, {cIdx(i * kLanes)});
  }
  Value rows = minI(cIdx(br), sub(tq, q0));
  loop(cIdx(0), rows, 1, {}, [&](Value r, ValueRange) {
    Value inv = bcast(memref::LoadOp::create(b, loc, alpha, ValueRange{r}));
    Value row = add(q0, r);
    for (int64_t c = 0; c < dv; c += kLanes) {
      Value o = arith::MulFOp::create(b, loc, loadVec(acc, {r, cIdx(c)}), inv);
      if (!ioElem.isF32())
        o = arith::TruncFOp::create(b, loc, ioVecType(), o);
      // Every element offset of `out` (dense, 64-byte aligned) at column c
      // is a multiple of 16 (dv and c are): 64 bytes for f32, 32 for bf16,
      // the alignment vmovntps needs.
      vector::StoreOp::create(b, loc, o, out, at(batch, head, row, cIdx(c)),
                              /*nontemporal=*/streamOut,
                              llvm::Align(ioElem.isF32() ? 64 : 32));
    }
    return SmallVector<Value>{};
  });
  // (Non-temporal stores are weakly ordered: attn-fence-streaming-stores
  // ends the item with a store fence once it is an OpenMP loop body.)
}

void CpuFlashBuilder::prepareMask() {
  Value m = op.getMask();
  auto mType = cast<RankedTensorType>(m.getType());
  // An f16 additive mask is widened to f32 once per call (it has no
  // 16-bit panel form of its own, as bf16's bits), then taken as an f32
  // one.
  if (mType.getElementType().isF16()) {
    m = widenMask(m, /*dropKeyDim=*/false, /*toZeroInf=*/false);
    mType = cast<RankedTensorType>(m.getType());
  }
  int64_t mr = mType.getRank();
  maskBool = mType.getElementType().isInteger(1);
  maskBf16 = mType.getElementType().isBF16();
  maskVaries = mr >= 2 && mType.getDimSize(mr - 2) != 1;
  // Broadcast along the keys: the last dim 1 where Tk is not (with Tk = 1,
  // Mt reads it as any other mask).
  int64_t tkStatic = op.getKey().getType().getDimSize(seqDim());
  if (maskVaries && mType.getShape().back() == 1 && tkStatic != 1) {
    maskVaries = false;
    maskRows = true;
  }
  // i1 elements are bytes in memory but bits in a vector register: a vector
  // load of i1 would read 16 bits, not 16 bytes. Any i1 or bf16 mask that
  // varies along the rows is therefore transposed once per call
  // (transposeOnce; bf16 as its bits, i1 as bytes, 1 where hidden), so the
  // per-block copies only ever read f32. A mask broadcast along the keys
  // becomes f32 rows [.., Tq] without the key dim (i1 as 0 / -inf), contiguous
  // along the rows for vector loads, whatever its element type; a bf16
  // key-padding mask is widened to f32 values like the scores.
  if (maskVaries && transposeOnce(mType)) {
    mask = transposeMask(toBuffer(m));
    maskTransposed = true;
    return;
  }
  bool widenBool = maskBool && maskRows;
  if (widenBool || maskRows || (!maskBool && !mType.getElementType().isF32()))
    m = widenMask(m, /*dropKeyDim=*/maskRows, widenBool);
  maskWidened = widenBool;
  mask = toBuffer(m);
}

Value CpuFlashBuilder::widenMask(Value m, bool dropKeyDim, bool toZeroInf) {
  auto mType = cast<RankedTensorType>(m.getType());
  int64_t outRank = mType.getRank() - (dropKeyDim ? 1 : 0);
  SmallVector<Value> dyn;
  SmallVector<AffineExpr> inExprs;
  for (int64_t i = 0; i < outRank; ++i) {
    if (mType.isDynamicDim(i))
      dyn.push_back(tensor::DimOp::create(b, loc, m, i));
    inExprs.push_back(b.getAffineDimExpr(i));
  }
  if (dropKeyDim)
    inExprs.push_back(b.getAffineConstantExpr(0));
  auto fType = RankedTensorType::get(mType.getShape().take_front(outRank),
                                     b.getF32Type());
  Value init = tensor::EmptyOp::create(b, loc, fType, dyn);
  AffineMap inMap = AffineMap::get(outRank, 0, inExprs, b.getContext());
  SmallVector<AffineMap> maps{inMap, b.getMultiDimIdentityMap(outRank)};
  SmallVector<utils::IteratorType> iters(outRank,
                                         utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, fType, ValueRange{m}, ValueRange{init}, maps, iters,
             [&](OpBuilder &nb, Location l, ValueRange a) {
               Value v = a[0];
               if (toZeroInf)
                 // The plain lowering's mask on a score of 0: 0 or -inf.
                 v = detail::buildApplyMask(
                     nb, l,
                     arith::ConstantOp::create(nb, l, nb.getF32FloatAttr(0.0f)),
                     v, op.getMaskKind());
               else if (!v.getType().isF32())
                 v = arith::ExtFOp::create(nb, l, nb.getF32Type(), v);
               linalg::YieldOp::create(nb, l, ValueRange{v});
             })
      .getResult(0);
}

Value CpuFlashBuilder::dropWeights(Value p, Value key, int64_t i) {
  // Lane l: counter dropBase + (16 i + l) Tk + key.
  Value first = add(add(dropBase, mul(cIdx(i * kLanes), tk)), key);
  auto i64Vec = VectorType::get({kLanes}, b.getI64Type());
  Value counters = arith::AddIOp::create(
      b, loc,
      vector::BroadcastOp::create(
          b, loc, i64Vec,
          arith::IndexCastOp::create(b, loc, b.getI64Type(), first)),
      dropLanes);
  Value u = detail::buildPhiloxUniform(b, loc, counters,
                                       static_cast<uint64_t>(op.getSeed()));
  float dropP = op.getDropoutP().convertToFloat();
  Value keep =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, u, splat(dropP));
  Value kept =
      arith::MulFOp::create(b, loc, p, splat(float(1.0 / (1.0 - dropP))));
  return arith::SelectOp::create(b, loc, keep, kept, splat(0.0f));
}

SmallVector<Value> CpuFlashBuilder::maskIndex(Value row, Value key) {
  // The rows of a mask broadcast along the keys have no key dim.
  return maskAt(cast<MemRefType>(mask.getType()), /*noKeyDim=*/maskRows,
                cIdx(0), batch, head, row, key);
}

void CpuFlashBuilder::packMask(Value j0) {
  // Like packQ: 16 rows of 16 keys, transposed in registers. The last key
  // chunk of K is a masked load (keys past Tk read 0: the end-of-K
  // predicate hides them). Each line loaded prefetches the line of the
  // next key block in its row: a block's window is 64 rows of 512 bytes,
  // each row in another 4 KiB page at T = 1024, too short a run per page
  // for the hardware prefetchers, and such masks (each element read once)
  // come from DRAM. (GPT-2's core under a [1, 12, T, T] bias: 3-5% faster;
  // two blocks ahead gained less.)
  Value lastRow = sub(tq, cIdx(1));
  auto laneMask = VectorType::get({kLanes}, b.getI1Type());
  loop(cIdx(0), cIdx(br), kLanes, {}, [&](Value r0, ValueRange) {
    loop(cIdx(0), cIdx(bc), kLanes, {}, [&](Value c0, ValueRange) {
      Value key0 = add(j0, c0);
      Value inK = vector::CreateMaskOp::create(
          b, loc, laneMask, ValueRange{maxI(sub(tk, key0), cIdx(0))});
      SmallVector<Value> rowsOfMask;
      Value nextKey = minI(add(key0, cIdx(bc)), sub(tk, cIdx(1)));
      for (int64_t l = 0; l < kLanes; ++l) {
        Value row = minI(add(qStart, add(r0, cIdx(l))), lastRow);
        rowsOfMask.push_back(vector::MaskedLoadOp::create(
            b, loc, vecType, mask, maskIndex(row, key0), inK, splat(0.0f)));
        memref::PrefetchOp::create(b, loc, mask, maskIndex(row, nextKey),
                                   /*isWrite=*/false, /*localityHint=*/3,
                                   /*isDataCache=*/true);
      }
      detail::transposeInRegisters(b, loc, rowsOfMask);
      for (int64_t l = 0; l < kLanes; ++l)
        storeVec(rowsOfMask[l], mt, {add(c0, cIdx(l)), r0});
      return SmallVector<Value>{};
    });
    return SmallVector<Value>{};
  });
}

bool CpuFlashBuilder::transposeOnce(RankedTensorType maskType) {
  // The per-block copies read f32 only: an i1 or bf16 mask is converted
  // once per call regardless (i1 to bytes; bf16 keeps its bits, loaded
  // without avx512_bf16), and that pass writes it transposed at no extra
  // cost.
  if (!maskType.getElementType().isF32())
    return true;
  // An f32 mask shared by several items of the same rows (broadcast over
  // batches or heads) would be transposed again by each of them, and the
  // per-block copies cost more than one pass over the mask (GPT-2's core
  // under a [1, 1, T, T] mask: 12 heads). A mask of its own per (batch,
  // head) is read once either way; a transposed copy would only add a pass.
  int64_t mr = maskType.getRank();
  auto qType = op.getQuery().getType();
  bool shared = false;
  for (int64_t sd = 0; sd + 2 < rank; ++sd) {
    int64_t a = sd - (rank - mr);
    bool broadcast = a < 0 || maskType.getDimSize(a) == 1;
    int64_t qDim = sd == rank - 3 ? headDim() : 0;
    shared |= broadcast && qType.getDimSize(qDim) != 1;
  }
  // The copy is as large as the mask: one whose static size exceeds the
  // limit keeps the per-block copies (more transposes, no second copy; a
  // [1, 1, 8192, 8192] mask is 256 MiB).
  if (shared && maskType.hasStaticShape() &&
      (maskType.getNumElements() * 4 + (int64_t(1) << 20) - 1) >> 20 >
          maskCopyLimitMiB)
    return false;
  return shared;
}

Value CpuFlashBuilder::transposeMask(Value src) {
  // MtAll[.., qb, c, r] = mask[.., qb Br + r, c] (a bf16 mask as its bits,
  // an i1 mask as a byte, 1 where hidden), in 16 x 16 blocks transposed in
  // registers like
  // Qt. Each item's
  // [Km, Br] panel is contiguous, so its key loop reads the mask as one
  // stream (a transposed [Km, Tq] copy put its keys Tq floats apart: 4 KiB
  // at Tq = 1024, which the prefetchers did not follow). Rows past Tq read
  // the last row (their outputs are never stored); keys are padded to a
  // multiple of 16 and past the mask's read its last key (the end-of-K
  // predicate hides them). The loop runs along the mask's rows, 16 of them
  // at a time, so that its reads are 16 sequential streams.
  auto srcType = cast<MemRefType>(src.getType());
  maskOperandType = srcType;
  int64_t mr = srcType.getRank();
  Type elem = srcType.getElementType();
  SmallVector<int64_t> shape;
  SmallVector<Value> dynSizes;
  SmallVector<OpFoldResult> ubs;
  for (int64_t a = 0; a + 2 < mr; ++a) {
    Value size = dimOf(src, a);
    shape.push_back(srcType.getDimSize(a));
    if (srcType.isDynamicDim(a))
      dynSizes.push_back(size);
    ubs.push_back(size);
  }
  Value rows = dimOf(src, mr - 2), keys = dimOf(src, mr - 1);
  Value rowBlocks = arith::CeilDivUIOp::create(b, loc, rows, cIdx(br));
  Value keyTiles = arith::CeilDivUIOp::create(b, loc, keys, cIdx(kLanes));
  int64_t staticRows = srcType.getDimSize(mr - 2),
          staticKeys = srcType.getDimSize(mr - 1);
  if (ShapedType::isDynamic(staticRows)) {
    shape.push_back(ShapedType::kDynamic);
    dynSizes.push_back(rowBlocks);
  } else {
    shape.push_back(llvm::divideCeil(staticRows, br));
  }
  if (ShapedType::isDynamic(staticKeys)) {
    shape.push_back(ShapedType::kDynamic);
    dynSizes.push_back(mul(keyTiles, kLanes));
  } else {
    shape.push_back(llvm::alignTo(staticKeys, kLanes));
  }
  shape.push_back(br);
  // An i1 mask stays one byte per element (1 where the key is hidden): a
  // quarter of f32's memory and of the key loop's mask traffic (a [1, 1, T,
  // T] mask at T = 8192 would otherwise take 256 MiB), applied by the same
  // select as the widened form.
  // A bf16 mask keeps its 16 bits (i16 panels, widened by a shift where a
  // tile reads them): half of an f32 copy's memory and traffic.
  Type allElem = maskBool   ? Type(b.getI8Type())
                 : maskBf16 ? Type(b.getI16Type())
                            : Type(b.getF32Type());
  Value all = memref::AllocOp::create(b, loc, MemRefType::get(shape, allElem),
                                      dynSizes, b.getI64IntegerAttr(64));
  ubs.push_back(mul(rowBlocks, br / kLanes));
  ubs.push_back(keyTiles);
  Value lastRow = sub(rows, cIdx(1)), lastKey = sub(keys, cIdx(1));
  bool keepWhereTrue = op.getMaskKind() == MaskKind::attend_where_true;
  // An i1 element is a byte in memory but a bit in a vector (a vector load
  // of i1 reads bits), and memref has no op that views i1 as i8: 16 keys of
  // an i1 row are loaded as 16 bytes through the buffer's address, from
  // its aligned pointer and strided metadata (taken once, here).
  Value maskBase, maskOffset;
  SmallVector<Value> maskStrides;
  if (maskBool) {
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, src);
    maskOffset = meta.getOffset();
    maskStrides.assign(meta.getStrides().begin(), meta.getStrides().end());
    maskBase = arith::IndexCastOp::create(
        b, loc, b.getI64Type(),
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, src));
  }
  auto loadBoolRow = [&](ValueRange idx) -> Value {
    Value linear = maskOffset;
    for (auto [i, stride] : llvm::zip(idx, maskStrides))
      linear = add(linear, mul(i, stride));
    Value address = arith::AddIOp::create(
        b, loc, maskBase,
        arith::IndexCastOp::create(b, loc, b.getI64Type(), linear));
    Value ptr = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()), address);
    auto bytesType = VectorType::get({kLanes}, b.getI8Type());
    Value bytes = LLVM::LoadOp::create(b, loc, bytesType, ptr, /*alignment=*/1);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, bytes,
                                 byteSplat(0));
  };
  scf::ForallOp::create(
      b, loc, ubs, ValueRange{}, std::nullopt,
      [&](OpBuilder &, Location, ValueRange ivs) {
        OpBuilder::InsertionGuard guard(b);
        SmallVector<Value> lead(ivs.drop_back(2));
        Value r0 = mul(ivs[mr - 2], kLanes), k0 = mul(ivs[mr - 1], kLanes);
        auto srcAt = [&](Value row, Value key) {
          SmallVector<Value> idx(lead);
          idx.push_back(row);
          idx.push_back(key);
          return idx;
        };
        Value inK;
        if (elem.isF32())
          inK = vector::CreateMaskOp::create(
              b, loc, VectorType::get({kLanes}, b.getI1Type()),
              ValueRange{maxI(sub(keys, k0), cIdx(0))});
        Value zero = splat(0.0f);
        // A masked vector load of bf16 on a CPU without avx512_bf16 is
        // legalized through f32 -> bf16 truncations (a libcall), and reading
        // past a row's end could leave the buffer: the last 16 keys, when Tk
        // is not a multiple of 16, are loaded as scalars (bf16 as its bits,
        // i1 as bits), the others with one vector load per row.
        auto rowOf = [&](int64_t l) { return minI(add(r0, l), lastRow); };
        auto scalars = [&](Value row) -> Value {
          SmallVector<Value> elems;
          for (int64_t e = 0; e < kLanes; ++e) {
            Value x = memref::LoadOp::create(
                b, loc, src, srcAt(row, minI(add(k0, e), lastKey)));
            if (maskBf16)
              x = arith::BitcastOp::create(b, loc, b.getI16Type(), x);
            elems.push_back(x);
          }
          return vector::FromElementsOp::create(
              b, loc, VectorType::get({kLanes}, elems[0].getType()), elems);
        };
        auto bf16Bits = [&](Value row) -> Value {
          Value x = vector::LoadOp::create(
              b, loc, VectorType::get({kLanes}, elem), src, srcAt(row, k0));
          return arith::BitcastOp::create(
              b, loc, VectorType::get({kLanes}, b.getI16Type()), x);
        };
        SmallVector<Value> vecs;
        if (elem.isF32()) {
          for (int64_t l = 0; l < kLanes; ++l)
            vecs.push_back(vector::MaskedLoadOp::create(
                b, loc, vecType, src, srcAt(rowOf(l), k0), inK, zero));
        } else {
          Value whole = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                                              add(k0, kLanes), keys);
          auto rowsOf = [&](bool vectorLoads) {
            SmallVector<Value> rowsLoaded;
            for (int64_t l = 0; l < kLanes; ++l)
              rowsLoaded.push_back(!vectorLoads ? scalars(rowOf(l))
                                   : maskBool ? loadBoolRow(srcAt(rowOf(l), k0))
                                              : bf16Bits(rowOf(l)));
            scf::YieldOp::create(b, loc, rowsLoaded);
          };
          auto ifOp = scf::IfOp::create(
              b, loc, whole, [&](OpBuilder &, Location) { rowsOf(true); },
              [&](OpBuilder &, Location) { rowsOf(false); });
          if (maskBf16) {
            vecs.assign(ifOp.getResults().begin(), ifOp.getResults().end());
          } else {
            // Hidden keys as byte 1 (attend_where_true: where the bit is 0).
            Value hiddenByte = byteSplat(1), seenByte = byteSplat(0);
            for (Value bits : ifOp.getResults())
              vecs.push_back(arith::SelectOp::create(
                  b, loc, bits, keepWhereTrue ? seenByte : hiddenByte,
                  keepWhereTrue ? hiddenByte : seenByte));
          }
        }
        detail::transposeInRegisters(b, loc, vecs);
        Value rowBlock =
            arith::DivUIOp::create(b, loc, ivs[mr - 2], cIdx(br / kLanes));
        Value col =
            mul(arith::RemUIOp::create(b, loc, ivs[mr - 2], cIdx(br / kLanes)),
                kLanes);
        for (int64_t l = 0; l < kLanes; ++l) {
          SmallVector<Value> idx(lead);
          idx.push_back(rowBlock);
          idx.push_back(add(k0, l));
          idx.push_back(col);
          storeVec(vecs[l], all, idx);
        }
        scf::InParallelOp::create(b, loc);
      });
  return all;
}

SmallVector<Value> CpuFlashBuilder::transposedMaskIndex(Value key, int64_t i) {
  // The operand's indices (0 in its broadcast dims) for the row block and
  // key; MtAll has the row block before the key and the row within it last.
  SmallVector<Value> idx = maskAt(maskOperandType, /*noKeyDim=*/false, cIdx(0),
                                  batch, head, qBlockIdx, key);
  idx.push_back(cIdx(i * kLanes));
  return idx;
}

Value CpuFlashBuilder::keyMaskValue(Value key) {
  // Row index 0: the mask's Tq dim is 1 or absent.
  return memref::LoadOp::create(b, loc, mask, maskIndex(cIdx(0), key));
}

void CpuFlashBuilder::loadRowMask() {
  // Rows past Tq read 0 (their outputs are never stored).
  auto laneMask = VectorType::get({kLanes}, b.getI1Type());
  rowMask.clear();
  for (int64_t i = 0; i < qVecs; ++i) {
    Value row0 = add(qStart, cIdx(i * kLanes));
    Value inQ = vector::CreateMaskOp::create(
        b, loc, laneMask, ValueRange{maxI(sub(tq, row0), cIdx(0))});
    rowMask.push_back(vector::MaskedLoadOp::create(
        b, loc, vecType, mask, maskIndex(row0, Value()), inQ, splat(0.0f)));
  }
}

Value CpuFlashBuilder::applyMask(Value s, Value keyValue, Value stRow,
                                 Value key, int64_t i) {
  Value minusInf = splat(-std::numeric_limits<float>::infinity());
  if (!maskVaries && !maskRows) {
    Value m = keyValue;
    if (!maskBool)
      return arith::AddFOp::create(b, loc, s, bcast(m));
    // A scalar condition selects the whole vector.
    bool keepWhereTrue = op.getMaskKind() == MaskKind::attend_where_true;
    return arith::SelectOp::create(b, loc, m, keepWhereTrue ? s : minusInf,
                                   keepWhereTrue ? minusInf : s);
  }
  if (maskTransposed && maskBf16) {
    // bf16 bits in the high half of an f32: the mask's value exactly.
    auto i32Type = VectorType::get({kLanes}, b.getI32Type());
    Value bits = vector::LoadOp::create(
        b, loc, VectorType::get({kLanes}, b.getI16Type()), mask,
        transposedMaskIndex(key, i));
    Value wide = arith::ShLIOp::create(
        b, loc, arith::ExtUIOp::create(b, loc, i32Type, bits),
        arith::ConstantOp::create(
            b, loc, DenseElementsAttr::get(i32Type, b.getI32IntegerAttr(16))));
    return arith::AddFOp::create(
        b, loc, s, arith::BitcastOp::create(b, loc, vecType, wide));
  }
  if (maskTransposed && maskBool) {
    auto bytesType = VectorType::get({kLanes}, b.getI8Type());
    Value bytes = vector::LoadOp::create(b, loc, bytesType, mask,
                                         transposedMaskIndex(key, i));
    Value hidden = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                         bytes, byteSplat(0));
    return arith::SelectOp::create(b, loc, hidden, minusInf, s);
  }
  Value m = maskRows         ? rowMask[i]
            : maskTransposed ? loadVec(mask, transposedMaskIndex(key, i))
                             : loadVec(mt, {stRow, cIdx(i * kLanes)});
  if (!maskWidened)
    return arith::AddFOp::create(b, loc, s, m);
  Value hidden =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m, minusInf);
  return arith::SelectOp::create(b, loc, hidden, minusInf, s);
}

struct AttnVectorizeSdpaPass
    : impl::AttnVectorizeSdpaPassBase<AttnVectorizeSdpaPass> {
  using Base::Base;

  void runOnOperation() override {
    if (blockQ < kLanes || blockQ % kLanes || blockQ > 256 || blockKV < 1 ||
        blockKV > 1024 || registerKeys < 1 || registerKeys > 64 ||
        registerRows < 1 || registerRows > 64 || accumulators < 1 ||
        accumulators > 64 || maskCopyLimitMiB < 0) {
      mlir::emitError(getOperation().getLoc())
          << "attn-vectorize-sdpa: block-q must be a multiple of 16 in "
             "[16, 256], block-kv in [1, 1024], register-keys, "
             "register-rows and accumulators in [1, 64], "
             "mask-copy-limit-mib >= 0; got block-q="
          << int64_t(blockQ) << " block-kv=" << int64_t(blockKV)
          << " register-keys=" << int64_t(registerKeys)
          << " register-rows=" << int64_t(registerRows)
          << " accumulators=" << int64_t(accumulators)
          << " mask-copy-limit-mib=" << int64_t(maskCopyLimitMiB);
      return signalPassFailure();
    }
    SmallVector<SdpaOp> ops;
    getOperation().walk([&](SdpaOp op) {
      if (unsupportedReason(op, bf16Dot, bf16Widen, f16Widen).empty())
        ops.push_back(op);
    });
    for (SdpaOp op : ops) {
      OpBuilder b(op);
      CpuFlashBuilder builder(b, op, blockQ, blockKV, registerKeys,
                              registerRows, accumulators, polynomialExp,
                              avx512Scalef, bf16Dot, streamingStores, parallel,
                              maskCopyLimitMiB);
      Value result = builder.build();
      op.getResult().replaceAllUsesWith(result);
      op.erase();
    }
  }
};

} // namespace
} // namespace mlir::attn
