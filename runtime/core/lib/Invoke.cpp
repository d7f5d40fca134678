//===- Invoke.cpp - calling compiled entry points -------------------------===//
//
// Builds MLIR memref descriptors for the inputs, calls the packed C-interface
// wrapper and copies the returned memrefs into runtime tensors. Every input
// is checked against the embedded signature first: a wrong dtype, rank or
// static size is an error message, never an out-of-bounds read.
//
// GPU ("cuda") entry points take device descriptors for the inputs and for
// the outputs they write; the runtime sizes the outputs from the signature,
// keeps every device buffer in RAII owners (freed on all paths) and reads
// the errors of the launches from the CUDA backend after each call.
//
//===----------------------------------------------------------------------===//

#include "attnrt/Allocation.h"
#include "attnrt/CpuFeatures.h"
#include "attnrt/Cuda.h"
#include "attnrt/Module.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>

namespace attnrt {
namespace {

/// A memref descriptor laid out as the LLVM lowering expects:
/// {ptr allocated, ptr aligned, i64 offset, i64 sizes[r], i64 strides[r]}.
struct Descriptor {
  std::vector<int64_t> words;
  /// A dense row-major buffer at `data` (host or device memory).
  static Descriptor dense(const void *data, const std::vector<int64_t> &shape) {
    Descriptor d;
    int64_t r = static_cast<int64_t>(shape.size());
    d.words.resize(3 + 2 * r);
    auto ptr = reinterpret_cast<int64_t>(data);
    d.words[0] = ptr;
    d.words[1] = ptr;
    d.words[2] = 0;
    int64_t stride = 1;
    for (int64_t i = r - 1; i >= 0; --i) {
      d.words[3 + i] = shape[i];
      d.words[3 + r + i] = stride;
      stride *= shape[i];
    }
    return d;
  }
  static Descriptor forTensor(const Tensor &t) {
    return dense(t.data(), t.shape());
  }
};

size_t descriptorWords(size_t rank) { return 3 + 2 * rank; }

/// Whether a memref descriptor is dense and row-major.
bool isDense(const int64_t *desc, size_t rank) {
  const int64_t *sizes = desc + 3, *strides = desc + 3 + rank;
  bool dense = true;
  int64_t expect = 1;
  for (size_t i = rank; i-- > 0;) {
    dense &= sizes[i] == 1 || strides[i] == expect;
    expect *= sizes[i];
  }
  return dense;
}

/// Copies a (possibly strided) memref into a dense tensor.
void copyOut(const int64_t *desc, const TensorSpec &spec, Tensor &out) {
  size_t r = spec.dims.size();
  std::vector<int64_t> shape(desc + 3, desc + 3 + r);
  const int64_t *strides = desc + 3 + r;
  out = Tensor(spec.dtype, shape);
  size_t es = dtypeSize(spec.dtype);
  const auto *base = reinterpret_cast<const uint8_t *>(desc[1]) + desc[2] * es;
  int64_t n = out.numElements();
  auto *dst = static_cast<uint8_t *>(out.data());
  // The usual case, a dense row-major result: one copy.
  if (isDense(desc, r)) {
    std::memcpy(dst, base, static_cast<size_t>(n) * es);
    return;
  }
  std::vector<int64_t> idx(r, 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (size_t i = 0; i < r; ++i)
      off += idx[i] * strides[i];
    std::memcpy(dst + e * es, base + off * es, es);
    for (size_t i = r; i-- > 0;) {
      if (++idx[i] < shape[i])
        break;
      idx[i] = 0;
    }
  }
}

/// An index input's elements must lie in [range.first, range.second): the
/// compiled gather clamps, so an id past the table would otherwise read a
/// wrong row silently.
Status checkValueRange(const Tensor &t, std::pair<int64_t, int64_t> range,
                       const std::string &what) {
  if (t.dtype() != DType::I64 && t.dtype() != DType::I32)
    return Status::ok();
  int64_t n = t.numElements();
  for (int64_t e = 0; e < n; ++e) {
    int64_t v = t.dtype() == DType::I64 ? t.as<int64_t>()[e]
                                        : int64_t(t.as<int32_t>()[e]);
    if (v >= range.first && v < range.second)
      continue;
    std::string at;
    for (int64_t d = t.rank(), rest = e; d-- > 0; rest /= t.shape()[d])
      at = std::to_string(rest % t.shape()[d]) + (at.empty() ? "" : ", ") + at;
    return Status::error(what + ": element [" + at + "] is " +
                         std::to_string(v) + ", outside [" +
                         std::to_string(range.first) + ", " +
                         std::to_string(range.second) +
                         "), the indices the module accepts there (it "
                         "indexes a table of " +
                         std::to_string(range.second) + " entries with it)");
  }
  return Status::ok();
}

} // namespace

Status checkTensor(const Tensor &t, const TensorSpec &spec,
                   const std::string &what) {
  if (t.dtype() != spec.dtype)
    return Status::error(what + ": expected element type " +
                         dtypeName(spec.dtype) + ", got " +
                         dtypeName(t.dtype()) + " (expected " +
                         spec.describe() + ", got " + t.describe() + ")");
  if (t.rank() != static_cast<int64_t>(spec.dims.size()))
    return Status::error(what + ": expected rank " +
                         std::to_string(spec.dims.size()) + " " +
                         spec.describe() + ", got rank " +
                         std::to_string(t.rank()) + " " + t.describe());
  for (size_t i = 0; i < spec.dims.size(); ++i) {
    // (An empty tensor may carry any size beside its 0.)
    if (t.shape()[i] > kMaxElements)
      return Status::error(what + ": dim " + std::to_string(i) + " is " +
                           std::to_string(t.shape()[i]) +
                           ", above the largest size supported, 2^40 (" +
                           t.describe() + ")");
    if (spec.dims[i] >= 0 && spec.dims[i] != t.shape()[i])
      return Status::error(what + ": dim " + std::to_string(i) + " must be " +
                           std::to_string(spec.dims[i]) + " (expected " +
                           spec.describe() + ", got " + t.describe() + ")");
    if (i < spec.maxDims.size() && spec.maxDims[i] >= 0 &&
        t.shape()[i] > spec.maxDims[i])
      return Status::error(what + ": dim " + std::to_string(i) + " is " +
                           std::to_string(t.shape()[i]) +
                           " but the module accepts at most " +
                           std::to_string(spec.maxDims[i]) + " (expected " +
                           spec.describe() + ", got " + t.describe() + ")");
  }
  if (!t.data())
    return Status::error(what + ": has no buffer (" + t.describe() + ")");
  if (reinterpret_cast<uintptr_t>(t.data()) % 64 != 0)
    return Status::error(what + ": buffer is not 64-byte aligned");
  if (spec.valueRange)
    return checkValueRange(t, *spec.valueRange, what);
  return Status::ok();
}

Status checkSameSizes(const std::vector<const Tensor *> &inputs,
                      const std::vector<TensorSpec> &specs,
                      const std::vector<std::string> &names) {
  // group id -> (input, dim) of its first member.
  std::map<int, std::pair<size_t, size_t>> first;
  for (size_t i = 0; i < inputs.size() && i < specs.size(); ++i)
    for (size_t d = 0; d < specs[i].sameAs.size(); ++d) {
      int g = specs[i].sameAs[d];
      if (g <= 0 || d >= inputs[i]->shape().size())
        continue;
      auto [it, inserted] = first.emplace(g, std::make_pair(i, d));
      if (inserted)
        continue;
      auto [fi, fd] = it->second;
      int64_t a = inputs[fi]->shape()[fd], b = inputs[i]->shape()[d];
      if (a != b)
        return Status::error(names[i] + ": dim " + std::to_string(d) + " is " +
                             std::to_string(b) + " but " + names[fi] + " dim " +
                             std::to_string(fd) + " is " + std::to_string(a) +
                             "; the module needs them equal (" +
                             inputs[fi]->describe() + " vs " +
                             inputs[i]->describe() + ")");
    }
  return Status::ok();
}

std::vector<std::string> CompiledModule::entryPoints() {
  std::vector<std::string> names;
  auto *list = static_cast<const char *>(lookupSymbol(kEntryListSymbol));
  if (!list)
    return names;
  std::string s(list);
  size_t p = 0;
  while (p <= s.size()) {
    size_t c = s.find(',', p);
    std::string n =
        s.substr(p, c == std::string::npos ? std::string::npos : c - p);
    if (!n.empty())
      names.push_back(n);
    if (c == std::string::npos)
      break;
    p = c + 1;
  }
  return names;
}

Status CompiledModule::signature(const std::string &entry,
                                 FunctionSignature &out) {
  auto *text = static_cast<const char *>(lookupSymbol(signatureSymbol(entry)));
  if (!text || !lookupSymbol(packedEntrySymbol(entry))) {
    std::string known;
    for (const std::string &n : entryPoints())
      known += (known.empty() ? "" : ", ") + n;
    return Status::error(
        "no entry point '" + entry + "' in the module" +
        (known.empty() ? std::string() : " (entry points: " + known + ")"));
  }
  return parseSignature(text, out);
}

Status CompiledModule::runInit() {
  if (initialized_)
    return Status::ok();
  auto init = reinterpret_cast<void (*)()>(lookupSymbol("__attn_init"));
  if (!init)
    return Status::ok();
  (void)cuda::takeError(); // errors recorded before are not this module's
  init();
  initialized_ = true;
  if (Status s = cuda::takeError(); !s)
    return Status::error("cannot load its GPU kernels: " + s.message());
  return Status::ok();
}

void CompiledModule::runFini() {
  if (!initialized_)
    return;
  initialized_ = false;
  if (auto fini = reinterpret_cast<void (*)()>(lookupSymbol("__attn_fini")))
    fini();
  (void)cuda::takeError();
}

std::string CompiledModule::target() {
  auto *text = static_cast<const char *>(lookupSymbol(kTargetSymbol));
  return text ? std::string(text) : std::string("cpu");
}

std::string CompiledModule::targetCpu() {
  auto *text = static_cast<const char *>(lookupSymbol(kTargetCpuSymbol));
  return text ? std::string(text) : std::string();
}

Status CompiledModule::checkHostCpu() {
  auto *features = static_cast<const char *>(lookupSymbol(kCpuFeaturesSymbol));
  if (!features)
    return Status::ok();
  std::string cpu = targetCpu();
  return checkHostCpuFeatures(
      features, "compiled for " + (cpu.empty() ? "another CPU" : cpu) + ", it");
}

/// The size of each "?N" group: that of its first input dim.
static std::map<int, int64_t> groupSizes(const FunctionSignature &sig,
                                         const std::vector<Tensor> &inputs) {
  std::map<int, int64_t> sizes;
  for (size_t i = 0; i < sig.inputs.size() && i < inputs.size(); ++i)
    for (size_t d = 0; d < sig.inputs[i].sameAs.size(); ++d)
      if (sig.inputs[i].sameAs[d] > 0 && d < inputs[i].shape().size())
        sizes.emplace(sig.inputs[i].sameAs[d], inputs[i].shape()[d]);
  return sizes;
}

Status checkInputs(const std::string &entry, const FunctionSignature &sig,
                   const std::vector<Tensor> &inputs) {
  if (inputs.size() != sig.inputs.size())
    return Status::error(
        "@" + entry + " takes " + std::to_string(sig.inputs.size()) +
        " inputs " + sig.describe() + ", got " + std::to_string(inputs.size()));
  std::vector<const Tensor *> ptrs;
  std::vector<std::string> names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    names.push_back("@" + entry + " input " + std::to_string(i));
    ptrs.push_back(&inputs[i]);
    if (Status s = checkTensor(inputs[i], sig.inputs[i], names.back()); !s)
      return s;
  }
  if (Status s = checkSameSizes(ptrs, sig.inputs, names); !s)
    return s;
  // Sums of sizes the module bounds (a KV step's past + new positions in a
  // table of the model's length).
  std::map<int, int64_t> groupSize = groupSizes(sig, inputs);
  for (const SumBound &bound : sig.sumBounds) {
    int64_t size = bound.sum.constant;
    std::string terms;
    bool overflow = false;
    for (int g : bound.sum.groups) {
      auto it = groupSize.find(g);
      if (it == groupSize.end())
        return Status::error("@" + entry + ": the bound " +
                             sig.describeBound(bound) + " sums group ?" +
                             std::to_string(g) + ", which no input has");
      overflow |= __builtin_add_overflow(size, it->second, &size);
      terms += (terms.empty() ? "" : " + ") + std::to_string(it->second);
    }
    if (bound.sum.constant > 0)
      terms += " + " + std::to_string(bound.sum.constant);
    if (overflow || size > bound.most)
      return Status::error("@" + entry + ": " + sig.describeBound(bound) +
                           " is needed, but the inputs give " + terms +
                           (overflow ? "" : " = " + std::to_string(size)) +
                           " (" + sig.describe() + ")");
  }
  return Status::ok();
}

