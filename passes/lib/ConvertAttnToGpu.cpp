//===- ConvertAttnToGpu.cpp - convert-attn-to-gpu -------------------------===//
//
// attn.sdpa -> a FlashAttention-2 style kernel built from gpu, nvgpu, vector
// and scf ops, plus the host function that launches it.
//
// Work split (BM = 64 query rows per block, 4 warps of 16 rows each):
//   grid  = (ceil(Tq / BM), Hq, B), block = 128 threads.
//   Each warp keeps, in registers, its Q operand fragments, the running row
//   max m and partial row sum l (per thread: two rows, g and g + 8, of its
//   16), and the output accumulator (DV / 8 m16n8 f32 tiles).
//   Per key tile of BN rows the block stages K and V into shared memory,
//   then each warp computes S = Q K^T (m16n8k16 mma.sync), the online
//   softmax update in the log2 domain, and O += P V, where P is the S
//   accumulator converted in place: the m16n8 C-fragment layout of two
//   adjacent key tiles is exactly the m16n8k16 A-fragment layout.
//
// Fragment layouts (PTX ISA, mma.m16n8k16, lane = 4 * g + t):
//   A (16x16, row-major): [0] = (g, 2t..2t+1)   [1] = (g+8, 2t..2t+1)
//                         [2] = (g, 2t+8..+9)   [3] = (g+8, 2t+8..+9)
//   B (16x8, "col"):      [0] = (k 2t..2t+1, n g) [1] = (k 2t+8..+9, n g)
//   C (16x8, f32):        [0] = (g, 2t..2t+1)   [1] = (g+8, 2t..2t+1)
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"
#include "SdpaIndexing.h"
#include "attn/AttnOps.h"
#include "attn/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

#include <cmath>
#include <functional>
#include <limits>

namespace mlir::attn {
#define GEN_PASS_DEF_CONVERTATTNTOGPUPASS
#include "attn/Passes.h.inc"

namespace {

constexpr llvm::StringLiteral kKernelModule = "attn_gpu_kernels";

/// A reshape that only regroups dims. The GPU target's buffers are
/// contiguous and row-major, so on them it is a view: ONNX's 3-D attention
/// ([B, T, H * d] expanded to [B, T, H, d] around a seq_major attn.sdpa)
/// runs on the caller's buffers as they are.
bool isViewReshape(Operation *op) {
  return isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op);
}

/// A transpose that keeps the last dim (rows stay contiguous): on a buffer
/// it is a permuted view (memref.transpose). Head splits exported from
/// PyTorch transpose [B, T, H, d] to [B, H, T, d] before a KV cache's
/// concatenation.
bool isViewTranspose(Operation *op) {
  auto t = dyn_cast_or_null<linalg::TransposeOp>(op);
  return t && t.getPermutation().back() ==
                  static_cast<int64_t>(t.getPermutation().size()) - 1;
}

/// A reshape or transpose that becomes a view of a buffer.
bool isView(Operation *op) { return isViewReshape(op) || isViewTranspose(op); }

/// Whether the views from `v` back to where they start can be built: a
/// reshape of a permuted view has no view. An operand's views apply from
/// the source on; a result's are inverted on the contiguous result buffer
/// from the returned value on.
bool viewsBuildable(Value v, bool isResult) {
  bool permuted = false, reshaped = false;
  while (isView(v.getDefiningOp())) {
    bool reshape = isViewReshape(v.getDefiningOp());
    if (isResult ? (reshape && permuted) : (!reshape && reshaped))
      return false;
    permuted |= !reshape;
    reshaped |= reshape;
    v = v.getDefiningOp()->getOperand(0);
  }
  return true;
}

/// The memref view that view op `op` (isView) makes of buffer `src`, or
/// with `inverse` the view of a buffer of `op`'s result shape as its
/// source's shape (a result's views are undone on the result buffer).
Value buildView(OpBuilder &b, Operation *op, Value src, bool inverse) {
  Location loc = op->getLoc();
  if (auto t = dyn_cast<linalg::TransposeOp>(op)) {
    ArrayRef<int64_t> perm = t.getPermutation();
    SmallVector<int64_t> order =
        inverse ? invertPermutationVector(perm) : SmallVector<int64_t>(perm);
    return memref::TransposeOp::create(
        b, loc, src,
        AffineMapAttr::get(
            AffineMap::getPermutationMap(order, b.getContext())));
  }
  // Expanding one way is collapsing the other.
  auto expand = dyn_cast<tensor::ExpandShapeOp>(op);
  auto collapse = dyn_cast<tensor::CollapseShapeOp>(op);
  SmallVector<ReassociationIndices> groups =
      expand ? expand.getReassociationIndices()
             : collapse.getReassociationIndices();
  if (bool(expand) != inverse) {
    auto type = cast<RankedTensorType>(
        (inverse ? op->getOperand(0) : op->getResult(0)).getType());
    return memref::ExpandShapeOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()), src,
        groups);
  }
  return memref::CollapseShapeOp::create(b, loc, src, groups);
}

/// Why reshape `op` cannot become a memref view whose sizes follow from
/// its source's, or "" if it can.
std::string unsupportedReshape(Operation *op) {
  // A group of the expanded type with two dynamic dims has no inferable
  // split (and collapsing one is expanded again for results).
  auto expanded = cast<RankedTensorType>(isa<tensor::ExpandShapeOp>(op)
                                             ? op->getResult(0).getType()
                                             : op->getOperand(0).getType());
  auto groups =
      isa<tensor::ExpandShapeOp>(op)
          ? cast<tensor::ExpandShapeOp>(op).getReassociationIndices()
          : cast<tensor::CollapseShapeOp>(op).getReassociationIndices();
  for (const ReassociationIndices &g : groups)
    if (llvm::count_if(g, [&](int64_t d) { return expanded.isDynamicDim(d); }) >
        1)
      return "groups two dynamic dims";
  return "";
}

/// `v` back through views to the attn.sdpa that computes it (null if
/// none); `chain` gets the views, outermost first.
SdpaOp viewedSdpa(Value v, SmallVectorImpl<Operation *> *chain = nullptr) {
  while (isView(v.getDefiningOp())) {
    if (chain)
      chain->push_back(v.getDefiningOp());
    v = v.getDefiningOp()->getOperand(0);
  }
  return v.getDefiningOp<SdpaOp>();
}

/// Whether `v` comes from the entry point's arguments through views
/// (reshapes, transposes) and concatenations alone (KV caches: ONNX's
/// present_key is tensor.concat of past_key and the new keys along the
/// sequence).
bool fromArguments(Value v) {
  while (isView(v.getDefiningOp()))
    v = v.getDefiningOp()->getOperand(0);
  if (isa<BlockArgument>(v))
    return true;
  auto concat = v.getDefiningOp<tensor::ConcatOp>();
  return concat && llvm::all_of(concat.getInputs(), fromArguments);
}

/// Whether `v` is a scalar the host function can compute before the
/// launches: a constant, a dim of an argument (or of a view or
/// concatenation of arguments), or arith on such values.
bool hostComputable(Value v) {
  Operation *def = v.getDefiningOp();
  if (!def || !v.getType().isIntOrIndexOrFloat())
    return false;
  if (def->hasTrait<OpTrait::ConstantLike>())
    return true;
  if (auto dim = dyn_cast<tensor::DimOp>(def))
    return fromArguments(dim.getSource()) && hostComputable(dim.getIndex());
  return def->getDialect()->getNamespace() == "arith" &&
         def->getNumRegions() == 0 && isMemoryEffectFree(def) &&
         llvm::all_of(def->getOperands(), hostComputable);
}

/// `v` if it pads an argument (or a view of one) with a constant, at
/// static offsets: a mask generator reads such an input from the argument
/// and takes the constant outside it (ONNX pads a short mask to the keys).
tensor::PadOp paddedArgument(Value v) {
  auto pad = v.getDefiningOp<tensor::PadOp>();
  Value padding = pad ? pad.getConstantPaddingValue() : Value();
  if (!padding || !padding.getDefiningOp() ||
      !padding.getDefiningOp()->hasTrait<OpTrait::ConstantLike>() ||
      !fromArguments(pad.getSource()) ||
      llvm::any_of(pad.getStaticLow(), ShapedType::isDynamic))
    return {};
  return pad;
}

