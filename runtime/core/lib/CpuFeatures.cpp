//===- CpuFeatures.cpp - CPUID checks of a module's instruction sets -----===//
//
// Each extension is one CPUID bit, usable only if the OS also saves the
// registers it needs (XCR0): the ymm halves for VEX-encoded extensions,
// the zmm and mask registers for AVX-512, the tile state for AMX. LLVM's
// sys::getHostCPUFeatures reads the same bits; test/cpu-features checks that
// the two agree on this host.
//
//===----------------------------------------------------------------------===//

#include "attnrt/CpuFeatures.h"

#include <algorithm>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define ATTNRT_X86 1
#endif

namespace attnrt {
namespace {

enum class Reg { Eax, Ebx, Ecx, Edx };
enum class State { None, Ymm, Zmm, Amx };

struct FeatureBit {
  const char *name;
  unsigned leaf, subleaf;
  Reg reg;
  unsigned bit;
  State state;
};

constexpr FeatureBit kFeatures[] = {
    {"sse3", 1, 0, Reg::Ecx, 0, State::None},
    {"pclmul", 1, 0, Reg::Ecx, 1, State::None},
    {"ssse3", 1, 0, Reg::Ecx, 9, State::None},
    {"fma", 1, 0, Reg::Ecx, 12, State::Ymm},
    {"sse4.1", 1, 0, Reg::Ecx, 19, State::None},
    {"sse4.2", 1, 0, Reg::Ecx, 20, State::None},
    {"movbe", 1, 0, Reg::Ecx, 22, State::None},
    {"popcnt", 1, 0, Reg::Ecx, 23, State::None},
    {"aes", 1, 0, Reg::Ecx, 25, State::None},
    {"avx", 1, 0, Reg::Ecx, 28, State::Ymm},
    {"f16c", 1, 0, Reg::Ecx, 29, State::Ymm},
    {"bmi", 7, 0, Reg::Ebx, 3, State::None},
    {"avx2", 7, 0, Reg::Ebx, 5, State::Ymm},
    {"bmi2", 7, 0, Reg::Ebx, 8, State::None},
    {"avx512f", 7, 0, Reg::Ebx, 16, State::Zmm},
    {"avx512dq", 7, 0, Reg::Ebx, 17, State::Zmm},
    {"adx", 7, 0, Reg::Ebx, 19, State::None},
    {"avx512ifma", 7, 0, Reg::Ebx, 21, State::Zmm},
    {"avx512cd", 7, 0, Reg::Ebx, 28, State::Zmm},
    {"sha", 7, 0, Reg::Ebx, 29, State::None},
    {"avx512bw", 7, 0, Reg::Ebx, 30, State::Zmm},
    {"avx512vl", 7, 0, Reg::Ebx, 31, State::Zmm},
    {"avx512vbmi", 7, 0, Reg::Ecx, 1, State::Zmm},
    {"avx512vbmi2", 7, 0, Reg::Ecx, 6, State::Zmm},
    {"gfni", 7, 0, Reg::Ecx, 8, State::None},
    {"vaes", 7, 0, Reg::Ecx, 9, State::Ymm},
    {"vpclmulqdq", 7, 0, Reg::Ecx, 10, State::Ymm},
    {"avx512vnni", 7, 0, Reg::Ecx, 11, State::Zmm},
    {"avx512bitalg", 7, 0, Reg::Ecx, 12, State::Zmm},
    {"avx512vpopcntdq", 7, 0, Reg::Ecx, 14, State::Zmm},
    {"avx512vp2intersect", 7, 0, Reg::Edx, 8, State::Zmm},
    {"amx-bf16", 7, 0, Reg::Edx, 22, State::Amx},
    {"avx512fp16", 7, 0, Reg::Edx, 23, State::Zmm},
    {"amx-tile", 7, 0, Reg::Edx, 24, State::Amx},
    {"amx-int8", 7, 0, Reg::Edx, 25, State::Amx},
    {"avxvnni", 7, 1, Reg::Eax, 4, State::Ymm},
    {"avx512bf16", 7, 1, Reg::Eax, 5, State::Zmm},
    {"lzcnt", 0x80000001, 0, Reg::Ecx, 5, State::None},
    {"sse4a", 0x80000001, 0, Reg::Ecx, 6, State::None},
};

#ifdef ATTNRT_X86
bool cpuidBit(const FeatureBit &f) {
  unsigned regs[4] = {0, 0, 0, 0};
  // __get_cpuid_count checks the leaf against the highest one the CPU has.
  if (!__get_cpuid_count(f.leaf, f.subleaf, &regs[0], &regs[1], &regs[2],
                         &regs[3]))
    return false;
  if (f.leaf == 7 && f.subleaf == 1) {
    // Subleaf 1 exists only if subleaf 0 reports it (in EAX).
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || a < 1)
      return false;
  }
  return (regs[static_cast<int>(f.reg)] >> f.bit) & 1;
}

/// The register state the OS saves on context switches (XCR0), or 0 if the
/// OS does not enable XSAVE for user code.
uint64_t osSavedState() {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 27) & 1)) // OSXSAVE
    return 0;
  uint32_t lo, hi;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

bool stateSaved(State s) {
  // XCR0 is fixed for the life of the process: read once.
  static const uint64_t xcr0 = osSavedState();
  switch (s) {
  case State::None:
    return true;
  case State::Ymm: // SSE and AVX state
    return (xcr0 & 0x6) == 0x6;
  case State::Zmm: // and the opmask, upper-zmm and high-zmm state
    return (xcr0 & 0xe6) == 0xe6;
  case State::Amx: // tile configuration and data
    return (xcr0 & 0x60000) == 0x60000;
  }
  return false;
}
#endif

const FeatureBit *lookup(const std::string &name) {
  for (const FeatureBit &f : kFeatures)
    if (name == f.name)
      return &f;
  return nullptr;
}

} // namespace

const std::vector<std::string> &checkableCpuFeatures() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const FeatureBit &f : kFeatures)
      v.emplace_back(f.name);
    return v;
  }();
  return names;
}

namespace {
/// Whether this host has the table entry `f` (nullptr: a name outside it).
bool hostHas(const FeatureBit *f) {
#ifdef ATTNRT_X86
  return f && cpuidBit(*f) && stateSaved(f->state);
#else
  (void)f;
  return false;
#endif
}
} // namespace

bool hostHasCpuFeature(const std::string &feature) {
  return hostHas(lookup(feature));
}

Status checkHostCpuFeatures(const std::string &features,
                            const std::string &what) {
  std::string missing, unknown;
  size_t start = 0;
  while (start <= features.size()) {
    size_t end = features.find(',', start);
    if (end == std::string::npos)
      end = features.size();
    std::string name = features.substr(start, end - start);
    start = end + 1;
    if (name.empty())
      continue;
    const FeatureBit *f = lookup(name);
    if (hostHas(f))
      continue;
    std::string &list = f ? missing : unknown;
    list += (list.empty() ? "" : ", ") + name;
  }
  if (!unknown.empty())
    return Status::error(what +
                         " needs CPU features this runtime cannot "
                         "check: " +
                         unknown);
  if (!missing.empty())
    return Status::error(what +
                         " needs CPU features this host lacks: " + missing);
  return Status::ok();
}

} // namespace attnrt
