//===- ParallelLoopWork.h - how much work a parallel loop does -*- C++ -*-===//
//
// A static estimate of the operations a parallel loop executes (its trip
// count times its body's operations, loops inside multiplied out), and its
// rewrite as a plain loop nest. The passes that decide whether a loop is
// worth OpenMP's fork and join, and which schedule it gets, share them.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_PASSES_PARALLELLOOPWORK_H
#define ATTN_PASSES_PARALLELLOOPWORK_H

#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <optional>

namespace mlir::attn::detail {

/// Operations one run of `loop` (an scf.parallel or omp.loop_nest)
/// executes: its static trip count times its body's. A vector op counts
/// once per 16 elements of its widest vector (operand or result), a math op
/// (a polynomial or a libm call once lowered) 16 times as much. Unknown
/// (nullopt) when a trip count, inner loops' ones included, is not a constant,
/// or the body calls a function, copies a buffer of dynamic size or holds an op
/// whose cost cannot be read off.
std::optional<int64_t> estimateParallelLoopWork(Operation *loop);

/// The number of iterations of `loop` (an scf.parallel or omp.loop_nest),
/// the product of its dims' trip counts; nullopt unless all are constants.
std::optional<int64_t> parallelLoopTripCount(Operation *loop);

/// Replaces a reduction-free scf.parallel by an equivalent scf.for nest.
void serializeParallelLoop(scf::ParallelOp loop);

} // namespace mlir::attn::detail

#endif // ATTN_PASSES_PARALLELLOOPWORK_H
