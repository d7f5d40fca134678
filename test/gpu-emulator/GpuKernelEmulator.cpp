//===- GpuKernelEmulator.cpp - runs convert-attn-to-gpu kernels on the CPU ===//
//
// A test tool: executes the IR that convert-attn-to-gpu generates (the host
// function and its gpu.func kernels, before NVVM lowering, after the
// attn-level rewrites that attn-lower-to-nvvm-pipeline runs first) on the
// CPU, so that every machine, with or without a GPU, checks the kernels'
// numbers.
//
// Each thread block runs in lockstep: every SSA value holds one entry per
// thread, so warp-collective operations see all 32 lanes at once and a
// block-wide barrier is already satisfied. The hardware operations follow
// the PTX ISA:
//   - mma.sync m16n8k16: fragments gathered from and scattered to the lanes
//     by the documented layouts; products and sums in f64, rounded to f32.
//   - ldmatrix (x1/x2/x4, optionally .trans): lane 8*i + r addresses row r
//     of matrix i; lane l receives (row l/4, cols 2(l%4), +1), or for
//     .trans (rows 2(l%4), +1, col l/4).
//   - shfl.bfly: lane l reads lane l ^ offset.
//   - cp.async: copies srcElements, zero-fills the rest (completes at once).
//   - mul.hi.u32 (llvm.nvvm.mulhi.ui): the high word of the product.
// f32 arithmetic is rounded to f32 after each op; truncf rounds to
// f16/bf16 (nearest even); i32 registers holding two 16-bit values are bit
// patterns, as on the hardware.
//
//===----------------------------------------------------------------------===//

#include "attn/AttnDialect.h"
#include "attn/Passes.h"
#include "attn/Pipelines.h"
#include "attnrt/Jit.h"
#include "attnrt/Npy.h"
#include "attnrt/Tensor.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <unordered_map>

using namespace mlir;

namespace {

[[noreturn]] void die(const std::string &msg) {
  std::fprintf(stderr, "attn-gpu-emulator: error: %s\n", msg.c_str());
  std::exit(1);
}

double roundTo(Type t, double x) {
  if (t.isF32())
    return static_cast<float>(x);
  if (t.isF16())
    return attnrt::f16ToFloat(attnrt::floatToF16(static_cast<float>(x)));
  if (t.isBF16())
    return attnrt::bf16ToFloat(attnrt::floatToBF16(static_cast<float>(x)));
  return x;
}
uint32_t bitsOf(Type t, double x) {
  if (t.isF16())
    return attnrt::floatToF16(static_cast<float>(x));
  if (t.isBF16())
    return attnrt::floatToBF16(static_cast<float>(x));
  die("bitcast of unsupported element type");
}
double fromBits(bool bf16, uint32_t bits) {
  return bf16 ? attnrt::bf16ToFloat(bits & 0xFFFF)
              : attnrt::f16ToFloat(bits & 0xFFFF);
}

/// Integers narrower than 64 bits (other than i1) are held as their
/// unsigned bit pattern (exact in a double up to 32 bits), as the bit
/// operations of the dropout generator need; i1, i64 and index values are
/// held as signed numbers (the kernels' indices stay far below 2^53).
bool isNarrowInt(Type t) {
  auto it = dyn_cast<IntegerType>(t);
  return it && it.getWidth() > 1 && it.getWidth() < 64;
}
double wrapTo(Type t, int64_t x) {
  if (!isNarrowInt(t))
    return static_cast<double>(x);
  unsigned w = cast<IntegerType>(t).getWidth();
  return static_cast<double>(static_cast<uint64_t>(x) & ((1ull << w) - 1));
}

Type elementOf(Type t) {
  if (auto s = dyn_cast<ShapedType>(t))
    return s.getElementType();
  return t;
}
int64_t widthOf(Type t) {
  if (auto v = dyn_cast<VectorType>(t))
    return v.getNumElements();
  if (auto s = dyn_cast<LLVM::LLVMStructType>(t))
    return s.getBody().size();
  return 1;
}

/// A memref: dense row-major doubles holding values of its element type.
struct Buffer {
  /// Row-major elements; a reshaped view shares its source's.
  explicit Buffer(std::shared_ptr<std::vector<double>> storage =
                      std::make_shared<std::vector<double>>())
      : storage(std::move(storage)), data(*this->storage) {}
  std::vector<int64_t> shape;
  std::shared_ptr<std::vector<double>> storage;
  std::vector<double> &data;
  Type elem;
  /// Element strides of a permuted view (memref.transpose); empty: row
  /// major.
  std::vector<int64_t> strides;
  std::vector<int64_t> effectiveStrides() const {
    return strides.empty() ? rowMajorStrides(shape) : strides;
  }
  static std::vector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
    std::vector<int64_t> st(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
      st[i] = st[i + 1] * shape[i + 1];
    return st;
  }
  // Every kernel access goes through here: no allocation.
  int64_t offset(ArrayRef<int64_t> idx) const {
    int64_t off = 0;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (idx[i] < 0 || idx[i] >= shape[i])
        die("out-of-bounds access: index " + std::to_string(idx[i]) +
            " of dim " + std::to_string(i) + " (size " +
            std::to_string(shape[i]) + ")");
      off =
          strides.empty() ? off * shape[i] + idx[i] : off + idx[i] * strides[i];
    }
    return off;
  }
  /// Offset of `count` consecutive elements along the last dim from `idx`,
  /// all in bounds.
  int64_t offset(SmallVector<int64_t> idx, int64_t count) const {
    if (count > 1 && !strides.empty() && strides.back() != 1)
      die("a vector access along a non-unit stride");
    int64_t off = offset(idx);
    idx.back() += count - 1;
    offset(idx);
    return off;
  }
};