/// The shapes of a GPU entry point's outputs, which the runtime allocates:
/// static dims from the signature, a dynamic dim from the input dims of its
/// group ("?N" on both sides) or the sum of several ("?N+?M+C").
Status outputShapes(const std::string &entry, const FunctionSignature &sig,
                    const std::vector<Tensor> &inputs,
                    std::vector<std::vector<int64_t>> &shapes) {
  std::map<int, int64_t> groupSize = groupSizes(sig, inputs);
  shapes.clear();
  for (size_t o = 0; o < sig.outputs.size(); ++o) {
    const TensorSpec &spec = sig.outputs[o];
    std::vector<int64_t> shape;
    for (size_t d = 0; d < spec.dims.size(); ++d) {
      if (spec.dims[d] >= 0) {
        shape.push_back(spec.dims[d]);
        continue;
      }
      if (d < spec.sums.size() && !spec.sums[d].groups.empty()) {
        int64_t size = spec.sums[d].constant;
        for (int g : spec.sums[d].groups) {
          auto it = groupSize.find(g);
          if (it == groupSize.end())
            return Status::error("@" + entry + " output " + std::to_string(o) +
                                 ": cannot size output: dim " +
                                 std::to_string(d) + " sums group ?" +
                                 std::to_string(g) + ", which no input has (" +
                                 sig.describe() + ")");
          if (__builtin_add_overflow(size, it->second, &size))
            return Status::error("@" + entry + " output " + std::to_string(o) +
                                 ": dim " + std::to_string(d) + " overflows (" +
                                 sig.describe() + ")");
        }
        shape.push_back(size);
        continue;
      }
      int g = d < spec.sameAs.size() ? spec.sameAs[d] : 0;
      auto it = groupSize.find(g);
      if (g <= 0 || it == groupSize.end())
        return Status::error("@" + entry + " output " + std::to_string(o) +
                             ": cannot size output: dim " + std::to_string(d) +
                             " is dynamic and tied to no input dim (" +
                             sig.describe() + ")");
      shape.push_back(it->second);
    }
    shapes.push_back(std::move(shape));
  }
  return Status::ok();
}

