//===- NpyFuzzer.cpp - libFuzzer target for the .npy reader ----------------===//
//
// Feeds arbitrary bytes to attnrt::parseNpy and, when they parse, writes the
// tensor back out: neither may crash, read out of bounds or overflow.
//
//===----------------------------------------------------------------------===//

#include "attnrt/Npy.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  attnrt::Tensor t;
  if (attnrt::parseNpy(bytes, "fuzz.npy", t)) {
    std::string again = attnrt::serializeNpy(t);
    attnrt::Tensor u;
    if (!attnrt::parseNpy(again, "roundtrip.npy", u) ||
        u.byteSize() != t.byteSize())
      __builtin_trap(); // a written file must read back
  }
  return 0;
}
