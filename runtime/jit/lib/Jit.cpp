//===- Jit.cpp - compiling MLIR modules for the runtime -------------------===//
//
// Entry points are the public func.func ops with bodies. Their tensor
// signatures are recorded before lowering (as strings in LLVM globals) so
// that the runtime core can validate arguments in any later process.
//
//===----------------------------------------------------------------------===//

#include "attnrt/Jit.h"
#include "attnrt/Allocation.h"
#include "attnrt/CpuFeatures.h"
#include "attnrt/Cuda.h"
#include "attnrt/Npy.h"

#include "attn/AttnDialect.h"
#include "attn/AttnOps.h"
#include "attn/OnnxImporter.h"
#include "attn/Passes.h"
#include "attn/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/IPO/MergeFunctions.h"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sys/mman.h>
#include <unistd.h>

using namespace mlir;

namespace attnrt {
namespace {

/// Maps an MLIR element type to the runtime's dtype.
bool toDType(Type t, DType &out) {
  if (t.isF32())
    out = DType::F32;
  else if (t.isF16())
    out = DType::F16;
  else if (t.isBF16())
    out = DType::BF16;
  else if (t.isInteger(1))
    out = DType::Bool;
  else if (t.isInteger(64))
    out = DType::I64;
  else if (t.isInteger(32))
    out = DType::I32;
  else
    return false;
  return true;
}

LogicalResult toSpec(func::FuncOp fn, Type t, const std::string &what,
                     TensorSpec &spec) {
  auto shaped = dyn_cast<ShapedType>(t);
  if (!shaped || !shaped.hasRank() ||
      !(isa<RankedTensorType>(t) || isa<MemRefType>(t))) {
    return fn.emitError() << "entry point @" << fn.getSymName() << " " << what
                          << " has type " << t
                          << "; the runtime passes ranked tensors only";
  }
  if (!toDType(shaped.getElementType(), spec.dtype))
    return fn.emitError() << "entry point @" << fn.getSymName() << " " << what
                          << " has element type " << shaped.getElementType()
                          << "; supported: f32, f16, bf16, i1, i64, i32";
  for (int64_t d : shaped.getShape())
    spec.dims.push_back(ShapedType::isDynamic(d) ? -1 : d);
  return success();
}

/// Dim `d` of `v`, followed back through transposes, reshapes that keep
/// it whole (a group of one dim), concatenations along another dim (to
/// their first input, which the others equal there), pads and slices that
/// leave it whole, destination-style ops (to their init) and empty tensors
/// sized by `tensor.dim` of another value: the value it first
/// appears on and its dim there, or dim -1 where a reshape splits or merges
/// it. A concatenation's own dim, a sum of sizes, ends the trace on it.
std::pair<Value, int64_t> traceDim(Value v, int64_t d) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto e = dyn_cast<tensor::ExpandShapeOp>(def)) {
      auto groups = e.getReassociationIndices();
      auto g = llvm::find_if(groups, [&](const ReassociationIndices &g) {
        return llvm::is_contained(g, d);
      });
      if (g == groups.end() || g->size() != 1)
        return {v, -1};
      d = g - groups.begin();
      v = e.getSrc();
    } else if (auto t = dyn_cast<linalg::TransposeOp>(def)) {
      d = t.getPermutation()[d];
      v = t.getInput();
    } else if (auto c = dyn_cast<tensor::CollapseShapeOp>(def)) {
      auto groups = c.getReassociationIndices();
      if (d >= static_cast<int64_t>(groups.size()) || groups[d].size() != 1)
        return {v, -1};
      d = groups[d][0];
      v = c.getSrc();
    } else if (auto c = dyn_cast<tensor::ConcatOp>(def);
               c && d != static_cast<int64_t>(c.getDim())) {
      v = c.getInputs().front();
    } else if (auto h = dyn_cast<attn::SplitHeadsOp>(def)) {
      // [..., T, H*d] -> [..., H, T, d]: the batch dims and T.
      int64_t r = h.getType().getRank();
      if (d == r - 2)
        d = r - 3;
      else if (d >= r - 3)
        return {v, -1};
      v = h.getInput();
    } else if (auto m = dyn_cast<attn::MergeHeadsOp>(def)) {
      // [..., H, T, d] -> [..., T, H*d]: the batch dims and T.
      int64_t r = m.getType().getRank();
      if (d == r - 2)
        d = r - 1;
      else if (d == r - 1)
        return {v, -1};
      v = m.getInput();
    } else if (auto p = dyn_cast<tensor::PadOp>(def)) {
      // A pad that leaves the dim alone (a mask padded to the key count
      // along another dim).
      auto isZero = [](OpFoldResult f) {
        std::optional<int64_t> c = getConstantIntValue(f);
        return c && *c == 0;
      };
      if (!isZero(p.getMixedLowPad()[d]) || !isZero(p.getMixedHighPad()[d]))
        return {v, -1};
      v = p.getSource();
    } else if (auto x = dyn_cast<tensor::ExtractSliceOp>(def)) {
      // A slice that takes the whole dim: offset 0, stride 1 and the size
      // `tensor.dim` of a value whose dim traces where the source's does
      // (a mask cut to the key count along another dim, sized by the dims
      // of the mask before it was padded).
      if (x.getSourceType().getRank() != x.getType().getRank())
        return {v, -1};
      std::optional<int64_t> offset =
          getConstantIntValue(x.getMixedOffsets()[d]);
      std::optional<int64_t> stride =
          getConstantIntValue(x.getMixedStrides()[d]);
      auto size = dyn_cast<Value>(x.getMixedSizes()[d]);
      auto dim = size ? size.getDefiningOp<tensor::DimOp>() : nullptr;
      std::optional<int64_t> index =
          dim ? dim.getConstantIndex() : std::nullopt;
      if (!offset || *offset != 0 || !stride || *stride != 1 || !index)
        return {v, -1};
      std::pair<Value, int64_t> whole = traceDim(x.getSource(), d);
      if (whole.second < 0 || whole != traceDim(dim.getSource(), *index))
        return {v, -1};
      return whole;
    } else if (auto dps = dyn_cast<DestinationStyleOpInterface>(def)) {
      // A destination-style op's result has its init's shape (a mask
      // computed elementwise: its init sized by the inputs' dims).
      unsigned result = cast<OpResult>(v).getResultNumber();
      if (result >= static_cast<unsigned>(dps.getNumDpsInits()))
        break;
      v = dps.getDpsInitOperand(result)->get();
    } else if (auto e = dyn_cast<tensor::EmptyOp>(def)) {
      // An empty tensor sized by `tensor.dim %x, c` (a transpose's init).
      if (!e.getType().isDynamicDim(d))
        break;
      auto dim = e.getDynamicSize(d).getDefiningOp<tensor::DimOp>();
      std::optional<int64_t> index =
          dim ? dim.getConstantIndex() : std::nullopt;
      if (!index)
        break;
      v = dim.getSource();
      d = *index;
    } else {
      break;
    }
  }
  return {v, d};
}

/// Groups of dynamic argument dims the module needs to be equal at run time
/// (the K and V key lengths of one attn.sdpa, the operands of an
/// elementwise op, the batch of a KV cache and of the new keys...):
/// recorded in the signature so the runtime can reject mismatched inputs
/// instead of reading out of bounds. Dims of values computed from the
/// arguments count as the argument dims they trace back to (traceDim).
class SameSizeGroups {
public:
  explicit SameSizeGroups(func::FuncOp fn) : fn(fn) {}