/// A site of the module that checks its indices while running, and its
/// slot {hit, index, size} (Module.h): int64 words the compiled code writes
/// atomically, read here with the same builtins once the call returned.
struct IndexCheck {
  std::string site;
  int64_t *slot;
};

namespace {

double millisSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

std::vector<IndexCheck> indexChecks(CompiledModule &m) {
  std::vector<IndexCheck> checks;
  auto *text = static_cast<const char *>(m.lookupSymbol(kIndexChecksSymbol));
  if (!text)
    return checks;
  std::string s(text);
  size_t p = 0;
  for (int k = 0; p < s.size(); ++k) {
    size_t e = s.find('\n', p);
    if (e == std::string::npos)
      e = s.size();
    if (void *slot = m.lookupSymbol(kIndexErrorSlotPrefix + std::to_string(k)))
      checks.push_back({s.substr(p, e - p), static_cast<int64_t *>(slot)});
    p = e + 1;
  }
  return checks;
}

/// The first index check `checks` recorded, as an error of `entry`.
Status indexError(const std::string &entry,
                  const std::vector<IndexCheck> &checks) {
  for (const IndexCheck &c : checks) {
    int64_t hit = __atomic_load_n(&c.slot[0], __ATOMIC_SEQ_CST);
    if (!hit)
      continue;
    int64_t index = __atomic_load_n(&c.slot[1], __ATOMIC_SEQ_CST);
    int64_t size = __atomic_load_n(&c.slot[2], __ATOMIC_SEQ_CST);
    std::string what;
    if (hit == kIndexCheckTooLong)
      what = std::to_string(index) + ", more than " + std::to_string(size);
    else if (hit == kIndexCheckNotMultiple)
      what = std::to_string(index) + " elements " +
             (size == 0 ? "for a -1 beside sizes that multiply to 0"
                        : "are not a multiple of " + std::to_string(size));
    else if (hit == kIndexCheckEmptyAxis)
      what = "axis " + std::to_string(index) + " is empty: it has no extreme";
    else if (hit == kIndexCheckNegativeSize)
      what = "size " + std::to_string(index) + " at position " +
             std::to_string(size) + " of the target";
    else if (hit == kIndexCheckUnitSize)
      what = "dim " + std::to_string(index) + " has size 1 while running";
    else if (hit == kIndexCheckSizeDiffers)
      what = std::to_string(index) + ", expected " + std::to_string(size);
    else if (hit == kIndexCheckCountDiffers)
      what = std::to_string(index) + " elements into " + std::to_string(size);
    else
      what = "index " + std::to_string(index) + " is outside [" +
             std::to_string(-size) + ", " + std::to_string(size) +
             ") for an axis of size " + std::to_string(size);
    return Status::error("@" + entry + ": " + c.site + ": " + what +
                         "; the call returned no result");
  }
  return Status::ok();
}

/// The lock of the index-check slots at `slot`: one per slot address in
/// the process, since two loads of one shared object (two paths, or two
/// CompiledModules of one file) share its slots through dlopen's one
/// handle. (Never freed: a later module at the address takes it over.)
static std::mutex &indexCheckLock(const void *slot) {
  static std::mutex registry;
  static std::map<const void *, std::unique_ptr<std::mutex>> locks;
  std::lock_guard<std::mutex> guard(registry);
  std::unique_ptr<std::mutex> &lock = locks[slot];
  if (!lock)
    lock = std::make_unique<std::mutex>();
  return *lock;
}

Status invokeCpu(CompiledModule &m, const std::string &entry,
                 const FunctionSignature &sig, void (*fn)(void **),
                 const std::vector<IndexCheck> &checks,
                 const std::vector<Tensor> &inputs,
                 std::vector<Tensor> &outputs) {
  std::unique_lock<std::mutex> oneAtATime;
  if (!checks.empty())
    oneAtATime = std::unique_lock<std::mutex>(indexCheckLock(checks[0].slot));
  for (const IndexCheck &c : checks)
    __atomic_store_n(&c.slot[0], 0, __ATOMIC_SEQ_CST);
  // Results: one descriptor, or a struct of descriptors, written by the callee.
  size_t resultWords = 0;
  for (const TensorSpec &o : sig.outputs)
    resultWords += descriptorWords(o.dims.size());
  std::vector<int64_t> results(resultWords, 0);
  void *resultPtr = results.data();
  std::vector<Descriptor> descs;
  descs.reserve(inputs.size());
  std::vector<void *> descPtrs;
  for (const Tensor &t : inputs) {
    descs.push_back(Descriptor::forTensor(t));
    descPtrs.push_back(descs.back().words.data());
  }
  std::vector<void *> packed;
  if (!sig.outputs.empty())
    packed.push_back(&resultPtr);
  for (void *&p : descPtrs)
    packed.push_back(&p);
  // The previous call's results, unless the caller holds them elsewhere,
  // are freed before this call allocates its own: a loop of calls then
  // reuses one set of result buffers instead of faulting in a second one
  // (206 MB of logits for GPT-2 at T = 1024). Not when they are the
  // inputs (the same vector): those are read by this call.
  if (&outputs != &inputs)
    outputs.clear();
  if (uint64_t bytes = callCheckingAllocations(m, fn, packed.data())) {
    // A failed check hands the rest of the call stand-ins of the sizes it
    // refused (a reshape's target), which may be what could not be
    // allocated: the check is the cause.
    if (Status s = indexError(entry, checks); !s)
      return s;
    char gib[32];
    std::snprintf(gib, sizeof(gib), "%.1f GiB",
                  static_cast<double>(bytes) / (1ull << 30));
    return Status::error("@" + entry +
                         ": out of memory: the compiled code could not "
                         "allocate " +
                         std::to_string(bytes) + " bytes (" + gib +
                         "); the call returned no result");
  }

  // (How the results' blocks are freed.)
  bool checked = m.checkedAllocations();
  // Results are owned by the caller unless they alias an input or a
  // constant global (whose allocated pointer is the 0xdeadbeef marker).
  std::set<int64_t> notOwned;
  for (const Tensor &t : inputs)
    notOwned.insert(reinterpret_cast<int64_t>(t.data()));
  notOwned.insert(0);
  notOwned.insert(0xdeadbeef);
  // An index out of range: the results were computed from clamped reads;
  // they are freed, not returned.
  if (Status s = indexError(entry, checks); !s) {
    std::set<int64_t> freed;
    size_t at = 0;
    for (const TensorSpec &o : sig.outputs) {
      int64_t alloc = results[at];
      at += descriptorWords(o.dims.size());
      if (!notOwned.count(alloc) && freed.insert(alloc).second)
        freeCompiledBlock(checked, reinterpret_cast<void *>(alloc));
    }
    return s;
  }
  std::map<int64_t, int> uses;
  size_t w = 0;
  for (const TensorSpec &o : sig.outputs) {
    ++uses[results[w]];
    w += descriptorWords(o.dims.size());
  }
  // An owned buffer that only this result uses, dense and 64-byte aligned,
  // becomes the output tensor as it is (the buffer is malloc'ed by the
  // compiled code: freeCompiledBlock releases it). Every other result is copied
  // out before anything is freed: two results may share one buffer (a value
  // returned twice). When `outputs` is `inputs`, the inputs are held until
  // then: a result that is an input (or a view of one) is copied from it.
  std::vector<Tensor> heldInputs;
  heldInputs.swap(outputs);
  std::vector<int64_t> toFree;
  w = 0;
  for (const TensorSpec &o : sig.outputs) {
    const int64_t *d = results.data() + w;
    size_t r = o.dims.size();
    w += descriptorWords(r);
    int64_t alloc = d[0];
    auto *data = reinterpret_cast<uint8_t *>(d[1]) + d[2] * dtypeSize(o.dtype);
    bool owned = !notOwned.count(alloc);
    if (owned && uses[alloc] == 1 && isDense(d, r) &&
        reinterpret_cast<uintptr_t>(data) % 64 == 0) {
      std::shared_ptr<uint8_t> buffer(data, [alloc, checked](uint8_t *) {
        freeCompiledBlock(checked, reinterpret_cast<void *>(alloc));
      });
      outputs.emplace_back(o.dtype, std::vector<int64_t>(d + 3, d + 3 + r),
                           std::move(buffer));
      continue;
    }
    Tensor t;
    copyOut(d, o, t);
    outputs.push_back(std::move(t));
    if (owned)
      toFree.push_back(alloc);
  }
  std::set<int64_t> freed;
  for (int64_t alloc : toFree)
    if (freed.insert(alloc).second)
      freeCompiledBlock(checked, reinterpret_cast<void *>(alloc));
  return Status::ok();
}

/// Calls a GPU entry point once, plus `repeat` timed times when `millis` is
/// given, on inputs copied to the device once.
Status invokeCuda(CompiledModule &m, const std::string &entry,
                  const FunctionSignature &sig,
                  const std::vector<Tensor> &inputs,
                  std::vector<Tensor> &outputs, unsigned repeat,
                  std::vector<double> *millis) {
  // The kernels are launched over grids sized by the inputs; an empty one
  // is no launch configuration CUDA accepts.
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t d = 0; d < inputs[i].shape().size(); ++d)
      if (inputs[i].shape()[d] == 0)
        return Status::error("@" + entry + " input " + std::to_string(i) +
                             ": dim " + std::to_string(d) +
                             " is 0; the cuda target does not run empty "
                             "tensors (" +
                             inputs[i].describe() + ")");
  if (Status s = cuda::available(); !s)
    return Status::error("@" + entry + " needs a CUDA GPU: " + s.message());
  std::vector<std::vector<int64_t>> shapes;
  if (Status s = outputShapes(entry, sig, inputs, shapes); !s)
    return s;