/// Why the mask `gen` computes cannot be evaluated per score in the kernel,
/// or "" if it can. A generator is an elementwise linalg.generic (ONNX's
/// nonpad_kv_seqlen and windowed KV caches build masks this way) whose
/// inputs are arguments (or views of them) read through maps of loop dims
/// and constants, and whose payload is side-effect free; values it uses
/// from outside are constants or host-computed scalars (`captured`).
std::string unsupportedGenerator(linalg::GenericOp gen,
                                 SmallVectorImpl<Value> &captured) {
  if (gen.getNumDpsInits() != 1 || gen->getNumResults() != 1)
    return "has several results";
  if (gen.getNumReductionLoops() != 0)
    return "reduces";
  auto maps = gen.getIndexingMapsArray();
  if (!maps.back().isIdentity())
    return "writes its result through a non-identity map";
  for (OpOperand *in : gen.getDpsInputOperands()) {
    Value read = in->get();
    if (auto pad = paddedArgument(read))
      read = pad.getSource();
    if (!isa<RankedTensorType>(read.getType()) || !fromArguments(read))
      return "reads a value that is not an argument";
    for (AffineExpr e : gen.getMatchingIndexingMap(in).getResults())
      if (!isa<AffineDimExpr, AffineConstantExpr>(e))
        return "reads an input through a map that is not a projection";
  }
  Block &body = gen.getRegion().front();
  if (!body.getArguments().back().use_empty())
    return "reads its output";
  llvm::SetVector<Value> outside;
  for (Operation &o : body.without_terminator()) {
    if (o.getNumRegions() != 0 || !isMemoryEffectFree(&o) ||
        (isa<linalg::LinalgDialect>(o.getDialect()) &&
         !isa<linalg::IndexOp>(o)))
      return "computes with '" + o.getName().getStringRef().str() + "'";
    for (Value operand : o.getOperands())
      if (operand.getParentRegion() != &gen.getRegion())
        outside.insert(operand);
  }
  for (Value c : outside) {
    Operation *def = c.getDefiningOp();
    if (def && def->hasTrait<OpTrait::ConstantLike>())
      continue;
    if (!hostComputable(c))
      return "uses a value the host cannot compute";
    captured.push_back(c);
  }
  return "";
}

/// Threads per block of the concatenation copy kernel.
constexpr int64_t kCopyThreads = 256;

/// A kernel that copies `src` into `dst` at `offset` along `dim` (the other
/// dims equal): one element per thread, the flat index decomposed over
/// src's dims. Launched with ceil(numel / 256) blocks (at least one).
gpu::GPUFuncOp buildCopyKernel(OpBuilder &b, Location loc,
                               gpu::GPUModuleOp kernels, StringRef name,
                               MemRefType src, MemRefType dst, int64_t dim) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(kernels.getBody());
  auto fn = gpu::GPUFuncOp::create(
      b, loc, name,
      FunctionType::get(b.getContext(), {src, dst, b.getIndexType()}, {}));
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  fn.setKnownBlockSizeAttr(
      b.getDenseI32ArrayAttr({int32_t(kCopyThreads), 1, 1}));
  b.setInsertionPointToStart(&fn.getBody().front());
  Value from = fn.getArgument(0), to = fn.getArgument(1),
        offset = fn.getArgument(2);
  auto cIdx = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value flat = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc,
                            gpu::BlockIdOp::create(b, loc, gpu::Dimension::x),
                            cIdx(kCopyThreads)),
      gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x));
  SmallVector<Value> sizes;
  Value count = cIdx(1);
  for (int64_t i = 0; i < src.getRank(); ++i) {
    sizes.push_back(memref::DimOp::create(b, loc, from, i));
    count = arith::MulIOp::create(b, loc, count, sizes.back());
  }
  auto inside = scf::IfOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, flat, count),
      /*withElseRegion=*/false);
  b.setInsertionPointToStart(inside.thenBlock());
  SmallVector<Value> idx(src.getRank());
  Value rest = flat;
  for (int64_t i = src.getRank() - 1; i >= 0; --i) {
    idx[i] = arith::RemUIOp::create(b, loc, rest, sizes[i]);
    rest = arith::DivUIOp::create(b, loc, rest, sizes[i]);
  }
  Value x = memref::LoadOp::create(b, loc, from, idx);
  idx[dim] = arith::AddIOp::create(b, loc, idx[dim], offset);
  memref::StoreOp::create(b, loc, x, to, idx);
  b.setInsertionPointToEnd(&fn.getBody().front());
  gpu::ReturnOp::create(b, loc);
  return fn;
}

/// Why `op` cannot run on the GPU path, or "" if it can.
std::string unsupportedReason(SdpaOp op) {
  auto qt = op.getQuery().getType(), kt = op.getKey().getType(),
       vt = op.getValue().getType();
  Type e = qt.getElementType();
  if (!e.isF16() && !e.isBF16() && !e.isF32())
    return "has element type " + [&] {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << e;
      return s;
    }() + "; the GPU kernel takes f16, bf16 or f32";
  if (kt.getElementType() != e || vt.getElementType() != e)
    return "mixes element types";
  if (qt.getRank() < 2 || qt.getRank() > 4)
    return "has rank-" + std::to_string(qt.getRank()) +
           " operands; the GPU kernel takes ranks 2 to 4 ([B, H, T, d])";
  if (qt.getRank() >= 3) {
    // GQA reads head h / (Hq / Hk): both head counts must be known.
    int64_t h = op.getHeadDimIndex();
    if (qt.isDynamicDim(h) || kt.isDynamicDim(h) || vt.isDynamicDim(h))
      return "has a dynamic head count; the GPU kernel needs static head "
             "counts";
  }
  if (kt.isDynamicDim(kt.getRank() - 1))
    return "has a dynamic key head dim; the GPU kernel needs it static";
  int64_t d = qt.getShape().back(), dv = vt.getShape().back();
  for (int64_t x : {d, dv})
    if (ShapedType::isDynamic(x) || x > 256)
      return "has head dim " +
             (ShapedType::isDynamic(x) ? std::string("?") : std::to_string(x)) +
             "; the GPU kernel needs static head dims up to 256";
  return "";
}

using detail::memrefDim;

/// Builds one flash-attention kernel and the host-side launch for one op.
class FlashKernelBuilder : detail::SdpaIndexing {
public:
  FlashKernelBuilder(SdpaOp op, bool useLdmatrix, bool f32AsF16, int64_t warps,
                     int64_t requestedBlockKV, int64_t stages)
      : SdpaIndexing(op), op(op), useLdmatrix(useLdmatrix),
        kThreads(32 * warps),
        kBlockQ(16 * warps) {
    auto qt = op.getQuery().getType();
    ioElem = qt.getElementType();
    // f32 operands feed the tensor cores rounded to bf16 (f32 range) or f16
    // (more mantissa); products and sums stay f32.
    elem = ioElem.isF32()
               ? (f32AsF16 ? Type(b.getF16Type()) : Type(b.getBF16Type()))
               : ioElem;
    dIn = qt.getShape().back();
    dvIn = op.getValue().getType().getShape().back();
    // The kernel computes on head dims rounded up to a multiple of 8: the
    // extra columns are zeros in Q and in the staged K and V tiles, and
    // are not stored.
    d = llvm::alignTo(dIn, 8);
    dv = llvm::alignTo(dvIn, 8);
    ragged = d != dIn || dv != dvIn;
    // Asynchronous copies move raw, 16-byte aligned bytes: f32 operands,
    // converted on the way in, and rows that are not a multiple of 16
    // bytes are staged synchronously.
    async = stages > 1 && !ioElem.isF32() && !ragged;
    numBuffers = async ? 2 : 1;
    // numBuffers x (K and V tiles of BN x padded row) must fit the 48 KiB
    // of static shared memory.
    blockKV = requestedBlockKV;
    int64_t bytes = elem.getIntOrFloatBitWidth() / 8;
    // Halving keeps a multiple of 16: the P V product takes keys 16 at a
    // time.
    while (blockKV > 16 &&
           numBuffers * blockKV * (paddedRow(d) + paddedRow(dv)) * bytes >
               48 * 1024)
      blockKV = std::max<int64_t>(16, blockKV / 2 / 16 * 16);
  }

  /// Elements per staged row of `width` (a multiple of 8): an odd number
  /// of 16-byte units, so that the 8 rows one fragment load touches start
  /// in different banks (widths that are multiples of 16 get 8 more).
  static int64_t paddedRow(int64_t width) {
    return width % 16 == 0 ? width + 8 : width;
  }

  /// The mask is computed by `gen` per score rather than read: the kernel
  /// takes gen's inputs, then the `captured` scalars, after q, k and v.
  void setMaskGenerator(linalg::GenericOp gen, ArrayRef<Value> captured) {
    maskGen = gen;
    capturedSrc.assign(captured.begin(), captured.end());
  }

