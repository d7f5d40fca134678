//===- Module.h - compiled modules and calling their entry points -*- C++
//-*-===//
//
// A compiled module is anything that resolves symbols: the JIT (runtime/jit)
// or a shared object saved by it (SharedObjectModule, no compiler needed).
// Every entry point `NAME` comes with:
//   _mlir__mlir_ciface_NAME   the packed C-interface wrapper (void(void**))
//   __attn_signature_NAME     a NUL-terminated signature string
// and the module lists its entry points in `__attn_entry_points`.
// The signature lets the runtime check every argument before compiled code
// touches it.
//
// A module compiled for a GPU also exports `__attn_target` ("cuda"; absent
// means "cpu"). Its entry points take device memref descriptors: one per
// input, then one per output, which they write in place (destination
// passing), and return nothing. They launch their kernels and synchronize
// before returning; the runtime sizes, allocates and copies the buffers.
//
// A module names the CPU its CPU code was compiled for in
// `__attn_target_cpu` (the compiling host's name, or an LLVM CPU name such as
// "x86-64-v3") and the extensions that code needs in `__attn_cpu_features`
// (attnrt/CpuFeatures.h); loading it on a host without them fails with
// their names.
//
// Indices the runtime cannot check before a call (an ONNX Gather's indices
// computed in the graph, such as a Slice of token ids) are checked where the
// compiled code reads them. Such a module lists those sites in
// `__attn_index_checks` (one description per line); site K has the slot
// `__attn_index_error_K`, three int64 {hit, index, size}. The runtime clears
// the hits before a CPU call; after it, a hit fails the call with the site,
// the index and the size, and no result is returned. A hit of
// kIndexCheckTooLong instead of 1 is a length above its bound (an ONNX
// Attention mask longer than the past and new keys): {2, length, bound};
// hits 3 to 8 are the other failures the module checks (below).
// Calls of such a module run one at a time (the slots are the module's,
// shared by every load of one shared object: one lock per slot address).
//
//===----------------------------------------------------------------------===//
#ifndef ATTNRT_MODULE_H
#define ATTNRT_MODULE_H

#include "attnrt/Status.h"
#include "attnrt/Tensor.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace attnrt {

/// A dynamic dim of a GPU entry point's output that is the sum of input
/// sizes, such as a KV cache's past + new length: the sizes of the groups
/// `groups` ("?N" ids) plus `constant` ("?1+?2", "?3+1" in the signature).
struct DimSum {
  std::vector<int> groups;
  int64_t constant = 0;
};

/// One tensor of a signature; dynamic dims are -1.
struct TensorSpec {
  DType dtype = DType::F32;
  std::vector<int64_t> dims;
  /// Per dim: 0, or the id of a group of dynamic dims (across all inputs)
  /// that the module requires to be equal ("?3" in the signature text).
  std::vector<int> sameAs;
  /// Per dim: -1, or the largest size the module accepts there ("?<=8"),
  /// e.g. a sequence length bounded by a model's mask buffer.
  std::vector<int64_t> maxDims;
  /// Per dim (or empty): a sum of input sizes (outputs only; a dim with
  /// no groups is not one).
  std::vector<DimSum> sums;
  /// The argument's name in the source model (ONNX graph input), or "".
  std::string name;
  /// Integer inputs the module indexes with (ONNX Gather's indices, such as
  /// token ids into an embedding table): every element must lie in
  /// [first, second) ("{-100:100}" after the dims in the signature text).
  std::optional<std::pair<int64_t, int64_t>> valueRange;
  std::string describe() const;
};

/// A bound on a sum of input sizes that no single dim's bound states: a KV
/// step's past + new length, which slices a table of `most` rows
/// (";?1+?2<=64" after the outputs in the signature text).
struct SumBound {
  DimSum sum;
  int64_t most = 0;
};

struct FunctionSignature {
  std::vector<TensorSpec> inputs, outputs;
  std::vector<SumBound> sumBounds;
  std::string describe() const;
  /// "input 1 (past_key) dim 2": the first input dim of group `id`, or
  /// "?id".
  std::string groupName(int id) const;
  /// "input 1 dim 2 + input 0 dim 1 + 1 <= 64".
  std::string describeBound(const SumBound &bound) const;
};

/// "f32[1,?,768],f32[768,768]->f32[1,?,768]"; "?N" marks dynamic dims
/// that must all have the same size, "?<=M" (or "?N<=M") a dynamic dim of at
/// most M, and "?N+?M+C" an output dim that is the sum of the sizes of
/// groups N and M and of C; "{L:H}" after a tensor's dims bounds its values
/// to [L, H); ";?N+?M+C<=B" after the outputs bounds a sum of input sizes.
std::string formatSignature(const FunctionSignature &sig);
Status parseSignature(const std::string &text, FunctionSignature &out);

/// Checks `inputs` against `sig` (count, dtypes, static and bounded dims,
/// equal dims of one group, bounded sums); errors name entry point `entry`.
Status checkInputs(const std::string &entry, const FunctionSignature &sig,
                   const std::vector<Tensor> &inputs);
/// The shapes of the outputs that a GPU entry point writes, which the
/// runtime allocates, for `inputs` (as checkInputs accepts them): static
/// dims, dims tied to an input dim, sums of input dims.
Status outputShapes(const std::string &entry, const FunctionSignature &sig,
                    const std::vector<Tensor> &inputs,
                    std::vector<std::vector<int64_t>> &shapes);