  // Inputs, then outputs: the order of the entry point's arguments.
  size_t numIn = inputs.size(), numOut = sig.outputs.size();
  std::vector<cuda::DeviceBuffer> buffers(numIn + numOut);
  std::vector<Descriptor> descs;
  for (size_t i = 0; i < numIn + numOut; ++i) {
    bool isInput = i < numIn;
    const std::vector<int64_t> &shape =
        isInput ? inputs[i].shape() : shapes[i - numIn];
    DType dtype = isInput ? inputs[i].dtype() : sig.outputs[i - numIn].dtype;
    std::string what = "@" + entry + (isInput ? " input " : " output ") +
                       std::to_string(isInput ? i : i - numIn);
    // Static output sizes come from the module's signature text: a size
    // that overflows must not become a small buffer.
    size_t bytes = dtypeSize(dtype);
    for (int64_t d : shape)
      if (d < 0 ||
          __builtin_mul_overflow(bytes, static_cast<size_t>(d), &bytes))
        return Status::error(what + ": size overflows (" + sig.describe() +
                             ")");
    if (Status s = cuda::DeviceBuffer::create(bytes, buffers[i]); !s)
      return Status::error(what + ": " + s.message());
    if (isInput)
      if (Status s =
              cuda::copyToDevice(buffers[i].get(), inputs[i].data(), bytes);
          !s)
        return Status::error(what + ": " + s.message());
    descs.push_back(Descriptor::dense(buffers[i].get(), shape));
  }
  // Copies from pageable memory may still be in flight when cuMemcpyHtoD
  // returns, and the kernels run on their own (non-blocking) streams: wait.
  if (Status s = cuda::synchronize(); !s)
    return Status::error("@" + entry + ": copying the inputs to the GPU: " +
                         s.message());
  std::vector<void *> descPtrs;
  for (Descriptor &d : descs)
    descPtrs.push_back(d.words.data());
  std::vector<void *> packed;
  for (void *&p : descPtrs)
    packed.push_back(&p);

