//===- Threads.cpp - the worker threads of compiled code -------------------===//

#include "attnrt/Threads.h"

#include <dlfcn.h>
#include <thread>

namespace attnrt {

int hardwareThreads() {
  unsigned n = std::thread::hardware_concurrency();
  return n ? static_cast<int>(n) : 1;
}

Status setNumThreads(CompiledModule &m, int n) {
  if (n < 1)
    return Status::error("thread count must be >= 1, got " + std::to_string(n));
  // The module's OpenMP runtime: in a saved .so it is a dependency of the
  // object; under the JIT it was loaded globally.
  void *sym = m.lookupSymbol("omp_set_num_threads");
  if (!sym)
    sym = ::dlsym(RTLD_DEFAULT, "omp_set_num_threads");
  if (sym)
    reinterpret_cast<void (*)(int)>(sym)(n);
  return Status::ok();
}

} // namespace attnrt