  /// The kernel's gpu.func inside `kernels`, named `name`.
  gpu::GPUFuncOp buildKernel(gpu::GPUModuleOp kernels, StringRef name,
                             TypeRange argTypes);
  /// Launches `kernel` on `args` (q, k, v, [mask,] out memrefs) at `b`.
  void buildLaunch(OpBuilder &b, Location loc, gpu::GPUFuncOp kernel,
                   ValueRange args);

private:
  // --- small builders (kernel body) ---
  Value cIdx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value cF32(float v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value add(Value x, int64_t c) { return c ? add(x, cIdx(c)) : x; }
  Value mul(Value x, int64_t c) {
    return arith::MulIOp::create(b, loc, x, cIdx(c));
  }
  Value dimOf(Value memref, int64_t i) { return memrefDim(b, loc, memref, i); }
  /// Two adjacent elements, in the compute type.
  /// Indices into a staged tile: [buffer, row, col] when double-buffered.
  SmallVector<Value> tileIdx(Value buf, Value row, Value col) {
    if (numBuffers > 1)
      return {buf, row, col};
    return {row, col};
  }
  /// Element [batch, head, row, col] of `src`, or zero at col >= width
  /// (the load reads col clamped to the row, so it stays in bounds).
  Value loadOrZero(Value src, Value batchIdx, Value headIdx, Value row,
                   Value col, int64_t width) {
    Type t = cast<MemRefType>(src.getType()).getElementType();
    Value inside = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col,
                                         cIdx(width));
    Value x = memref::LoadOp::create(
        b, loc, src,
        at(batchIdx, headIdx, row,
           arith::MinUIOp::create(b, loc, col, cIdx(width - 1))));
    return arith::SelectOp::create(
        b, loc, inside, x, arith::ConstantOp::create(b, loc, b.getZeroAttr(t)));
  }
  /// Q's elements (row, col) and (row, col + 1), zeros past the head dim.
  Value qPairOrZero(Value row, Value col) {
    Type t = cast<MemRefType>(q.getType()).getElementType();
    Value pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, t),
        ValueRange{loadOrZero(q, batch, head, row, col, dIn),
                   loadOrZero(q, batch, head, row, add(col, 1), dIn)});
    return toCompute(pair);
  }
  Value loadPair(Value memref, ValueRange idx) {
    Type t = cast<MemRefType>(memref.getType()).getElementType();
    Value pair = vector::LoadOp::create(
        b, loc, VectorType::get({2}, t), memref, idx, /*nontemporal=*/false,
        llvm::MaybeAlign(2 * t.getIntOrFloatBitWidth() / 8));
    return toCompute(pair);
  }
  Value toCompute(Value vec) {
    auto vt = cast<VectorType>(vec.getType());
    if (vt.getElementType() == elem)
      return vec;
    return arith::TruncFOp::create(b, loc, vt.clone(elem), vec);
  }
  Value mma(Value a, Value bFrag, Value c) {
    if (elem.isF16())
      return nvgpu::MmaSyncOp::create(b, loc, a, bFrag, c,
                                      ArrayRef<int64_t>{16, 8, 16});
    return mmaBF16(a, bFrag, c);
  }
  /// nvgpu.mma.sync has no bf16 lowering: emit nvvm.mma.sync on the packed
  /// registers (each i32 holds an element pair) directly.
  Value mmaBF16(Value a, Value bFrag, Value c) {
    auto i32 = b.getI32Type();
    auto f32 = b.getF32Type();
    auto regs = [&](Value frag, int64_t n) {
      SmallVector<Value> out;
      for (int64_t i = 0; i < n; ++i) {
        Value pair =
            vector::ExtractOp::create(b, loc, frag, ArrayRef<int64_t>{i});
        Value word =
            vector::BitCastOp::create(b, loc, VectorType::get({1}, i32), pair);
        out.push_back(
            vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0}));
      }
      return out;
    };
    SmallVector<Value> cRegs;
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t e = 0; e < 2; ++e)
        cRegs.push_back(
            vector::ExtractOp::create(b, loc, c, ArrayRef<int64_t>{r, e}));
    auto resultType = LLVM::LLVMStructType::getLiteral(
        b.getContext(), SmallVector<Type>(4, f32));
    Value d = NVVM::MmaOp::create(
        b, loc, resultType, regs(a, 4), regs(bFrag, 2), cRegs,
        ArrayRef<int64_t>{16, 8, 16}, std::nullopt, std::nullopt,
        std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                      NVVM::MMATypes::bf16},
        std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                       NVVM::MMALayout::col});
    SmallVector<Value> outs;
    for (int64_t i = 0; i < 4; ++i)
      outs.push_back(LLVM::ExtractValueOp::create(b, loc, d, i));
    return vector::FromElementsOp::create(b, loc, c.getType(), outs);
  }
  /// Sum or max over the 4 lanes of a quad (the threads sharing a row).
  Value quadReduce(Value x, bool isMax) {
    for (int32_t offset : {1, 2}) {
      Value other =
          gpu::ShuffleOp::create(b, loc, x, offset, 32, gpu::ShuffleMode::XOR)
              .getShuffleResult();
      x = isMax ? Value(arith::MaximumFOp::create(b, loc, x, other))
                : Value(arith::AddFOp::create(b, loc, x, other));
    }
    return x;
  }

  std::pair<Value, Value> chunkAt(int64_t step, int64_t width);
  void stageTile(Value src, Value smem, int64_t width, int64_t stored,
                 Value kv0);
  SmallVector<Value> stageTileAsync(Value src, Value smem, int64_t width,
                                    Value kv0, Value buf, Value wanted);
  SmallVector<Value> emitKeyTile(Value kv0, Value buf, ValueRange state,
                                 bool masked);
  Value logitLog2(Value s);
  Value applyMask(Value x, Value row, Value key);
  Value generateMask(Value row, Value key);
  Value dropWeight(Value p, int64_t r, Value key);

  SdpaOp op;
  bool useLdmatrix;
  int64_t kThreads, kBlockQ; // threads per block, query rows per block
  bool async = false;        // cp.async double buffering of K/V tiles
  int64_t numBuffers = 1;
  Type ioElem, elem;
  // Head dims as computed (multiples of 8) and as stored in memory.
  int64_t d = 0, dv = 0, dIn = 0, dvIn = 0, blockKV = 64;
  bool ragged = false;

  // Kernel-body state, valid while buildKernel runs.
  OpBuilder b{op.getContext()};
  Location loc = op.getLoc();
  Value q, k, v, mask, out, kSmem, vSmem;
  // A mask generator, its kernel arguments and the source values of its
  // captured scalars.
  linalg::GenericOp maskGen;
  SmallVector<Value> genInputs, genCaptured, capturedSrc;
  Value tid, lane, g, t, batch, head, kvHead, tq, tk, rowA, rowB, offset;
  // rowA, rowB clamped to the last query row (rows past Tq read it; their
  // results are never stored).
  Value rowAc, rowBc;
  Value log2Scale, kvLimit, prologueGroup;
  // Dropout: the flat score index of key 0 in rows rowA and rowB.
  Value dropRowBase[2];
  SmallVector<Value> qFrags;
  // The keys row i sees around its diagonal key i + offset.
  detail::KeyBand band{op};
};

/// (row, column) in a staged tile of `width` columns of the 8-element
/// chunk that this thread copies in `step`. When the chunk count is not a
/// multiple of the block size, the last step's surplus threads repeat the
/// tile's last chunk (the same bytes to the same place).
std::pair<Value, Value> FlashKernelBuilder::chunkAt(int64_t step,
                                                    int64_t width) {
  int64_t chunksPerRow = width / 8;
  int64_t chunks = blockKV * chunksPerRow;
  Value c = add(tid, step * kThreads);
  if ((step + 1) * kThreads > chunks)
    c = arith::MinUIOp::create(b, loc, c, cIdx(chunks - 1));
  Value row = arith::DivUIOp::create(b, loc, c, cIdx(chunksPerRow));
  Value col = mul(arith::RemUIOp::create(b, loc, c, cIdx(chunksPerRow)), 8);
  return {row, col};
}

/// Copies rows [kv0, kv0 + BN) of `src` (key/value head `kvHead`) into the
/// shared tile `smem`, 8 columns per thread and step; rows past the end
/// repeat the last row (they are masked out of the softmax). Of the tile's
/// `width` columns, the first `stored` are in memory and the rest zeros.
void FlashKernelBuilder::stageTile(Value src, Value smem, int64_t width,
                                   int64_t stored, Value kv0) {
  Value lastRow = arith::SubIOp::create(b, loc, tk, cIdx(1));
  auto chunkType = VectorType::get({8}, ioElem);
  for (int64_t step = 0; step * kThreads < blockKV * (width / 8); ++step) {
    auto [row, col] = chunkAt(step, width);
    Value srcRow = arith::MinUIOp::create(b, loc, add(kv0, row), lastRow);
    Value data;
    if (stored == width) {
      data = toCompute(vector::LoadOp::create(
          b, loc, chunkType, src, at(batch, kvHead, srcRow, col),
          /*nontemporal=*/false, llvm::MaybeAlign(16)));
    } else {
      // A head dim that is not a multiple of 8: element loads (rows are
      // not 16-byte aligned), zeros past the head dim.
      SmallVector<Value, 8> elems;
      for (int64_t e = 0; e < 8; ++e)
        elems.push_back(
            loadOrZero(src, batch, kvHead, srcRow, add(col, e), stored));
      data =
          toCompute(vector::FromElementsOp::create(b, loc, chunkType, elems));
    }
    vector::StoreOp::create(b, loc, data, smem, ValueRange{row, col},
                            /*nontemporal=*/false, llvm::MaybeAlign(16));
  }
}

/// Issues cp.async copies (16 bytes each, L2 only) of rows [kv0, kv0 + BN)
/// into buffer `buf` of `smem`. Rows past the keys, and every row when
/// `wanted` is false (the prefetch after the last tile), copy 0 source bytes:
/// the hardware zero-fills them and reads nothing.
SmallVector<Value> FlashKernelBuilder::stageTileAsync(Value src, Value smem,
                                                      int64_t width, Value kv0,
                                                      Value buf, Value wanted) {
  Value lastRow = arith::SubIOp::create(b, loc, tk, cIdx(1));
  auto tokenType = nvgpu::DeviceAsyncTokenType::get(b.getContext());
  SmallVector<Value> tokens;
  for (int64_t step = 0; step * kThreads < blockKV * (width / 8); ++step) {
    auto [row, col] = chunkAt(step, width);
    Value keyRow = add(kv0, row);
    Value inRange = arith::AndIOp::create(
        b, loc, wanted,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, keyRow, tk));
    Value srcRow = arith::MinUIOp::create(b, loc, keyRow, lastRow);
    Value srcElems = arith::SelectOp::create(b, loc, inRange, cIdx(8), cIdx(0));
    tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
        b, loc, tokenType, smem, tileIdx(buf, row, col), src,
        at(batch, kvHead, srcRow, col), b.getIndexAttr(8), srcElems,
        b.getUnitAttr()));
  }
  return tokens;
}