/// One SSA value for every thread: data[lane * width + i].
struct Val {
  int64_t width = 1;
  std::vector<double> data;
};

class Emulator {
public:
  explicit Emulator(int64_t threads) : n(threads) {}

  int64_t n;
  int64_t blockId[3] = {0, 0, 0};
  /// cp.async copies: issued but not committed, and committed groups in
  /// order.
  struct PendingCopy {
    Buffer *dst;
    int64_t offset;
    std::vector<double> data;
  };
  std::vector<PendingCopy> uncommitted;
  std::deque<std::vector<PendingCopy>> groups;
  // Element references stay valid while other values are added.
  std::unordered_map<void *, Val> vals;
  DenseMap<Value, Buffer *> bufs;
  std::vector<std::unique_ptr<Buffer>> views;

  Val &def(Value v) {
    Val &x = vals[v.getAsOpaquePointer()];
    x.width = widthOf(v.getType());
    x.data.assign(n * x.width, 0.0);
    return x;
  }
  const Val &get(Value v) {
    auto it = vals.find(v.getAsOpaquePointer());
    if (it == vals.end())
      die("use of a value without a definition");
    return it->second;
  }
  double at(Value v, int64_t lane, int64_t i = 0) {
    const Val &x = get(v);
    return x.data[lane * x.width + i];
  }
  int64_t idx(Value v, int64_t lane) {
    return static_cast<int64_t>(at(v, lane));
  }
  Buffer *buf(Value v) {
    auto it = bufs.find(v);
    if (it == bufs.end())
      die("memref without a buffer");
    return it->second;
  }
  int64_t uniform(Value v, const std::vector<char> &mask) {
    int64_t r = 0;
    bool first = true;
    for (int64_t l = 0; l < n; ++l)
      if (mask[l]) {
        int64_t x = idx(v, l);
        if (!first && x != r)
          die("non-uniform loop bound");
        r = x;
        first = false;
      }
    return r;
  }

  void run(Block &block, const std::vector<char> &mask);
  void runOp(Operation &op, const std::vector<char> &mask);
  void mma(Operation &op, Value a, Value b, Value c, bool packed, bool bf16,
           const std::vector<char> &mask);
};

void Emulator::run(Block &block, const std::vector<char> &mask) {
  for (Operation &op : block)
    runOp(op, mask);
}

int64_t intBinary(StringRef name, int64_t a, int64_t b) {
  if (name == "arith.addi")
    return a + b;
  if (name == "arith.subi")
    return a - b;
  if (name == "arith.muli")
    return a * b;
  if (name == "arith.divui")
    return static_cast<int64_t>(static_cast<uint64_t>(a) /
                                static_cast<uint64_t>(b));
  if (name == "arith.remui")
    return static_cast<int64_t>(static_cast<uint64_t>(a) %
                                static_cast<uint64_t>(b));
  if (name == "arith.divsi")
    return a / b;
  if (name == "arith.remsi")
    return a % b;
  if (name == "arith.minui")
    return static_cast<uint64_t>(a) < static_cast<uint64_t>(b) ? a : b;
  if (name == "arith.maxui")
    return static_cast<uint64_t>(a) > static_cast<uint64_t>(b) ? a : b;
  if (name == "arith.minsi")
    return std::min(a, b);
  if (name == "arith.maxsi")
    return std::max(a, b);
  if (name == "arith.floordivsi")
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
  if (name == "arith.ceildivui")
    return static_cast<int64_t>(
        (static_cast<uint64_t>(a) + static_cast<uint64_t>(b) - 1) /
        static_cast<uint64_t>(b));
  if (name == "arith.ceildivsi")
    return a / b + ((a % b != 0) && ((a < 0) == (b < 0)));
  if (name == "arith.andi")
    return a & b;
  if (name == "arith.ori")
    return a | b;
  if (name == "arith.xori")
    return a ^ b;
  if (name == "arith.shli")
    return a << b;
  if (name == "arith.shrui")
    return static_cast<int64_t>(static_cast<uint64_t>(a) >> b);
  die("unsupported integer op " + name.str());
}

double floatBinary(StringRef name, double a, double b) {
  if (name == "arith.addf")
    return a + b;
  if (name == "arith.subf")
    return a - b;
  if (name == "arith.mulf")
    return a * b;
  if (name == "arith.divf")
    return a / b;
  if (name == "arith.maximumf")
    return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
  if (name == "arith.minimumf")
    return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  if (name == "arith.maxnumf")
    return std::fmax(a, b);
  if (name == "arith.minnumf")
    return std::fmin(a, b);
  die("unsupported float op " + name.str());
}

bool compareInt(arith::CmpIPredicate p, int64_t a, int64_t b) {
  uint64_t ua = a, ub = b;
  switch (p) {
  case arith::CmpIPredicate::eq:
    return a == b;
  case arith::CmpIPredicate::ne:
    return a != b;
  case arith::CmpIPredicate::slt:
    return a < b;
  case arith::CmpIPredicate::sle:
    return a <= b;
  case arith::CmpIPredicate::sgt:
    return a > b;
  case arith::CmpIPredicate::sge:
    return a >= b;
  case arith::CmpIPredicate::ult:
    return ua < ub;
  case arith::CmpIPredicate::ule:
    return ua <= ub;
  case arith::CmpIPredicate::ugt:
    return ua > ub;
  case arith::CmpIPredicate::uge:
    return ua >= ub;
  }
  return false;
}

