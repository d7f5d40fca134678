//===- Threads.h - the worker threads of compiled code -----------*- C++ -*-===//
//
// Compiled modules run their parallel loops (batch x heads x query rows) on
// the OpenMP thread pool they are linked with; the runtime sizes that pool.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNRT_THREADS_H
#define ATTNRT_THREADS_H

#include "attnrt/Module.h"

namespace attnrt {

/// Number of hardware threads of this machine.
int hardwareThreads();

/// Sets how many threads `m`'s parallel loops use (n >= 1). A module compiled
/// without parallel loops accepts any n and runs on the calling thread.
Status setNumThreads(CompiledModule &m, int n);

} // namespace attnrt

#endif // ATTNRT_THREADS_H
