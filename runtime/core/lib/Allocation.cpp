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
#include <new>
#include <unordered_map>

namespace attnrt {
namespace {

struct CallGuard {
  std::jmp_buf resume;
  int (*ompGetLevel)();
  /// The OpenMP nesting level the call started at (a host may call from
  /// a parallel region of its own).
  int startLevel;
  /// Written before the longjmp, read after it.
  volatile uint64_t failedBytes = 0;
};

/// The guard of the call running on this thread, if any.
thread_local CallGuard *currentGuard = nullptr;
/// Guards active in the process: frees look blocks up only while one is.
std::atomic<int> activeGuards{0};
/// The omp_get_level of the module loaded last, for the message of a
/// failure on a thread without a guard (a parallel loop's worker).
std::atomic<int (*)()> anyOmpGetLevel{nullptr};

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

int levelOf(int (*ompGetLevel)()) { return ompGetLevel ? ompGetLevel() : 0; }

[[noreturn]] void failAllocation(uint64_t bytes) {
  CallGuard *guard = currentGuard;
  int (*ompGetLevel)() = guard ? guard->ompGetLevel : anyOmpGetLevel.load();
  int level = levelOf(ompGetLevel);
  if (guard && level == guard->startLevel) {
    guard->failedBytes = bytes;
    std::longjmp(guard->resume, 1);
  }
  std::fprintf(stderr,
               "attention runtime: out of memory: the compiled code could "
               "not allocate %llu bytes (%.1f GiB) %s; the process cannot "
               "continue\n",
               static_cast<unsigned long long>(bytes),
               static_cast<double>(bytes) / (1ull << 30),
               guard || level > 0 ? "inside a parallel loop"
                                  : "outside a call of the runtime");
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
    bool recorded = false;
    {
      std::lock_guard<std::mutex> lock(blocksLock());
      try {
        blocks()[p] = guard;
        recorded = true;
      } catch (const std::bad_alloc &) {
      }
    }
    // (No room for the record: out of memory all the same.)
    if (!recorded) {
      std::free(p);
      failAllocation(bytes);
    }
  }
  return p;
}

void *checkedAlloc(size_t size) { return recordBlock(std::malloc(size), size); }

void *checkedAlignedAlloc(size_t alignment, size_t size) {
  // aligned_alloc wants a multiple of the alignment (a power of two).
  if (alignment == 0)
    alignment = 1;
  size_t rounded = 0;
  if (__builtin_add_overflow(size, alignment - 1, &rounded))
    failAllocation(size);
  rounded &= ~(alignment - 1);
  return recordBlock(std::aligned_alloc(alignment, rounded), size);
}

void checkedFree(void *ptr) {
  if (ptr && activeGuards.load() > 0) {
    std::lock_guard<std::mutex> lock(blocksLock());
    blocks().erase(ptr);
  }
  std::free(ptr);
}

} // namespace

void installCheckedAllocations(CompiledModule &module) {
  // The module's OpenMP runtime: in a saved .so a dependency of the
  // object; under the JIT loaded globally.
  void *level = module.lookupSymbol("omp_get_level");
  if (!level)
    level = ::dlsym(RTLD_DEFAULT, "omp_get_level");
  module.ompGetLevel_ = reinterpret_cast<int (*)()>(level);
  if (module.ompGetLevel_)
    anyOmpGetLevel.store(module.ompGetLevel_);
  auto *table =
      static_cast<void **>(module.lookupSymbol(kAllocationFunctionsSymbol));
  if (!table)
    return;
  // (Two loads of one .so share the table: both write the same values.)
  __atomic_store_n(&table[0], reinterpret_cast<void *>(&checkedAlloc),
                   __ATOMIC_SEQ_CST);
  __atomic_store_n(&table[1], reinterpret_cast<void *>(&checkedAlignedAlloc),
                   __ATOMIC_SEQ_CST);
  __atomic_store_n(&table[2], reinterpret_cast<void *>(&checkedFree),
                   __ATOMIC_SEQ_CST);
}

uint64_t callCheckingAllocations(CompiledModule &module, void (*fn)(void **),
                                 void **args) {
  CallGuard guard;
  guard.ompGetLevel = module.ompGetLevel_;
  guard.startLevel = levelOf(guard.ompGetLevel);
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