  /// Unites dim `da` of `a` with dim `db` of `b` when both trace back to
  /// dynamic dims of entry arguments.
  /// `aBroadcasts`: a static 1 in `a` broadcasts (an sdpa mask dim) and
  /// ties nothing.
  void unite(Value a, int64_t da, Value b, int64_t db,
             bool aBroadcasts = false) {
    int64_t sa = staticSize(a, da), sb = staticSize(b, db);
    if (uniteConcatenated(a, da, b, db))
      return;
    auto ka = argKey(a, da), kb = argKey(b, db);
    if (ka && kb)
      parent[find(*ka)] = find(*kb);
    // A dynamic argument dim tied to a static one must have that size.
    if (ka && !kb && sb >= 0)
      fixed[*ka] = sb;
    if (kb && !ka && sa >= 0 && !(aBroadcasts && sa == 1))
      fixed[*kb] = sa;
  }

  /// The size a dynamic dim of argument `arg` must have (from a static dim
  /// it is tied to), or -1.
  int64_t fixedSize(unsigned arg, int64_t d) {
    if (!parent.count({arg, d}))
      return -1;
    return fixedSizeOf(find({arg, d}));
  }

  /// Unites dim `dr` of result `result` with dim `da` of `a` (GPU entry
  /// points write into buffers the runtime sizes from the inputs).
  void uniteResult(unsigned result, int64_t dr, Value a, int64_t da) {
    auto ka = argKey(a, da);
    if (!ka)
      return;
    Key kr{fn.getNumArguments() + result, dr};
    parent.try_emplace(kr, kr);
    parent[find(kr)] = find(*ka);
  }

  /// Records dim `dr` of result `result` as the sum of `constant` and the
  /// sizes of dynamic argument dims `terms` (a concatenated KV cache's
  /// length). False, recording nothing, where a term is no such dim.
  bool sumResult(unsigned result, int64_t dr,
                 ArrayRef<std::pair<Value, int64_t>> terms, int64_t constant) {
    std::vector<Key> keys;
    for (auto [v, d] : terms) {
      auto k = argKey(v, d);
      if (!k)
        return false;
      keys.push_back(*k);
    }
    pinned.insert(keys.begin(), keys.end());
    sums[{result, dr}] = {std::move(keys), constant};
    return true;
  }

  /// Pins dynamic dim `d` of argument `arg` (a term of a bounded sum) so
  /// that it gets a group id; false if it is no dynamic argument dim.
  bool pinArgDim(unsigned arg, int64_t d) {
    if (arg >= fn.getNumArguments())
      return false;
    std::optional<Key> k = argKey(fn.getArgument(arg), d);
    if (!k || k->first != arg || k->second != d)
      return false;
    pinned.insert(*k);
    return true;
  }

  /// The sum of `constant` and the pinned argument dims `terms`, in the
  /// ids idsFor gave them; a term tied to a static size counts as that size.
  DimSum sumOfArgDims(ArrayRef<std::pair<unsigned, int64_t>> terms,
                      int64_t constant) {
    DimSum sum;
    sum.constant = constant;
    for (const Key &k : terms) {
      Key root = find(k);
      if (int64_t size = fixedSizeOf(root); size >= 0)
        sum.constant += size;
      else
        sum.groups.push_back(idOf(root));
    }
    return sum;
  }

  /// sameAs ids for argument `arg` (0: no group); results count on from
  /// the last argument. A group gets an id when it has two members or an
  /// output dim sums it.
  std::vector<int> idsFor(unsigned arg, int64_t rank) {
    std::map<Key, int> size;
    for (auto &[k, _] : parent)
      ++size[find(k)];
    std::set<Key> summed;
    for (const Key &k : pinned)
      summed.insert(find(k));
    std::vector<int> ids(rank, 0);
    for (int64_t d = 0; d < rank; ++d) {
      if (!parent.count({arg, d}))
        continue;
      Key root = find({arg, d});
      if (size[root] < 2 && !summed.count(root))
        continue;
      ids[d] = idOf(root);
    }
    return ids;
  }

  /// The sums of result `result`'s dims (empty where a dim is none), in
  /// the ids idsFor gave the arguments' dims; a term tied to a static size
  /// counts as that size.
  std::vector<DimSum> sumsFor(unsigned result, int64_t rank) {
    std::vector<DimSum> out(rank);
    for (int64_t d = 0; d < rank; ++d) {
      auto it = sums.find({result, d});
      if (it == sums.end())
        continue;
      out[d] = sumOfArgDims(it->second.first, it->second.second);
    }
    return out;
  }

private:
  using Key = std::pair<unsigned, int64_t>;
  static int64_t staticSize(Value v, int64_t d) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || d < 0 || d >= type.getRank() || type.isDynamicDim(d))
      return -1;
    return type.getDimSize(d);
  }
  /// Two concatenated dims that must be equal (the K and V lengths of a
  /// KV cache, past + new each): where the parts pair up, static sizes
  /// equal and dynamic ones dynamic, each pair is united. That asks the
  /// parts to be equal, not only their sums, as a cache's are.
  bool uniteConcatenated(Value a, int64_t da, Value b, int64_t db) {
    auto [ta, tda] = traceDim(a, da);
    auto [tb, tdb] = traceDim(b, db);
    auto ca = ta.getDefiningOp<tensor::ConcatOp>();
    auto cb = tb.getDefiningOp<tensor::ConcatOp>();
    if (!ca || !cb || tda < 0 || tdb < 0 ||
        ca.getInputs().size() != cb.getInputs().size())
      return false;
    for (auto [x, y] : llvm::zip(ca.getInputs(), cb.getInputs()))
      if (staticSize(x, tda) != staticSize(y, tdb))
        return false;
    for (auto [x, y] : llvm::zip(ca.getInputs(), cb.getInputs()))
      unite(x, tda, y, tdb);
    return true;
  }
  /// The dynamic entry argument dim that dim `d` of `v` traces back to.
  std::optional<Key> argKey(Value v, int64_t d) {
    std::tie(v, d) = traceDim(v, d);
    auto arg = dyn_cast<BlockArgument>(v);
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!arg || !type || arg.getOwner() != &fn.getBody().front() || d < 0 ||
        d >= type.getRank() || !ShapedType::isDynamic(type.getDimSize(d)))
      return std::nullopt;
    Key k{arg.getArgNumber(), d};
    parent.try_emplace(k, k);
    return k;
  }
  Key find(Key k) {
    while (parent[k] != k)
      k = parent[k] = parent[parent[k]];
    return k;
  }
  int64_t fixedSizeOf(Key root) {
    for (auto &[k, size] : fixed)
      if (find(k) == root)
        return size;
    return -1;
  }
  int idOf(Key root) {
    return groupIds.emplace(root, int(groupIds.size()) + 1).first->second;
  }
  func::FuncOp fn;
  std::map<Key, Key> parent;
  std::map<Key, int64_t> fixed;
  std::map<Key, int> groupIds;
  std::set<Key> pinned;
  std::map<Key, std::pair<std::vector<Key>, int64_t>> sums;
};

/// Collects dim `d` of `v` as a sum of entry argument dims (`terms`) and
/// static sizes (`constant`), through concatenations along it. False where
/// a part is computed otherwise.
bool sumTerms(Value v, int64_t d,
              SmallVectorImpl<std::pair<Value, int64_t>> &terms,
              int64_t &constant) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (type && d >= 0 && d < type.getRank() && !type.isDynamicDim(d)) {
    constant += type.getDimSize(d);
    return true;
  }
  auto [src, sd] = traceDim(v, d);
  if (sd < 0)
    return false;
  if (auto c = src.getDefiningOp<tensor::ConcatOp>()) {
    for (Value in : c.getInputs())
      if (!sumTerms(in, sd, terms, constant))
        return false;
    return true;
  }
  if (!isa<BlockArgument>(src))
    return false;
  terms.push_back({src, sd});
  return true;
}

