//===- Cuda.cpp - the CUDA backend of the runtime core ---------------------===//
//
// The mgpu* functions of MLIR's CUDA runtime wrappers, over the CUDA driver
// API loaded with dlopen: the runtime must build without the CUDA toolkit and
// run CPU modules where there is no GPU, so nothing here links against
// libcuda or includes cuda.h. The few driver types and constants used are
// declared below; their ABI has been stable since CUDA 4.
//
// Compiled code cannot handle errors of the mgpu* functions (they return
// nothing or a handle), and MLIR's own wrappers only print them. Here they
// are recorded in a slot per thread (the first error wins, so the cause is
// kept rather than its consequences) that the runtime reads after loading a
// module and after every call of a GPU entry point. No path aborts.
//
//===----------------------------------------------------------------------===//

#include "attnrt/Cuda.h"

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>

// Saved GPU modules resolve these from the executable at dlopen time, even
// if the runtime is ever built with -fvisibility=hidden.
#define ATTNRT_EXPORT __attribute__((visibility("default")))

namespace attnrt {
namespace cuda {
namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUevent = void *;

constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedMemoryPerBlockOptin = 97;
constexpr int kFuncAttrMaxDynamicSharedSizeBytes = 8;
constexpr unsigned kStreamNonBlocking = 1;
constexpr unsigned kEventDisableTiming = 2;
constexpr unsigned kMemAttachGlobal = 1;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSizeBytes = 6;
constexpr int kJitOptimizationLevel = 7;
/// Dynamic shared memory a kernel may use without opting in.
constexpr int32_t kDefaultSharedMemoryLimit = 48 * 1024;

/// The driver entry points used. Names with a `_v2` variant resolve to it:
/// the unsuffixed symbols are the CUDA 3.x ABI (32-bit sizes).
struct Driver {
  CUresult (*cuGetErrorName)(CUresult, const char **) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char **) = nullptr;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDeviceGetCount)(int *) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice *, int) = nullptr;
  CUresult (*cuDeviceGetName)(char *, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice) = nullptr;
  CUresult (*cuDeviceTotalMem)(size_t *, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice) = nullptr;
  CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxPopCurrent)(CUcontext *) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule,
                                  const char *) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*cuFuncGetName)(const char **, CUfunction) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **) = nullptr;
  CUresult (*cuStreamCreate)(CUstream *, unsigned) = nullptr;
  CUresult (*cuStreamDestroy)(CUstream) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned) = nullptr;
  CUresult (*cuEventCreate)(CUevent *, unsigned) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t) = nullptr;
  CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t) = nullptr;
  CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t,
                            CUstream) = nullptr;
  CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t,
                               CUstream) = nullptr;
  CUresult (*cuMemsetD16Async)(CUdeviceptr, unsigned short, size_t,
                               CUstream) = nullptr;
};

/// A device whose primary context has been retained.
struct Device {
  CUdevice device = 0;
  CUcontext context = nullptr;
  /// Opt-in shared memory per block, 0 if unknown.
  int maxSharedOptin = 0;
};

struct State {
  std::once_flag loadOnce;
  /// dlopen + symbols + cuInit + device count; sticky.
  Status loadStatus;
  std::string libPath;
  Driver driver;
  int deviceCount = 0;
  std::atomic<int> defaultDevice{0};

  std::mutex deviceMutex;
  /// One per device ordinal, contexts retained lazily.
  std::vector<Device> devices;
};

/// The first error an mgpu* function recorded on this thread that nobody
/// took yet. Per thread: a module's entry point runs its mgpu* calls on the
/// calling thread, so GPU modules invoked from several threads see only
/// their own errors. A fixed buffer (messages are a line; longer ones are
/// cut): nothing to allocate or destroy, as global destructors of compiled
/// modules may still call mgpuModuleUnload after the main thread's
/// thread-local objects are gone.
struct PendingError {
  bool set;
  char message[1024];
};
thread_local PendingError pendingError;

/// Never destroyed: global destructors of compiled modules call
/// mgpuModuleUnload at exit, possibly after this file's statics are gone.
State &state() {
  static State *s = new State();
  return *s;
}