/// One key tile of the online softmax: `state` is (mA, mB, lA, lB, acc...).
SmallVector<Value> FlashKernelBuilder::emitKeyTile(Value kv0, Value buf,
                                                   ValueRange state,
                                                   bool masked) {
  auto fragB = VectorType::get({2, 2}, elem);
  auto fragA = VectorType::get({4, 2}, elem);
  auto accType = VectorType::get({2, 2}, b.getF32Type());
  float negInf = -std::numeric_limits<float>::infinity();

  if (async) {
    // Prefetch the next tile into the other buffer, then wait for this
    // one: every iteration commits one group (empty copies past the end),
    // so "all but the newest group" is always this tile.
    Value next = add(kv0, blockKV);
    Value wanted =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, next, kvLimit);
    Value nextBuf = arith::SubIOp::create(b, loc, cIdx(1), buf);
    SmallVector<Value> tokens =
        stageTileAsync(k, kSmem, d, next, nextBuf, wanted);
    tokens.append(stageTileAsync(v, vSmem, dv, next, nextBuf, wanted));
    Value group = nvgpu::DeviceAsyncCreateGroupOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
    nvgpu::DeviceAsyncWaitOp::create(b, loc, group, b.getI32IntegerAttr(1));
    gpu::BarrierOp::create(b, loc);
  } else {
    gpu::BarrierOp::create(b, loc); // the previous tile is consumed
    stageTile(k, kSmem, d, dIn, kv0);
    stageTile(v, vSmem, dv, dvIn, kv0);
    gpu::BarrierOp::create(b, loc);
  }

  // S = Q K^T for this warp's 16 rows and the tile's BN keys.
  int64_t nTiles = blockKV / 8;
  Value zeroAcc = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
  SmallVector<Value> s(nTiles, zeroAcc);
  // A head dim d = 16 n + 8 ends in a half step: keys' columns 16 n + 8 ..
  // are not there, and the Q operand holds zeros for them.
  auto zeroPair = [&] {
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(VectorType::get({2}, elem),
                               b.getZeroAttr(elem)));
  };
  for (int64_t ks = 0; ks < (d + 15) / 16; ++ks) {
    bool halfStep = 16 * ks + 8 >= d;
    for (int64_t nt = 0; nt < nTiles; ++nt) {
      Value bFrag;
      if (useLdmatrix && halfStep) {
        // x1: lanes 0-7 address keys nt*8.. at columns 16ks.. (b0b1).
        Value row = add(arith::RemUIOp::create(b, loc, lane, cIdx(8)), nt * 8);
        Value lo = nvgpu::LdMatrixOp::create(
            b, loc, VectorType::get({1, 2}, elem), kSmem,
            tileIdx(buf, row, cIdx(ks * 16)), /*transpose=*/false,
            /*numTiles=*/1);
        Value frag = ub::PoisonOp::create(b, loc, fragB);
        frag = vector::InsertOp::create(
            b, loc, vector::ExtractOp::create(b, loc, lo, ArrayRef<int64_t>{0}),
            frag, ArrayRef<int64_t>{0});
        bFrag = vector::InsertOp::create(b, loc, zeroPair(), frag,
                                         ArrayRef<int64_t>{1});
      } else if (useLdmatrix) {
        // x2 non-transposed: lanes 0-7 address keys nt*8.. at columns
        // 16ks.., lanes 8-15 the same keys at 16ks + 8.. (b0b1, b2b3).
        Value l8 = arith::RemUIOp::create(b, loc, lane, cIdx(8));
        Value hi = arith::RemUIOp::create(
            b, loc, arith::DivUIOp::create(b, loc, lane, cIdx(8)), cIdx(2));
        Value row = add(l8, nt * 8);
        Value col = add(mul(hi, 8), ks * 16);
        bFrag = nvgpu::LdMatrixOp::create(b, loc, fragB, kSmem,
                                          tileIdx(buf, row, col),
                                          /*transpose=*/false, /*numTiles=*/2);
      } else {
        Value row = add(g, nt * 8);
        Value col = add(mul(t, 2), ks * 16);
        Value lo = loadPair(kSmem, tileIdx(buf, row, col));
        Value hi = halfStep ? Value(zeroPair())
                            : loadPair(kSmem, tileIdx(buf, row, add(col, 8)));
        Value frag = ub::PoisonOp::create(b, loc, fragB);
        frag = vector::InsertOp::create(b, loc, lo, frag, ArrayRef<int64_t>{0});
        bFrag =
            vector::InsertOp::create(b, loc, hi, frag, ArrayRef<int64_t>{1});
      }
      s[nt] = mma(qFrags[ks], bFrag, s[nt]);
    }
  }

  // Scores in the log2 domain, masked where needed.
  // x[nt][r][e]: row (r ? g+8 : g), key kv0 + nt*8 + 2t + e.
  Value negInfV = cF32(negInf);
  SmallVector<SmallVector<Value, 4>> x(nTiles);
  Value twoT = mul(t, 2);
  for (int64_t nt = 0; nt < nTiles; ++nt)
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t e = 0; e < 2; ++e) {
        Value val =
            vector::ExtractOp::create(b, loc, s[nt], ArrayRef<int64_t>{r, e});
        val = logitLog2(val);
        Value key = add(add(kv0, twoT), nt * 8 + e);
        if (mask || maskGen) {
          // Keys past Tk (masked tiles only) read the last key's entry;
          // the end-of-keys predicate below hides them.
          Value maskKey = masked
                              ? Value(arith::MinUIOp::create(
                                    b, loc, key,
                                    arith::SubIOp::create(b, loc, tk, cIdx(1))))
                              : key;
          val = applyMask(val, r ? rowBc : rowAc, maskKey);
        }
        if (masked) {
          Value ok =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, key, tk);
          Value diag = add(r ? rowB : rowA, offset);
          if (band.right >= 0)
            ok = arith::AndIOp::create(
                b, loc, ok,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, key,
                                      add(diag, band.right)));
          if (band.left >= 0)
            ok = arith::AndIOp::create(
                b, loc, ok,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, key,
                                      add(diag, -band.left)));
          val = arith::SelectOp::create(b, loc, ok, val, negInfV);
        }
        x[nt].push_back(val);
      }

  // Online softmax: new running max, rescale factor, probabilities.
  SmallVector<Value> next;
  SmallVector<Value, 2> alpha, newM, mSub;
  Value zero = cF32(0.0f);
  for (int64_t r = 0; r < 2; ++r) {
    Value m = x[0][2 * r];
    for (int64_t nt = 0; nt < nTiles; ++nt)
      for (int64_t e = 0; e < 2; ++e)
        if (nt || e)
          m = arith::MaximumFOp::create(b, loc, m, x[nt][2 * r + e]);
    m = quadReduce(m, /*isMax=*/true);
    Value mNew = arith::MaximumFOp::create(b, loc, state[r], m);
    // Rows that have seen no key yet keep m = -inf; subtract 0 instead so
    // that exp2 gives 0, not NaN.
    Value isNone =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, mNew, negInfV);
    Value mSafe = arith::SelectOp::create(b, loc, isNone, zero, mNew);
    alpha.push_back(math::Exp2Op::create(
        b, loc, arith::SubFOp::create(b, loc, state[r], mSafe)));
    newM.push_back(mNew);
    mSub.push_back(mSafe);
  }
  SmallVector<SmallVector<Value, 4>> p(nTiles);
  SmallVector<Value, 2> sums{zero, zero};
  for (int64_t nt = 0; nt < nTiles; ++nt)
    for (int64_t r = 0; r < 2; ++r)
      for (int64_t e = 0; e < 2; ++e) {
        Value pe = math::Exp2Op::create(
            b, loc, arith::SubFOp::create(b, loc, x[nt][2 * r + e], mSub[r]));
        sums[r] = arith::AddFOp::create(b, loc, sums[r], pe);
        p[nt].push_back(pe);
      }
  next.append(newM.begin(), newM.end());
  for (int64_t r = 0; r < 2; ++r)
    next.push_back(arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, state[2 + r], alpha[r]),
        sums[r]));

  // Rescale the accumulator rows: [[aA, aA], [aB, aB]].
  Value scaleVec = vector::FromElementsOp::create(
      b, loc, accType, ValueRange{alpha[0], alpha[0], alpha[1], alpha[1]});
  SmallVector<Value> acc;
  for (Value a : state.drop_front(4))
    acc.push_back(arith::MulFOp::create(b, loc, a, scaleVec));

  // P as A operands: key slab kk covers key tiles 2kk and 2kk + 1.
  SmallVector<Value> pFrags;
  for (int64_t kk = 0; kk < blockKV / 16; ++kk) {
    SmallVector<Value, 8> elems;
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t e = 0; e < 2; ++e) {
          // The row sums took every weight; dropout then zeroes some of
          // the P V operands and scales the rest.
          Value pe = p[2 * kk + half][2 * r + e];
          if (dropRowBase[0])
            pe =
                dropWeight(pe, r, add(add(kv0, twoT), (2 * kk + half) * 8 + e));
          elems.push_back(arith::TruncFOp::create(b, loc, elem, pe));
        }
    pFrags.push_back(vector::FromElementsOp::create(b, loc, fragA, elems));
  }

  // O += P V.
  for (int64_t kk = 0; kk < blockKV / 16; ++kk) {
    for (int64_t nt = 0; nt < dv / 8; ++nt) {
      Value bFrag;
      if (useLdmatrix) {
        // x2 transposed: lanes 0-7 address keys 16kk.., lanes 8-15 keys
        // 16kk + 8.., all at columns nt*8..; each lane receives keys
        // 2t, 2t+1 (+8) of column g.
        Value l16 = arith::RemUIOp::create(b, loc, lane, cIdx(16));
        Value row = add(l16, kk * 16);
        bFrag = nvgpu::LdMatrixOp::create(b, loc, fragB, vSmem,
                                          tileIdx(buf, row, cIdx(nt * 8)),
                                          /*transpose=*/true, /*numTiles=*/2);
      } else {
        Value col = add(g, nt * 8);
        SmallVector<Value, 4> elems;
        for (int64_t off : {0, 1, 8, 9})
          elems.push_back(memref::LoadOp::create(
              b, loc, vSmem, tileIdx(buf, add(twoT, kk * 16 + off), col)));
        bFrag = vector::FromElementsOp::create(b, loc, fragB, elems);
      }
      acc[nt] = mma(pFrags[kk], bFrag, acc[nt]);
    }
  }
  next.append(acc.begin(), acc.end());
  if (async) // the buffer is refilled two tiles from now
    gpu::BarrierOp::create(b, loc);
  return next;
}