/// Ties the dynamic dims of GPU entry point results, which the runtime
/// allocates, to the argument dims they come from: an attn.sdpa result's
/// leading dims are its query's, a concatenation's other dims its first
/// input's, each through reshapes that keep the dim whole; a concatenated
/// dim is the sum of its inputs' (a KV cache's past + new length).
void tieGpuResults(func::FuncOp fn, SameSizeGroups &groups) {
  auto ret = dyn_cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  if (!ret)
    return;
  for (auto [i, r] : llvm::enumerate(ret.getOperands())) {
    auto type = dyn_cast<RankedTensorType>(r.getType());
    if (!type)
      continue;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      auto [src, sd] = traceDim(r, d);
      if (sd < 0)
        continue;
      if (auto sdpa = src.getDefiningOp<attn::SdpaOp>()) {
        if (sd + 1 >= sdpa.getType().getRank())
          continue;
        std::tie(src, sd) = traceDim(sdpa.getQuery(), sd);
        if (sd < 0)
          continue;
      }
      if (src.getDefiningOp<tensor::ConcatOp>()) {
        SmallVector<std::pair<Value, int64_t>> terms;
        int64_t constant = 0;
        if (sumTerms(src, sd, terms, constant) && !terms.empty())
          groups.sumResult(i, d, terms, constant);
        continue;
      }
      groups.uniteResult(i, d, src, sd);
    }
  }
}

/// Records which dynamic argument dims `fn`'s ops require to be equal.
void collectSameSizes(func::FuncOp fn, SameSizeGroups &groups) {
  // ONNX inputs' dims sharing a dim_param name are one size by declaration
  // (the importer compiles them as one).
  std::map<std::string, std::pair<unsigned, int64_t>> named;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (auto names = fn.getArgAttrOfType<ArrayAttr>(i, "onnx.dim_params"))
      for (auto [d, a] : llvm::enumerate(names)) {
        auto s = dyn_cast<StringAttr>(a);
        if (!s || s.getValue().empty())
          continue;
        auto [it, fresh] =
            named.emplace(s.getValue().str(), std::make_pair(i, int64_t(d)));
        if (!fresh)
          groups.unite(fn.getArgument(it->second.first), it->second.second,
                       fn.getArgument(i), d);
      }
  fn.walk([&](Operation *op) {
    if (auto sdpa = dyn_cast<attn::SdpaOp>(op)) {
      Value q = sdpa.getQuery(), k = sdpa.getKey(), v = sdpa.getValue();
      int64_t r = sdpa.getQuery().getType().getRank();
      int64_t h = r >= 3 ? sdpa.getHeadDimIndex() : -1;
      int64_t s = r >= 3 ? sdpa.getSeqDimIndex() : r - 2;
      for (int64_t i = 0; i + 3 < r; ++i) { // batch dims
        groups.unite(q, i, k, i);
        groups.unite(q, i, v, i);
      }
      groups.unite(k, s, v, s);         // key/value length
      groups.unite(q, r - 1, k, r - 1); // head dim
      if (h >= 0) {
        groups.unite(k, h, v, h);
        int64_t hq = sdpa.getQuery().getType().getDimSize(h);
        int64_t hk = sdpa.getKey().getType().getDimSize(h);
        if (hq == hk) // not grouped-query: one head count
          groups.unite(q, h, k, h);
      }
      if (Value m = sdpa.getMask()) {
        auto mt = cast<RankedTensorType>(m.getType());
        for (int64_t a = 0; a < mt.getRank(); ++a) {
          int64_t sd = r - mt.getRank() + a; // logical score dim
          if (sd == r - 1)
            groups.unite(m, a, k, s, /*aBroadcasts=*/true);
          else if (sd == r - 2)
            groups.unite(m, a, q, s, /*aBroadcasts=*/true);
          else if (sd == r - 3)
            groups.unite(m, a, q, h, /*aBroadcasts=*/true);
          else
            groups.unite(m, a, q, sd, /*aBroadcasts=*/true);
        }
      }
      return;
    }
    // The projected forms read d_in from the input's last dim and every
    // weight's rows; the query and key widths meet in Q K^T; each bias is
    // as long as its weight is wide; out_proj reads the merged heads.
    auto projections = [&](auto p) {
      Value x = p.getInput(), wq = p.getWQuery(), wk = p.getWKey(),
            wv = p.getWValue();
      int64_t r = cast<RankedTensorType>(x.getType()).getRank();
      for (Value w : {wq, wk, wv})
        groups.unite(x, r - 1, w, 0);
      groups.unite(wq, 1, wk, 1);
      for (auto [b, w] :
           {std::make_pair(p.getBQuery(), wq), std::make_pair(p.getBKey(), wk),
            std::make_pair(p.getBValue(), wv)})
        if (b)
          groups.unite(b, 0, w, 1);
    };
    if (auto c = dyn_cast<attn::CausalAttentionOp>(op))
      return projections(c);
    if (auto m = dyn_cast<attn::MultiHeadAttentionOp>(op)) {
      projections(m);
      groups.unite(m.getWQuery(), 1, m.getWValue(), 1);
      if (Value wo = m.getWOut()) {
        groups.unite(wo, 0, m.getWValue(), 1);
        if (Value bo = m.getBOut())
          groups.unite(bo, 0, wo, 1);
      }
      return;
    }
    // A transpose writes its whole init: the input's dims, permuted.
    if (auto t = dyn_cast<linalg::TransposeOp>(op)) {
      for (auto [d, p] : llvm::enumerate(t.getPermutation()))
        groups.unite(t.getInit(), d, t.getInput(), p);
      return;
    }
    // Any other linalg op (a matmul, a generic) runs each loop over the
    // operand dims its indexing maps give that loop, without checking
    // that they agree: every such dim is one size.
    if (auto l = dyn_cast<linalg::LinalgOp>(op)) {
      std::map<unsigned, std::pair<Value, int64_t>> firstOfLoop;
      for (OpOperand &o : op->getOpOperands()) {
        if (!isa<RankedTensorType>(o.get().getType()))
          continue;
        AffineMap map = l.getMatchingIndexingMap(&o);
        for (auto [d, e] : llvm::enumerate(map.getResults())) {
          auto loop = dyn_cast<AffineDimExpr>(e);
          if (!loop)
            continue;
          auto [it, fresh] = firstOfLoop.try_emplace(
              loop.getPosition(), o.get(), static_cast<int64_t>(d));
          if (!fresh)
            groups.unite(it->second.first, it->second.second, o.get(), d);
        }
      }
      return;
    }
    // A concatenation's inputs agree on every other dim (tensor.concat
    // does not check it at run time).
    if (auto c = dyn_cast<tensor::ConcatOp>(op)) {
      Value first = c.getInputs().front();
      int64_t rank = c.getResultType().getRank();
      for (Value other : c.getInputs().drop_front())
        for (int64_t d = 0; d < rank; ++d)
          if (d != static_cast<int64_t>(c.getDim()))
            groups.unite(first, d, other, d);
      return;
    }
    if (op->hasTrait<OpTrait::Elementwise>() && op->getNumOperands() > 1) {
      Value first = op->getOperand(0);
      auto ft = dyn_cast<RankedTensorType>(first.getType());
      if (!ft)
        return;
      for (Value other : op->getOperands().drop_front())
        for (int64_t d = 0; d < ft.getRank(); ++d)
          groups.unite(first, d, other, d);
    }
  });
}