bool compareFloat(arith::CmpFPredicate p, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (p) {
  case arith::CmpFPredicate::OEQ:
    return !unordered && a == b;
  case arith::CmpFPredicate::ONE:
    return !unordered && a != b;
  case arith::CmpFPredicate::OGT:
    return !unordered && a > b;
  case arith::CmpFPredicate::OGE:
    return !unordered && a >= b;
  case arith::CmpFPredicate::OLT:
    return !unordered && a < b;
  case arith::CmpFPredicate::OLE:
    return !unordered && a <= b;
  case arith::CmpFPredicate::UNE:
    return unordered || a != b;
  case arith::CmpFPredicate::UEQ:
    return unordered || a == b;
  default:
    die("unsupported cmpf predicate");
  }
}

/// Linear offset of a static position in a vector's leading dims, and the
/// number of elements it selects.
std::pair<int64_t, int64_t> slice(VectorType t, ArrayRef<int64_t> pos) {
  int64_t off = 0, stride = t.getNumElements();
  for (size_t i = 0; i < pos.size(); ++i) {
    stride /= t.getDimSize(i);
    off += pos[i] * stride;
  }
  return {off, stride};
}

void Emulator::mma(Operation &op, Value a, Value b, Value c, bool packed,
                   bool bf16, const std::vector<char> &mask) {
  // packed: operands a, b are lists of i32 registers (nvvm.mma.sync); else
  // vector<4x2> / vector<2x2> of 16-bit floats (nvgpu.mma.sync).
  ValueRange aRegs = packed ? op.getOperands().slice(0, 4) : ValueRange{};
  ValueRange bRegs = packed ? op.getOperands().slice(4, 2) : ValueRange{};
  ValueRange cRegs = packed ? op.getOperands().slice(6, 4) : ValueRange{};
  auto aElem = [&](int64_t lane, int64_t reg, int64_t e) {
    if (!packed)
      return at(a, lane, reg * 2 + e);
    uint32_t bits = static_cast<uint32_t>(at(aRegs[reg], lane));
    return fromBits(bf16, e ? bits >> 16 : bits);
  };
  auto bElem = [&](int64_t lane, int64_t reg, int64_t e) {
    if (!packed)
      return at(b, lane, reg * 2 + e);
    uint32_t bits = static_cast<uint32_t>(at(bRegs[reg], lane));
    return fromBits(bf16, e ? bits >> 16 : bits);
  };
  auto cElem = [&](int64_t lane, int64_t reg, int64_t e) {
    return packed ? at(cRegs[reg * 2 + e], lane) : at(c, lane, reg * 2 + e);
  };
  Val &d = def(op.getResult(0));
  for (int64_t warp = 0; warp < n / 32; ++warp) {
    int64_t base = warp * 32;
    for (int64_t l = 0; l < 32; ++l)
      if (!mask[base + l])
        die("mma.sync with inactive lanes");
    double A[16][16], B[16][8], C[16][8];
    for (int64_t l = 0; l < 32; ++l) {
      int64_t g = l / 4, t = l % 4, lane = base + l;
      for (int64_t e = 0; e < 2; ++e) {
        A[g][2 * t + e] = aElem(lane, 0, e);
        A[g + 8][2 * t + e] = aElem(lane, 1, e);
        A[g][2 * t + 8 + e] = aElem(lane, 2, e);
        A[g + 8][2 * t + 8 + e] = aElem(lane, 3, e);
        B[2 * t + e][g] = bElem(lane, 0, e);
        B[2 * t + 8 + e][g] = bElem(lane, 1, e);
        C[g][2 * t + e] = cElem(lane, 0, e);
        C[g + 8][2 * t + e] = cElem(lane, 1, e);
      }
    }
    for (int64_t l = 0; l < 32; ++l) {
      int64_t g = l / 4, t = l % 4, lane = base + l;
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t e = 0; e < 2; ++e) {
          int64_t row = g + 8 * r, col = 2 * t + e;
          double acc = C[row][col];
          for (int64_t k = 0; k < 16; ++k)
            acc += A[row][k] * B[k][col];
          d.data[lane * d.width + r * 2 + e] = static_cast<float>(acc);
        }
    }
  }
}

