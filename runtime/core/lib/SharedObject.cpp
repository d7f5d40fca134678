//===- SharedObject.cpp - loading compiled modules without the compiler ----===//

#include "attnrt/Module.h"

#include <dlfcn.h>

namespace attnrt {

Status SharedObjectModule::load(const std::string &path,
                                std::unique_ptr<SharedObjectModule> &out) {
  // dlopen searches the library path for names without a slash; a user
  // naming a file means that file.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
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
  out.reset(new SharedObjectModule());
  out->handle_ = h;
  return Status::ok();
}

SharedObjectModule::~SharedObjectModule() {
  if (handle_)
    ::dlclose(handle_);
}

void *SharedObjectModule::lookupSymbol(const std::string &name) {
  return ::dlsym(handle_, name.c_str());
}

} // namespace attnrt