/// The value the last `name=value` (or bare `name`: "true") among the
/// space-separated pipeline `options` gives, if any: the options the
/// runtime reads or refuses, by their exact names.
std::optional<std::string> pipelineOptionValue(llvm::StringRef options,
                                               llvm::StringRef name) {
  std::optional<std::string> value;
  llvm::SmallVector<llvm::StringRef> items;
  options.split(items, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  for (llvm::StringRef item : items) {
    auto [key, rest] = item.split('=');
    if (key != name)
      continue;
    // The pass-option parser takes a value in quotes or braces as the
    // text within them.
    while (rest.size() >= 2 && ((rest.front() == '\'' && rest.back() == '\'') ||
                                (rest.front() == '"' && rest.back() == '"') ||
                                (rest.front() == '{' && rest.back() == '}')))
      rest = rest.drop_front().drop_back();
    value = item.contains('=') ? rest.str() : std::string("true");
  }
  return value;
}

/// Whether `module` computes with bf16 anywhere.
bool usesBf16(ModuleOp module) {
  bool found = false;
  module->walk([&](Operation *op) {
    auto isBf16 = [](Type t) { return getElementTypeOrSelf(t).isBF16(); };
    if (llvm::any_of(op->getResultTypes(), isBf16) ||
        llvm::any_of(op->getOperandTypes(), isBf16)) {
      found = true;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

} // namespace

/// Value-range bounds the signature text holds (18 digits).
constexpr int64_t kMaxRangeBound = 1000000000000000000;

LogicalResult entrySignature(func::FuncOp fn, bool gpu,
                             FunctionSignature &sig) {
  sig = FunctionSignature();
  FunctionType type = fn.getFunctionType();
  SameSizeGroups groups(fn);
  collectSameSizes(fn, groups);
  // The runtime allocates GPU results itself.
  if (gpu)
    tieGpuResults(fn, groups);
  // Bounds on sums of argument dims (attnrt.sum_max: per bound the most,
  // a constant, then (argument, dim) pairs), e.g. the ONNX importer's for
  // a KV step's past + new positions slicing a table.
  struct PendingBound {
    int64_t most, constant;
    std::vector<std::pair<unsigned, int64_t>> terms;
  };
  std::vector<PendingBound> pendingBounds;
  if (auto list = fn->getAttrOfType<ArrayAttr>("attnrt.sum_max"))
    for (Attribute a : list) {
      auto v = dyn_cast<DenseI64ArrayAttr>(a);
      // (Values the signature text holds: 18 digits.)
      if (!v || v.size() < 4 || v.size() % 2 != 0 || v[0] < 0 || v[1] < 0 ||
          v[0] >= kMaxRangeBound || v[1] >= kMaxRangeBound)
        return fn.emitError("attnrt.sum_max entries are [most, constant, "
                            "argument, dim, ...], most and constant in [0, "
                            "10^18)");
      PendingBound bound{v[0], v[1], {}};
      for (int64_t t = 2; t < int64_t(v.size()); t += 2) {
        if (v[t] < 0 || !groups.pinArgDim(v[t], v[t + 1]))
          return fn.emitError("attnrt.sum_max names dim ")
                 << v[t + 1] << " of argument " << v[t]
                 << ", which is no dynamic argument dim";
        bound.terms.emplace_back(v[t], v[t + 1]);
      }
      pendingBounds.push_back(std::move(bound));
    }
  for (auto [i, t] : llvm::enumerate(type.getInputs())) {
    sig.inputs.emplace_back();
    if (failed(
            toSpec(fn, t, "argument " + std::to_string(i), sig.inputs.back())))
      return failure();
    sig.inputs.back().sameAs =
        groups.idsFor(i, static_cast<int64_t>(sig.inputs.back().dims.size()));
    // A dynamic dim the module ties to a static one (a K length equal to
    // a static V length) is checked as that static size.
    for (size_t d = 0; d < sig.inputs.back().dims.size(); ++d)
      if (sig.inputs.back().dims[d] < 0)
        if (int64_t size = groups.fixedSize(i, d); size >= 0)
          sig.inputs.back().dims[d] = size;
    // Upper bounds of dynamic dims (attnrt.dim_max, -1 = none), e.g. the
    // ONNX importer's for sequence lengths that slice a fixed buffer.
    sig.inputs.back().maxDims.assign(sig.inputs.back().dims.size(), -1);
    if (auto bounds =
            fn.getArgAttrOfType<DenseI64ArrayAttr>(i, "attnrt.dim_max"))
      for (auto [d, m] : llvm::enumerate(bounds.asArrayRef()))
        if (d < sig.inputs.back().maxDims.size() &&
            sig.inputs.back().dims[d] < 0)
          sig.inputs.back().maxDims[d] = m;
    // Index inputs (ONNX Gather indices): the range their values must have.
    if (auto range =
            fn.getArgAttrOfType<DenseI64ArrayAttr>(i, "attnrt.value_range"))
      if (range.size() == 2 && range[0] < range[1] &&
          std::abs(range[0]) < kMaxRangeBound &&
          std::abs(range[1]) < kMaxRangeBound)
        sig.inputs.back().valueRange = std::make_pair(range[0], range[1]);
    // Names (from ONNX graph inputs, tf2onnx's "input:0" too) let users
    // bind inputs by name (NAME=PATH: no '='); only names that cannot
    // clash with the signature syntax (brackets, braces, "->") are kept.
    if (auto name = fn.getArgAttrOfType<StringAttr>(i, "onnx.name"))
      if (!name.getValue().empty() && llvm::all_of(name.getValue(), [](char c) {
            auto u = static_cast<unsigned char>(c);
            return (u >= 0x20 && u != 0x7f) &&
                   !llvm::is_contained(llvm::StringRef("[]{}>="), c);
          }))
        sig.inputs.back().name = name.getValue().str();
  }
  for (const PendingBound &bound : pendingBounds) {
    DimSum sum = groups.sumOfArgDims(bound.terms, bound.constant);
    // Terms tied to static sizes: a constant, which no call changes.
    if (sum.groups.empty() && sum.constant > bound.most)
      return fn.emitError("attnrt.sum_max: the sizes this function needs sum "
                          "to ")
             << sum.constant << ", more than its bound " << bound.most;
    if (!sum.groups.empty())
      sig.sumBounds.push_back({std::move(sum), bound.most});
  }
  for (auto [i, t] : llvm::enumerate(type.getResults())) {
    sig.outputs.emplace_back();
    if (failed(
            toSpec(fn, t, "result " + std::to_string(i), sig.outputs.back())))
      return failure();
    if (gpu) {
      auto rank = static_cast<int64_t>(sig.outputs.back().dims.size());
      sig.outputs.back().sameAs = groups.idsFor(fn.getNumArguments() + i, rank);
      sig.outputs.back().sums = groups.sumsFor(i, rank);
    }
  }
  return success();
}

namespace {

/// Defines the generic allocation functions that a module with checked
/// allocations calls (finalize-memref-to-llvm's use-generic-functions:
/// alloc and free; the pipeline never asks for aligned_alloc) as calls
/// through the module's own table kAllocationFunctionsSymbol, which holds
/// malloc and free until the runtime points it at its checked functions
/// (attnrt/Allocation.h). A saved .so thus needs no symbol of the runtime.
/// The allocation returns fresh memory, as malloc does (noalias), and both
/// stay calls (noinline) so that LLVM keeps knowing.
/// (Not marked as the malloc family otherwise, allockind and allocsize:
/// that changed 33 bytes of the GPT-2 block's code, and let LLVM remove
/// unused allocations, which the tests of failing ones need kept.)
void defineAllocationFunctions(llvm::Module &m) {
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptr = llvm::PointerType::get(ctx, 0);
  struct Entry {
    const char *name, *libc;
    llvm::FunctionType *type;
  } entries[] = {
      {"_mlir_memref_to_llvm_alloc", "malloc",
       llvm::FunctionType::get(ptr, {llvm::Type::getInt64Ty(ctx)}, false)},
      {"_mlir_memref_to_llvm_free", "free",
       llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false)}};
  auto declared = [&](const Entry &e) {
    llvm::Function *fn = m.getFunction(e.name);
    return fn && fn->isDeclaration() && fn->getFunctionType() == e.type
               ? fn
               : nullptr;
  };
  if (!declared(entries[0]) && !declared(entries[1]))
    return;
  llvm::Constant *defaults[2];
  for (int i = 0; i < 2; ++i)
    defaults[i] = llvm::cast<llvm::Constant>(
        m.getOrInsertFunction(entries[i].libc, entries[i].type).getCallee());
  auto *tableType = llvm::ArrayType::get(ptr, 2);
  auto *table = new llvm::GlobalVariable(
      m, tableType, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage,
      llvm::ConstantArray::get(tableType, defaults),
      kAllocationFunctionsSymbol);
  for (int i = 0; i < 2; ++i) {
    llvm::Function *fn = declared(entries[i]);
    if (!fn)
      continue;
    fn->addFnAttr(llvm::Attribute::NoInline);
    fn->addFnAttr(llvm::Attribute::NoUnwind);
    bool allocates = i == 0;
    if (allocates)
      fn->addRetAttr(llvm::Attribute::NoAlias);
    llvm::IRBuilder<> builder(llvm::BasicBlock::Create(ctx, "entry", fn));
    llvm::Value *target = builder.CreateLoad(
        ptr, builder.CreateConstInBoundsGEP2_64(tableType, table, 0, i));
    llvm::SmallVector<llvm::Value *> args;
    for (llvm::Argument &a : fn->args())
      args.push_back(&a);
    llvm::CallInst *call = builder.CreateCall(entries[i].type, target, args);
    if (allocates)
      builder.CreateRet(call);
    else
      builder.CreateRetVoid();
  }
}

/// Turns the module's static constructors and destructors into the exported
/// functions `__attn_init` and `__attn_fini`. GPU modules load their kernels
/// in a constructor (gpu-module-to-binary's embedding); the runtime calls
/// `__attn_init` itself, after checking that a CUDA driver is there, and in
/// a saved shared object as well (where the JIT's renamed constructors would
/// otherwise never run).
void hoistStaticConstructors(llvm::Module &m) {
  for (bool ctors : {true, false}) {
    const char *global = ctors ? "llvm.global_ctors" : "llvm.global_dtors";
    const char *name = ctors ? "__attn_init" : "__attn_fini";
    auto *fnType =
        llvm::FunctionType::get(llvm::Type::getVoidTy(m.getContext()),
                                /*isVarArg=*/false);
    auto *fn = llvm::Function::Create(
        fnType, llvm::GlobalValue::ExternalLinkage, name, m);
    llvm::IRBuilder<> builder(
        llvm::BasicBlock::Create(m.getContext(), "entry", fn));
    std::vector<std::pair<uint64_t, llvm::Function *>> calls;
    if (auto *gv = m.getNamedGlobal(global)) {
      if (auto *list =
              llvm::dyn_cast<llvm::ConstantArray>(gv->getInitializer()))
        for (llvm::Value *entry : list->operands())
          if (auto *item = llvm::dyn_cast<llvm::ConstantStruct>(entry))
            if (auto *callee = llvm::dyn_cast<llvm::Function>(
                    item->getOperand(1)->stripPointerCasts()))
              calls.emplace_back(
                  llvm::cast<llvm::ConstantInt>(item->getOperand(0))
                      ->getZExtValue(),
                  callee);
      gv->eraseFromParent();
    }
    // Constructors run by ascending priority, destructors descending.
    std::sort(calls.begin(), calls.end(), [&](auto &a, auto &b) {
      return ctors ? a.first < b.first : a.first > b.first;
    });
    for (auto &[priority, callee] : calls)
      builder.CreateCall(callee);
    builder.CreateRetVoid();
  }
}

/// With --verify-each, names the first pass that failed or left IR that
/// does not verify: MLIR's pass manager prints only the verifier's messages.
/// (Adaptors, which fail with the passes they run, have no name.)
class FailedPassNamer : public PassInstrumentation {
public:
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    if (pass->getArgument().empty() || named.exchange(true))
      return;
    emitError(op->getLoc()) << "pass '" << pass->getArgument()
                            << "' failed, or left IR that does not verify";
  }

private:
  std::atomic<bool> named{false};
};

/// Compiles identical functions once. A model's repeated blocks outline
/// their parallel regions into identical functions (the pipeline's
/// attn-capture-constant-addresses passes them their weights as values):
/// GPT-2 small's 12 blocks gave 298 such functions of about 25 bodies,
/// which LLVM otherwise optimized and compiled one by one. Merged before
/// the optimizer, each body is compiled once. The outlined functions'
/// addresses only go to the OpenMP runtime, never compared, so uses of a
/// duplicate are redirected to its twin instead of through a thunk.
void mergeIdenticalFunctions(llvm::Module &m) {
  for (llvm::Function &f : m)
    if (f.hasLocalLinkage() && f.getName().contains(".omp_par"))
      f.setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  llvm::MergeFunctionsPass::runOnModule(m);
}

/// Adds `name = "text\0"` as an exported constant global.
void addStringGlobal(ModuleOp module, const std::string &name,
                     const std::string &text) {
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  std::string withNul = text + '\0';
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), withNul.size());
  LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true,
                         LLVM::Linkage::External, name,
                         b.getStringAttr(withNul));
}