/// A raw score of the S = Q K^T product as the log2-domain logit the
/// online softmax takes: s * scale * log2(e), or with a softcap c,
/// c tanh(s * scale / c) * log2(e). tanh(y) = 1 - 2 / (e^{2y} + 1) runs on
/// the exp2 the softmax already uses (ex2.approx): it saturates to +-1
/// through e^{2y} = inf or 0, and near 0 it loses only the absolute
/// error of 1 (about 6e-8 of c), far below what rounding P to 16 bits
/// costs.
Value FlashKernelBuilder::logitLog2(Value s) {
  std::optional<APFloat> cap = op.getSoftcap();
  if (!cap)
    return arith::MulFOp::create(b, loc, s, log2Scale);
  float c = cap->convertToFloat();
  float scale = static_cast<float>(op.getEffectiveScale());
  Value y2 = arith::MulFOp::create(
      b, loc, s, cF32(2.0f * static_cast<float>(M_LOG2E) * scale / c));
  Value e = math::Exp2Op::create(b, loc, y2);
  Value tanh = arith::SubFOp::create(
      b, loc, cF32(1.0f),
      arith::DivFOp::create(b, loc, cF32(2.0f),
                            arith::AddFOp::create(b, loc, e, cF32(1.0f))));
  return arith::MulFOp::create(b, loc, tanh,
                               cF32(c * static_cast<float>(M_LOG2E)));
}

/// The mask generator's value at (row, key): its payload, cloned with its
/// loop indices set to the mask indices of the score (dims of size 1 at 0),
/// its inputs loaded through their maps, and its captured scalars taken
/// from the kernel's arguments.
Value FlashKernelBuilder::generateMask(Value row, Value key) {
  auto type = cast<RankedTensorType>(maskGen->getResult(0).getType());
  SmallVector<Value> idx =
      maskAt(MemRefType::get(type.getShape(), type.getElementType()),
             /*noKeyDim=*/false, cIdx(0), batch, head, row, key);
  Block &body = maskGen.getRegion().front();
  IRMapping map;
  for (auto [i, input] : llvm::enumerate(genInputs)) {
    SmallVector<Value> at;
    for (AffineExpr e : maskGen.getIndexingMapsArray()[i].getResults())
      at.push_back(isa<AffineDimExpr>(e)
                       ? idx[cast<AffineDimExpr>(e).getPosition()]
                       : cIdx(cast<AffineConstantExpr>(e).getValue()));
    auto pad = paddedArgument(maskGen.getDpsInputs()[i]);
    if (!pad) {
      map.map(body.getArgument(i), memref::LoadOp::create(b, loc, input, at));
      continue;
    }
    // A padded input: the argument's element at the index less the low
    // padding (clamped into it, so the load stays in bounds), or the
    // padding value outside it.
    Value inside;
    for (auto [d, low] : llvm::enumerate(pad.getStaticLow())) {
      Value size = memrefDim(b, loc, input, d);
      Value shifted = arith::SubIOp::create(b, loc, at[d], cIdx(low));
      // Unsigned: an index below the low padding wraps around, out of range.
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       shifted, size);
      inside = inside ? Value(arith::AndIOp::create(b, loc, inside, ok)) : ok;
      at[d] = arith::MinUIOp::create(
          b, loc, shifted, arith::SubIOp::create(b, loc, size, cIdx(1)));
    }
    Value x = memref::LoadOp::create(b, loc, input, at);
    Value padding =
        b.clone(*pad.getConstantPaddingValue().getDefiningOp())->getResult(0);
    map.map(body.getArgument(i),
            inside ? Value(arith::SelectOp::create(b, loc, inside, x, padding))
                   : x);
  }
  for (auto [src, arg] : llvm::zip(capturedSrc, genCaptured))
    map.map(src, arg);
  auto mapOutside = [&](Value v) {
    if (map.contains(v) || v.getParentRegion() == &maskGen.getRegion())
      return;
    // Constants from outside the payload are rebuilt here.
    map.map(v, b.clone(*v.getDefiningOp())->getResult(0));
  };
  for (Operation &o : body.without_terminator()) {
    if (auto index = dyn_cast<linalg::IndexOp>(o)) {
      map.map(index.getResult(), idx[index.getDim()]);
      continue;
    }
    for (Value operand : o.getOperands())
      mapOutside(operand);
    b.clone(o, map);
  }
  Value yielded = body.getTerminator()->getOperand(0);
  mapOutside(yielded);
  return map.lookup(yielded);
}

/// The explicit mask applied to log2-domain logit `x` of (row, key): a
/// bool mask hides it (-inf) where true (masked_where_true) or false
/// (attend_where_true), an additive one adds its value times log2(e). Mask dims
/// align with the trailing dims of the scores [B, Hq, Tq, Tk]; a dim of size 1
/// broadcasts.
Value FlashKernelBuilder::applyMask(Value x, Value row, Value key) {
  Value m =
      maskGen ? generateMask(row, key)
              : memref::LoadOp::create(b, loc, mask,
                                       maskAt(cast<MemRefType>(mask.getType()),
                                              /*noKeyDim=*/false, cIdx(0),
                                              batch, head, row, key));
  if (op.getMaskKind() == MaskKind::additive) {
    if (!m.getType().isF32())
      m = arith::ExtFOp::create(b, loc, b.getF32Type(), m);
    // Into the kernel's base-2 scores. finfo(f32).min times log2(e)
    // overflows to -inf, which would make a row that such a mask hides
    // entirely a row of zeros; it stays the most negative finite value (the
    // row's equal scores then weigh uniformly, as on the CPU and in torch).
    // -inf stays -inf.
    Value scaled =
        arith::MulFOp::create(b, loc, m, cF32(static_cast<float>(M_LOG2E)));
    Value ninf = cF32(-std::numeric_limits<float>::infinity());
    Value overflowed = arith::AndIOp::create(
        b, loc,
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, scaled, ninf),
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, m, ninf));
    m = arith::SelectOp::create(
        b, loc, overflowed, cF32(-std::numeric_limits<float>::max()), scaled);
  }
  return detail::buildApplyMask(b, loc, x, m, op.getMaskKind());
}

/// Dropout of weight `p` of row (r ? rowB : rowA), key `key`: kept, scaled
/// by 1 / (1 - p), iff the Philox-4x32-10 uniform of its flat index in
/// [B, Hq, Tq, Tk] is >= p; the CPU forms draw the same numbers.
Value FlashKernelBuilder::dropWeight(Value p, int64_t r, Value key) {
  Value counter = arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                             add(dropRowBase[r], key));
  // mul.hi.u32 for the high words: arith.mului_extended lowers to 64-bit
  // products, and LLVM then widens the generator's xors to 64 bits too.
  auto mulHi = [](OpBuilder &nb, Location l, Value x, Value y) -> Value {
    return LLVM::CallIntrinsicOp::create(nb, l, nb.getI32Type(),
                                         nb.getStringAttr("llvm.nvvm.mulhi.ui"),
                                         ValueRange{x, y})
        .getResult(0);
  };
  Value u = detail::buildPhiloxUniform(
      b, loc, counter, static_cast<uint64_t>(op.getSeed()), mulHi);
  float dropP = op.getDropoutP().convertToFloat();
  Value keep =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGE, u, cF32(dropP));
  Value kept = arith::MulFOp::create(
      b, loc, p, cF32(static_cast<float>(1.0 / (1.0 - dropP))));
  return arith::SelectOp::create(b, loc, keep, kept, cF32(0.0f));
}