  auto fn = reinterpret_cast<void (*)(void **)>(
      m.lookupSymbol(packedEntrySymbol(entry)));
  // An error left over from before (another module, an earlier failed call)
  // is not this call's.
  (void)cuda::takeError();
  unsigned calls = millis ? repeat + 1 : 1;
  for (unsigned c = 0; c < calls; ++c) {
    auto t0 = std::chrono::steady_clock::now();
    fn(packed.data());
    // The entry point synchronizes its own streams; this also catches work
    // it left on others.
    Status synced = cuda::synchronize();
    double ms = millisSince(t0);
    if (Status s = cuda::takeError(); !s)
      return Status::error("@" + entry + " failed on the GPU: " + s.message());
    if (!synced)
      return Status::error("@" + entry +
                           " failed on the GPU: " + synced.message());
    if (millis && c > 0)
      millis->push_back(ms);
  }

  outputs.clear();
  for (size_t o = 0; o < numOut; ++o) {
    Tensor t(sig.outputs[o].dtype, shapes[o]);
    if (Status s =
            cuda::copyToHost(t.data(), buffers[numIn + o].get(), t.byteSize());
        !s)
      return Status::error("@" + entry + " output " + std::to_string(o) + ": " +
                           s.message());
    outputs.push_back(std::move(t));
  }
  return Status::ok();
}

} // namespace