/// The symbol names the compiler emits for an entry point.
std::string signatureSymbol(const std::string &entry);
std::string packedEntrySymbol(const std::string &entry);
constexpr const char *kEntryListSymbol = "__attn_entry_points";
constexpr const char *kTargetSymbol = "__attn_target";
constexpr const char *kTargetCpuSymbol = "__attn_target_cpu";
constexpr const char *kIndexChecksSymbol = "__attn_index_checks";
/// A module with checked allocations (Allocation.h): two pointers, to
/// malloc and free unless the runtime replaced them.
constexpr const char *kAllocationFunctionsSymbol =
    "__attn_allocation_functions";
constexpr const char *kIndexErrorSlotPrefix = "__attn_index_error_";
/// The hit words of an index check's slot: an index outside [-size, size),
/// or a length above its bound.
constexpr int64_t kIndexCheckOutside = 1;
constexpr int64_t kIndexCheckTooLong = 2;
/// An element count the target shape of a reshape cannot hold: {3, elements,
/// product of the target's sizes other than -1} when the count is not a
/// multiple of a non-zero product (or the product is 0), {4, elements, the
/// target's element count} when the two differ.
constexpr int64_t kIndexCheckNotMultiple = 3;
constexpr int64_t kIndexCheckCountDiffers = 4;
/// An empty axis an ArgMax or ArgMin reduces: {5, axis, 0}.
constexpr int64_t kIndexCheckEmptyAxis = 5;
/// A size that differs from the one an op needs (ScatterND's updates):
/// {6, size, expected}.
constexpr int64_t kIndexCheckSizeDiffers = 6;
/// A negative size in a reshape's target: {7, size, its position}.
constexpr int64_t kIndexCheckNegativeSize = 7;
/// A dynamic dim of size 1 where the module was compiled for other sizes
/// (an ONNX Squeeze without axes keeps its dynamic dims): {8, dim, 0}.
constexpr int64_t kIndexCheckUnitSize = 8;

class CompiledModule {
public:
  virtual ~CompiledModule() = default;
  /// The address of `name`, or nullptr.
  virtual void *lookupSymbol(const std::string &name) = 0;

  /// Entry points, in the order of the source module.
  std::vector<std::string> entryPoints();
  Status signature(const std::string &entry, FunctionSignature &out);
  /// What the module was compiled for: "cpu" or "cuda".
  std::string target();
  /// The CPU the module's CPU code was compiled for ("" if it does not say).
  std::string targetCpu();
  /// OK if this host has every CPU extension the module was compiled for;
  /// otherwise an error naming the missing ones.
  Status checkHostCpu();

  /// Runs the module's `__attn_init` (GPU modules: loads the kernels into
  /// the CUDA driver) once; errors of the CUDA backend are returned.
  Status runInit();
  /// Runs `__attn_fini` (unloads the kernels) if `runInit` ran it.
  void runFini();
  /// Checks `inputs` against the signature, calls the entry point and returns
  /// its results as fresh host tensors (a "cuda" module's inputs are copied
  /// to the device and its results back). What `outputs` held is released
  /// before a CPU call allocates its results (copies of those tensors stay
  /// valid), so a loop of calls reuses one set of buffers; `outputs` may be
  /// `inputs` itself.
  Status invoke(const std::string &entry, const std::vector<Tensor> &inputs,
                std::vector<Tensor> &outputs);
  /// Like invoke, one warm-up call and then `repeat` timed ones; `millis`
  /// gets each timed call's wall time and `outputs` the last call's results.
  /// A "cpu" call is timed whole; a "cuda" one without the transfers: the
  /// inputs stay on the device, and only the entry point (its launches and
  /// their completion) is timed.
  Status invokeTimed(const std::string &entry,
                     const std::vector<Tensor> &inputs,
                     std::vector<Tensor> &outputs, unsigned repeat,
                     std::vector<double> &millis);
  /// Whether the module allocates through the runtime's checked functions
  /// (Allocation.h), set when it was loaded.
  bool checkedAllocations() const { return checkedAllocations_; }

private:
  /// What a call of an entry point needs from the module (its signature,
  /// address, index-check slots), looked up once: each symbol lookup of a
  /// JIT module takes the JIT's locks, several microseconds per call in
  /// all (Invoke.cpp).
  struct PreparedEntry;
  Status prepare(const std::string &entry, const PreparedEntry *&out);
  std::mutex preparedLock_;
  std::map<std::string, std::shared_ptr<const PreparedEntry>> prepared_;

  friend void installCheckedAllocations(CompiledModule &module);
  friend uint64_t callCheckingAllocations(CompiledModule &module,
                                          void (*fn)(void **), void **args);
  bool initialized_ = false;
  /// The module's OpenMP runtime's omp_get_level, if it has one.
  int (*ompGetLevel_)() = nullptr;
  bool checkedAllocations_ = false;
};

/// A module saved with `attention-run --emit-shared-object`, loaded by dlopen.
/// Loading a "cuda" module fails, with the reason, where there is no usable
/// GPU (its constructor loads the kernels through the runtime's mgpu*
/// functions).
class SharedObjectModule : public CompiledModule {
public:
  static Status load(const std::string &path,
                     std::unique_ptr<SharedObjectModule> &out);
  ~SharedObjectModule() override;
  void *lookupSymbol(const std::string &name) override;

private:
  void *handle_ = nullptr;
};

/// Checks one argument against its spec; `what` names it ("input 2").
Status checkTensor(const Tensor &t, const TensorSpec &spec,
                   const std::string &what);

/// Checks that dynamic dims the module requires to be equal are; `names`
/// names each input in messages.
Status checkSameSizes(const std::vector<const Tensor *> &inputs,
                      const std::vector<TensorSpec> &specs,
                      const std::vector<std::string> &names);

} // namespace attnrt

#endif // ATTNRT_MODULE_H