gpu::GPUFuncOp FlashKernelBuilder::buildKernel(gpu::GPUModuleOp kernels,
                                               StringRef name,
                                               TypeRange argTypes) {
  b.setInsertionPointToEnd(kernels.getBody());
  auto ws =
      gpu::AddressSpaceAttr::get(op.getContext(), gpu::AddressSpace::Workgroup);
  auto tileType = [&](int64_t width) {
    SmallVector<int64_t> shape{blockKV, paddedRow(width)};
    if (numBuffers > 1)
      shape.insert(shape.begin(), numBuffers);
    return MemRefType::get(shape, elem, MemRefLayoutAttrInterface(), ws);
  };
  auto kTile = tileType(d), vTile = tileType(dv);
  auto fn = gpu::GPUFuncOp::create(
      b, loc, name, FunctionType::get(op.getContext(), argTypes, {}),
      TypeRange{kTile, vTile});
  fn->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), b.getUnitAttr());
  // 16-byte stores (staging) and ldmatrix rows need 16-byte alignment.
  for (unsigned i = 0; i < 2; ++i)
    fn.setWorkgroupAttributionAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                                   b.getI64IntegerAttr(16));
  fn.setKnownBlockSizeAttr(b.getDenseI32ArrayAttr({int32_t(kThreads), 1, 1}));
  Block &entry = fn.getBody().front();
  b.setInsertionPointToStart(&entry);
  q = fn.getArgument(0);
  k = fn.getArgument(1);
  v = fn.getArgument(2);
  if (maskGen) {
    unsigned numIn = maskGen.getNumDpsInputs();
    for (unsigned i = 0; i < numIn; ++i)
      genInputs.push_back(fn.getArgument(3 + i));
    for (unsigned i = 0; i < capturedSrc.size(); ++i)
      genCaptured.push_back(fn.getArgument(3 + numIn + i));
  } else if (op.getMask()) {
    mask = fn.getArgument(3);
  }
  out = fn.getArgument(fn.getNumArguments() - 1);
  kSmem = fn.getWorkgroupAttributions()[0];
  vSmem = fn.getWorkgroupAttributions()[1];

  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  Value warp = arith::DivUIOp::create(b, loc, tid, cIdx(32));
  lane = arith::RemUIOp::create(b, loc, tid, cIdx(32));
  g = arith::DivUIOp::create(b, loc, lane, cIdx(4));
  t = arith::RemUIOp::create(b, loc, lane, cIdx(4));
  Value qTile = gpu::BlockIdOp::create(b, loc, gpu::Dimension::x);
  head = gpu::BlockIdOp::create(b, loc, gpu::Dimension::y);
  batch = gpu::BlockIdOp::create(b, loc, gpu::Dimension::z);
  if (rank >= 3) {
    // Grouped-query attention: query head h reads K/V head h / (Hq / Hk).
    Value hq = dimOf(q, headDim()), hk = dimOf(k, headDim());
    Value group = arith::DivUIOp::create(b, loc, hq, hk);
    kvHead = arith::DivUIOp::create(b, loc, head, group);
  } else {
    kvHead = head;
  }
  tq = dimOf(q, seqDim());
  tk = dimOf(k, seqDim());
  offset = op.getCausal() == CausalKind::bottom_right
               ? Value(arith::SubIOp::create(b, loc, tk, tq))
               : cIdx(0);
  Value blockRow0 = mul(qTile, kBlockQ);
  rowA = add(add(blockRow0, mul(warp, 16)), g);
  rowB = add(rowA, 8);
  float scale = static_cast<float>(op.getEffectiveScale());
  log2Scale = cF32(scale * static_cast<float>(M_LOG2E));
  if (op.getDropoutP().convertToDouble() != 0.0) {
    Value hq = rank >= 3 ? dimOf(q, headDim()) : cIdx(1);
    Value plane = arith::MulIOp::create(
        b, loc, add(arith::MulIOp::create(b, loc, batch, hq), head), tq);
    for (int64_t r = 0; r < 2; ++r)
      dropRowBase[r] =
          arith::MulIOp::create(b, loc, add(plane, r ? rowB : rowA), tk);
  }

  // Q fragments for the whole head dim, loaded once (rows past Tq read the
  // last row; their results are never stored).
  Value lastQ = arith::SubIOp::create(b, loc, tq, cIdx(1));
  rowAc = arith::MinUIOp::create(b, loc, rowA, lastQ);
  rowBc = arith::MinUIOp::create(b, loc, rowB, lastQ);
  auto fragA = VectorType::get({4, 2}, elem);
  Value twoT = mul(t, 2);
  // A last half step (d = 16 n + 8) holds zeros in columns 16 n + 8 ..
  Value zeroPair = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(VectorType::get({2}, elem), b.getZeroAttr(elem)));
  for (int64_t ks = 0; ks < (d + 15) / 16; ++ks) {
    Value col = add(twoT, ks * 16);
    Value frag = ub::PoisonOp::create(b, loc, fragA);
    int64_t i = 0;
    for (int64_t half = 0; half < 2; ++half)
      for (Value r : {rowAc, rowBc})
        frag = vector::InsertOp::create(
            b, loc,
            half && 16 * ks + 8 >= d ? zeroPair
            : dIn == d ? loadPair(q, at(batch, head, r, add(col, 8 * half)))
                       : qPairOrZero(r, add(col, 8 * half)),
            frag, ArrayRef<int64_t>{i++});
    qFrags.push_back(frag);
  }

  // Key tiles: the block's rows lie on the diagonal keys row0 + offset ..
  // row0 + offset + BQ - 1. Tiles [t1, nFull), seen whole by every row,
  // need no mask; [t0, t1) (a window's left edge) and [nFull, nTiles) (the
  // causal diagonal, a right window edge, the end of the keys) do; tiles
  // outside [t0, nTiles) are never loaded.
  detail::KeyBand::Blocks tiles =
      band.blocks(b, loc, add(blockRow0, offset), kBlockQ, tk, blockKV);
  Value t0 = tiles.first, t1 = tiles.full, nFull = tiles.fullEnd,
        nTiles = tiles.end;
  kvLimit = mul(nTiles, blockKV);
  if (async) {
    // Prologue: the first visited tile into its buffer (none if the block
    // sees no key).
    Value first = mul(t0, blockKV);
    Value firstBuf = arith::RemUIOp::create(b, loc, t0, cIdx(2));
    Value any =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, t0, nTiles);
    SmallVector<Value> tokens =
        stageTileAsync(k, kSmem, d, first, firstBuf, any);
    tokens.append(stageTileAsync(v, vSmem, dv, first, firstBuf, any));
    prologueGroup = nvgpu::DeviceAsyncCreateGroupOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
  }

  auto accType = VectorType::get({2, 2}, b.getF32Type());
  SmallVector<Value> init{cF32(-std::numeric_limits<float>::infinity()),
                          cF32(-std::numeric_limits<float>::infinity()),
                          cF32(0.0f), cF32(0.0f)};
  Value zeroAcc = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(accType, b.getF32FloatAttr(0.0f)));
  init.append(dv / 8, zeroAcc);
  auto loopOver = [&](Value lo, Value hi, ValueRange state, bool masked) {
    auto loop = scf::ForOp::create(b, loc, lo, hi, cIdx(1), state);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value j = loop.getInductionVar();
    Value buf = arith::RemUIOp::create(b, loc, j, cIdx(2));
    SmallVector<Value> nextState =
        emitKeyTile(mul(j, blockKV), buf, loop.getRegionIterArgs(), masked);
    scf::YieldOp::create(b, loc, nextState);
    return SmallVector<Value>(loop.getResults());
  };
  SmallVector<Value> state(init.begin(), init.end());
  if (band.left >= 0)
    state = loopOver(t0, t1, state, true);
  state = loopOver(t1, nFull, state, false);
  state = loopOver(nFull, nTiles, state, true);
  if (async) // no copy group left pending at exit (the last prefetch)
    nvgpu::DeviceAsyncWaitOp::create(b, loc, prologueGroup, IntegerAttr());

  // out = acc / l; a row with no visible key gets 0.
  for (int64_t r = 0; r < 2; ++r) {
    Value l = quadReduce(state[2 + r], /*isMax=*/false);
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, l, cF32(0));
    Value inv = arith::SelectOp::create(
        b, loc, positive, arith::DivFOp::create(b, loc, cF32(1.0f), l),
        cF32(0.0f));
    Value row = r ? rowB : rowA;
    Value inside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row, tq);
    auto ifOp = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    for (int64_t nt = 0; nt < dv / 8; ++nt) {
      Value acc = state[4 + nt];
      SmallVector<Value, 2> pair;
      for (int64_t e = 0; e < 2; ++e) {
        Value o = arith::MulFOp::create(
            b, loc,
            vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{r, e}),
            inv);
        if (!ioElem.isF32())
          o = arith::TruncFOp::create(b, loc, ioElem, o);
        pair.push_back(o);
      }
      Value col = add(twoT, nt * 8);
      if (dvIn != dv) {
        // Element stores of the columns inside the value head dim.
        for (int64_t e = 0; e < 2; ++e) {
          Value c = add(col, e);
          auto store = scf::IfOp::create(
              b, loc,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c,
                                    cIdx(dvIn)),
              /*withElse=*/false);
          OpBuilder::InsertionGuard storeGuard(b);
          b.setInsertionPointToStart(store.thenBlock());
          memref::StoreOp::create(b, loc, pair[e], out,
                                  at(batch, head, row, c));
        }
        continue;
      }
      Value vec = vector::FromElementsOp::create(
          b, loc, VectorType::get({2}, ioElem), pair);
      vector::StoreOp::create(
          b, loc, vec, out, at(batch, head, row, col),
          /*nontemporal=*/false,
          llvm::MaybeAlign(2 * ioElem.getIntOrFloatBitWidth() / 8));
    }
  }
  gpu::ReturnOp::create(b, loc);
  return fn;
}

