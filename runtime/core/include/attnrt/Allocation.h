//===- Allocation.h - the compiled code's checked allocations --*- C++ -*-===//
//
// Compiled CPU modules (the pipeline's `checked-allocations`, which the
// JIT turns on) allocate and free through a table of two function
// pointers of their own (kAllocationFunctionsSymbol: malloc and free as
// compiled), which the runtime points at its checked functions
// when it loads the module. A result or intermediate too large for memory
// (an `Expand` to 2^40 rows, a square of a long dynamic dim) then fails
// its call with the size instead of handing the code a null pointer to
// write through (SIGSEGV). A saved .so needs nothing of the runtime: loaded
// by other means, it allocates with plain malloc. Checked blocks carry a
// header: the results of such a module are freed with freeCompiledBlock
// (the table is the file's: once the runtime loaded a .so, a direct call of
// the same file in the process returns such blocks too).
//
// Failing a call means leaving its compiled code in the middle: the call
// runs under setjmp, and the failed allocation longjmps back, after which
// what the call had allocated is freed. That is sound only on the thread
// that called the entry point and outside the module's parallel loops
// (OpenMP's other threads would wait for this one at the end of the loop
// for ever; the compiled code holds no locks and runs no destructors). A
// failure elsewhere (an allocation inside a parallel loop's body) ends the
// process with a message naming the size, as an uncaught std::bad_alloc
// would.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNRT_ALLOCATION_H
#define ATTNRT_ALLOCATION_H

#include <cstdint>

namespace attnrt {

class CompiledModule;

/// Points a loaded module's allocation table, if it has one, at the
/// runtime's checked functions, and finds its OpenMP runtime.
void installCheckedAllocations(CompiledModule &module);

/// Frees a block the compiled code allocated and returned (a result),
/// through the checked functions if the module's allocations are checked
/// (CompiledModule::checkedAllocations), else with free().
void freeCompiledBlock(bool checked, void *block);

/// Calls `fn(args)`, an entry point of `module`, failing it on an
/// allocation that fails. Returns 0 if the call ran to its end; otherwise
/// the size in bytes of the allocation that failed: the call was left
/// there, and every block it had allocated on this thread and not freed
/// was freed.
uint64_t callCheckingAllocations(CompiledModule &module, void (*fn)(void **),
                                 void **args);

} // namespace attnrt

#endif // ATTNRT_ALLOCATION_H
