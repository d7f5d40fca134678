//===- RetainMemory.cpp - freed blocks of any size stay with the process --===//
//
// A test tool. attention-run and the C API's attnrt_retain_freed_memory ask
// glibc to keep freed memory, so that repeated calls of a compiled module
// reuse its buffers instead of page-faulting fresh ones. glibc caps its mmap
// threshold at 32 MiB, and blocks above it were mapped and unmapped on
// every call (an activation of 4 x 2048 x 1600 floats is 52 MB). This
// program checks, with mallinfo2, that after retainFreedMemory(1 GiB) a
// 64 MiB block comes from the heap, that freeing it keeps the heap, and
// that the next block of that size reuses it; and that a request of at most
// 32 MiB leaves larger blocks mapped, before and after a larger request.
// Under the sanitizers' allocator the call must fail with its message
// instead. Prints one line per check and exits 1 if any failed.
//
//===----------------------------------------------------------------------===//

#include "CheckList.h"
#include "attnrt/Memory.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <string>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTN_SANITIZED_MALLOC 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ATTN_SANITIZED_MALLOC 1
#endif

namespace {

attn_test::CheckList checks;

constexpr std::size_t kMiB = std::size_t(1) << 20;

/// Allocates and touches `bytes`; returns the block and whether glibc
/// mapped it (one more mmapped block than before).
void *touchedBlock(std::size_t bytes, bool &mapped) {
  std::size_t before = mallinfo2().hblks;
  void *p = std::malloc(bytes);
  if (p)
    std::memset(p, 1, bytes);
  // The compiler must not elide the block (it would, seeing only memset
  // and free use it).
  asm volatile("" : : "r"(p) : "memory");
  mapped = mallinfo2().hblks > before;
  return p;
}

} // namespace

int main() {
#ifdef ATTN_SANITIZED_MALLOC
  attnrt::Status s = attnrt::retainFreedMemory(std::size_t(1) << 30);
  checks.expect(!s, "the sanitizers' malloc refuses", s ? "" : s.message());
#else
  // Before: glibc maps a 64 MiB block (above its default threshold).
  bool mapped = false;
  void *p = touchedBlock(64 * kMiB, mapped);
  checks.expect(p && mapped, "by default a 64 MiB block is mapped");
  std::free(p);

  // A request of at most 32 MiB raises the threshold but keeps mmap.
  attnrt::Status s = attnrt::retainFreedMemory(32 * kMiB);
  checks.expect(bool(s), "retainFreedMemory(32 MiB)", s ? "" : s.message());
  p = touchedBlock(64 * kMiB, mapped);
  checks.expect(p && mapped, "after it a 64 MiB block is still mapped");
  std::free(p);
  p = touchedBlock(16 * kMiB, mapped);
  checks.expect(p && !mapped, "and a 16 MiB block comes from the heap");
  std::free(p);

  s = attnrt::retainFreedMemory(std::size_t(1) << 30);
  checks.expect(bool(s), "retainFreedMemory(1 GiB)", s ? "" : s.message());
  p = touchedBlock(64 * kMiB, mapped);
  checks.expect(p && !mapped, "after it a 64 MiB block comes from the heap");
  // No allocation between the free and the next block (a small one would
  // be carved out of the freed block).
  std::size_t heapBefore = mallinfo2().arena;
  auto address = reinterpret_cast<std::uintptr_t>(p);
  std::free(p);
  std::size_t heapAfter = mallinfo2().arena;
  void *q = touchedBlock(64 * kMiB, mapped);
  checks.expect(heapAfter >= heapBefore, "freeing it keeps the heap",
                std::to_string(heapBefore / kMiB) + " MiB before, " +
                    std::to_string(heapAfter / kMiB) + " MiB after");
  bool same = reinterpret_cast<std::uintptr_t>(q) == address;
  checks.expect(same && !mapped, "the next 64 MiB block reuses it",
                same ? "" : "a new address");
  std::free(q);

  s = attnrt::retainFreedMemory(32 * kMiB);
  checks.expect(bool(s), "retainFreedMemory(32 MiB) again",
                s ? "" : s.message());
  // Larger than the free 64 MiB at the heap's top, which malloc would use
  // first.
  p = touchedBlock(128 * kMiB, mapped);
  checks.expect(p && mapped, "a 128 MiB block is mapped again");
  std::free(p);
#endif
  return checks.finish();
}