void FlashKernelBuilder::buildLaunch(OpBuilder &hb, Location l,
                                     gpu::GPUFuncOp kernel, ValueRange args) {
  auto dim = [&](Value m, int64_t i) { return memrefDim(hb, l, m, i); };
  Value one = arith::ConstantIndexOp::create(hb, l, 1);
  Value tqv = dim(args[0], seqDim());
  Value gridX = arith::CeilDivUIOp::create(
      hb, l, tqv, arith::ConstantIndexOp::create(hb, l, kBlockQ));
  Value gridY = rank >= 3 ? dim(args[0], headDim()) : one;
  Value gridZ = rank == 4 ? dim(args[0], 0) : one;
  Value threads = arith::ConstantIndexOp::create(hb, l, kThreads);
  gpu::LaunchFuncOp::create(hb, l, kernel, gpu::KernelDim3{gridX, gridY, gridZ},
                            gpu::KernelDim3{threads, one, one},
                            /*dynamicSharedMemorySize=*/Value(), args);
}

struct ConvertAttnToGpuPass
    : impl::ConvertAttnToGpuPassBase<ConvertAttnToGpuPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<func::FuncOp> entries;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn.isPublic() && !fn.isExternal())
        entries.push_back(fn);
    if (entries.empty())
      return;
    if (warps < 1 || warps > 16 || blockKV < 16 || blockKV > 256 ||
        blockKV % 16 != 0 || stages < 1 || stages > 2) {
      mlir::emitError(module.getLoc())
          << "convert-attn-to-gpu: warps must be in [1, 16], "
             "block-kv a multiple of 16 in [16, 256] and "
             "stages 1 or 2, got warps="
          << int64_t(warps) << " block-kv=" << int64_t(blockKV)
          << " stages=" << int64_t(stages);
      return signalPassFailure();
    }

    // Check everything first: the module is rewritten only if every entry
    // point can run on the GPU.
    for (func::FuncOp fn : entries) {
      for (auto [i, t] : llvm::enumerate(fn.getArgumentTypes()))
        if (!isa<RankedTensorType>(t)) {
          fn.emitError() << "cannot run on the GPU: argument " << i << " of @"
                         << fn.getSymName() << " has type " << t
                         << "; GPU entry points take ranked tensors";
          return signalPassFailure();
        }
      Block &body = fn.getBody().front();
      // Masks computed by elementwise linalg.generic ops: the kernel
      // evaluates them per score.
      llvm::SmallPtrSet<Operation *, 4> maskGens;
      for (auto sdpa : body.getOps<SdpaOp>()) {
        auto gen = sdpa.getMask()
                       ? sdpa.getMask().getDefiningOp<linalg::GenericOp>()
                       : linalg::GenericOp();
        if (!gen)
          continue;
        SmallVector<Value> captured;
        std::string why = unsupportedGenerator(gen, captured);
        if (!why.empty()) {
          gen.emitError() << "cannot run on the GPU: this mask's "
                             "linalg.generic "
                          << why
                          << "; the GPU kernel evaluates elementwise masks "
                             "of arguments per score";
          return signalPassFailure();
        }
        maskGens.insert(gen);
      }
      // Side-effect-free ops that only feed the output sizes of expand
      // reshapes (tensor.dim, index arithmetic: the views infer them), the
      // destination of a mask generator (tensor.empty) or scalars a mask
      // generator captures (passed to the kernel).
      // Pads of arguments that mask generators read (their padding values
      // are taken in the kernel).
      llvm::SmallPtrSet<Operation *, 4> genPads;
      for (Operation *gen : maskGens)
        for (Value input : cast<linalg::GenericOp>(gen).getDpsInputs())
          if (auto pad = paddedArgument(input);
              pad && llvm::all_of(pad->getUsers(), [&](Operation *u) {
                return maskGens.contains(u);
              }))
            genPads.insert(pad);
      auto inMaskGen = [&](Operation *user) {
        auto gen = user->getParentOfType<linalg::GenericOp>();
        auto pad = user->getParentOfType<tensor::PadOp>();
        return (gen && maskGens.contains(gen)) ||
               (pad && genPads.contains(pad));
      };
      llvm::SmallPtrSet<Operation *, 8> sizeOnly;
      for (Operation &o : llvm::reverse(body.without_terminator()))
        if (!isa<SdpaOp>(o) && !isView(&o) && !maskGens.contains(&o) &&
            isMemoryEffectFree(&o) && !o.use_empty() &&
            llvm::all_of(o.getUses(), [&](OpOperand &u) {
              Operation *user = u.getOwner();
              if (auto gen = dyn_cast<linalg::GenericOp>(user);
                  gen && maskGens.contains(gen))
                return gen.isDpsInit(&u);
              // (A transpose that is not a view is reported itself.)
              if (auto t = dyn_cast<linalg::TransposeOp>(user))
                return t.isDpsInit(&u);
              return sizeOnly.contains(user) || inMaskGen(user) ||
                     (isa<tensor::ExpandShapeOp>(user) &&
                      u.getOperandNumber() != 0);
            }))
          sizeOnly.insert(&o);
      // Ops the kernels absorb: sizes, mask generators, pads, the return.
      auto absorbed = [&](Operation &o) {
        return isa<func::ReturnOp>(o) || sizeOnly.contains(&o) ||
               maskGens.contains(&o) || genPads.contains(&o);
      };
      for (Operation &o : body) {
        if (absorbed(o))
          continue;
        if (auto concat = dyn_cast<tensor::ConcatOp>(o)) {
          if (!llvm::all_of(concat.getInputs(), [](Value in) {
                return fromArguments(in) &&
                       viewsBuildable(in, /*isResult=*/false);
              })) {
            o.emitError() << "cannot run on the GPU: 'tensor.concat' joins "
                             "values that are not arguments of @"
                          << fn.getSymName() << " (or reshapes of them)";
            return signalPassFailure();
          }
          // Built in its result buffer: a returned concatenation has one.
          if (!llvm::is_contained(body.getTerminator()->getOperands(),
                                  concat.getResult())) {
            o.emitError() << "cannot run on the GPU: 'tensor.concat' is not "
                             "a result of @"
                          << fn.getSymName()
                          << "; the GPU target builds concatenations (KV "
                             "caches) in result buffers";
            return signalPassFailure();
          }
          continue;
        }
        if (isViewTranspose(&o))
          continue;
        if (isViewReshape(&o)) {
          std::string why = unsupportedReshape(&o);
          if (!why.empty()) {
            o.emitError() << "cannot run on the GPU: '" << o.getName() << "' "
                          << why
                          << "; the GPU target takes reshapes whose sizes "
                             "follow from their source";
            return signalPassFailure();
          }
          continue;
        }
        auto sdpa = dyn_cast<SdpaOp>(o);
        if (!sdpa) {
          // A constant (a matmul's zero fill, hoisted to the top with no
          // location of its own) tells the user nothing: name the first op
          // of the function that computes something instead, at its
          // location (ops that attn-decompose made keep their attn op's).
          // A contraction first (a projection: the usual reason), else
          // the first other op that is neither a constant nor a fill.
          auto isContraction = [](Operation *op) {
            auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
            return linalgOp && linalg::isaContractionOpInterface(linalgOp);
          };
          Operation *culprit = &o;
          if (o.hasTrait<OpTrait::ConstantLike>() ||
              isa<linalg::FillOp, tensor::EmptyOp>(o)) {
            Operation *first = nullptr, *contraction = nullptr;
            for (Operation &other : body) {
              if (absorbed(other) || other.hasTrait<OpTrait::ConstantLike>() ||
                  isa<SdpaOp, tensor::EmptyOp, linalg::FillOp,
                      tensor::ConcatOp>(other) ||
                  isViewTranspose(&other) || isViewReshape(&other))
                continue;
              if (!first)
                first = &other;
              if (!contraction && isContraction(&other))
                contraction = &other;
            }
            culprit = contraction ? contraction : first ? first : &o;
          }
          InFlightDiagnostic diag = culprit->emitError();
          diag << "the GPU target compiles entry points whose "
                  "results are attn.sdpa of the arguments (or "
                  "of reshapes, transposes and concatenations of them); '"
               << culprit->getName() << "' in @" << fn.getSymName()
               << " has no GPU lowering yet (use the CPU target)";
          if (isContraction(culprit))
            diag << "; projections (the weights of attn.multi_head_attention "
                    "and attn.causal_attention become such contractions) do "
                    "not run on the GPU yet";
          return signalPassFailure();
        }
        std::string why = unsupportedReason(sdpa);
        if (!why.empty()) {
          sdpa.emitError() << "cannot run on the GPU: attn.sdpa " << why;
          return signalPassFailure();
        }
        for (Value operand : sdpa->getOperands())
          if (!viewsBuildable(operand, /*isResult=*/false)) {
            sdpa.emitError() << "cannot run on the GPU: an operand reshapes "
                                "a transposed value, which has no view on "
                                "the GPU target's buffers";
            return signalPassFailure();
          }
        for (Value operand : sdpa->getOperands())
          if (!fromArguments(operand) &&
              !maskGens.contains(operand.getDefiningOp())) {
            sdpa.emitError() << "cannot run on the GPU: its operands must be "
                                "arguments of @"
                             << fn.getSymName()
                             << ", reshapes or concatenations of them (the "
                                "GPU target compiles attention cores)";
            return signalPassFailure();
          }
      }
      auto ret = cast<func::ReturnOp>(body.getTerminator());
      for (Value r : ret.getOperands())
        if (!viewsBuildable(r, /*isResult=*/true)) {
          fn.emitError() << "cannot run on the GPU: @" << fn.getSymName()
                         << " returns a transposed value reshaped, which "
                            "has no view on the GPU target's buffers";
          return signalPassFailure();
        }
      for (Value r : ret.getOperands())
        if (!viewedSdpa(r) && !r.getDefiningOp<tensor::ConcatOp>()) {
          fn.emitError() << "cannot run on the GPU: @" << fn.getSymName()
                         << " returns a value that is not an attn.sdpa result "
                            "(or a reshape of one) or a concatenation";
          return signalPassFailure();
        }
    }

    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    UnitAttr::get(ctx));
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    auto kernels = gpu::GPUModuleOp::create(mb, module.getLoc(), kKernelModule);
    for (func::FuncOp fn : entries)
      rewriteEntry(fn, kernels);
  }

  /// @f(tensors) -> results  becomes  @f(memrefs..., outs...) launching one
  /// kernel per returned attn.sdpa.
  void rewriteEntry(func::FuncOp fn, gpu::GPUModuleOp kernels) {
    MLIRContext *ctx = &getContext();
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    auto toMemRef = [](Type t) {
      auto rt = cast<RankedTensorType>(t);
      return MemRefType::get(rt.getShape(), rt.getElementType());
    };
    SmallVector<Type> argTypes;
    for (Type t : fn.getArgumentTypes())
      argTypes.push_back(toMemRef(t));
    for (Type t : fn.getResultTypes())
      argTypes.push_back(toMemRef(t));

    // A fresh body on memrefs: the old one is dropped afterwards.
    Block *newBody = new Block();
    SmallVector<Location> locs(argTypes.size(), fn.getLoc());
    newBody->addArguments(argTypes, locs);
    OpBuilder hb(ctx);
    hb.setInsertionPointToStart(newBody);
    unsigned numIn = fn.getNumArguments();
    // Operands: the arguments' buffers, viewed through their reshapes.
    // A concatenation is copied into the first result buffer that returns
    // it, before any kernel reads it.
    DenseMap<Value, Value> views;
    unsigned copies = 0;
    auto launchCopy = [&](Location l, Value src, Value dst, int64_t dim,
                          Value offset) {
      std::string name = (fn.getSymName() + "_copy" + Twine(copies++)).str();
      auto kernel =
          buildCopyKernel(hb, l, kernels, name, cast<MemRefType>(src.getType()),
                          cast<MemRefType>(dst.getType()), dim);
      Value count = arith::ConstantIndexOp::create(hb, l, 1);
      for (int64_t i = 0; i < cast<MemRefType>(src.getType()).getRank(); ++i)
        count = arith::MulIOp::create(hb, l, count, memrefDim(hb, l, src, i));
      // At least one block: a launch of none is an error (empty caches).
      Value blocks = arith::MaxUIOp::create(
          hb, l,
          arith::CeilDivUIOp::create(
              hb, l, count,
              arith::ConstantIndexOp::create(hb, l, kCopyThreads)),
          arith::ConstantIndexOp::create(hb, l, 1));
      Value one = arith::ConstantIndexOp::create(hb, l, 1);
      gpu::LaunchFuncOp::create(
          hb, l, kernel, gpu::KernelDim3{blocks, one, one},
          gpu::KernelDim3{arith::ConstantIndexOp::create(hb, l, kCopyThreads),
                          one, one},
          /*dynamicSharedMemorySize=*/Value(), ValueRange{src, dst, offset});
    };
    std::function<Value(Value)> viewOf = [&](Value x) -> Value {
      if (auto arg = dyn_cast<BlockArgument>(x))
        return newBody->getArgument(arg.getArgNumber());
      if (Value v = views.lookup(x))
        return v;
      if (auto concat = x.getDefiningOp<tensor::ConcatOp>()) {
        unsigned pos =
            llvm::find(ret.getOperands(), x) - ret.getOperands().begin();
        Value dst = newBody->getArgument(numIn + pos);
        int64_t dim = concat.getDim();
        Value offset = arith::ConstantIndexOp::create(hb, concat.getLoc(), 0);
        for (Value input : concat.getInputs()) {
          Value src = viewOf(input);
          launchCopy(concat.getLoc(), src, dst, dim, offset);
          offset =
              arith::AddIOp::create(hb, concat.getLoc(), offset,
                                    memrefDim(hb, concat.getLoc(), src, dim));
        }
        views[x] = dst;
        return dst;
      }
      Operation *view = x.getDefiningOp();
      Value v = buildView(hb, view, viewOf(view->getOperand(0)),
                          /*inverse=*/false);
      views[x] = v;
      return v;
    };
    // Scalars a mask generator captures, computed on the host from the
    // buffers' dims.
    DenseMap<Value, Value> hostValues;
    std::function<Value(Value)> hostValue = [&](Value c) -> Value {
      if (Value h = hostValues.lookup(c))
        return h;
      Operation *def = c.getDefiningOp();
      Value h;
      if (auto dim = dyn_cast<tensor::DimOp>(def)) {
        h = memref::DimOp::create(hb, dim.getLoc(), viewOf(dim.getSource()),
                                  hostValue(dim.getIndex()));
      } else {
        IRMapping map;
        for (Value operand : def->getOperands())
          map.map(operand, hostValue(operand));
        h = hb.clone(*def, map)->getResult(cast<OpResult>(c).getResultNumber());
      }
      hostValues[c] = h;
      return h;
    };
    for (auto [i, r] : llvm::enumerate(ret.getOperands())) {
      if (r.getDefiningOp<tensor::ConcatOp>()) {
        // Built in the first result buffer that returns it; later ones
        // copy that buffer.
        Value built = viewOf(r);
        Value out = newBody->getArgument(numIn + i);
        if (built != out)
          launchCopy(r.getLoc(), built, out, 0,
                     arith::ConstantIndexOp::create(hb, r.getLoc(), 0));
        continue;
      }
      // The result buffer, viewed back through the returned value's
      // reshapes as the attn.sdpa's shape: each one inverted, outermost
      // first.
      SmallVector<Operation *> chain;
      auto sdpa = viewedSdpa(r, &chain);
      Value out = newBody->getArgument(numIn + i);
      for (Operation *view : chain)
        out = buildView(hb, view, out, /*inverse=*/true);
      FlashKernelBuilder builder(sdpa, useLdmatrix, f32AsF16, warps, blockKV,
                                 stages);
      SmallVector<Value> args{viewOf(sdpa.getQuery()), viewOf(sdpa.getKey()),
                              viewOf(sdpa.getValue())};
      if (Value m = sdpa.getMask()) {
        if (auto gen = m.getDefiningOp<linalg::GenericOp>()) {
          // A mask generator: its inputs, then its captured scalars.
          for (Value input : gen.getDpsInputs()) {
            if (auto pad = paddedArgument(input))
              input = pad.getSource();
            args.push_back(viewOf(input));
          }
          SmallVector<Value> captured;
          (void)unsupportedGenerator(gen, captured);
          for (Value c : captured)
            args.push_back(hostValue(c));
          builder.setMaskGenerator(gen, captured);
        } else {
          args.push_back(viewOf(m));
        }
      }
      args.push_back(out);
      std::string name = (fn.getSymName() + "_sdpa" + Twine(i)).str();
      auto kernel =
          builder.buildKernel(kernels, name, ValueRange(args).getTypes());
      builder.buildLaunch(hb, sdpa.getLoc(), kernel, args);
    }
    func::ReturnOp::create(hb, fn.getLoc());

    fn.getBody().front().dropAllDefinedValueUses();
    fn.getBody().front().erase();
    fn.getBody().push_back(newBody);
    fn.setFunctionType(FunctionType::get(ctx, argTypes, {}));
    // Argument attributes (ONNX names...) no longer line up; the runtime
    // takes the signature from the source function before this pass.
    fn.setAllArgAttrs(ArrayRef<DictionaryAttr>{});
    fn.setAllResultAttrs(ArrayRef<DictionaryAttr>{});
    fn->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                UnitAttr::get(ctx));
    fn->setAttr("attn.gpu_entry", UnitAttr::get(ctx));
  }
};

} // namespace
} // namespace mlir::attn
