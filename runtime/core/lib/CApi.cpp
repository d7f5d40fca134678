//===- CApi.cpp - C API of the attention runtime ---------------------------===//

#include "attnrt/Memory.h"
#include "attnrt/Module.h"
#include "attnrt/Npy.h"
#include "attnrt/attnrt.h"

#include <climits>
#include <cstdint>
#include <string>

using namespace attnrt;

struct attnrt_module {
  std::unique_ptr<SharedObjectModule> impl;
  /// Read once: attnrt_module_target hands out a pointer into it.
  std::string target;
};
struct attnrt_tensor {
  Tensor impl;
};

namespace {
thread_local std::string lastError;
int fail(const Status &s) {
  lastError = s.message();
  return 1;
}
int fail(const std::string &m) { return fail(Status::error(m)); }
} // namespace

extern "C" {

const char *attnrt_last_error(void) { return lastError.c_str(); }

int attnrt_retain_freed_memory(size_t bytes) {
  if (Status s = retainFreedMemory(bytes); !s)
    return fail(s);
  return 0;
}

int attnrt_module_load(const char *path, attnrt_module **out) {
  if (!path || !out)
    return fail("attnrt_module_load: null argument");
  std::unique_ptr<SharedObjectModule> m;
  if (Status s = SharedObjectModule::load(path, m); !s)
    return fail(s);
  std::string target = m->target();
  *out = new attnrt_module{std::move(m), std::move(target)};
  return 0;
}

void attnrt_module_free(attnrt_module *m) { delete m; }

const char *attnrt_module_target(attnrt_module *m) {
  return m ? m->target.c_str() : "";
}

int attnrt_num_inputs(attnrt_module *m, const char *entry) {
  FunctionSignature sig;
  if (!m || !entry || !m->impl->signature(entry, sig))
    return -1;
  return static_cast<int>(sig.inputs.size());
}

int attnrt_num_outputs(attnrt_module *m, const char *entry) {
  FunctionSignature sig;
  if (!m || !entry || !m->impl->signature(entry, sig))
    return -1;
  return static_cast<int>(sig.outputs.size());
}

attnrt_tensor *attnrt_tensor_create(attnrt_dtype dtype, int64_t rank,
                                    const int64_t *shape) {
  if (rank < 0 || (rank > 0 && !shape) || dtype < ATTNRT_F32 ||
      dtype > ATTNRT_I32) {
    fail("attnrt_tensor_create: invalid dtype, rank or null shape");
    return nullptr;
  }
  std::vector<int64_t> s(shape, shape + rank);
  // The byte count, rounded up to the 64-byte alignment, must fit.
  int64_t bytes = static_cast<int64_t>(dtypeSize(static_cast<DType>(dtype)));
  for (int64_t d : s)
    if (d < 0 || __builtin_mul_overflow(bytes, d, &bytes) ||
        bytes > INT64_MAX - 64) {
      fail("attnrt_tensor_create: " +
           std::string(d < 0 ? "a negative dim" : "the size overflows"));
      return nullptr;
    }
  Tensor t(static_cast<DType>(dtype), s);
  if (!t.data()) {
    fail("attnrt_tensor_create: cannot allocate " + std::to_string(bytes) +
         " bytes");
    return nullptr;
  }
  return new attnrt_tensor{std::move(t)};
}

void attnrt_tensor_free(attnrt_tensor *t) { delete t; }
void *attnrt_tensor_data(attnrt_tensor *t) {
  return t ? t->impl.data() : nullptr;
}
int64_t attnrt_tensor_rank(const attnrt_tensor *t) {
  return t ? t->impl.rank() : -1;
}
int64_t attnrt_tensor_dim(const attnrt_tensor *t, int64_t i) {
  if (!t || i < 0 || i >= t->impl.rank())
    return -1;
  return t->impl.shape()[i];
}
attnrt_dtype attnrt_tensor_dtype(const attnrt_tensor *t) {
  if (!t)
    return ATTNRT_F32; // (documented: the dtype of a null tensor is F32)
  return static_cast<attnrt_dtype>(t->impl.dtype());
}

int attnrt_tensor_load_npy(const char *path, attnrt_tensor **out) {
  if (!path || !out)
    return fail("attnrt_tensor_load_npy: null argument");
  Tensor t;
  if (Status s = readNpy(path, t); !s)
    return fail(s);
  *out = new attnrt_tensor{std::move(t)};
  return 0;
}

int attnrt_tensor_save_npy(const attnrt_tensor *t, const char *path) {
  if (!t || !path)
    return fail("attnrt_tensor_save_npy: null argument");
  if (Status s = writeNpyAtomic(path, t->impl); !s)
    return fail(s);
  return 0;
}

int attnrt_invoke(attnrt_module *m, const char *entry,
                  attnrt_tensor *const *inputs, size_t num_inputs,
                  attnrt_tensor **outputs, size_t num_outputs) {
  if (!m || !entry || (num_inputs && !inputs) || (num_outputs && !outputs))
    return fail("attnrt_invoke: null argument");
  std::vector<Tensor> ins;
  for (size_t i = 0; i < num_inputs; ++i) {
    if (!inputs[i])
      return fail("attnrt_invoke: input " + std::to_string(i) + " is null");
    ins.push_back(inputs[i]->impl);
  }
  FunctionSignature sig;
  if (Status s = m->impl->signature(entry, sig); !s)
    return fail(s);
  if (sig.outputs.size() != num_outputs)
    return fail(std::string("@") + entry + " returns " +
                std::to_string(sig.outputs.size()) +
                " outputs, caller expects " + std::to_string(num_outputs));
  std::vector<Tensor> outs;
  if (Status s = m->impl->invoke(entry, ins, outs); !s)
    return fail(s);
  for (size_t i = 0; i < num_outputs; ++i)
    outputs[i] = new attnrt_tensor{std::move(outs[i])};
  return 0;
}

} // extern "C"
