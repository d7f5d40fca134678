//===- PhiloxCheck.cpp - the dropout generator's IR against plain C++ -----===//
//
// Dropout keeps a weight iff the Philox-4x32-10 uniform of its flat index in
// [B, H, Tq, Tk] is >= p (detail::buildPhiloxUniform). The scalar form keeps
// the counter's two 32-bit words in i32 values, its products either
// arith.mului_extended (the CPU lowerings) or low words by arith.muli and
// high words by a target hook (the GPU kernel's mul.hi.u32; here an
// equivalent built from arith ops); the vector form of attn-vectorize-sdpa
// keeps each word in the low half of an i64 lane. The high counter word
// only becomes non-zero past 2^32 scores, which no executable test can
// allocate, so this tool checks the generator directly:
//
//   1. A plain C++ Philox-4x32-10 reproduces the Random123 known-answer
//      vectors.
//   2. For a set of seeds (0, 32-bit, 64-bit) and counters (small, around
//      2^32, up to 2^63 - 1), the three IR forms are built over constant
//      counters and folded to constants by the canonicalizer (arith's
//      folders evaluate exactly what the ops mean); every lane must equal
//      the C++ uniform bit for bit.
//
// Prints one line per seed and a summary; exits 1 on any difference.
//
//===----------------------------------------------------------------------===//

#include "LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

using namespace mlir;

namespace {

using Words = std::array<uint32_t, 4>;

/// Philox-4x32-10 as Salmon et al. define it, one round at a time.
Words philox4x32(Words ctr, uint32_t key0, uint32_t key1) {
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = uint64_t(0xD2511F53u) * ctr[0];
    uint64_t p1 = uint64_t(0xCD9E8D57u) * ctr[2];
    ctr = {uint32_t(p1 >> 32) ^ ctr[1] ^ key0, uint32_t(p1),
           uint32_t(p0 >> 32) ^ ctr[3] ^ key1, uint32_t(p0)};
    key0 += 0x9E3779B9u;
    key1 += 0xBB67AE85u;
  }
  return ctr;
}

/// The dropout uniform: counter words (low, high, 0, 0), key = the seed's
/// words, top 24 bits of the first output word scaled to [0, 1).
float referenceUniform(uint64_t counter, uint64_t seed) {
  Words out = philox4x32({uint32_t(counter), uint32_t(counter >> 32), 0, 0},
                         uint32_t(seed), uint32_t(seed >> 32));
  return float(out[0] >> 8) * (1.0f / 16777216.0f);
}

