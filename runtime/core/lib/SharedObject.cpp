//===- SharedObject.cpp - loading compiled modules without the compiler ---===//
//
// A GPU module loads its kernels in `__attn_init` (the compiler turns the
// GPU binary's static constructor into it), called here once the CUDA
// driver is known to work, through the mgpu* functions this runtime exports
// (Cuda.cpp); what fails there (an image the GPU cannot run) is only known
// from the CUDA backend's error slot, so load() reads it before handing the
// module out. `__attn_fini` unloads them before dlclose. A module is refused
// on a host without the instruction sets its CPU code was compiled for.
//
//===----------------------------------------------------------------------===//

#include "attnrt/Cuda.h"
#include "attnrt/Module.h"

#include <dlfcn.h>

namespace attnrt {

Status SharedObjectModule::load(const std::string &path,
                                std::unique_ptr<SharedObjectModule> &out) {
  // dlopen searches the library path for names without a slash; a user
  // naming a file means that file.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // Errors recorded before are not this module's.
  (void)cuda::takeError();
  void *h = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char *e = ::dlerror();
    return Status::error(path + ": cannot load compiled module: " +
                         (e ? e : "unknown dlopen error"));
  }
  if (!::dlsym(h, kEntryListSymbol)) {
    ::dlclose(h);
    return Status::error(path + ": not a module compiled by attention-run "
                                "(no __attn_entry_points symbol)");
  }
  std::unique_ptr<SharedObjectModule> m(new SharedObjectModule());
  m->handle_ = h;
  // Before any of its code runs (a cuda module's __attn_init): it would die
  // with SIGILL at the first instruction this CPU lacks.
  if (Status s = m->checkHostCpu(); !s)
    return Status::error(path + ": " + s.message() +
                         " (compile it for this host, or for a CPU this host "
                         "implements: attention-run --target-cpu, e.g. "
                         "x86-64-v3)");
  std::string target = m->target();
  if (target == "cuda") {
    if (Status s = cuda::available(); !s) {
      (void)cuda::takeError();
      return Status::error(path + ": needs a CUDA GPU: " + s.message());
    }
    if (Status s = m->runInit(); !s)
      return Status::error(path + ": " + s.message());
  } else if (target != "cpu") {
    return Status::error(path + ": compiled for target '" + target +
                         "', which this runtime cannot run (cpu, cuda)");
  }
  out = std::move(m);
  return Status::ok();
}

SharedObjectModule::~SharedObjectModule() {
  runFini();
  if (handle_)
    ::dlclose(handle_);
}

void *SharedObjectModule::lookupSymbol(const std::string &name) {
  return ::dlsym(handle_, name.c_str());
}

} // namespace attnrt