/// A global that attn-externalize-constant-globals made a declaration: the
/// symbol to define, its alignment and memory holding its bytes (a copy, or
/// the packed blob's own), which the compiled module takes over.
struct ExternalConstant {
  std::string name;
  uint64_t alignment;
  size_t size;
  std::shared_ptr<const char> data;
};

/// Memory for `size` bytes at `alignment` (at least). Weights of
/// megabytes are streamed by every call: on 2 MiB pages (where the kernel
/// grants them on request) they take 512 times fewer TLB entries.
constexpr uint64_t kHugePage = 2u << 20;
uint64_t constantAlignment(size_t size, uint64_t alignment) {
  return size >= kHugePage ? std::max(kHugePage, alignment) : alignment;
}
char *allocateConstant(size_t size, uint64_t alignment) {
  alignment = constantAlignment(size, alignment);
  size_t rounded = llvm::alignTo(size, alignment);
  auto *data = static_cast<char *>(std::aligned_alloc(alignment, rounded));
  if (data && alignment == kHugePage)
    ::madvise(data, rounded, MADV_HUGEPAGE);
  return data;
}

/// Takes over the memory of `blob`, which nothing else refers to, if it is
/// aligned as allocateConstant would have placed it (packed weights are:
/// attn-vectorize-contractions allocates them so), leaving the blob empty.
/// Null otherwise.
std::shared_ptr<const char> adoptBlobMemory(AsmResourceBlob &blob,
                                            uint64_t alignment) {
  ArrayRef<char> bytes = blob.getData();
  auto address = reinterpret_cast<uintptr_t>(bytes.data());
  // Only memory the compiler allocated for itself (mutable), not a view
  // such as the importer's of a mapped ONNX file: that one would stay
  // mapped for the module's life, on 4 KiB pages.
  if (!blob.isMutable() || !blob.getDeleter() ||
      address % constantAlignment(bytes.size(), alignment) != 0)
    return nullptr;
  // shared_ptr wants a copyable deleter; the blob's is move-only.
  auto deleter = std::make_shared<AsmResourceBlob::DeleterFn>(
      std::move(blob.getDeleter()));
  size_t size = bytes.size(), align = blob.getDataAlignment();
  blob.getDeleter() = nullptr;
  return std::shared_ptr<const char>(
      bytes.data(), [deleter, size, align](const char *p) {
        (*deleter)(const_cast<char *>(p), size, align);
      });
}