/// Names of the errors most likely before the driver can name them itself
/// (the toolkit's stub library, a driver older than the toolkit).
const char *fallbackErrorName(CUresult r, const char **description) {
  struct Known {
    CUresult code;
    const char *name, *description;
  };
  static const Known known[] = {
      {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
      {2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
      {3, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
      {4, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
      {34, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
      {35, "CUDA_ERROR_INSUFFICIENT_DRIVER",
       "CUDA driver version is insufficient for CUDA runtime version"},
      {36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",
       "API call is not supported in the installed CUDA driver"},
      {46, "CUDA_ERROR_DEVICE_UNAVAILABLE",
       "CUDA-capable device(s) is/are busy or unavailable"},
      {100, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
      {101, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
      {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
      {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
      {209, "CUDA_ERROR_NO_BINARY_FOR_GPU",
       "no kernel image is available for execution on the device"},
      {218, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
      {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
       "the provided PTX was compiled with an unsupported toolchain"},
      {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
      {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
      {700, "CUDA_ERROR_ILLEGAL_ADDRESS",
       "an illegal memory access was encountered"},
      {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
       "too many resources requested for launch"},
      {719, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
      {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
       "system has unsupported display driver / cuda driver combination"},
      {999, "CUDA_ERROR_UNKNOWN", "unknown error"},
  };
  for (const Known &k : known)
    if (k.code == r) {
      *description = k.description;
      return k.name;
    }
  *description = nullptr;
  return nullptr;
}

/// "cuInit failed: CUDA_ERROR_STUB_LIBRARY (34): CUDA driver is a stub
/// library"; `call` names the driver function (and what it was doing).
Status callError(const std::string &call, CUresult r) {
  const Driver &d = state().driver;
  const char *name = nullptr, *description = nullptr;
  // The driver's own names cover errors newer than this file; they need no
  // cuInit, but the stub library answers them with an error too.
  if (d.cuGetErrorName && d.cuGetErrorName(r, &name) != 0)
    name = nullptr;
  if (d.cuGetErrorString && d.cuGetErrorString(r, &description) != 0)
    description = nullptr;
  const char *fallbackDescription = nullptr;
  const char *fallbackName = fallbackErrorName(r, &fallbackDescription);
  if (!name)
    name = fallbackName;
  if (!description)
    description = fallbackDescription;
  std::string msg = call + " failed: " + (name ? name : "CUDA error") + " (" +
                    std::to_string(r) + ")";
  if (description)
    msg += std::string(": ") + description;
  return Status::error(msg);
}

template <typename Fn>
bool resolve(void *lib, const char *name, bool versioned, Fn &fn) {
  void *p = nullptr;
  if (versioned)
    p = ::dlsym(lib, (std::string(name) + "_v2").c_str());
  if (!p)
    p = ::dlsym(lib, name);
  fn = reinterpret_cast<Fn>(p);
  return p != nullptr;
}

Status loadDriver(State &s) {
  const char *env = std::getenv("ATTNRT_LIBCUDA");
  s.libPath = env && *env ? env : "libcuda.so.1";
  // RTLD_LOCAL: the driver's symbols must not interpose on anything else.
  void *lib = ::dlopen(s.libPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = ::dlerror();
    return Status::error(std::string("no CUDA driver found: ") +
                         (e ? e : s.libPath + ": cannot be loaded"));
  }
  Driver &d = s.driver;
  const char *missing = nullptr;
#define ATTNRT_RESOLVE(NAME, VERSIONED)                                        \
  if (!resolve(lib, #NAME, VERSIONED, d.NAME) && !missing)                     \
    missing = #NAME;
  ATTNRT_RESOLVE(cuGetErrorName, false)
  ATTNRT_RESOLVE(cuGetErrorString, false)
  ATTNRT_RESOLVE(cuInit, false)
  ATTNRT_RESOLVE(cuDeviceGetCount, false)
  ATTNRT_RESOLVE(cuDeviceGet, false)
  ATTNRT_RESOLVE(cuDeviceGetName, false)
  ATTNRT_RESOLVE(cuDeviceGetAttribute, false)
  ATTNRT_RESOLVE(cuDevicePrimaryCtxRetain, false)
  ATTNRT_RESOLVE(cuCtxPushCurrent, true)
  ATTNRT_RESOLVE(cuCtxPopCurrent, true)
  ATTNRT_RESOLVE(cuCtxSynchronize, false)
  ATTNRT_RESOLVE(cuModuleLoadDataEx, false)
  ATTNRT_RESOLVE(cuModuleUnload, false)
  ATTNRT_RESOLVE(cuModuleGetFunction, false)
  ATTNRT_RESOLVE(cuFuncSetAttribute, false)
  ATTNRT_RESOLVE(cuLaunchKernel, false)
  ATTNRT_RESOLVE(cuStreamCreate, false)
  ATTNRT_RESOLVE(cuStreamDestroy, true)
  ATTNRT_RESOLVE(cuStreamSynchronize, false)
  ATTNRT_RESOLVE(cuStreamWaitEvent, false)
  ATTNRT_RESOLVE(cuEventCreate, false)
  ATTNRT_RESOLVE(cuEventDestroy, true)
  ATTNRT_RESOLVE(cuEventSynchronize, false)
  ATTNRT_RESOLVE(cuEventRecord, false)
  ATTNRT_RESOLVE(cuMemAlloc, true)
  ATTNRT_RESOLVE(cuMemAllocManaged, false)
  ATTNRT_RESOLVE(cuMemFree, true)
  ATTNRT_RESOLVE(cuMemcpyHtoD, true)
  ATTNRT_RESOLVE(cuMemcpyDtoH, true)
  ATTNRT_RESOLVE(cuMemcpyAsync, false)
  ATTNRT_RESOLVE(cuMemsetD32Async, false)
  ATTNRT_RESOLVE(cuMemsetD16Async, false)
#undef ATTNRT_RESOLVE
  // Only for reports and error messages; older drivers lack cuFuncGetName.
  resolve(lib, "cuDeviceTotalMem", true, d.cuDeviceTotalMem);
  resolve(lib, "cuFuncGetName", false, d.cuFuncGetName);
  if (missing) {
    Status err =
        Status::error("no CUDA driver found: " + s.libPath + " lacks " +
                      missing + " (not a CUDA driver, or a too old one)");
    // Nothing half-resolved may stay callable (callError uses the table).
    d = Driver();
    ::dlclose(lib);
    return err;
  }
  if (CUresult r = d.cuInit(0))
    return Status::error("cannot initialize the CUDA driver " + s.libPath +
                         ": " + callError("cuInit", r).message());
  if (CUresult r = d.cuDeviceGetCount(&s.deviceCount))
    return Status::error("cannot initialize the CUDA driver " + s.libPath +
                         ": " + callError("cuDeviceGetCount", r).message());
  if (s.deviceCount <= 0)
    return Status::error("no CUDA GPU found (" + s.libPath +
                         " reports 0 devices)");
  s.devices.resize(s.deviceCount);
  return Status::ok();
}

/// The driver, loaded and initialized once.
Status load() {
  State &s = state();
  std::call_once(s.loadOnce, [&s] { s.loadStatus = loadDriver(s); });
  return s.loadStatus;
}

/// The default device, its primary context retained on first use.
Status currentDevice(Device *&out) {
  if (Status st = load(); !st)
    return st;
  State &s = state();
  int ordinal = s.defaultDevice.load();
  if (ordinal < 0 || ordinal >= s.deviceCount)
    return Status::error("CUDA device " + std::to_string(ordinal) +
                         " does not exist (" + std::to_string(s.deviceCount) +
                         " device" + (s.deviceCount == 1 ? "" : "s") + ")");
  std::lock_guard<std::mutex> lock(s.deviceMutex);
  Device &dev = s.devices[ordinal];
  if (!dev.context) {
    const Driver &d = s.driver;
    if (CUresult r = d.cuDeviceGet(&dev.device, ordinal))
      return callError("cuDeviceGet", r);
    CUcontext ctx = nullptr;
    if (CUresult r = d.cuDevicePrimaryCtxRetain(&ctx, dev.device))
      return callError("cuDevicePrimaryCtxRetain", r);
    if (d.cuDeviceGetAttribute(&dev.maxSharedOptin,
                               kAttrMaxSharedMemoryPerBlockOptin, dev.device))
      dev.maxSharedOptin = 0;
    dev.context = ctx;
  }
  out = &dev;
  return Status::ok();
}

/// Makes the default device's context current on this thread for one call
/// (pushed, then popped: a caller's own current context survives).
class ScopedContext {
public:
  ScopedContext() {
    status_ = currentDevice(device_);
    if (!status_)
      return;
    if (CUresult r = state().driver.cuCtxPushCurrent(device_->context))
      status_ = callError("cuCtxPushCurrent", r);
  }
  ~ScopedContext() {
    if (!status_)
      return;
    CUcontext popped = nullptr;
    state().driver.cuCtxPopCurrent(&popped);
  }
  ScopedContext(const ScopedContext &) = delete;
  ScopedContext &operator=(const ScopedContext &) = delete;

  const Status &status() const { return status_; }
  const Device &device() const { return *device_; }

private:
  Status status_;
  Device *device_ = nullptr;
};

/// Keeps this thread's first error until takeError().
void record(const Status &s) {
  if (s || pendingError.set)
    return;
  pendingError.set = true;
  std::snprintf(pendingError.message, sizeof pendingError.message, "%s",
                s.message().c_str());
}

/// Records a failed driver call; true if it succeeded.
bool check(CUresult r, const char *call) {
  if (r == 0)
    return true;
  record(callError(call, r));
  return false;
}

/// Enters the context for an mgpu* function; false (error recorded) if the
/// driver is unusable.
bool enter(const ScopedContext &ctx) {
  record(ctx.status());
  return ctx.status().isOk();
}

const Driver &drv() { return state().driver; }

CUdeviceptr devicePtr(const void *p) {
  return static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(p));
}

std::string kernelName(CUfunction fn) {
  const char *name = nullptr;
  if (drv().cuFuncGetName && drv().cuFuncGetName(&name, fn) == 0 && name)
    return std::string(" of kernel '") + name + "'";
  return "";
}

void *loadModule(void *data, int optLevel, bool jit) {
  const char *what = jit ? "mgpuModuleLoadJIT" : "mgpuModuleLoad";
  if (!data) {
    record(Status::error(std::string(what) + ": no kernel image"));
    return nullptr;
  }
  ScopedContext ctx;
  if (!enter(ctx))
    return nullptr;
  // cuModuleLoadDataEx with only log options is cuModuleLoadData, plus the
  // reason when the image is PTX that does not assemble.
  char log[8192] = {0};
  int options[3] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes,
                    kJitOptimizationLevel};
  void *values[3] = {log, reinterpret_cast<void *>(sizeof(log) - 1),
                     reinterpret_cast<void *>(
                         static_cast<intptr_t>(optLevel < 0   ? 0
                                               : optLevel > 4 ? 4
                                                              : optLevel))};
  CUmodule module = nullptr;
  CUresult r =
      drv().cuModuleLoadDataEx(&module, data, jit ? 3 : 2, options, values);
  if (r) {
    std::string msg = callError(jit ? "cuModuleLoadDataEx (PTX JIT)"
                                    : "cuModuleLoadData (kernel image)",
                                r)
                          .message();
    if (log[0])
      msg += "; the driver's log: " + std::string(log, ::strnlen(log, 8191));
    record(Status::error(msg));
    return nullptr;
  }
  return module;
}

} // namespace

Status available() {
  Device *dev = nullptr;
  return currentDevice(dev);
}

Status takeError() {
  if (!pendingError.set)
    return Status::ok();
  pendingError.set = false;
  return Status::error(pendingError.message);
}

std::string deviceName() {
  Device *dev = nullptr;
  if (!currentDevice(dev))
    return "";
  const Driver &d = drv();
  char name[256] = {0};
  if (d.cuDeviceGetName(name, sizeof(name) - 1, dev->device))
    std::strcpy(name, "CUDA device");
  std::string s = name;
  int major = 0, minor = 0, sms = 0;
  std::string details;
  if (!d.cuDeviceGetAttribute(&major, kAttrComputeCapabilityMajor,
                              dev->device) &&
      !d.cuDeviceGetAttribute(&minor, kAttrComputeCapabilityMinor, dev->device))
    details += "sm_" + std::to_string(major) + std::to_string(minor);
  if (!d.cuDeviceGetAttribute(&sms, kAttrMultiprocessorCount, dev->device))
    details += (details.empty() ? "" : ", ") + std::to_string(sms) + " SMs";
  size_t bytes = 0;
  if (d.cuDeviceTotalMem && !d.cuDeviceTotalMem(&bytes, dev->device)) {
    char gib[32];
    std::snprintf(gib, sizeof(gib), "%.1f GiB",
                  static_cast<double>(bytes) / (1ull << 30));
    details += (details.empty() ? "" : ", ") + std::string(gib);
  }
  return details.empty() ? s : s + " (" + details + ")";
}

Status alloc(size_t bytes, void **devPtr) {
  if (!devPtr)
    return Status::error("cuda::alloc: null result pointer");
  *devPtr = nullptr;
  // cuMemAlloc rejects 0 bytes; an empty buffer needs no memory.
  if (bytes == 0)
    return Status::ok();
  ScopedContext ctx;
  if (!ctx.status())
    return ctx.status();
  CUdeviceptr p = 0;
  if (CUresult r = drv().cuMemAlloc(&p, bytes))
    return callError("cuMemAlloc (" + std::to_string(bytes) + " bytes)", r);
  *devPtr = reinterpret_cast<void *>(static_cast<uintptr_t>(p));
  return Status::ok();
}

Status free(void *devPtr) {
  if (!devPtr)
    return Status::ok();
  ScopedContext ctx;
  if (!ctx.status())
    return ctx.status();
  if (CUresult r = drv().cuMemFree(devicePtr(devPtr)))
    return callError("cuMemFree", r);
  return Status::ok();
}

Status copyToDevice(void *devDst, const void *hostSrc, size_t bytes) {
  if (bytes == 0)
    return Status::ok();
  if (!devDst || !hostSrc)
    return Status::error("cuda::copyToDevice: null pointer");
  ScopedContext ctx;
  if (!ctx.status())
    return ctx.status();
  if (CUresult r = drv().cuMemcpyHtoD(devicePtr(devDst), hostSrc, bytes))
    return callError("cuMemcpyHtoD (" + std::to_string(bytes) + " bytes)", r);
  return Status::ok();
}

Status copyToHost(void *hostDst, const void *devSrc, size_t bytes) {
  if (bytes == 0)
    return Status::ok();
  if (!hostDst || !devSrc)
    return Status::error("cuda::copyToHost: null pointer");
  ScopedContext ctx;
  if (!ctx.status())
    return ctx.status();
  if (CUresult r = drv().cuMemcpyDtoH(hostDst, devicePtr(devSrc), bytes))
    return callError("cuMemcpyDtoH (" + std::to_string(bytes) + " bytes)", r);
  return Status::ok();
}

Status synchronize() {
  ScopedContext ctx;
  if (!ctx.status())
    return ctx.status();
  if (CUresult r = drv().cuCtxSynchronize())
    return callError("cuCtxSynchronize", r);
  return Status::ok();
}

Status DeviceBuffer::create(size_t bytes, DeviceBuffer &out) {
  out.reset();
  void *p = nullptr;
  if (Status s = alloc(bytes, &p); !s)
    return s;
  out.ptr_ = p;
  out.size_ = bytes;
  return Status::ok();
}

void DeviceBuffer::reset() {
  // A failed free (a device in an error state) leaves nothing to recover.
  if (ptr_)
    (void)cuda::free(ptr_);
  ptr_ = nullptr;
  size_ = 0;
}

} // namespace cuda
} // namespace attnrt

using namespace attnrt::cuda;

extern "C" {

ATTNRT_EXPORT void *mgpuModuleLoad(void *data, size_t /*size*/) {
  return loadModule(data, 0, /*jit=*/false);
}

ATTNRT_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return loadModule(data, optLevel, /*jit=*/true);
}

ATTNRT_EXPORT void mgpuModuleUnload(void *module) {
  // Null: loading failed, which was recorded then.
  if (!module)
    return;
  ScopedContext ctx;
  if (enter(ctx))
    check(drv().cuModuleUnload(module), "cuModuleUnload");
}

ATTNRT_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  if (!module || !name) {
    record(attnrt::Status::error(
        std::string("mgpuModuleGetFunction: no module to look up kernel '") +
        (name ? name : "") +
        "' in (it failed to load, or its constructor did not run)"));
    return nullptr;
  }
  ScopedContext ctx;
  if (!enter(ctx))
    return nullptr;
  CUfunction fn = nullptr;
  if (!check(drv().cuModuleGetFunction(&fn, module, name),
             ("cuModuleGetFunction ('" + std::string(name) + "')").c_str()))
    return nullptr;
  return fn;
}

ATTNRT_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX,
                                    intptr_t gridY, intptr_t gridZ,
                                    intptr_t blockX, intptr_t blockY,
                                    intptr_t blockZ, int32_t smem, void *stream,
                                    void **params, void **extra,
                                    size_t /*paramsCount*/) {
  if (!function) {
    record(attnrt::Status::error(
        "mgpuLaunchKernel: no kernel (its GPU module is not loaded)"));
    return;
  }
  // The driver takes 32-bit sizes; a wrapped one would launch a wrong grid.
  for (intptr_t v : {gridX, gridY, gridZ, blockX, blockY, blockZ})
    if (v < 1 || static_cast<uintmax_t>(v) > UINT_MAX) {
      record(attnrt::Status::error(
          "mgpuLaunchKernel: bad launch size: grid (" + std::to_string(gridX) +
          ", " + std::to_string(gridY) + ", " + std::to_string(gridZ) +
          "), block (" + std::to_string(blockX) + ", " +
          std::to_string(blockY) + ", " + std::to_string(blockZ) + ")"));
      return;
    }
  if (smem < 0) {
    record(attnrt::Status::error("mgpuLaunchKernel: negative shared memory " +
                                 std::to_string(smem)));
    return;
  }
  ScopedContext ctx;
  if (!enter(ctx))
    return;
  const Driver &d = drv();
  // Above 48 KiB a kernel must opt in to its dynamic shared memory.
  if (smem > kDefaultSharedMemoryLimit) {
    int limit = ctx.device().maxSharedOptin;
    if (limit > 0 && smem > limit) {
      record(attnrt::Status::error(
          "mgpuLaunchKernel: the launch" + kernelName(function) + " needs " +
          std::to_string(smem) + " bytes of shared memory, the device allows " +
          std::to_string(limit) + " per block"));
      return;
    }
    if (!check(d.cuFuncSetAttribute(function,
                                    kFuncAttrMaxDynamicSharedSizeBytes, smem),
               ("cuFuncSetAttribute (" + std::to_string(smem) +
                " bytes of dynamic shared memory" + kernelName(function) + ")")
                   .c_str()))
      return;
  }
  CUresult r = d.cuLaunchKernel(
      function, static_cast<unsigned>(gridX), static_cast<unsigned>(gridY),
      static_cast<unsigned>(gridZ), static_cast<unsigned>(blockX),
      static_cast<unsigned>(blockY), static_cast<unsigned>(blockZ),
      static_cast<unsigned>(smem), stream, params, extra);
  if (r)
    record(callError("cuLaunchKernel" + kernelName(function) + " (grid " +
                         std::to_string(gridX) + "x" + std::to_string(gridY) +
                         "x" + std::to_string(gridZ) + ", block " +
                         std::to_string(blockX) + "x" + std::to_string(blockY) +
                         "x" + std::to_string(blockZ) + ", " +
                         std::to_string(smem) + " bytes shared)",
                     r));
}

ATTNRT_EXPORT void *mgpuStreamCreate(void) {
  ScopedContext ctx;
  if (!enter(ctx))
    return nullptr;
  CUstream stream = nullptr;
  if (!check(drv().cuStreamCreate(&stream, kStreamNonBlocking),
             "cuStreamCreate"))
    return nullptr;
  return stream;
}

ATTNRT_EXPORT void mgpuStreamDestroy(void *stream) {
  // Null is the default stream (or a failed creation): nothing to destroy.
  if (!stream)
    return;
  ScopedContext ctx;
  if (enter(ctx))
    check(drv().cuStreamDestroy(stream), "cuStreamDestroy");
}

ATTNRT_EXPORT void mgpuStreamSynchronize(void *stream) {
  ScopedContext ctx;
  if (enter(ctx))
    check(drv().cuStreamSynchronize(stream), "cuStreamSynchronize");
}

ATTNRT_EXPORT void mgpuStreamWaitEvent(void *stream, void *event) {
  if (!event)
    return;
  ScopedContext ctx;
  if (enter(ctx))
    check(drv().cuStreamWaitEvent(stream, event, 0), "cuStreamWaitEvent");
}

ATTNRT_EXPORT void *mgpuEventCreate(void) {
  ScopedContext ctx;
  if (!enter(ctx))
    return nullptr;
  CUevent event = nullptr;
  if (!check(drv().cuEventCreate(&event, kEventDisableTiming), "cuEventCreate"))
    return nullptr;
  return event;
}

ATTNRT_EXPORT void mgpuEventDestroy(void *event) {
  if (!event)
    return;
  ScopedContext ctx;
  if (enter(ctx))
    check(drv().cuEventDestroy(event), "cuEventDestroy");
}

ATTNRT_EXPORT void mgpuEventSynchronize(void *event) {
  if (!event)
    return;
  ScopedContext ctx;
  if (enter(ctx))
    check(drv().cuEventSynchronize(event), "cuEventSynchronize");
}

ATTNRT_EXPORT void mgpuEventRecord(void *event, void *stream) {
  if (!event)
    return;
  ScopedContext ctx;
  if (enter(ctx))
    check(drv().cuEventRecord(event, stream), "cuEventRecord");
}

ATTNRT_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, void * /*stream*/,
                                 bool isHostShared) {
  if (sizeBytes == 0)
    return nullptr;
  ScopedContext ctx;
  if (!enter(ctx))
    return nullptr;
  CUdeviceptr p = 0;
  CUresult r = isHostShared
                   ? drv().cuMemAllocManaged(&p, sizeBytes, kMemAttachGlobal)
                   : drv().cuMemAlloc(&p, sizeBytes);
  if (!check(r,
             (std::string(isHostShared ? "cuMemAllocManaged" : "cuMemAlloc") +
              " (" + std::to_string(sizeBytes) + " bytes)")
                 .c_str()))
    return nullptr;
  return reinterpret_cast<void *>(static_cast<uintptr_t>(p));
}

ATTNRT_EXPORT void mgpuMemFree(void *ptr, void * /*stream*/) {
  if (!ptr)
    return;
  ScopedContext ctx;
  if (enter(ctx))
    check(drv().cuMemFree(devicePtr(ptr)), "cuMemFree");
}

ATTNRT_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                              void *stream) {
  if (sizeBytes == 0)
    return;
  ScopedContext ctx;
  if (enter(ctx))
    check(
        drv().cuMemcpyAsync(devicePtr(dst), devicePtr(src), sizeBytes, stream),
        "cuMemcpyAsync");
}

ATTNRT_EXPORT void mgpuMemset32(void *dst, unsigned value, size_t count,
                                void *stream) {
  if (count == 0)
    return;
  ScopedContext ctx;
  if (enter(ctx))
    check(drv().cuMemsetD32Async(devicePtr(dst), value, count, stream),
          "cuMemsetD32Async");
}

ATTNRT_EXPORT void mgpuMemset16(void *dst, unsigned short value, size_t count,
                                void *stream) {
  if (count == 0)
    return;
  ScopedContext ctx;
  if (enter(ctx))
    check(drv().cuMemsetD16Async(devicePtr(dst), value, count, stream),
          "cuMemsetD16Async");
}

ATTNRT_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  // Checked when the next call needs the device, which can report it.
  attnrt::cuda::state().defaultDevice.store(device);
}

} // extern "C"

namespace attnrt {
namespace cuda {

const std::vector<std::pair<const char *, void *>> &mgpuSymbols() {
#define ATTNRT_SYMBOL(NAME)                                                    \
  { #NAME, reinterpret_cast < void *>(&NAME) }
  static const auto *symbols = new std::vector<std::pair<const char *, void *>>{
      ATTNRT_SYMBOL(mgpuModuleLoad),       ATTNRT_SYMBOL(mgpuModuleLoadJIT),
      ATTNRT_SYMBOL(mgpuModuleUnload),     ATTNRT_SYMBOL(mgpuModuleGetFunction),
      ATTNRT_SYMBOL(mgpuLaunchKernel),     ATTNRT_SYMBOL(mgpuStreamCreate),
      ATTNRT_SYMBOL(mgpuStreamDestroy),    ATTNRT_SYMBOL(mgpuStreamSynchronize),
      ATTNRT_SYMBOL(mgpuStreamWaitEvent),  ATTNRT_SYMBOL(mgpuEventCreate),
      ATTNRT_SYMBOL(mgpuEventDestroy),     ATTNRT_SYMBOL(mgpuEventSynchronize),
      ATTNRT_SYMBOL(mgpuEventRecord),      ATTNRT_SYMBOL(mgpuMemAlloc),
      ATTNRT_SYMBOL(mgpuMemFree),          ATTNRT_SYMBOL(mgpuMemcpy),
      ATTNRT_SYMBOL(mgpuMemset32),         ATTNRT_SYMBOL(mgpuMemset16),
      ATTNRT_SYMBOL(mgpuSetDefaultDevice),
  };
#undef ATTNRT_SYMBOL
  return *symbols;
}

} // namespace cuda
} // namespace attnrt
