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
// dlopen maps a file's segments as its program headers describe them, and
// a truncated file (an interrupted copy) still has the headers: the pages
// past the end of the file are mapped, and touching them raises SIGBUS
// inside dlopen. load() therefore checks first that the ELF file holds
// every byte its headers name.
//
//===----------------------------------------------------------------------===//

#include "attnrt/Allocation.h"
#include "attnrt/Cuda.h"
#include "attnrt/Module.h"

#include <dlfcn.h>
#include <elf.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

namespace attnrt {

namespace {

/// Whether the ELF64 file `file` (named `path` in messages) holds its program
/// headers, every loadable segment's file bytes and its section headers. Files
/// that are not little-endian ELF64 pass: dlopen refuses them with its own
/// message.
Status checkElfExtent(const std::string &file, const std::string &path) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    return Status::error(path +
                         ": cannot load compiled module: cannot open it for "
                         "reading: " +
                         std::strerror(errno));
  in.seekg(0, std::ios::end);
  std::streamoff end = in.tellg();
  if (end < 0)
    return Status::ok(); // not a regular file: leave it to dlopen
  uint64_t size = static_cast<uint64_t>(end);
  Elf64_Ehdr eh;
  if (size < sizeof(eh))
    return Status::ok();
  in.seekg(0);
  in.read(reinterpret_cast<char *>(&eh), sizeof(eh));
  if (!in || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return Status::ok();
  auto truncated = [&](const std::string &what, uint64_t needed) {
    return Status::error(
        path + ": cannot load compiled module: the file is " + "truncated (" +
        what + " end at byte " + std::to_string(needed) + ", the file has " +
        std::to_string(size) + " bytes; an interrupted copy? save it again)");
  };
  // Offsets and counts come from the file: compare without overflowing.
  auto extent = [](uint64_t offset, uint64_t count, uint64_t each) {
    if (each && count > UINT64_MAX / each)
      return UINT64_MAX;
    uint64_t bytes = count * each;
    return offset > UINT64_MAX - bytes ? UINT64_MAX : offset + bytes;
  };
  if (eh.e_phnum && eh.e_phentsize != sizeof(Elf64_Phdr))
    return Status::error(path +
                         ": cannot load compiled module: unexpected "
                         "ELF program header size " +
                         std::to_string(eh.e_phentsize));
  // The program headers, then the segments dlopen maps, then the section
  // headers (at the end of the file, where a cut shows first).
  if (eh.e_phnum) {
    uint64_t phEnd = extent(eh.e_phoff, eh.e_phnum, sizeof(Elf64_Phdr));
    if (phEnd > size)
      return truncated("its program headers", phEnd);
  }
  std::vector<Elf64_Phdr> phs(eh.e_phnum);
  if (!phs.empty()) {
    in.seekg(static_cast<std::streamoff>(eh.e_phoff));
    in.read(reinterpret_cast<char *>(phs.data()),
            static_cast<std::streamsize>(phs.size() * sizeof(Elf64_Phdr)));
    if (!in)
      return Status::error(path + ": read failed");
  }
  for (const Elf64_Phdr &ph : phs) {
    if (ph.p_type != PT_LOAD)
      continue;
    uint64_t segEnd = extent(ph.p_offset, ph.p_filesz, 1);
    if (segEnd > size)
      return truncated("its loadable segments", segEnd);
  }
  if (eh.e_shnum) {
    uint64_t shEnd = extent(eh.e_shoff, eh.e_shnum, eh.e_shentsize);
    if (shEnd > size)
      return truncated("its section headers", shEnd);
  }
  return Status::ok();
}

} // namespace

Status SharedObjectModule::load(const std::string &path,
                                std::unique_ptr<SharedObjectModule> &out) {
  // dlopen searches the library path for names without a slash; a user
  // naming a file means that file.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // Errors recorded before are not this module's.
  (void)cuda::takeError();
  if (Status s = checkElfExtent(file, path); !s)
    return s;
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
  installCheckedAllocations(*m);
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
