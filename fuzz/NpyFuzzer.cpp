//===- NpyFuzzer.cpp - libFuzzer target for the .npy reader ----------------===//
//
// Feeds arbitrary bytes to attnrt::parseNpy and, when they parse, writes the
// tensor back out: neither may crash, read out of bounds or overflow.
//
// The same bytes also go through a file to attnrt::readNpy, which parses
// the header from the file's first bytes and reads the payload straight
// into the tensor (it never holds the whole file). Both readers must agree:
// the same verdict, and on success the same dtype, shape and bytes. And a
// tensor written by writeNpyAtomic must read back the same.
//
//===----------------------------------------------------------------------===//

#include "attnrt/Npy.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <unistd.h>

namespace {

/// One scratch file per fuzzing process (libFuzzer's -jobs/-workers run
/// several in the same directory).
const std::string &scratchPath() {
  static const std::string path = [] {
    const char *dir = std::getenv("TMPDIR");
    return std::string(dir && *dir ? dir : "/tmp") + "/attn-fuzz-npy." +
           std::to_string(::getpid()) + ".npy";
  }();
  return path;
}

bool sameTensor(const attnrt::Tensor &a, const attnrt::Tensor &b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         a.byteSize() == b.byteSize() &&
         std::memcmp(a.data(), b.data(), a.byteSize()) == 0;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  attnrt::Tensor t;
  bool parsed = static_cast<bool>(attnrt::parseNpy(bytes, "fuzz.npy", t));
  if (parsed) {
    std::string again = attnrt::serializeNpy(t);
    attnrt::Tensor u;
    if (!attnrt::parseNpy(again, "roundtrip.npy", u) ||
        u.byteSize() != t.byteSize())
      __builtin_trap(); // a written file must read back
  }

  const std::string &path = scratchPath();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.close();
    if (!out)
      return 0; // no scratch space: nothing to compare
  }
  attnrt::Tensor streamed;
  bool read = static_cast<bool>(attnrt::readNpy(path, streamed));
  if (read != parsed || (read && !sameTensor(streamed, t)))
    __builtin_trap(); // the streaming reader disagrees with parseNpy
  if (read) {
    attnrt::Tensor back;
    if (!attnrt::writeNpyAtomic(path, streamed) ||
        !attnrt::readNpy(path, back) || !sameTensor(back, streamed))
      __builtin_trap(); // writeNpyAtomic's file must read back
  }
  std::remove(path.c_str());
  return 0;
}
