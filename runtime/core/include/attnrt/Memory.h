//===- Memory.h - how the process keeps freed memory -------------*- C++ -*-===//
//
// Compiled code allocates its intermediates and results on every call. With
// glibc's defaults, blocks above its mmap threshold get fresh pages from the
// kernel each time, and freeing them returns the pages: every call then pays
// a page fault and a page clear per 4 KiB it touches (about 10% of the GPT-2
// small attention block at T = 1024). Retaining freed memory makes repeated
// calls reuse the same buffers, as the arena allocators of inference
// runtimes do.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNRT_MEMORY_H
#define ATTNRT_MEMORY_H

#include "attnrt/Status.h"

#include <cstddef>

namespace attnrt {

/// Allocations up to min(bytes, 32 MiB) are served from the heap, and up to
/// `bytes` of freed memory at its top stay with the process instead of going
/// back to the kernel. For bytes > 32 MiB (glibc's cap on the mmap
/// threshold) mmap is turned off as well, so that larger blocks come from
/// the heap too (on threads other than the main one, up to glibc's 64 MiB
/// per heap); a later call with at most 32 MiB turns it back on. With mmap
/// off, a freed block below the heap's top stays with the process whatever
/// `bytes` is (malloc_trim(0) returns it). Process-wide (glibc's mallopt);
/// fails where malloc is not glibc's (other C libraries, sanitizer runtimes)
/// and for bytes == 0.
Status retainFreedMemory(std::size_t bytes);

} // namespace attnrt

#endif // ATTNRT_MEMORY_H
