//===- CheckedAllocation.cpp - calls whose allocations fail ---------------===//
//
// A test tool. A call of compiled code whose allocation fails returns an
// error and frees what it had allocated; the module stays usable, a later
// call computes the right numbers, failed calls do not keep memory, and a
// call failing on one thread leaves another thread's calls alone.
// Usage: attnrt-checked-allocation MODULE.so, a module whose @main maps
// x: f32[n, 0] to n twos and their n x n outer sums (fours), 256 TiB at
// n = 2^23 (test/runtime/Inputs/too-large.mlir). Prints one line per check
// and exits 1 if any failed.
//
//===----------------------------------------------------------------------===//

#include "CheckList.h"
#include "attnrt/Module.h"

#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace {

attn_test::CheckList checks;

/// The result of @main on n rows, against the values a loop expects.
bool rightNumbers(const std::vector<attnrt::Tensor> &out, int64_t n) {
  if (out.size() != 2 || out[0].shape() != std::vector<int64_t>{n} ||
      out[1].shape() != std::vector<int64_t>{n, n})
    return false;
  for (int64_t i = 0; i < n; ++i)
    if (out[0].as<float>()[i] != 2.0f)
      return false;
  for (int64_t i = 0; i < n * n; ++i)
    if (out[1].as<float>()[i] != 4.0f)
      return false;
  return true;
}

/// The process's resident memory in bytes (Linux), or -1.
int64_t residentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0, resident = 0;
  if (!(statm >> pages >> resident))
    return -1;
  return resident * 4096;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: attnrt-checked-allocation MODULE.so\n");
    return 2;
  }
  std::unique_ptr<attnrt::SharedObjectModule> m;
  if (attnrt::Status s = attnrt::SharedObjectModule::load(argv[1], m); !s) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  const int64_t bigRows = int64_t(1) << 23;
  attnrt::Tensor small(attnrt::DType::F32, {5, 0});
  attnrt::Tensor big(attnrt::DType::F32, {bigRows, 0});

  std::vector<attnrt::Tensor> out;
  attnrt::Status s = m->invoke("main", {small}, out);
  checks.expect(s && rightNumbers(out, 5), "a call that fits",
                s ? "" : s.message());

  s = m->invoke("main", {big}, out);
  checks.expect(!s && s.message().find("@main: out of memory: the compiled "
                                       "code could not allocate ") == 0,
                "a call too large for memory fails",
                s ? "it succeeded" : s.message());
  checks.expect(out.empty(), "and returns no result");

  s = m->invoke("main", {small}, out);
  checks.expect(s && rightNumbers(out, 5), "the module is used again",
                s ? "" : s.message());

  // Each failed call had filled its first result, 32 MiB of twos, before
  // the second failed: kept, 20 calls would hold 640 MiB.
  out.clear();
  int64_t before = residentBytes();
  for (int i = 0; i < 20; ++i)
    (void)m->invoke("main", {big}, out);
  int64_t growth = residentBytes() - before;
  checks.expect(before >= 0 && growth < (int64_t(64) << 20),
                "20 failed calls keep no memory",
                std::to_string(growth >> 20) + " MiB more resident");

  // One thread's calls fail while another's run: each call frees only its
  // own blocks.
  bool otherRight = true;
  std::thread other([&] {
    std::vector<attnrt::Tensor> o;
    for (int i = 0; i < 50 && otherRight; ++i)
      otherRight = m->invoke("main", {small}, o) && rightNumbers(o, 5);
  });
  bool allFailed = true;
  std::vector<attnrt::Tensor> o;
  for (int i = 0; i < 10; ++i)
    allFailed = allFailed && !m->invoke("main", {big}, o);
  other.join();
  checks.expect(otherRight && allFailed,
                "failing and fitting calls on two threads at once");
  return checks.finish();
}
