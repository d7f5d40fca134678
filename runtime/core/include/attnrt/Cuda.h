//===- Cuda.h - the CUDA backend of the runtime core -------------*- C++ -*-===//
//
// Compiled GPU modules (MLIR's gpu-to-llvm lowering) load their kernels and
// launch them through the `mgpu*` C functions that this file's implementation
// exports. They are built on the CUDA driver API, loaded at run time with
// dlopen("libcuda.so.1") (or $ATTNRT_LIBCUDA), so the runtime builds without
// CUDA and runs CPU modules on machines without a GPU.
//
// No function here crashes or aborts when the driver is missing or a driver
// call fails. The C++ API returns a Status; the mgpu* functions, which
// compiled code calls and which cannot return errors, record the first
// failure in a slot of the calling thread that `takeError()` reads after
// the call.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNRT_CUDA_H
#define ATTNRT_CUDA_H

#include "attnrt/Status.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace attnrt {
namespace cuda {

/// Loads and initializes the driver on first use (cuInit, the default
/// device's primary context). Ok, or an error whose message starts with
/// "no CUDA driver found" (libcuda.so.1 cannot be loaded or lacks a needed
/// function) or names the driver call that failed. The result is sticky.
Status available();

/// Returns and clears the first error recorded by an mgpu* function on
/// this thread since the last call (ok if none).
Status takeError();

/// The default device for reports: its name, compute capability, SM count
/// and memory, e.g. "NVIDIA H200 (sm_90, 132 SMs, 140.4 GiB)"; "" without a
/// usable driver.
std::string deviceName();

/// Device memory (cuMemAlloc). `alloc(0)` gives a null pointer and succeeds;
/// `free(nullptr)` does nothing.
Status alloc(size_t bytes, void **devPtr);
Status free(void *devPtr);
/// Blocking copies between host memory and device memory.
Status copyToDevice(void *devDst, const void *hostSrc, size_t bytes);
Status copyToHost(void *hostDst, const void *devSrc, size_t bytes);
/// Waits for all work on the device (cuCtxSynchronize).
Status synchronize();

/// An owned device allocation; freed (errors ignored) on destruction.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer &&other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept {
    if (this != &other) {
      reset();
      ptr_ = std::exchange(other.ptr_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;

  /// Allocates `bytes` (replacing what `out` held).
  static Status create(size_t bytes, DeviceBuffer &out);
  void *get() const { return ptr_; }
  size_t size() const { return size_; }
  void reset();

private:
  void *ptr_ = nullptr;
  size_t size_ = 0;
};

/// Name -> address of every mgpu* function, for the JIT to register with
/// the ExecutionEngine (a saved shared object finds them in the executable).
const std::vector<std::pair<const char *, void *>> &mgpuSymbols();

} // namespace cuda
} // namespace attnrt

/// The functions MLIR's gpu-to-llvm lowering calls (the ABI of MLIR's
/// CudaRuntimeWrappers.cpp), with opaque driver handles.
extern "C" {
void *mgpuModuleLoad(void *data, size_t size);
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
void *mgpuModuleGetFunction(void *module, const char *name);
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, void *stream,
                      void **params, void **extra, size_t paramsCount);
void *mgpuStreamCreate(void);
void mgpuStreamDestroy(void *stream);
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);
void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, bool isHostShared);
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, unsigned value, size_t count, void *stream);
void mgpuMemset16(void *dst, unsigned short value, size_t count, void *stream);
void mgpuSetDefaultDevice(int32_t device);
}

#endif // ATTNRT_CUDA_H
