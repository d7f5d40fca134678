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
  return Status::ok();
#else
  return Status::error("retainFreedMemory: only supported with glibc");
#endif
}

} // namespace attnrt