void Emulator::runOp(Operation &op, const std::vector<char> &mask) {
  StringRef name = op.getName().getStringRef();
  auto lanes = [&](auto fn) {
    for (int64_t l = 0; l < n; ++l)
      if (mask[l])
        fn(l);
  };

  if (auto c = dyn_cast<arith::ConstantOp>(op)) {
    Val &r = def(c.getResult());
    Attribute attr = c.getValue();
    std::vector<double> elems;
    if (auto i = dyn_cast<IntegerAttr>(attr))
      elems.push_back(i.getType().isInteger(1)
                          ? (i.getValue().getBoolValue() ? 1 : 0)
                      : isNarrowInt(i.getType())
                          ? static_cast<double>(i.getValue().getZExtValue())
                          : static_cast<double>(i.getInt()));
    else if (auto f = dyn_cast<FloatAttr>(attr))
      elems.push_back(f.getValueAsDouble());
    else if (auto d = dyn_cast<DenseFPElementsAttr>(attr))
      for (APFloat v : d.getValues<APFloat>())
        elems.push_back(v.convertToDouble());
    else if (auto d = dyn_cast<DenseIntElementsAttr>(attr))
      for (APInt v : d.getValues<APInt>())
        elems.push_back(static_cast<double>(v.getSExtValue()));
    else
      die("unsupported constant");
    for (int64_t l = 0; l < n; ++l)
      for (int64_t i = 0; i < r.width; ++i)
        r.data[l * r.width + i] = elems[elems.size() == 1 ? 0 : i];
    return;
  }
  if (isa<ub::PoisonOp>(op)) {
    // NaN: an element left undefined shows up in the result.
    Val &r = def(op.getResult(0));
    std::fill(r.data.begin(), r.data.end(), NAN);
    return;
  }
  if (auto cmp = dyn_cast<arith::CmpIOp>(op)) {
    Val &r = def(cmp.getResult());
    lanes([&](int64_t l) {
      r.data[l] = compareInt(cmp.getPredicate(), idx(cmp.getLhs(), l),
                             idx(cmp.getRhs(), l));
    });
    return;
  }
  if (auto cmp = dyn_cast<arith::CmpFOp>(op)) {
    Val &r = def(cmp.getResult());
    lanes([&](int64_t l) {
      r.data[l] = compareFloat(cmp.getPredicate(), at(cmp.getLhs(), l),
                               at(cmp.getRhs(), l));
    });
    return;
  }
  if (auto sel = dyn_cast<arith::SelectOp>(op)) {
    Val &r = def(sel.getResult());
    lanes([&](int64_t l) {
      for (int64_t i = 0; i < r.width; ++i)
        r.data[l * r.width + i] = at(sel.getCondition(), l) != 0
                                      ? at(sel.getTrueValue(), l, i)
                                      : at(sel.getFalseValue(), l, i);
    });
    return;
  }
  if (name.starts_with("arith.") && op.getNumOperands() == 2 &&
      op.getNumResults() == 1) {
    Type t = elementOf(op.getResult(0).getType());
    Val &r = def(op.getResult(0));
    Value lhs = op.getOperand(0), rhs = op.getOperand(1);
    lanes([&](int64_t l) {
      for (int64_t i = 0; i < r.width; ++i) {
        double a = at(lhs, l, i), b = at(rhs, l, i);
        r.data[l * r.width + i] =
            isa<FloatType>(t)
                ? roundTo(t, floatBinary(name, a, b))
                : wrapTo(t, intBinary(name, static_cast<int64_t>(a),
                                      static_cast<int64_t>(b)));
      }
    });
    return;
  }
  if (isa<arith::TruncFOp, arith::ExtFOp>(op)) {
    Type t = elementOf(op.getResult(0).getType());
    Val &r = def(op.getResult(0));
    lanes([&](int64_t l) {
      for (int64_t i = 0; i < r.width; ++i)
        r.data[l * r.width + i] = roundTo(t, at(op.getOperand(0), l, i));
    });
    return;
  }
  if (auto m = dyn_cast<arith::MulUIExtendedOp>(op)) {
    // 32 x 32 -> 64 bits: the low and high words (mul.lo / mul.hi).
    if (!elementOf(m.getLhs().getType()).isInteger(32))
      die("arith.mului_extended on other than i32");
    Val &lo = def(m.getLow());
    Val &hi = def(m.getHigh());
    lanes([&](int64_t l) {
      uint64_t p = static_cast<uint64_t>(at(m.getLhs(), l)) *
                   static_cast<uint64_t>(at(m.getRhs(), l));
      lo.data[l] = static_cast<double>(p & 0xFFFFFFFFu);
      hi.data[l] = static_cast<double>(p >> 32);
    });
    return;
  }
  if (auto call = dyn_cast<LLVM::CallIntrinsicOp>(op)) {
    // mul.hi.u32: the high word of the 64-bit product.
    if (call.getIntrin() != "llvm.nvvm.mulhi.ui")
      die("unsupported intrinsic " + call.getIntrin().str());
    Val &r = def(call.getResult(0));
    lanes([&](int64_t l) {
      uint64_t p = static_cast<uint64_t>(at(call.getOperand(0), l)) *
                   static_cast<uint64_t>(at(call.getOperand(1), l));
      r.data[l] = static_cast<double>(p >> 32);
    });
    return;
  }
  if (isa<arith::TruncIOp, arith::ExtUIOp>(op)) {
    // Non-negative values only (counters, bit patterns): zero extension
    // and truncation keep the low bits.
    Type t = elementOf(op.getResult(0).getType());
    Val &r = def(op.getResult(0));
    lanes([&](int64_t l) {
      double x = at(op.getOperand(0), l);
      if (x < 0)
        die(op.getName().getStringRef().str() + " of a negative value");
      r.data[l] = wrapTo(t, static_cast<int64_t>(x));
    });
    return;
  }
  if (isa<arith::UIToFPOp>(op)) {
    Type t = elementOf(op.getResult(0).getType());
    Val &r = def(op.getResult(0));
    lanes([&](int64_t l) { r.data[l] = roundTo(t, at(op.getOperand(0), l)); });
    return;
  }
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op)) {
    Val &r = def(op.getResult(0));
    lanes([&](int64_t l) { r.data[l] = at(op.getOperand(0), l); });
    return;
  }
  if (auto e = dyn_cast<math::Exp2Op>(op)) {
    Type t = elementOf(e.getType());
    Val &r = def(e.getResult());
    lanes([&](int64_t l) {
      for (int64_t i = 0; i < r.width; ++i)
        r.data[l * r.width + i] =
            roundTo(t, std::exp2(at(e.getOperand(), l, i)));
    });
    return;
  }

  // --- memory ---
  if (auto tr = dyn_cast<memref::TransposeOp>(op)) {
    // A permuted view: result dim i is source dim perm(i).
    Buffer *src = buf(tr.getIn());
    auto view = std::make_unique<Buffer>(src->storage);
    view->elem = src->elem;
    std::vector<int64_t> st = src->effectiveStrides();
    for (AffineExpr e : tr.getPermutation().getResults()) {
      unsigned d = cast<AffineDimExpr>(e).getPosition();
      view->shape.push_back(src->shape[d]);
      view->strides.push_back(st[d]);
    }
    bufs[tr.getResult()] = view.get();
    views.push_back(std::move(view));
    return;
  }
  if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(op)) {
    // A view of the same elements (the host function's reshapes).
    Buffer *src = buf(op.getOperand(0));
    if (!src->strides.empty() &&
        src->strides != Buffer::rowMajorStrides(src->shape))
      die("a reshape of a permuted view");
    auto type = cast<MemRefType>(op.getResult(0).getType());
    auto view = std::make_unique<Buffer>(src->storage);
    view->elem = src->elem;
    if (auto e = dyn_cast<memref::ExpandShapeOp>(op)) {
      for (OpFoldResult s : e.getMixedOutputShape())
        view->shape.push_back(isa<Attribute>(s) ? *getConstantIntValue(s)
                                                : idx(cast<Value>(s), 0));
    } else {
      for (const ReassociationIndices &g :
           cast<memref::CollapseShapeOp>(op).getReassociationIndices()) {
        int64_t size = 1;
        for (int64_t d : g)
          size *= src->shape[d];
        view->shape.push_back(size);
      }
    }
    int64_t count = 1;
    for (auto [i, size] : llvm::enumerate(view->shape)) {
      if (!type.isDynamicDim(i) && type.getDimSize(i) != size)
        die("reshape to a size its type does not have");
      count *= size;
    }
    if (count != static_cast<int64_t>(src->data.size()))
      die("reshape changes the element count");
    bufs[op.getResult(0)] = view.get();
    views.push_back(std::move(view));
    return;
  }
  if (auto d = dyn_cast<memref::DimOp>(op)) {
    Val &r = def(d.getResult());
    Buffer *b = buf(d.getSource());
    lanes([&](int64_t l) { r.data[l] = b->shape[idx(d.getIndex(), l)]; });
    return;
  }
  auto indicesOf = [&](ValueRange indices, int64_t l) {
    SmallVector<int64_t> out;
    for (Value i : indices)
      out.push_back(idx(i, l));
    return out;
  };
  if (auto ld = dyn_cast<memref::LoadOp>(op)) {
    Val &r = def(ld.getResult());
    Buffer *b = buf(ld.getMemRef());
    lanes([&](int64_t l) {
      r.data[l] = b->data[b->offset(indicesOf(ld.getIndices(), l))];
    });
    return;
  }
  if (auto st = dyn_cast<memref::StoreOp>(op)) {
    Buffer *b = buf(st.getMemRef());
    lanes([&](int64_t l) {
      b->data[b->offset(indicesOf(st.getIndices(), l))] =
          roundTo(b->elem, at(st.getValueToStore(), l));
    });
    return;
  }
  if (auto ld = dyn_cast<vector::LoadOp>(op)) {
    Val &r = def(ld.getResult());
    Buffer *b = buf(ld.getBase());
    lanes([&](int64_t l) {
      int64_t off = b->offset(indicesOf(ld.getIndices(), l), r.width);
      for (int64_t i = 0; i < r.width; ++i)
        r.data[l * r.width + i] = b->data[off + i];
    });
    return;
  }
  if (auto st = dyn_cast<vector::StoreOp>(op)) {
    Buffer *b = buf(st.getBase());
    Value v = st.getValueToStore();
    int64_t w = widthOf(v.getType());
    lanes([&](int64_t l) {
      int64_t off = b->offset(indicesOf(st.getIndices(), l), w);
      for (int64_t i = 0; i < w; ++i)
        b->data[off + i] = roundTo(b->elem, at(v, l, i));
    });
    return;
  }

  // --- vectors ---
  if (auto ins = dyn_cast<vector::InsertOp>(op)) {
    auto vt = cast<VectorType>(ins.getDestVectorType());
    std::pair<int64_t, int64_t> sl = slice(vt, ins.getStaticPosition());
    int64_t off = sl.first, len = sl.second;
    Val &r = def(ins.getResult());
    Value src = ins.getValueToStore(), dst = ins.getDest();
    lanes([&](int64_t l) {
      for (int64_t i = 0; i < r.width; ++i)
        r.data[l * r.width + i] = at(dst, l, i);
      for (int64_t i = 0; i < len; ++i)
        r.data[l * r.width + off + i] = at(src, l, i);
    });
    return;
  }
  if (auto ex = dyn_cast<vector::ExtractOp>(op)) {
    auto vt = cast<VectorType>(ex.getSourceVectorType());
    std::pair<int64_t, int64_t> sl = slice(vt, ex.getStaticPosition());
    int64_t off = sl.first, len = sl.second;
    Val &r = def(ex.getResult());
    lanes([&](int64_t l) {
      for (int64_t i = 0; i < len; ++i)
        r.data[l * r.width + i] = at(ex.getSource(), l, off + i);
    });
    return;
  }
  if (auto fe = dyn_cast<vector::FromElementsOp>(op)) {
    Val &r = def(fe.getResult());
    lanes([&](int64_t l) {
      for (int64_t i = 0; i < r.width; ++i)
        r.data[l * r.width + i] = at(fe.getElements()[i], l);
    });
    return;
  }
  if (auto te = dyn_cast<vector::ToElementsOp>(op)) {
    for (auto [i, res] : llvm::enumerate(te.getResults())) {
      Val &r = def(res);
      int64_t e = static_cast<int64_t>(i);
      lanes([&](int64_t l) { r.data[l] = at(te.getSource(), l, e); });
    }
    return;
  }
  if (auto bc = dyn_cast<vector::BroadcastOp>(op)) {
    Val &r = def(bc.getResult());
    int64_t w = widthOf(bc.getSource().getType());
    lanes([&](int64_t l) {
      for (int64_t i = 0; i < r.width; ++i)
        r.data[l * r.width + i] = at(bc.getSource(), l, i % w);
    });
    return;
  }
  if (auto sc = dyn_cast<vector::ShapeCastOp>(op)) {
    Val &r = def(sc.getResult());
    lanes([&](int64_t l) {
      for (int64_t i = 0; i < r.width; ++i)
        r.data[l * r.width + i] = at(sc.getSource(), l, i);
    });
    return;
  }
  if (auto bc = dyn_cast<vector::BitCastOp>(op)) {
    // vector<2xf16|bf16> -> vector<1xi32>: the register's bit pattern.
    Type from = bc.getSourceVectorType().getElementType();
    if (bc.getSourceVectorType().getNumElements() != 2 ||
        !bc.getResultVectorType().getElementType().isInteger(32))
      die("unsupported vector.bitcast");
    Val &r = def(bc.getResult());
    lanes([&](int64_t l) {
      r.data[l] =
          static_cast<double>(bitsOf(from, at(bc.getSource(), l, 0)) |
                              (bitsOf(from, at(bc.getSource(), l, 1)) << 16));
    });
    return;
  }

  // --- gpu ---
  if (auto t = dyn_cast<gpu::ThreadIdOp>(op)) {
    Val &r = def(t.getResult());
    lanes([&](int64_t l) {
      r.data[l] = t.getDimension() == gpu::Dimension::x ? l : 0;
    });
    return;
  }
  if (auto bid = dyn_cast<gpu::BlockIdOp>(op)) {
    Val &r = def(bid.getResult());
    int64_t v = blockId[static_cast<int>(bid.getDimension())];
    lanes([&](int64_t l) { r.data[l] = v; });
    return;
  }
  if (isa<gpu::BarrierOp>(op)) {
    for (int64_t l = 0; l < n; ++l)
      if (!mask[l])
        die("barrier reached by part of the block");
    return;
  }
  if (auto sh = dyn_cast<gpu::ShuffleOp>(op)) {
    if (sh.getMode() != gpu::ShuffleMode::XOR)
      die("unsupported shuffle mode");
    for (int64_t l = 0; l < n; ++l)
      if (!mask[l])
        die("shuffle (full-warp shfl.sync) reached by part of a warp");
    if (idx(sh.getWidth(), 0) != 32)
      die("shuffle width other than 32");
    Val &r = def(sh.getShuffleResult());
    Val &valid = def(sh.getValid());
    lanes([&](int64_t l) {
      int64_t offset = idx(sh.getOffset(), l);
      int64_t src = (l & ~31) | ((l & 31) ^ offset);
      if (!mask[src])
        die("shuffle from an inactive lane");
      r.data[l] = at(sh.getValue(), src);
      valid.data[l] = 1;
    });
    return;
  }

  // --- nvgpu / nvvm ---
  if (auto ldm = dyn_cast<nvgpu::LdMatrixOp>(op)) {
    Val &r = def(ldm.getRes());
    Buffer *b = buf(ldm.getSrcMemref());
    int64_t tiles = ldm.getNumTiles();
    bool trans = ldm.getTranspose();
    for (int64_t warp = 0; warp < n / 32; ++warp) {
      int64_t base = warp * 32;
      // rows[i][r][c]: row r of matrix i, read at lane 8i + r's address.
      std::vector<std::array<std::array<double, 8>, 8>> rows(tiles);
      for (int64_t i = 0; i < tiles; ++i)
        for (int64_t rr = 0; rr < 8; ++rr) {
          if (!mask[base + 8 * i + rr])
            die("ldmatrix with an inactive address lane");
          SmallVector<int64_t> ix =
              indicesOf(ldm.getIndices(), base + 8 * i + rr);
          int64_t off = b->offset(ix, 8);
          if (off % 8 != 0)
            die("ldmatrix row address not 16-byte aligned");
          for (int64_t c = 0; c < 8; ++c)
            rows[i][rr][c] = b->data[off + c];
        }
      for (int64_t l = 0; l < 32; ++l)
        for (int64_t i = 0; i < tiles; ++i)
          for (int64_t e = 0; e < 2; ++e)
            r.data[(base + l) * r.width + i * 2 + e] =
                trans ? rows[i][2 * (l % 4) + e][l / 4]
                      : rows[i][l / 4][2 * (l % 4) + e];
    }
    return;
  }
  if (auto m = dyn_cast<nvgpu::MmaSyncOp>(op)) {
    mma(op, m.getMatrixA(), m.getMatrixB(), m.getMatrixC(), false, false, mask);
    return;
  }
  if (auto m = dyn_cast<NVVM::MmaOp>(op)) {
    auto type = m.getMultiplicandAPtxType();
    if (!type ||
        (*type != NVVM::MMATypes::bf16 && *type != NVVM::MMATypes::f16) ||
        m.getOperandA().size() != 4 || m.getOperandB().size() != 2 ||
        m.getOperandC().size() != 4)
      die("unsupported nvvm.mma.sync");
    mma(op, Value(), Value(), Value(), true, *type == NVVM::MMATypes::bf16,
        mask);
    return;
  }
  if (auto ev = dyn_cast<LLVM::ExtractValueOp>(op)) {
    Val &r = def(ev.getResult());
    int64_t i = ev.getPosition()[0];
    lanes([&](int64_t l) { r.data[l] = at(ev.getContainer(), l, i); });
    return;
  }
  if (auto cp = dyn_cast<nvgpu::DeviceAsyncCopyOp>(op)) {
    // The data is read now but lands only when a wait_group retires the
    // copy's group; until then the destination holds NaN, so a read before
    // the wait shows up.
    Buffer *dst = buf(cp.getDst()), *src = buf(cp.getSrc());
    int64_t count = cp.getDstElements().getZExtValue();
    lanes([&](int64_t l) {
      int64_t from = cp.getSrcElements() ? idx(cp.getSrcElements(), l) : count;
      int64_t dOff = dst->offset(indicesOf(cp.getDstIndices(), l), count);
      // 16-byte copies need 16-byte aligned addresses (buffers start
      // aligned; offsets count elements).
      if (dOff % count != 0)
        die("cp.async destination not aligned to the copy size");
      PendingCopy copy{dst, dOff, {}};
      if (from > 0) {
        int64_t sOff = src->offset(indicesOf(cp.getSrcIndices(), l), from);
        if (sOff % count != 0)
          die("cp.async source not aligned to the copy size");
        copy.data.assign(src->data.begin() + sOff,
                         src->data.begin() + sOff + from);
      }
      copy.data.resize(count, 0.0); // zero fill past src-size
      for (int64_t i = 0; i < count; ++i)
        dst->data[dOff + i] = NAN;
      uncommitted.push_back(std::move(copy));
    });
    def(cp.getAsyncToken());
    return;
  }
  if (isa<nvgpu::DeviceAsyncCreateGroupOp>(op)) {
    groups.push_back(std::move(uncommitted));
    uncommitted.clear();
    def(op.getResult(0));
    return;
  }
  if (auto wait = dyn_cast<nvgpu::DeviceAsyncWaitOp>(op)) {
    // wait_group N: all but the newest N committed groups complete.
    size_t keep = wait.getNumGroups() ? *wait.getNumGroups() : 0;
    while (groups.size() > keep) {
      for (PendingCopy &c : groups.front())
        std::copy(c.data.begin(), c.data.end(), c.dst->data.begin() + c.offset);
      groups.pop_front();
    }
    return;
  }

  // --- control flow ---
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    int64_t lb = uniform(loop.getLowerBound(), mask),
            ub = uniform(loop.getUpperBound(), mask),
            step = uniform(loop.getStep(), mask);
    Block &body = *loop.getBody();
    for (auto [arg, init] :
         llvm::zip(loop.getRegionIterArgs(), loop.getInitArgs()))
      vals[arg.getAsOpaquePointer()] = get(init);
    for (int64_t i = lb; i < ub; i += step) {
      Val &iv = def(loop.getInductionVar());
      std::fill(iv.data.begin(), iv.data.end(), static_cast<double>(i));
      run(body, mask);
      auto yield = cast<scf::YieldOp>(body.getTerminator());
      std::vector<Val> next;
      for (Value y : yield.getOperands())
        next.push_back(get(y));
      for (auto [arg, v] : llvm::zip(loop.getRegionIterArgs(), next))
        vals[arg.getAsOpaquePointer()] = v;
    }
    for (auto [res, arg] :
         llvm::zip(loop.getResults(), loop.getRegionIterArgs()))
      vals[res.getAsOpaquePointer()] = get(arg);
    return;
  }
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    if (ifOp.getNumResults() != 0)
      die("scf.if with results is not supported");
    std::vector<char> thenMask(n, 0), elseMask(n, 0);
    lanes([&](int64_t l) {
      (at(ifOp.getCondition(), l) != 0 ? thenMask : elseMask)[l] = 1;
    });
    run(*ifOp.thenBlock(), thenMask);
    if (ifOp.elseBlock())
      run(*ifOp.elseBlock(), elseMask);
    return;
  }
  if (isa<scf::YieldOp, gpu::ReturnOp, func::ReturnOp>(op))
    return;
  die("unsupported op " + name.str());
}

} // namespace

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::Required,
                                            llvm::cl::desc("<module.mlir>"));
