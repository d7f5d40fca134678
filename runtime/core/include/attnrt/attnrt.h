/*===- attnrt.h - C API of the attention runtime ----------------*- C -*-===*\
|*                                                                            *|
|* Loads a module compiled by `attention-run --emit-shared-object` and calls  *|
|* its entry points. Needs neither MLIR nor LLVM: link against attnrt_core.   *|
|* Every function that can fail returns 0 on success and non-zero on failure, *|
|* with a message from attnrt_last_error() (valid until the next call on the  *|
|* same thread).                                                              *|
\*===----------------------------------------------------------------------===*/
#ifndef ATTNRT_C_API_H
#define ATTNRT_C_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  ATTNRT_F32 = 0,
  ATTNRT_F16 = 1,
  ATTNRT_BF16 = 2,
  ATTNRT_BOOL = 3,
  ATTNRT_I64 = 4,
  ATTNRT_I32 = 5
} attnrt_dtype;

typedef struct attnrt_module attnrt_module;
typedef struct attnrt_tensor attnrt_tensor;

const char *attnrt_last_error(void);

/* Fails for a GPU module where there is no usable CUDA driver and GPU. */
int attnrt_module_load(const char *path, attnrt_module **out);
void attnrt_module_free(attnrt_module *m);
/* What the module was compiled for: "cpu" or "cuda" ("" for a null module).
   Tensors stay host tensors either way: attnrt_invoke copies a "cuda"
   module's inputs to the GPU and its outputs back. */
const char *attnrt_module_target(attnrt_module *m);
/* Number of inputs/outputs of `entry`, or -1 if it does not exist. */
int attnrt_num_inputs(attnrt_module *m, const char *entry);
int attnrt_num_outputs(attnrt_module *m, const char *entry);

/* A zero-filled, 64-byte aligned tensor; NULL (with attnrt_last_error) for
   an invalid dtype or shape, a size that overflows, or a failed
   allocation. */
attnrt_tensor *attnrt_tensor_create(attnrt_dtype dtype, int64_t rank,
                                    const int64_t *shape);
void attnrt_tensor_free(attnrt_tensor *t);
/* Of a NULL tensor: NULL, rank -1, dim -1, dtype ATTNRT_F32. */
void *attnrt_tensor_data(attnrt_tensor *t);
int64_t attnrt_tensor_rank(const attnrt_tensor *t);
int64_t attnrt_tensor_dim(const attnrt_tensor *t, int64_t i);
attnrt_dtype attnrt_tensor_dtype(const attnrt_tensor *t);
/* Reads/writes .npy files (see Npy.h for the dtypes). */
int attnrt_tensor_load_npy(const char *path, attnrt_tensor **out);
int attnrt_tensor_save_npy(const attnrt_tensor *t, const char *path);

/* Keeps freed memory in the process so that repeated invocations reuse
   their buffers instead of page-faulting fresh ones (~10% of a GPT-2
   attention block). glibc: allocations up to min(bytes, 32 MiB), and for
   bytes > 32 MiB larger ones too (mmap off), come from the heap; up to
   `bytes` freed at its top stay, and with mmap off freed blocks below the
   top stay as well (malloc_trim(0) returns them). Process-wide; fails with
   other C libraries (attnrt::retainFreedMemory in attnrt/Memory.h). */
int attnrt_retain_freed_memory(size_t bytes);

/* Calls `entry`; outputs[i] receive new tensors the caller frees. A call
   fails (non-zero, attnrt_last_error() says why) on inputs the signature
   refuses, on an index its checks find out of range, and on an allocation
   the memory cannot hold: the call's blocks are freed and the module stays
   usable (attnrt/Allocation.h). */
int attnrt_invoke(attnrt_module *m, const char *entry,
                  attnrt_tensor *const *inputs, size_t num_inputs,
                  attnrt_tensor **outputs, size_t num_outputs);

#ifdef __cplusplus
}
#endif

#endif /* ATTNRT_C_API_H */
