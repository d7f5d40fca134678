//===- CudaErrorSlots.cpp - mgpu* errors stay on the thread that made them ===//
//
// A test tool. Compiled GPU modules report driver failures only through
// cuda::takeError() after a call; a module invoked on one thread must not
// see, or take away, the errors of a module running on another. Without a
// usable driver every mgpu* call fails, which makes the errors easy to
// produce anywhere: this program checks that an error made on one thread
// is not seen on another, that a thread takes its own exactly once, and
// that no other thread can take it. Prints one line per
// check and exits 1 if any failed.
//
//===----------------------------------------------------------------------===//

#include "CheckList.h"
#include "attnrt/Cuda.h"

#include <cstdio>
#include <string>
#include <thread>

extern "C" void *mgpuStreamCreate(void);

namespace {

attn_test::CheckList checks;

} // namespace

int main() {
  using attnrt::cuda::takeError;
  checks.expect(!attnrt::cuda::available(), "no usable CUDA driver here");
  checks.expect(takeError().isOk(), "nothing recorded before any call");

  // A thread's error, never taken, is invisible to the others.
  std::thread([] { (void)mgpuStreamCreate(); }).join();
  attnrt::Status main = takeError();
  checks.expect(main.isOk(),
                "the main thread does not see another thread's error",
                main.isOk() ? "" : main.message());

  // A thread takes its own error exactly once.
  std::string first, second;
  std::thread([&] {
    (void)mgpuStreamCreate();
    attnrt::Status s = takeError();
    first = s.isOk() ? "<none>" : s.message();
    s = takeError();
    second = s.isOk() ? "<none>" : s.message();
  }).join();
  checks.expect(first.rfind("no CUDA driver found", 0) == 0,
                "a thread takes its own error", first);
  checks.expect(second == "<none>", "and only once", second);

  // Another thread cannot take the main thread's error.
  (void)mgpuStreamCreate();
  std::string other;
  std::thread([&] {
    attnrt::Status s = takeError();
    other = s.isOk() ? "<none>" : s.message();
  }).join();
  attnrt::Status own = takeError();
  checks.expect(other == "<none>" && !own.isOk(),
                "another thread cannot take the main thread's error", other);
  return checks.finish();
}
