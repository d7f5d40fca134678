//===- SplitParallelFunctions.cpp - attn-split-parallel-functions ---------===//
//
// MLIR's OpenMP translation outlines every omp.parallel region with LLVM's
// CodeExtractor, and builds for each one an analysis cache of the whole
// function around it: a function with R regions and N instructions costs
// R x N. A whole model lowers to one `main` with hundreds of regions (GPT-2
// small: about 300), and those caches took about 28% of its compile. This
// pass cuts the top-level ops of such a function's body into consecutive
// parts of about `regions-per-part` regions each, moves each part into a
// private function of its own and calls them in order: the cost becomes
// about R x N / parts. (LLVM may inline the parts back after the
// translation; the regions are outlined by then.)
//
// A cut is only made where every value live across it can be passed as a
// function argument or result (memrefs, integers, indices, floats,
// vectors) and none of them may point into stack memory (made by an op
// with a memref.alloca or llvm.alloca in it, or from such a value by
// anything but a load), which would not outlive the part that allocated
// it.
//
//===----------------------------------------------------------------------===//

#include "attn/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::attn {
#define GEN_PASS_DEF_ATTNSPLITPARALLELFUNCTIONSPASS
#include "attn/Passes.h.inc"

namespace {

bool passable(Type t) {
  return isa<MemRefType, IndexType, IntegerType, FloatType, VectorType>(t);
}

/// Constants stay with the function and are cloned into the parts that use
/// them: inside the parallel regions they stay constants (loop bounds,
/// strides, the weights' globals) for LLVM, instead of values the outlined
/// code receives.
bool isConstant(Operation *op) {
  return op->getNumOperands() == 0 && op->getNumRegions() == 0 && isPure(op) &&
         (op->hasTrait<OpTrait::ConstantLike>() ||
          isa<memref::GetGlobalOp>(op));
}

/// Loads read values out of memory; whatever else an op makes from stack
/// memory may point into it (a view, a cast, an address as an index).
bool onlyReads(Operation *op) {
  return isa<memref::LoadOp, vector::LoadOp, vector::TransferReadOp>(op);
}

/// The values of the top-level ops [begin, end) that ops outside the range
/// use, and the values of `body` defined outside `ops` (its arguments,
/// constants, the calls of earlier parts) or before the range that ops
/// inside it use, each in first-use order.
void liveAcross(Block &body, ArrayRef<Operation *> ops, size_t begin,
                size_t end, const DenseMap<Operation *, size_t> &index,
                llvm::SetVector<Value> &ins, llvm::SetVector<Value> &outs) {
  auto topIndex = [&](Operation *op) {
    return index.lookup(body.findAncestorOpInBlock(*op));
  };
  for (size_t i = begin; i < end; ++i) {
    ops[i]->walk([&](Operation *nested) {
      for (Value v : nested->getOperands()) {
        if (auto arg = dyn_cast<BlockArgument>(v)) {
          if (arg.getOwner() == &body)
            ins.insert(v);
          continue;
        }
        Operation *def = v.getDefiningOp();
        if (def->getBlock() != &body)
          continue;
        auto it = index.find(def);
        if (it == index.end() || it->second < begin)
          ins.insert(v);
      }
    });
    for (Value r : ops[i]->getResults())
      for (Operation *user : r.getUsers())
        if (size_t at = topIndex(user); at < begin || at >= end)
          outs.insert(r);
  }
}

struct AttnSplitParallelFunctionsPass
    : impl::AttnSplitParallelFunctionsPassBase<AttnSplitParallelFunctionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (regionsPerPart < 1) {
      mlir::emitError(getOperation().getLoc())
          << "attn-split-parallel-functions: regions-per-part must be at "
             "least 1, got "
          << unsigned(regionsPerPart);
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp f : funcs)
      split(f);
  }

  void split(func::FuncOp f) {
    if (f.isExternal() || !f.getBody().hasOneBlock())
      return;
    Block &body = f.getBody().front();
    size_t total = 0;
    f.walk([&](omp::ParallelOp) { ++total; });
    if (total <= regionsPerPart)
      return;
    // The top-level ops but the constants, which stay (parts clone them).
    SmallVector<Operation *> ops, constants;
    for (Operation &op : body.without_terminator())
      (isConstant(&op) ? constants : ops).push_back(&op);
    DenseMap<Operation *, size_t> index;
    SmallVector<size_t> regionsAfter(ops.size() + 1, 0);
    for (size_t i = ops.size(); i-- > 0;) {
      index[ops[i]] = i;
      size_t n = 0;
      ops[i]->walk([&](omp::ParallelOp) { ++n; });
      regionsAfter[i] = regionsAfter[i + 1] + n;
    }
    index[body.getTerminator()] = ops.size();

    // Stack memory and what may point into it: the results of an op that
    // allocates on the stack anywhere inside it, or that uses such a
    // value anywhere inside it (a view, a cast, a yield of it, its address
    // as an index), but loads. Never live across a cut.
    llvm::DenseSet<Value> stack;
    for (Operation *op : ops) {
      bool fromStack = false;
      op->walk([&](Operation *nested) {
        fromStack |= isa<memref::AllocaOp, LLVM::AllocaOp>(nested) ||
                     (!onlyReads(nested) &&
                      llvm::any_of(nested->getOperands(),
                                   [&](Value v) { return stack.contains(v); }));
      });
      if (fromStack)
        for (Value r : op->getResults())
          stack.insert(r);
    }
    // Each top-level value's last use, by top-level op (the terminator
    // counts as ops.size()).
    DenseMap<Value, size_t> lastUse;
    for (size_t i = 0; i < ops.size(); ++i)
      for (Value r : ops[i]->getResults()) {
        size_t last = i;
        for (Operation *user : r.getUsers())
          last =
              std::max(last, index.lookup(body.findAncestorOpInBlock(*user)));
        lastUse[r] = last;
      }

    // Cuts after every `regionsPerPart` regions, each moved down to the
    // first op boundary where every value live across it may be a result,
    // and none where no region follows (the ops after the last region
    // stay with it).
    SmallVector<size_t> cuts{0};
    SmallVector<Value> open; // defined before the next cut, used after it
    size_t seen = 0;
    for (size_t i = 0; i + 1 < ops.size(); ++i) {
      for (Value r : ops[i]->getResults())
        open.push_back(r);
      llvm::erase_if(open, [&](Value v) { return lastUse[v] <= i; });
      seen += regionsAfter[i] - regionsAfter[i + 1];
      if (seen < regionsPerPart || regionsAfter[i + 1] == 0)
        continue;
      if (llvm::all_of(open, [&](Value v) {
            return passable(v.getType()) && !stack.contains(v);
          })) {
        cuts.push_back(i + 1);
        seen = 0;
      }
    }
    cuts.push_back(ops.size());
    if (cuts.size() <= 2)
      return;

    SymbolTable symbols(getOperation());
    Operation *after = f; // the parts follow the function, in order
    for (size_t p = 0; p + 1 < cuts.size(); ++p)
      outline(f, body, ops, index, stack, cuts[p], cuts[p + 1], p, symbols,
              after);
    for (Operation *c : constants)
      if (c->use_empty())
        c->erase();
  }

  /// Moves the top-level ops [begin, end) of `f` into a new private
  /// function and calls it in their place.
  void outline(func::FuncOp f, Block &body, ArrayRef<Operation *> ops,
               const DenseMap<Operation *, size_t> &index,
               const llvm::DenseSet<Value> &stack, size_t begin, size_t end,
               size_t part, SymbolTable &symbols, Operation *&after) {
    llvm::SetVector<Value> ins, outs;
    liveAcross(body, ops, begin, end, index, ins, outs);
    SmallVector<Value> passed, cloned;
    for (Value v : ins) {
      Operation *def = v.getDefiningOp();
      (def && isConstant(def) ? cloned : passed).push_back(v);
    }
    // A live-in that cannot be an argument, or a result that cannot be
    // returned (the last part's are not checked by the cuts): this part
    // stays inline.
    if (!llvm::all_of(passed, [](Value v) { return passable(v.getType()); }) ||
        !llvm::all_of(outs, [&](Value v) {
          return passable(v.getType()) && !stack.contains(v);
        }))
      return;
    OpBuilder b(f);
    b.setInsertionPointAfter(after);
    SmallVector<Type> inTypes, outTypes;
    for (Value v : passed)
      inTypes.push_back(v.getType());
    for (Value v : outs)
      outTypes.push_back(v.getType());
    Location loc = ops[begin]->getLoc();
    auto partFn = func::FuncOp::create(
        b, loc, (f.getSymName() + "_part" + Twine(part)).str(),
        b.getFunctionType(inTypes, outTypes));
    partFn.setPrivate();
    // Internal to the LLVM module too (convert-func-to-llvm reads this):
    // no exported symbol in a saved shared object.
    partFn->setAttr(
        "llvm.linkage",
        LLVM::LinkageAttr::get(b.getContext(), LLVM::Linkage::Internal));
    symbols.insert(partFn);
    after = partFn;
    Block *entry = partFn.addEntryBlock();
    for (size_t i = begin; i < end; ++i)
      ops[i]->moveBefore(entry, entry->end());
    auto inside = [&](OpOperand &use) {
      return partFn->isProperAncestor(use.getOwner());
    };
    for (auto [v, arg] : llvm::zip(passed, entry->getArguments()))
      Value(v).replaceUsesWithIf(arg, inside);
    b.setInsertionPointToStart(entry);
    for (Value v : cloned) {
      Operation *copy = b.clone(*v.getDefiningOp());
      v.replaceUsesWithIf(copy->getResult(cast<OpResult>(v).getResultNumber()),
                          inside);
    }
    b.setInsertionPointToEnd(entry);
    func::ReturnOp::create(b, loc, outs.getArrayRef());

    b.setInsertionPoint(end < ops.size() ? ops[end] : body.getTerminator());
    auto call = func::CallOp::create(b, loc, partFn, passed);
    for (auto [v, r] : llvm::zip(outs, call.getResults()))
      Value(v).replaceUsesWithIf(r,
                                 [&](OpOperand &use) { return !inside(use); });
  }
};

} // namespace
} // namespace mlir::attn