/// Takes the bytes of the module's externalized constants into memory of
/// their own (the blob's, where it is a packed weight's placed for this;
/// else a copy) and strips the data attributes (LLVM's translation never
/// sees them). Then releases every blob nothing in the module refers to any
/// more: the ONNX weights that packing replaced, and each externalized
/// one's as soon as it is taken. LLVM then works beside one copy of the
/// weights instead of three.
Status takeExternalConstants(ModuleOp module,
                             std::vector<ExternalConstant> &out) {
  // The ops that refer to each blob, from any of their attributes. (Counted
  // per op: two globals may hold the very same attribute.)
  llvm::StringMap<int> references;
  module->walk([&](Operation *op) {
    llvm::SmallDenseSet<StringRef, 2> keys;
    auto collect = [&](Attribute attr) {
      attr.walk([&](DenseResourceElementsAttr r) {
        keys.insert(r.getRawHandle().getKey());
      });
    };
    collect(op->getRawDictionaryAttrs());
    if (Attribute properties = op->getPropertiesAsAttribute())
      collect(properties);
    for (StringRef key : keys)
      ++references[key];
  });
  DialectResourceBlobManager &blobs =
      DenseResourceElementsHandle::getManagerInterface(module.getContext())
          .getBlobManager();
  auto release = [&](StringRef key) {
    if (auto *entry = blobs.lookup(key); entry && entry->getBlob())
      entry->setBlob(AsmResourceBlob());
  };
  std::vector<std::string> unused;
  blobs.getBlobMap(
      [&](const llvm::StringMap<DialectResourceBlobManager::BlobEntry> &map) {
        for (const auto &entry : map)
          if (!references.count(entry.getKey()))
            unused.push_back(entry.getKey().str());
      });
  for (const std::string &key : unused)
    release(key);

  std::string bad, noMemory;
  module.walk([&](LLVM::GlobalOp global) {
    Attribute value = global->getAttr(attn::kExternalDataAttrName);
    if (!value)
      return WalkResult::advance();
    llvm::ArrayRef<char> bytes;
    AsmResourceBlob *blob = nullptr;
    auto resource = dyn_cast<DenseResourceElementsAttr>(value);
    if (resource) {
      if ((blob = resource.getRawHandle().getBlob()))
        bytes = blob->getData();
    } else if (auto dense = dyn_cast<DenseIntElementsAttr>(value);
               dense && !dense.isSplat() &&
               dense.getElementType().isInteger(8)) {
      bytes = dense.getRawData();
    }
    auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
    if (bytes.empty() || !array || !array.getElementType().isInteger(8) ||
        array.getNumElements() != bytes.size() || global.getValueOrNull() ||
        global.getInitializerBlock()) {
      bad = global.getSymName().str();
      return WalkResult::interrupt();
    }
    // The code may assume the declared alignment; 64 bytes at least keeps
    // every vector load of the data within one cache line.
    ExternalConstant c{
        global.getSymName().str(),
        std::max<uint64_t>(global.getAlignment().value_or(1), 64), bytes.size(),
        nullptr};
    // A blob only this global refers to gives its memory where the
    // compiler allocated it as a copy would be placed (packed weights);
    // others are copied.
    if (blob && references[resource.getRawHandle().getKey()] == 1)
      c.data = adoptBlobMemory(*blob, c.alignment);
    if (!c.data) {
      char *copy = allocateConstant(c.size, c.alignment);
      if (!copy) {
        noMemory = c.name + " (" + std::to_string(c.size) + " bytes)";
        return WalkResult::interrupt();
      }
      std::memcpy(copy, bytes.data(), c.size);
      c.data = std::shared_ptr<const char>(
          copy, [](const char *p) { std::free(const_cast<char *>(p)); });
    }
    out.push_back(std::move(c));
    global->removeAttr(attn::kExternalDataAttrName);
    if (resource && --references[resource.getRawHandle().getKey()] == 0)
      release(resource.getRawHandle().getKey());
    return WalkResult::advance();
  });
  if (!bad.empty())
    return Status::error("global @" + bad + " has an " +
                         attn::kExternalDataAttrName.str() +
                         " attribute that is not the non-splat i8 data of a "
                         "byte-array declaration of its size");
  if (!noMemory.empty())
    return Status::error("out of memory for constant @" + noMemory);
  return Status::ok();
}

/// Writes `constants` as an assembly file that defines each as a hidden
/// symbol in a read-only section, its bytes included from `dataPath`
/// (written here too) by the assembler: the data never passes through LLVM.
Status writeConstantsAssembly(const std::vector<ExternalConstant> &constants,
                              const std::string &asmPath,
                              const std::string &dataPath) {
  auto quoted = [](llvm::StringRef text) {
    std::string q = "\"";
    for (char c : text) {
      if (c == '"' || c == '\\')
        q += '\\';
      q += c;
    }
    return q + "\"";
  };
  for (const ExternalConstant &c : constants)
    if (llvm::any_of(c.name, [](char ch) {
          return ch == '"' || ch == '\\' || ch == '\n' || ch == '\0';
        }))
      return Status::error("constant @" + c.name +
                           ": its name cannot be written as a symbol of the "
                           "shared object");
  std::error_code ec;
  llvm::raw_fd_ostream data(dataPath, ec);
  if (ec)
    return Status::error(dataPath + ": " + ec.message());
  llvm::raw_fd_ostream as(asmPath, ec);
  if (ec)
    return Status::error(asmPath + ": " + ec.message());
  as << "\t.section .rodata.attn_constants,\"a\",@progbits\n";
  uint64_t offset = 0;
  for (const ExternalConstant &c : constants) {
    std::string sym = quoted(c.name);
    as << "\t.p2align " << llvm::Log2_64(c.alignment) << "\n"
       << "\t.globl " << sym << "\n\t.hidden " << sym << "\n\t.type " << sym
       << ",@object\n\t.size " << sym << ", " << c.size << "\n"
       << sym << ":\n\t.incbin " << quoted(dataPath) << ", " << offset << ", "
       << c.size << "\n";
    data.write(c.data.get(), c.size);
    offset += c.size;
  }
  // No executable stack for the shared object.
  as << "\t.section .note.GNU-stack,\"\",@progbits\n";
  data.close();
  as.close();
  bool failed = data.has_error() || as.has_error();
  // (A stream destroyed with its error still set aborts the process.)
  data.clear_error();
  as.clear_error();
  if (failed)
    return Status::error("cannot write the constants of the shared object "
                         "next to it (" +
                         dataPath + ")");
  return Status::ok();
}

DialectRegistry &registry() {
  static DialectRegistry *r = [] {
    auto *reg = new DialectRegistry();
    registerAllDialects(*reg);
    registerAllExtensions(*reg);
    reg->insert<attn::AttnDialect>();
    registerAllToLLVMIRTranslations(*reg);
    // The pipeline is assembled from registered pass names.
    registerAllPasses();
    attn::registerAttnPasses();
    attn::registerAttnPipelines();
    return reg;
  }();
  return *r;
}

} // namespace

JitModule::~JitModule() {
  if (engine_)
    runFini(); // unload GPU kernels while the code is still there
}

void *JitModule::lookupSymbol(const std::string &name) {
  auto sym = engine_->lookup(name);
  if (!sym) {
    llvm::consumeError(sym.takeError());
    return nullptr;
  }
  return *sym;
}

