//===- Allocation.cpp - the compiled code's checked allocations -----------===//
//
// Each checked block starts with a header: the call that allocated it, if a
// guarded call on its own thread did, and its neighbours in that call's
// list of live blocks. A call left at a failed allocation frees the blocks
// still in its list; a call that ends normally empties its list (its
// results then belong to the caller, who frees them with freeCompiledBlock).
// A free on any thread finds the block's call in the header, so no table is
// searched: the first version kept one process-wide hash table, which cost
// a KV-cache decode step 0.02 ms of its 0.16.
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

namespace attnrt {
namespace {

struct CallGuard;

/// In front of every checked block, where malloc placed it; 32 bytes keep
/// malloc's 16-byte alignment for the block.
struct alignas(16) BlockHeader {
  CallGuard *guard;
  BlockHeader *prev, *next;
};
static_assert(sizeof(BlockHeader) == 32, "the header keeps 16-byte alignment");

struct CallGuard {
  std::jmp_buf resume;
  int (*ompGetLevel)();
  /// The OpenMP nesting level the call started at (a host may call from
  /// a parallel region of its own).
  int startLevel;
  /// Written before the longjmp, read after it.
  volatile uint64_t failedBytes = 0;
  /// The live blocks the call allocated on its thread. (Freed on any
  /// thread: a parallel loop's body may free them.)
  std::mutex lock;
  BlockHeader *blocks = nullptr;
};

/// The guard of the call running on this thread, if any.
thread_local CallGuard *currentGuard = nullptr;
/// The omp_get_level of the module loaded last, for the message of a
/// failure on a thread without a guard (a parallel loop's worker).
std::atomic<int (*)()> anyOmpGetLevel{nullptr};

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

void *checkedAlloc(size_t size) {
  size_t total = 0;
  BlockHeader *h = nullptr;
  if (!__builtin_add_overflow(size, sizeof(BlockHeader), &total))
    h = static_cast<BlockHeader *>(std::malloc(total));
  if (!h)
    failAllocation(size);
  // Recorded with this thread's call, if any.
  h->prev = nullptr;
  h->guard = currentGuard;
  if (CallGuard *guard = h->guard) {
    std::lock_guard<std::mutex> lock(guard->lock);
    h->next = guard->blocks;
    if (h->next)
      h->next->prev = h;
    guard->blocks = h;
  } else {
    h->next = nullptr;
  }
  return h + 1;
}

void checkedFree(void *block) {
  if (!block)
    return;
  auto *h = static_cast<BlockHeader *>(block) - 1;
  if (CallGuard *guard = h->guard) {
    std::lock_guard<std::mutex> lock(guard->lock);
    if (h->prev)
      h->prev->next = h->next;
    else
      guard->blocks = h->next;
    if (h->next)
      h->next->prev = h->prev;
  }
  std::free(h);
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
  module.checkedAllocations_ = true;
  // (Two loads of one .so share the table: both write the same values.)
  __atomic_store_n(&table[0], reinterpret_cast<void *>(&checkedAlloc),
                   __ATOMIC_SEQ_CST);
  __atomic_store_n(&table[1], reinterpret_cast<void *>(&checkedFree),
                   __ATOMIC_SEQ_CST);
}

void freeCompiledBlock(bool checked, void *block) {
  if (checked)
    checkedFree(block);
  else
    std::free(block);
}

uint64_t callCheckingAllocations(CompiledModule &module, void (*fn)(void **),
                                 void **args) {
  CallGuard guard;
  guard.ompGetLevel = module.ompGetLevel_;
  guard.startLevel = levelOf(guard.ompGetLevel);
  CallGuard *outer = currentGuard;
  currentGuard = &guard;
  bool abandoned = false;
  if (setjmp(guard.resume) == 0)
    fn(args);
  else
    abandoned = true;
  currentGuard = outer;
  // The blocks still live: the results (forgotten, the caller's now), or
  // what an abandoned call held (freed).
  std::lock_guard<std::mutex> lock(guard.lock);
  for (BlockHeader *h = guard.blocks, *next; h; h = next) {
    next = h->next;
    if (abandoned) {
      std::free(h);
    } else {
      h->guard = nullptr;
      h->prev = h->next = nullptr;
    }
  }
  guard.blocks = nullptr;
  return abandoned ? guard.failedBytes : 0;
}

} // namespace attnrt