static llvm::cl::list<std::string>
    inputs("input", llvm::cl::desc("PATH.npy per argument"));
static llvm::cl::list<std::string>
    outputs("output", llvm::cl::desc("PATH.npy per result"));
static llvm::cl::opt<std::string>
    passOptions("pass-options",
                llvm::cl::desc("Options of convert-attn-to-gpu"),
                llvm::cl::init(""));
static llvm::cl::opt<std::string> entry("entry", llvm::cl::init("main"),
                                        llvm::cl::desc("Entry point"));

int main(int argc, char **argv) {
  llvm::InitLLVM y(argc, argv);
  llvm::cl::ParseCommandLineOptions(
      argc, argv,
      "attn-gpu-emulator: runs convert-attn-to-gpu's kernels on the CPU\n");
  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registry.insert<attn::AttnDialect>();
  registerAllPasses();
  attn::registerAttnPasses();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  std::string err;
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(inputFile, sourceMgr, ParserConfig(&context));
  if (!module)
    die("cannot parse " + inputFile);
  // The result shapes, as the runtime computes them from the signature
  // that attention-run embeds.
  attnrt::FunctionSignature signature;
  if (auto source = module->lookupSymbol<func::FuncOp>(entry);
      !source ||
      failed(attnrt::entrySignature(source, /*gpu=*/true, signature)))
    die("no entry point @" + entry + " with a signature the runtime takes");
  // What attn-lower-to-nvvm-pipeline runs before the NVVM lowering: the
  // attn-level rewrites (as attention-run --target cuda does by default),
  // then the kernel generator.
  PassManager pm(&context);
  attn::addAttnRewrites(pm);
  std::string pipeline =
      "convert-attn-to-gpu{" + passOptions + "},canonicalize,cse";
  if (failed(parsePassPipeline(pipeline, pm)) || failed(pm.run(*module)))
    die("convert-attn-to-gpu failed");

  auto fn = module->lookupSymbol<func::FuncOp>(entry);
  if (!fn)
    die("no entry point @" + entry);
  unsigned numIn = inputs.size();
  if (numIn + outputs.size() != fn.getNumArguments())
    die("@" + entry + " takes " + std::to_string(fn.getNumArguments()) +
        " buffers (inputs, then results)");

  // Host buffers: inputs rounded to their element type, results NaN.
  std::vector<std::unique_ptr<Buffer>> storage;
  std::vector<attnrt::Tensor> inputTensors;
  Emulator host(1);
  std::vector<char> one(1, 1);
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    auto type = cast<MemRefType>(fn.getArgument(i).getType());
    auto b = std::make_unique<Buffer>();
    b->elem = type.getElementType();
    if (i < numIn) {
      attnrt::Tensor t;
      if (attnrt::Status s = attnrt::readNpy(inputs[i], t); !s)
        die(s.message());
      attnrt::DType dt = t.dtype();
      if (dt != attnrt::DType::F32 && dt != attnrt::DType::F16 &&
          dt != attnrt::DType::Bool && dt != attnrt::DType::I64 &&
          dt != attnrt::DType::I32)
        die(inputs[i] + ": expected f32, f16, bool, i64 or i32 data");
      if ((dt == attnrt::DType::Bool) != b->elem.isInteger(1))
        die(inputs[i] + ": bool data goes to i1 buffers only");
      bool integer = dt == attnrt::DType::I64 || dt == attnrt::DType::I32;
      if (integer && !b->elem.isInteger(dt == attnrt::DType::I64 ? 64 : 32))
        die(inputs[i] + ": integer data goes to buffers of its width only");
      b->shape = t.shape();
      inputTensors.push_back(t);
      for (int64_t e = 0; e < t.numElements(); ++e)
        b->data.push_back(
            dt == attnrt::DType::Bool  ? (t.as<uint8_t>()[e] ? 1.0 : 0.0)
            : dt == attnrt::DType::I64 ? static_cast<double>(t.as<int64_t>()[e])
            : dt == attnrt::DType::I32
                ? static_cast<double>(t.as<int32_t>()[e])
                : roundTo(b->elem,
                          dt == attnrt::DType::F32
                              ? t.as<float>()[e]
                              : attnrt::f16ToFloat(t.as<uint16_t>()[e])));
    }
    host.bufs[fn.getArgument(i)] = b.get();
    storage.push_back(std::move(b));
  }
  std::vector<std::vector<int64_t>> resultShapes;
  if (attnrt::Status s =
          attnrt::outputShapes(entry, signature, inputTensors, resultShapes);
      !s)
    die(s.message());
  for (unsigned i = numIn; i < fn.getNumArguments(); ++i) {
    auto type = cast<MemRefType>(fn.getArgument(i).getType());
    Buffer *b = storage[i].get();
    b->shape = resultShapes[i - numIn];
    if (b->shape.size() != static_cast<size_t>(type.getRank()))
      die("result " + std::to_string(i - numIn) + " has rank " +
          std::to_string(type.getRank()) + ", its signature another");
    int64_t count = 1;
    for (int64_t s : b->shape)
      count *= s;
    // NaN: an element the kernel never stores shows up in the check.
    b->data.assign(count, NAN);
  }

  // The host function: index arithmetic, then launches.
  for (Operation &op : fn.getBody().front()) {
    auto launch = dyn_cast<gpu::LaunchFuncOp>(op);
    if (!launch) {
      host.runOp(op, one);
      continue;
    }
    auto kernel =
        module->lookupSymbol<gpu::GPUModuleOp>(launch.getKernelModuleName())
            .lookupSymbol<gpu::GPUFuncOp>(launch.getKernelName());
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    int64_t gx = host.idx(grid.x, 0), gy = host.idx(grid.y, 0),
            gz = host.idx(grid.z, 0), threads = host.idx(block.x, 0);
    if (host.idx(block.y, 0) != 1 || host.idx(block.z, 0) != 1 || threads % 32)
      die("unsupported block shape");
    std::vector<std::unique_ptr<Buffer>> shared;
    for (Value attribution : kernel.getWorkgroupAttributions()) {
      auto t = cast<MemRefType>(attribution.getType());
      auto b = std::make_unique<Buffer>();
      b->elem = t.getElementType();
      b->shape.assign(t.getShape().begin(), t.getShape().end());
      b->data.assign(t.getNumElements(), 0.0);
      shared.push_back(std::move(b));
    }
    for (int64_t z = 0; z < gz; ++z)
      for (int64_t yy = 0; yy < gy; ++yy)
        for (int64_t x = 0; x < gx; ++x) {
          Emulator dev(threads);
          dev.blockId[0] = x;
          dev.blockId[1] = yy;
          dev.blockId[2] = z;
          for (auto [arg, operand] :
               llvm::zip(kernel.getArguments(), launch.getKernelOperands())) {
            if (isa<MemRefType>(operand.getType())) {
              dev.bufs[arg] = host.buf(operand);
              continue;
            }
            // A scalar argument: the same value in every thread.
            Val &x = dev.def(arg);
            std::fill(x.data.begin(), x.data.end(), host.at(operand, 0));
          }
          for (auto [attribution, b] :
               llvm::zip(kernel.getWorkgroupAttributions(), shared)) {
            // Shared memory starts undefined: poison it so that a read
            // before a write shows up as NaN.
            std::fill(b->data.begin(), b->data.end(), NAN);
            dev.bufs[attribution] = b.get();
          }
          std::vector<char> all(threads, 1);
          dev.run(kernel.getBody().front(), all);
          if (!dev.groups.empty() || !dev.uncommitted.empty())
            die("kernel exits with cp.async copies still pending");
        }
  }

  for (size_t o = 0; o < outputs.size(); ++o) {
    Buffer *b = storage[numIn + o].get();
    attnrt::Tensor t(attnrt::DType::F32, b->shape);
    for (size_t e = 0; e < b->data.size(); ++e)
      t.as<float>()[e] = static_cast<float>(b->data[e]);
    if (attnrt::Status s = attnrt::writeNpyAtomic(outputs[o], t); !s)
      die(s.message());
  }
  return 0;
}