Status compileFile(const std::string &path, const CompileOptions &options,
                   std::unique_ptr<JitModule> &out,
                   const std::string &sharedObjectPath) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;

  MLIRContext context(registry());
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context, llvm::errs());

  OwningOpRef<ModuleOp> module;
  auto importStart = std::chrono::steady_clock::now();
  double importSeconds = 0;
  if (llvm::StringRef(path).ends_with(".onnx")) {
    // ONNX models are imported (attention raised to attn ops) first. The
    // weights' blobs view the file's bytes in place (mapped, not read: no
    // null terminator is asked for, which would rule out a mapping where
    // the size is a multiple of the page size) and keep the mapping alive
    // as long as one of them lives: until the JIT has taken or released
    // them all, or, where a small weight stays inside LLVM's module, until
    // the compile ends.
    auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
    if (!file)
      return Status::error(path + ": cannot open input file '" + path +
                           "': " + file.getError().message());
    attn::OnnxImportOptions importOptions;
    importOptions.raise = options.onnxRaise;
    module = attn::importOnnxModel(
        std::shared_ptr<llvm::MemoryBuffer>(std::move(*file)), path, &context,
        importOptions);
    if (!module)
      return Status::error(path + ": ONNX import failed (see the diagnostics "
                                  "above)");
    importSeconds = std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - importStart)
                        .count();
  } else {
    std::string err;
    auto file = openInputFile(path, &err);
    if (!file)
      return Status::error(path + ": " + err);
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    // Parsed, then verified on its own: a module that parses but breaks an
    // op's rules is not a syntax error, and the message says which.
    ParserConfig config(&context, /*verifyAfterParse=*/false);
    module = parseSourceFile<ModuleOp>(sourceMgr, config);
    if (!module)
      return Status::error(path + ": could not parse the module (see the "
                                  "diagnostics above)");
    if (failed(verify(*module)))
      return Status::error(path + ": the module does not verify (see the "
                                  "diagnostics above)");
    // A module printed with its weights elided (attention-translate on
    // stdout) parses, but its dense_resource constants have no data, which
    // code generation would only report as a failed translation.
    std::string elided;
    module->walk([&](arith::ConstantOp c) {
      auto r = dyn_cast<DenseResourceElementsAttr>(c.getValue());
      if (r && !r.getRawHandle().getBlob() && elided.empty())
        elided = r.getRawHandle().getKey().str();
      return elided.empty() ? WalkResult::advance() : WalkResult::interrupt();
    });
    if (!elided.empty())
      return Status::error(
          path + ": the weight '" + elided +
          "' (a dense_resource constant) has no data: the module was "
          "printed with its weights elided (attention-translate prints them "
          "only into -o FILE, or on stdout with --print-weights)");
  }

  bool gpu = options.target == "cuda";
  if (!gpu && options.target != "cpu")
    return Status::error("unknown target '" + options.target +
                         "' (supported: cpu, cuda)");
  // The CPU picks the pipeline's per-CPU defaults and LLVM's instructions;
  // both must agree, so it comes only from CompileOptions::targetCpu.
  const std::string &cpu = options.targetCpu;
  if (gpu && cpu != "host")
    return Status::error("target CPU '" + cpu +
                         "' given for target cuda: it applies to cpu "
                         "modules only (a cuda module's host code is "
                         "compiled for this host)");
  if (pipelineOptionValue(options.pipelineOptions, "target-cpu"))
    return Status::error("give the CPU as the target CPU (attention-run "
                         "--target-cpu), not as a pipeline option: code "
                         "generation must use the same one");
  // The runtime calls entry points through their C interface.
  if (!gpu) {
    auto cInterface =
        pipelineOptionValue(options.pipelineOptions, "emit-c-interface");
    if (cInterface && llvm::is_contained({"false", "FALSE", "False", "0"},
                                         llvm::StringRef(*cInterface)))
      return Status::error(
          "pipeline option emit-c-interface=" + *cInterface +
          ": the runtime calls entry points through their C interface "
          "(attention-opt can print the lowering without it)");
  }
  FailureOr<llvm::StringMap<bool>> cpuFeatures = attn::targetCpuFeatures(cpu);
  if (failed(cpuFeatures))
    return Status::error("unknown target CPU '" + cpu +
                         "' (expected host, or an x86-64 CPU name as for "
                         "clang's -march: x86-64-v3, x86-64-v4, znver4, "
                         "sapphirerapids, ...)");
  // Without avx512_bf16 LLVM lowers a native f32 -> bf16 conversion to a
  // call of compiler-rt's __truncsfbf2, which neither the JIT nor the
  // system's libgcc provides: the link would fail on a missing symbol.
  if (!gpu && !cpuFeatures->lookup("avx512bf16") &&
      pipelineOptionValue(options.pipelineOptions, "bf16-conversions") ==
          "native" &&
      usesBf16(*module))
    return Status::error(
        "pipeline option bf16-conversions=native: target CPU '" + cpu +
        "' lacks avx512_bf16, so the module's bf16 conversions would call "
        "compiler-rt's __truncsfbf2, which the runtime does not provide "
        "(use auto or expand)");

  // Entry points and their signatures, from the source-level functions.
  std::string entryList;
  std::vector<std::pair<std::string, std::string>> signatures;
  for (auto fn : module->getOps<func::FuncOp>()) {
    if (!fn.isPublic() || fn.isExternal())
      continue;
    FunctionSignature sig;
    if (failed(entrySignature(fn, gpu, sig)))
      return Status::error(path + ": unsupported entry point signature");
    std::string name = fn.getSymName().str();
    // The entry list is comma-separated; symbol names become C symbols.
    if (llvm::any_of(name, [](char c) {
          return c == ',' || static_cast<unsigned char>(c) < 0x20;
        }))
      return Status::error(path + ": entry point @\"" + name +
                           "\": a comma or a control character in its name " +
                           "(the runtime lists entry points separated by " +
                           "commas); rename it or make it private");
    entryList += (entryList.empty() ? "" : ",") + name;
    signatures.emplace_back(name, formatSignature(sig));
  }
  if (signatures.empty())
    return Status::error(path + ": no public func.func with a body to run");

  // The sites that check indices while running (the ONNX importer's
  // Gathers of computed indices), for the runtime's messages.
  std::string indexChecks;
  if (auto sites = (*module)->getAttrOfType<ArrayAttr>("attnrt.index_checks"))
    for (Attribute site : sites)
      if (auto text = dyn_cast<StringAttr>(site))
        indexChecks += (indexChecks.empty() ? "" : "\n") + text.str();

  auto t0 = std::chrono::steady_clock::now();
  PassManager pm(&context);
  pm.enableVerifier(options.verifyEachPass);
  if (options.verifyEachPass)
    pm.addInstrumentation(std::make_unique<FailedPassNamer>());
  if (options.printIRAfterAll) {
    context.disableMultithreading();
    pm.enableIRPrinting([](Pass *, Operation *) { return false; },
                        [](Pass *, Operation *) { return true; },
                        /*printModuleScope=*/true,
                        /*printAfterOnlyOnChange=*/false);
  }
  if (options.timing)
    pm.enableTiming();
  std::string pipeline =
      gpu ? "attn-lower-to-nvvm-pipeline" : "attn-lower-to-cpu-pipeline";
  std::string pipelineOptions = options.pipelineOptions;
  if (cpu != "host")
    pipelineOptions +=
        (pipelineOptions.empty() ? "" : " ") + std::string("target-cpu=") + cpu;
  // Allocations through the runtime (attnrt/Allocation.h): one too large
  // for memory fails the call instead of crashing it.
  if (!gpu &&
      !pipelineOptionValue(options.pipelineOptions, "checked-allocations"))
    pipelineOptions += (pipelineOptions.empty() ? "" : " ") +
                       std::string("checked-allocations=true");
  if (!pipelineOptions.empty())
    pipeline += "{" + pipelineOptions + "}";
  std::string pipelineErr;
  llvm::raw_string_ostream pipelineErrStream(pipelineErr);
  if (failed(parsePassPipeline(pipeline, pm, pipelineErrStream)))
    return Status::error("bad pipeline options '" + options.pipelineOptions +
                         "': " + pipelineErr);
  // Large constants bypass LLVM: defined below from their bytes.
  if (!gpu) {
    attn::AttnExternalizeConstantGlobalsPassOptions externalize;
    externalize.minBytes = static_cast<int64_t>(std::min<uint64_t>(
        options.inlineConstantsBelow, std::numeric_limits<int64_t>::max()));
    pm.addPass(attn::createAttnExternalizeConstantGlobalsPass(externalize));
  }
  if (failed(pm.run(*module)))
    return Status::error(path +
                         ": lowering failed (see the diagnostics above)");
  if (!options.verifyEachPass && failed(verify(*module)))
    return Status::error(path + ": the lowered module does not verify (see "
                                "the diagnostics above; --verify-each names "
                                "the pass that broke it)");
  std::vector<ExternalConstant> constants;
  if (Status s = takeExternalConstants(*module, constants); !s)
    return Status::error(path + ": " + s.message());

  addStringGlobal(*module, kEntryListSymbol, entryList);
  if (gpu)
    addStringGlobal(*module, kTargetSymbol, "cuda");
  // What the code (a cuda module's: its host side) needs from the CPU that
  // runs it, checked before anything of it runs.
  std::string needs;
  for (const std::string &f : checkableCpuFeatures())
    if (cpuFeatures->lookup(f))
      needs += (needs.empty() ? "" : ",") + f;
  addStringGlobal(*module, kCpuFeaturesSymbol, needs);
  addStringGlobal(*module, kTargetCpuSymbol, attn::resolveTargetCpu(cpu));
  if (!indexChecks.empty())
    addStringGlobal(*module, kIndexChecksSymbol, indexChecks);
  for (auto &[name, sig] : signatures)
    addStringGlobal(*module, signatureSymbol(name), sig);
  auto t1 = std::chrono::steady_clock::now();

  auto tmBuilder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!tmBuilder)
    return Status::error("cannot detect the host target: " +
                         llvm::toString(tmBuilder.takeError()));
  tmBuilder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  if (cpu != "host") {
    // The named CPU's extensions (and tuning), none of the host's.
    tmBuilder->setCPU(cpu);
    tmBuilder->setFeatures("");
  }
  if (!sharedObjectPath.empty()) {
    // A shared object needs position-independent code in ordinary sections.
    tmBuilder->setRelocationModel(llvm::Reloc::PIC_);
    tmBuilder->setCodeModel(llvm::CodeModel::Small);
  }
  auto tm = tmBuilder->createTargetMachine();
  if (!tm)
    return Status::error("cannot create a target machine: " +
                         llvm::toString(tm.takeError()));
  auto optimize = makeOptimizingTransformer(3, 0, tm->get());
  ExecutionEngineOptions eeOptions;
  // (ExecutionEngineOptions holds a function_ref: the callable must outlive
  // ExecutionEngine::create.)
  std::function<llvm::Error(llvm::Module *)> transform =
      [optimize, gpu](llvm::Module *m) -> llvm::Error {
    if (gpu)
      hoistStaticConstructors(*m);
    else
      defineAllocationFunctions(*m);
    mergeIdenticalFunctions(*m);
    return optimize(m);
  };
  eeOptions.transformer = transform;
  eeOptions.jitCodeGenOptLevel = llvm::CodeGenOptLevel::Aggressive;
  eeOptions.enableObjectDump = !sharedObjectPath.empty();
  // Parallel loops call into libomp; the JIT resolves them from it.
  llvm::StringRef sharedLibs[] = {ATTN_OPENMP_LIBRARY};
  eeOptions.sharedLibPaths = sharedLibs;
  auto engine = ExecutionEngine::create(*module, eeOptions, std::move(*tm));
  if (!engine)
    return Status::error(path + ": code generation failed: " +
                         llvm::toString(engine.takeError()));
  uint64_t externalBytes = 0;
  for (const ExternalConstant &c : constants)
    externalBytes += c.size;
  if (!constants.empty())
    (*engine)->registerSymbols([&](llvm::orc::MangleAndInterner interner) {
      llvm::orc::SymbolMap map;
      for (size_t i = 0; i < constants.size(); ++i)
        map[interner(constants[i].name)] = {
            llvm::orc::ExecutorAddr::fromPtr(constants[i].data.get()),
            llvm::JITSymbolFlags::Exported};
      return map;
    });
  if (gpu) {
    // Launches call the runtime's mgpu* functions (CUDA driver API).
    (*engine)->registerSymbols([](llvm::orc::MangleAndInterner interner) {
      llvm::orc::SymbolMap map;
      for (auto &[name, address] : cuda::mgpuSymbols())
        map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                               llvm::JITSymbolFlags::Exported};
      return map;
    });
  }
  // CPU modules have no constructors worth running; GPU ones have theirs
  // in __attn_init, run below unless only compiling.
  if (!gpu)
    (*engine)->initialize();

  out.reset(new JitModule());
  out->engine_ = std::move(*engine);
  // (Shared: a shared object written below still reads them.)
  for (const ExternalConstant &c : constants)
    out->externalData_.push_back(c.data);
  out->externalConstants = constants.size();
  out->externalConstantBytes = externalBytes;
  out->importSeconds = importSeconds;
  if (!out->lookupSymbol(kEntryListSymbol))
    return Status::error(path + ": compiled module lacks its entry list");
  if (!gpu)
    installCheckedAllocations(*out);
  if (gpu && !options.compileOnly)
    if (Status s = out->runInit(); !s)
      return Status::error(path + ": " + s.message());
  // Code for another CPU is only saved, never run here without its
  // extensions (it would die with SIGILL).
  if (!gpu && !options.compileOnly)
    if (Status s = out->checkHostCpu(); !s)
      return Status::error(path + ": " + s.message() +
                           " (attention-run --compile-only "
                           "--emit-shared-object saves it for a machine "
                           "that has them)");
  out->pipelineSeconds = std::chrono::duration<double>(t1 - t0).count();
  out->codegenSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t1)
          .count();

  if (!sharedObjectPath.empty()) {
    // Object file -> shared object, both next to the target, renamed into
    // place only when the link succeeded.
    // (Short names: the target's name plus a suffix could pass NAME_MAX.)
    // (Beside a symbolic link's target; for a FIFO or device, written in
    // place, in the temporary directory.)
    std::string dir = stagingDirectoryFor(sharedObjectPath);
    // (Unique per call too: compiles of one process may save at once.)
    static std::atomic<unsigned long> saves{0};
    std::string tag = dir + "/.attn-" + std::to_string(::getpid()) + "-" +
                      std::to_string(saves.fetch_add(1));
    std::string obj = tag + ".o";
    std::string so = tag + ".so.tmp";
    // The externalized constants: an assembly file that includes their
    // bytes from a data file (both removed after the link).
    std::string constantsAsm = tag + ".constants.s";
    std::string constantsData = tag + ".constants.bin";
    auto removeTemporaries = [&] {
      std::remove(obj.c_str());
      if (!constants.empty()) {
        std::remove(constantsAsm.c_str());
        std::remove(constantsData.c_str());
      }
    };
    if (!constants.empty())
      if (Status s =
              writeConstantsAssembly(constants, constantsAsm, constantsData);
          !s) {
        removeTemporaries();
        return s;
      }
    out->engine_->dumpToObjectFile(obj); // (reports no failure itself)
    if (!llvm::sys::fs::exists(obj)) {
      removeTemporaries();
      return Status::error(sharedObjectPath + ": cannot write the object " +
                           "file " + obj + " beside it");
    }
    llvm::ErrorOr<std::string> cc = std::errc::no_such_file_or_directory;
    for (const char *name : {"cc", "clang-22", "clang", "gcc"})
      if ((cc = llvm::sys::findProgramByName(name)))
        break;
    if (!cc) {
      removeTemporaries();
      return Status::error("cannot save a shared object: no C compiler "
                           "(cc, clang-22, clang or gcc) on PATH to link it");
    }
    std::string ompDir =
        llvm::sys::path::parent_path(ATTN_OPENMP_LIBRARY).str();
    std::string rpath = "-Wl,-rpath," + ompDir;
    // -Bsymbolic: the module's calls of its own functions (the C
    // interface wrappers call the entry points) and its globals bind
    // within it, never to a same-named symbol of the process (libc's
    // `index`, a host's own `main` exported with -rdynamic).
    llvm::SmallVector<llvm::StringRef> args{*cc,  "-shared", "-Wl,-Bsymbolic",
                                            "-o", so,        obj};
    if (!constants.empty())
      args.push_back(constantsAsm);
    // CPU modules run their parallel loops on libomp; GPU modules only
    // call the runtime's mgpu* functions, resolved when they are loaded.
    if (!gpu)
      args.append({ATTN_OPENMP_LIBRARY, rpath});
    args.push_back("-lm");
    std::string msg;
    int rc = llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0, &msg);
    removeTemporaries();
    if (rc != 0) {
      std::remove(so.c_str());
      return Status::error("linking the shared object failed (" +
                           std::to_string(rc) + "): " + msg);
    }
    if (Status s = placeFile(so, sharedObjectPath); !s)
      return s;
  }
  return Status::ok();
}

} // namespace attnrt