struct CompiledModule::PreparedEntry {
  FunctionSignature sig;
  std::string target;
  void (*fn)(void **) = nullptr;
  std::vector<IndexCheck> checks;
};

Status CompiledModule::prepare(const std::string &entry,
                               const PreparedEntry *&out) {
  std::lock_guard<std::mutex> guard(preparedLock_);
  std::shared_ptr<const PreparedEntry> &slot = prepared_[entry];
  if (!slot) {
    auto p = std::make_shared<PreparedEntry>();
    if (Status s = signature(entry, p->sig); !s) {
      prepared_.erase(entry);
      return s;
    }
    p->target = target();
    p->fn = reinterpret_cast<void (*)(void **)>(
        lookupSymbol(packedEntrySymbol(entry)));
    p->checks = indexChecks(*this);
    slot = std::move(p);
  }
  // (Entries are never erased once prepared: the pointer stays valid.)
  out = slot.get();
  return Status::ok();
}

Status CompiledModule::invoke(const std::string &entry,
                              const std::vector<Tensor> &inputs,
                              std::vector<Tensor> &outputs) {
  const PreparedEntry *e = nullptr;
  if (Status s = prepare(entry, e); !s)
    return s;
  if (Status s = checkInputs(entry, e->sig, inputs); !s)
    return s;
  if (e->target == "cuda")
    return invokeCuda(*this, entry, e->sig, inputs, outputs, 0, nullptr);
  if (e->target != "cpu")
    return Status::error("the module was compiled for target '" + e->target +
                         "', which this runtime cannot run (cpu, cuda)");
  return invokeCpu(*this, entry, e->sig, e->fn, e->checks, inputs, outputs);
}

Status CompiledModule::invokeTimed(const std::string &entry,
                                   const std::vector<Tensor> &inputs,
                                   std::vector<Tensor> &outputs,
                                   unsigned repeat,
                                   std::vector<double> &millis) {
  millis.clear();
  if (target() == "cuda") {
    FunctionSignature sig;
    if (Status s = signature(entry, sig); !s)
      return s;
    if (Status s = checkInputs(entry, sig, inputs); !s)
      return s;
    return invokeCuda(*this, entry, sig, inputs, outputs, repeat, &millis);
  }
  // CPU: every call is whole (checks, the call, copying the results out),
  // as a user of invoke sees it.
  if (Status s = invoke(entry, inputs, outputs); !s)
    return s;
  for (unsigned i = 0; i < repeat; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    if (Status s = invoke(entry, inputs, outputs); !s)
      return s;
    millis.push_back(millisSince(t0));
  }
  return Status::ok();
}

} // namespace attnrt
