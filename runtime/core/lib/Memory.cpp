//===- Memory.cpp - how the process keeps freed memory --------------------===//

#include "attnrt/Memory.h"

#include <algorithm>
#include <climits>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace attnrt {

Status retainFreedMemory(std::size_t bytes) {
  if (bytes == 0)
    return Status::error("retainFreedMemory: bytes must be positive");
#if defined(__GLIBC__)
  // glibc caps the mmap threshold at 32 MiB on 64-bit targets (half its
  // per-thread heap size); larger blocks stay mmapped.
  const std::size_t maxThreshold = std::size_t(32) << 20;
  int threshold = static_cast<int>(std::min(bytes, maxThreshold));
  int trim = static_cast<int>(std::min<std::size_t>(bytes, INT_MAX));
  if (!mallopt(M_MMAP_THRESHOLD, threshold) || !mallopt(M_TRIM_THRESHOLD, trim))
    return Status::error("retainFreedMemory: mallopt rejected " +
                         std::to_string(bytes) +
                         " bytes (malloc is not glibc's here)");
  // Larger blocks would still be mapped and unmapped on every call (a
  // 4 x 2048 x 1600 f32 activation is 52 MB): 15% of the samples of such a
  // block went to page faults, and it took 1.7x the time. Without mmap
  // the heap serves them too. (glibc still maps what a heap cannot hold:
  // blocks beyond the 64 MiB heaps of threads other than the main one, or
  // when the main heap cannot grow; no allocation fails for this.)
  // A later, smaller request maps large blocks again (65536: glibc's
  // default M_MMAP_MAX).
  if (!mallopt(M_MMAP_MAX, bytes > maxThreshold ? 0 : 65536))
    return Status::error("retainFreedMemory: mallopt rejected M_MMAP_MAX");
  return Status::ok();
#else
  return Status::error("retainFreedMemory: only supported with glibc");
#endif
}

} // namespace attnrt
