//===- Allocation.cpp - the compiled code's checked allocations -----------===//
//
// The blocks a guarded call allocates on its own thread are recorded (in one
// process-wide table: a block may be freed on another thread, by a parallel
// loop's body), so that a call left at a failed allocation frees them. A
// call that ends normally forgets its records: its results now belong to
// the caller, who frees them with free().
//
//===----------------------------------------------------------------------===//

#include "attnrt/Allocation.h"
#include "attnrt/Module.h"

#include <dlfcn.h>

#include <atomic>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_map>

namespace attnrt {
namespace {

struct CallGuard {
  std::jmp_buf resume;
  CompiledModule *module;
  uint64_t failedBytes = 0;
};

/// The guard of the call running on this thread, if any.
thread_local CallGuard *currentGuard = nullptr;
/// Guards active in the process: frees look blocks up only while one is.
std::atomic<int> activeGuards{0};

std::mutex &blocksLock() {
  static std::mutex *lock = new std::mutex();
  return *lock;
}

/// Each recorded block and the call that allocated it. (Never destroyed:
/// compiled code may still free during static destruction.)
std::unordered_map<void *, CallGuard *> &blocks() {
  static auto *table = new std::unordered_map<void *, CallGuard *>();
  return *table;
}

/// Whether this thread runs inside a parallel region of the module's OpenMP
/// runtime, active or not (a one-thread team's region is inactive, and
/// leaving it by longjmp would corrupt the runtime as much). The runtime is
/// the .so's dependency or, under the JIT, loaded globally.
bool inParallelRegion(CompiledModule &m) {
  void *sym = m.lookupSymbol("omp_get_level");
  if (!sym)
    sym = ::dlsym(RTLD_DEFAULT, "omp_get_level");
  return sym && reinterpret_cast<int (*)()>(sym)() > 0;
}

[[noreturn]] void failAllocation(uint64_t bytes) {
  CallGuard *guard = currentGuard;
  if (guard && !inParallelRegion(*guard->module)) {
    guard->failedBytes = bytes;
    std::longjmp(guard->resume, 1);
  }
  std::fprintf(stderr,
               "attention runtime: out of memory: the compiled code could "
               "not allocate %llu bytes (%.1f GiB) %s; the process cannot "
               "continue\n",
               static_cast<unsigned long long>(bytes),
               static_cast<double>(bytes) / (1ull << 30),
               guard ? "inside a parallel loop" : "on a worker thread");
  std::abort();
}

void *recordBlock(void *p, size_t bytes) {
  if (!p) {
    // (malloc(0) may return null: nothing failed.)
    if (bytes == 0)
      return p;
    failAllocation(bytes);
  }
  if (CallGuard *guard = currentGuard) {
    std::lock_guard<std::mutex> lock(blocksLock());
    blocks()[p] = guard;
  }
  return p;
}

} // namespace

uint64_t callCheckingAllocations(CompiledModule &module, void (*fn)(void **),
                                 void **args) {
  CallGuard guard;
  guard.module = &module;
  CallGuard *outer = currentGuard;
  currentGuard = &guard;
  activeGuards.fetch_add(1);
  bool abandoned = false;
  if (setjmp(guard.resume) == 0)
    fn(args);
  else
    abandoned = true;
  currentGuard = outer;
  {
    std::lock_guard<std::mutex> lock(blocksLock());
    std::unordered_map<void *, CallGuard *> &table = blocks();
    for (auto it = table.begin(); it != table.end();) {
      if (it->second != &guard) {
        ++it;
        continue;
      }
      if (abandoned)
        std::free(it->first);
      it = table.erase(it);
    }
  }
  activeGuards.fetch_sub(1);
  return abandoned ? guard.failedBytes : 0;
}

} // namespace attnrt

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size) {
  return attnrt::recordBlock(std::malloc(size), size);
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size) {
  // aligned_alloc wants a multiple of the alignment (a power of two).
  if (alignment == 0)
    alignment = 1;
  size_t rounded = 0;
  if (__builtin_add_overflow(size, alignment - 1, &rounded))
    attnrt::failAllocation(size);
  rounded &= ~(alignment - 1);
  return attnrt::recordBlock(std::aligned_alloc(alignment, rounded), size);
}

extern "C" void _mlir_memref_to_llvm_free(void *ptr) {
  if (ptr && attnrt::activeGuards.load() > 0) {
    std::lock_guard<std::mutex> lock(attnrt::blocksLock());
    attnrt::blocks().erase(ptr);
  }
  std::free(ptr);
}