bool knownAnswers() {
  // Random123's kat_vectors for philox4x32 with 10 rounds.
  struct Kat {
    Words ctr;
    uint32_t key0, key1;
    Words want;
  } kats[] = {
      {{0, 0, 0, 0}, 0, 0, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       0xffffffff,
       0xffffffff,
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       0xa4093822,
       0x299f31d0,
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  bool ok = true;
  for (const Kat &k : kats) {
    Words got = philox4x32(k.ctr, k.key0, k.key1);
    if (got != k.want) {
      std::printf("FAIL known answer: ctr %08x.. key %08x %08x gives %08x %08x "
                  "%08x %08x, want %08x %08x %08x %08x\n",
                  k.ctr[0], k.key0, k.key1, got[0], got[1], got[2], got[3],
                  k.want[0], k.want[1], k.want[2], k.want[3]);
      ok = false;
    }
  }
  std::printf("%s reference Philox-4x32-10: %zu known-answer vectors\n",
              ok ? "PASS" : "FAIL", std::size(kats));
  return ok;
}

/// The forms of the generator, in the order foldedUniforms returns them.
constexpr const char *kForms[] = {"scalar", "scalar+mulhi", "vector"};

/// The high word of x * y from 64-bit arith ops: a stand-in for a target's
/// multiply-high instruction that the folders evaluate.
Value mulHiFromArith(OpBuilder &b, Location loc, Value x, Value y) {
  Type i64 = b.getI64Type();
  Value wide =
      arith::MulIOp::create(b, loc, arith::ExtUIOp::create(b, loc, i64, x),
                            arith::ExtUIOp::create(b, loc, i64, y));
  Value high = arith::ShRUIOp::create(
      b, loc, wide,
      arith::ConstantOp::create(b, loc, b.getIntegerAttr(i64, 32)));
  return arith::TruncIOp::create(b, loc, b.getI32Type(), high);
}

/// The uniforms the IR gives for `counters` under `seed`, per form of
/// kForms: scalar generators per counter and one vector generator over all
/// of them, folded to constants. Returns false (with a message) if anything
/// did not fold.
bool foldedUniforms(MLIRContext &ctx, ArrayRef<uint64_t> counters,
                    uint64_t seed, std::vector<float> (&forms)[3]) {
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module->getBody());
  int64_t n = counters.size();
  Type i64 = b.getI64Type(), f32 = b.getF32Type();
  auto vecI64 = VectorType::get({n}, i64), vecF32 = VectorType::get({n}, f32);
  SmallVector<Type> results(2 * n, f32);
  results.push_back(vecF32);
  auto func =
      func::FuncOp::create(b, loc, "uniforms", b.getFunctionType({}, results));
  b.setInsertionPointToStart(func.addEntryBlock());
  SmallVector<Value> values;
  SmallVector<APInt> lanes;
  for (bool hook : {false, true})
    for (uint64_t c : counters) {
      Value ctr = arith::ConstantOp::create(b, loc, b.getIntegerAttr(i64, c));
      values.push_back(attn::detail::buildPhiloxUniform(
          b, loc, ctr, seed,
          hook ? attn::detail::MulHiBuilder(mulHiFromArith) : nullptr));
      if (!hook)
        lanes.push_back(APInt(64, c));
    }
  Value ctrVec =
      arith::ConstantOp::create(b, loc, DenseElementsAttr::get(vecI64, lanes));
  values.push_back(attn::detail::buildPhiloxUniform(b, loc, ctrVec, seed));
  func::ReturnOp::create(b, loc, values);

  PassManager pm(&ctx);
  pm.addPass(createCanonicalizerPass());
  if (failed(pm.run(*module))) {
    std::printf("FAIL seed %#llx: the canonicalizer failed\n",
                (unsigned long long)seed);
    return false;
  }
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (std::vector<float> &f : forms)
    f.clear();
  for (int64_t i = 0; i <= 2 * n; ++i) {
    Attribute attr;
    if (auto cst = ret.getOperand(i).getDefiningOp<arith::ConstantOp>())
      attr = cst.getValue();
    if (i < 2 * n) {
      auto f = dyn_cast_or_null<FloatAttr>(attr);
      if (!f) {
        std::printf("FAIL seed %#llx: the %s form of counter %#llx did "
                    "not fold to a constant\n",
                    (unsigned long long)seed, kForms[i / n],
                    (unsigned long long)counters[i % n]);
        return false;
      }
      forms[i / n].push_back(f.getValue().convertToFloat());
    } else {
      auto d = dyn_cast_or_null<DenseFPElementsAttr>(attr);
      if (!d) {
        std::printf("FAIL seed %#llx: the vector form did not fold to a "
                    "constant\n",
                    (unsigned long long)seed);
        return false;
      }
      for (const APFloat &v : d.getValues<APFloat>())
        forms[2].push_back(v.convertToFloat());
    }
  }
  return true;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

} // namespace

int main() {
  bool ok = knownAnswers();

  MLIRContext ctx;
  ctx.loadDialect<arith::ArithDialect, func::FuncDialect>();

  // Flat indices are non-negative i64: around 0, around each 32-bit word
  // boundary, and spread over the high word.
  std::vector<uint64_t> counters = {0,
                                    1,
                                    2,
                                    0x7fffffff,
                                    0xfffffffe,
                                    0xffffffff,
                                    0x100000000,
                                    0x100000001,
                                    0x1ffffffff,
                                    0x200000000,
                                    0x123456789,
                                    0xdeadbeef12,
                                    0x7fffffff80000000ull,
                                    0x7fffffffffffffffull,
                                    0x0123456789abcdefull,
                                    0x4000000000000001ull};
  // Plus pseudo-random counters over the whole non-negative range.
  uint64_t x = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 16; ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    counters.push_back(x >> 1);
  }
  const uint64_t seeds[] = {0, 123, 0xffffffffull, 0x100000005ull,
                            0xdeadbeefcafef00dull & 0x7fffffffffffffffull};

  int compared = 0, differing = 0;
  for (uint64_t seed : seeds) {
    std::vector<float> forms[3];
    if (!foldedUniforms(ctx, counters, seed, forms)) {
      ok = false;
      continue;
    }
    int bad = 0;
    for (size_t i = 0; i < counters.size(); ++i) {
      float want = referenceUniform(counters[i], seed);
      for (int form = 0; form < 3; ++form) {
        float got = forms[form][i];
        ++compared;
        if (bits(got) != bits(want)) {
          ++bad;
          std::printf("FAIL seed %#llx counter %#llx: %s form %.9g, want "
                      "%.9g\n",
                      (unsigned long long)seed, (unsigned long long)counters[i],
                      kForms[form], got, want);
        }
      }
    }
    differing += bad;
    std::printf("%s seed %#llx: %zu counters, all three forms%s; "
                "counter 2^32 gives %.9g\n",
                bad ? "FAIL" : "PASS", (unsigned long long)seed,
                counters.size(), bad ? " differ" : " equal the reference",
                referenceUniform(0x100000000ull, seed));
  }
  ok = ok && differing == 0;
  std::printf("philox-check: %d uniforms compared, %d differ\n", compared,
              differing);
  return ok ? 0 : 1;
}
