//===- Npy.cpp - NumPy .npy files -------------------------------------------===//
//
// A strict parser: anything the runtime cannot represent exactly (big-endian
// data, Fortran order, other dtypes, truncated payloads, shapes whose element
// count overflows) is rejected with a message naming the file and the field.
//
//===----------------------------------------------------------------------===//

#include "attnrt/Npy.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace attnrt {
namespace {

/// Finds `'key':` in the header dict and returns the text after the colon.
bool findKey(const std::string &h, const std::string &key, size_t &pos) {
  for (const char *q : {"'", "\""}) {
    std::string pat = std::string(q) + key + q;
    size_t p = h.find(pat);
    if (p == std::string::npos)
      continue;
    p = h.find(':', p + pat.size());
    if (p == std::string::npos)
      return false;
    pos = p + 1;
    while (pos < h.size() && h[pos] == ' ')
      ++pos;
    return true;
  }
  return false;
}

Status fail(const std::string &what, const std::string &msg) {
  return Status::error(what + ": " + msg);
}

/// What the header of a .npy file says: its length and the array's type.
struct NpyHeader {
  size_t dataStart = 0; // offset of the payload from the file's start
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::string dims; // the shape tuple's text, for messages
  size_t payloadBytes = 0;
};

/// Reads the magic and version in the first bytes (`prefix`, at least the
/// first 12 of the file where it has them): where the header dict starts
/// and how long it is.
Status parsePreamble(const std::string &prefix, const std::string &what,
                     size_t &headerStart, size_t &headerLen) {
  static const char magic[] = "\x93NUMPY";
  if (prefix.size() < 10 || prefix.compare(0, 6, magic, 6) != 0)
    return fail(what, "not a .npy file (missing the \\x93NUMPY magic)");
  unsigned major = static_cast<unsigned char>(prefix[6]);
  if (major == 1) {
    headerLen = static_cast<unsigned char>(prefix[8]) |
                (static_cast<unsigned char>(prefix[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (prefix.size() < 12)
      return fail(what, "truncated .npy header");
    headerLen = 0;
    for (int i = 3; i >= 0; --i)
      headerLen = (headerLen << 8) | static_cast<unsigned char>(prefix[8 + i]);
    headerStart = 12;
  } else {
    return fail(what, "unsupported .npy version " + std::to_string(major));
  }
  return Status::ok();
}

/// Parses the header dict `h` (descr, fortran_order, shape) into `hdr`.
Status parseDict(const std::string &h, const std::string &what,
                 NpyHeader &hdr) {
  size_t p;
  if (!findKey(h, "descr", p) || p >= h.size() || (h[p] != '\'' && h[p] != '"'))
    return fail(what, "header has no 'descr'");
  size_t e = h.find(h[p], p + 1);
  if (e == std::string::npos)
    return fail(what, "malformed 'descr' in header");
  std::string descr = h.substr(p + 1, e - p - 1);
  if (descr == "<f4")
    hdr.dtype = DType::F32;
  else if (descr == "<f2")
    hdr.dtype = DType::F16;
  else if (descr == "|b1")
    hdr.dtype = DType::Bool;
  else if (descr == "<i8")
    hdr.dtype = DType::I64;
  else if (descr == "<i4")
    hdr.dtype = DType::I32;
  else
    return fail(what, "unsupported dtype '" + descr +
                          "' (expected <f4, <f2, |b1, <i8 or <i4, little-endian)");

  if (!findKey(h, "fortran_order", p))
    return fail(what, "header has no 'fortran_order'");
  if (h.compare(p, 4, "True") == 0)
    return fail(what, "Fortran-ordered arrays are not supported "
                      "(save with np.ascontiguousarray)");
  if (h.compare(p, 5, "False") != 0)
    return fail(what, "malformed 'fortran_order' in header");

  if (!findKey(h, "shape", p) || p >= h.size() || h[p] != '(')
    return fail(what, "header has no 'shape' tuple");
  e = h.find(')', p);
  if (e == std::string::npos)
    return fail(what, "malformed 'shape' in header");
  hdr.dims = h.substr(p + 1, e - p - 1);
  std::stringstream ss(hdr.dims);
  std::string tok;
  int64_t count = 1;
  while (std::getline(ss, tok, ',')) {
    size_t b = tok.find_first_not_of(" ");
    if (b == std::string::npos)
      continue;
    tok = tok.substr(b, tok.find_last_not_of(" ") - b + 1);
    if (tok.empty() || tok.find_first_not_of("0123456789") != std::string::npos ||
        tok.size() > 15)
      return fail(what, "bad dimension '" + tok + "' in shape");
    int64_t d = std::stoll(tok);
    hdr.shape.push_back(d);
    // (One size past the runtime's largest, even beside a 0.)
    if (d > kMaxElements)
      return fail(what, "shape (" + hdr.dims + "): dim " +
                            std::to_string(hdr.shape.size() - 1) +
                            " is above the largest size supported, 2^40");
    if (d != 0 && count > kMaxElements / d)
      return fail(what, "shape (" + hdr.dims + ") has too many elements");
    count *= d;
  }
  if (hdr.shape.size() > 16)
    return fail(what,
                "rank " + std::to_string(hdr.shape.size()) + " exceeds 16");
  hdr.payloadBytes = static_cast<size_t>(count) * dtypeSize(hdr.dtype);
  return Status::ok();
}

/// Parses the preamble and dict of a .npy file whose first bytes are in
/// `bytes` (all of the header, or the file is truncated there).
Status parseHeader(const std::string &bytes, const std::string &what,
                   NpyHeader &hdr) {
  size_t headerStart, headerLen;
  if (Status s = parsePreamble(bytes, what, headerStart, headerLen); !s)
    return s;
  if (bytes.size() < headerStart + headerLen)
    return fail(what, "truncated .npy header");
  hdr.dataStart = headerStart + headerLen;
  return parseDict(bytes.substr(headerStart, headerLen), what, hdr);
}

/// The payload after the header must be exactly the array's bytes.
Status checkPayloadSize(const NpyHeader &hdr, size_t available,
                        const std::string &what) {
  if (available < hdr.payloadBytes)
    return fail(what, "truncated data: shape (" + hdr.dims + ") needs " +
                          std::to_string(hdr.payloadBytes) +
                          " bytes, file has " + std::to_string(available));
  if (available > hdr.payloadBytes)
    return fail(what, "trailing bytes after the array data");
  return Status::ok();
}

Status checkBools(const Tensor &t, const std::string &what) {
  if (t.dtype() != DType::Bool)
    return Status::ok();
  const uint8_t *b = t.as<uint8_t>();
  for (size_t i = 0, n = t.byteSize(); i < n; ++i)
    if (b[i] > 1)
      return fail(what, "bool array holds a byte other than 0 or 1");
  return Status::ok();
}

/// The header of `t`'s .npy file (version 1, padded so that the data
/// starts at a multiple of 64 bytes); bf16 is described as f32.
std::string npyHeader(const Tensor &t) {
  const char *descr = "<f4";
  switch (t.dtype()) {
  case DType::F16:
    descr = "<f2";
    break;
  case DType::Bool:
    descr = "|b1";
    break;
  case DType::I64:
    descr = "<i8";
    break;
  case DType::I32:
    descr = "<i4";
    break;
  default:
    break;
  }
  std::string shape = "(";
  for (size_t i = 0; i < t.shape().size(); ++i)
    shape += std::to_string(t.shape()[i]) + ", ";
  if (t.shape().size() > 1)
    shape.resize(shape.size() - 2);
  else if (t.shape().size() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  return out;
}

} // namespace

Status parseNpy(const std::string &bytes, const std::string &what,
                Tensor &out) {
  NpyHeader hdr;
  if (Status s = parseHeader(bytes, what, hdr); !s)
    return s;
  if (Status s = checkPayloadSize(hdr, bytes.size() - hdr.dataStart, what); !s)
    return s;
  Tensor t(hdr.dtype, hdr.shape);
  std::memcpy(t.data(), bytes.data() + hdr.dataStart, hdr.payloadBytes);
  if (Status s = checkBools(t, what); !s)
    return s;
  out = std::move(t);
  return Status::ok();
}

Status readNpy(const std::string &path, Tensor &out) {
  // The header first, then the payload straight into the tensor: the
  // file's bytes are never held a second time (a whole-file buffer would
  // double the memory of a large mask or activation while it is read).
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return Status::error(path + ": is a directory, not a .npy file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(path +
                         ": cannot open for reading: " + std::strerror(errno));
  in.seekg(0, std::ios::end);
  std::streamoff fileSize = in.tellg();
  in.seekg(0, std::ios::beg);
  if (!in || fileSize < 0) {
    // A pipe (`--input <(...)`, /dev/stdin) has no size to seek to: read it
    // whole, as it comes.
    in.clear();
    std::stringstream buf;
    buf << in.rdbuf();
    return parseNpy(buf.str(), path, out);
  }
  std::string head(static_cast<size_t>(std::min<std::streamoff>(fileSize, 12)),
                   '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  size_t headerStart, headerLen;
  if (Status s = parsePreamble(head, path, headerStart, headerLen); !s)
    return s;
  size_t headerEnd = headerStart + headerLen;
  if (static_cast<size_t>(fileSize) < headerEnd)
    return fail(path, "truncated .npy header");
  if (headerEnd > head.size()) {
    size_t have = head.size();
    head.resize(headerEnd);
    in.read(head.data() + have, static_cast<std::streamsize>(headerEnd - have));
  }
  if (!in)
    return Status::error(path + ": read failed");
  NpyHeader hdr;
  hdr.dataStart = headerEnd;
  if (Status s = parseDict(head.substr(headerStart, headerLen), path, hdr); !s)
    return s;
  if (Status s = checkPayloadSize(
          hdr, static_cast<size_t>(fileSize) - headerEnd, path);
      !s)
    return s;
  in.seekg(static_cast<std::streamoff>(headerEnd), std::ios::beg);
  Tensor t(hdr.dtype, hdr.shape);
  in.read(static_cast<char *>(t.data()),
          static_cast<std::streamsize>(hdr.payloadBytes));
  if (!in || static_cast<size_t>(in.gcount()) != hdr.payloadBytes)
    return Status::error(path + ": read failed");
  if (Status s = checkBools(t, path); !s)
    return s;
  out = std::move(t);
  return Status::ok();
}

std::string serializeNpy(const Tensor &t0) {
  Tensor t = t0.dtype() == DType::BF16 ? convertFloat(t0, DType::F32) : t0;
  std::string out = npyHeader(t);
  out.append(static_cast<const char *>(t.data()), t.byteSize());
  return out;
}

namespace {
std::string errnoText() { return std::strerror(errno); }

/// Where writing `path` ends up: the target of a symbolic link (a chain of
/// them, relative ones against their own directory), else `path`; and
/// whether the chain passes through a descriptor, /proc/PID/fd/N or
/// /dev/fd/N (/dev/stdout is a link
/// to /proc/self/fd/1, whose target, "pipe:[N]" or a file opened for
/// appending, is no path to write a file beside and rename over).
struct LinkTarget {
  std::string path;
  bool throughProc = false;
};
LinkTarget resolveLinks(std::string path) {
  LinkTarget r;
  // A process's descriptors: /proc/<pid>/fd/N and /dev/fd/N (other /proc
  // paths, /proc/self/cwd/..., lead to ordinary files).
  auto isDescriptor = [](const std::string &p) {
    if (p.rfind("/dev/fd/", 0) == 0)
      return true;
    if (p.rfind("/proc/", 0) != 0)
      return false;
    size_t slash = p.find('/', 6);
    return slash != std::string::npos && p.compare(slash, 4, "/fd/") == 0;
  };
  for (int hop = 0; hop < 40; ++hop) {
    if (isDescriptor(path))
      r.throughProc = true;
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode))
      break;
    std::vector<char> buf(PATH_MAX + 1);
    ssize_t n = ::readlink(path.c_str(), buf.data(), PATH_MAX);
    if (n <= 0)
      break;
    std::string target(buf.data(), static_cast<size_t>(n));
    size_t slash = path.rfind('/');
    if (target[0] != '/' && slash != std::string::npos)
      target = path.substr(0, slash + 1) + target;
    path = target;
  }
  r.path = path;
  return r;
}

std::string followLinks(const std::string &path) {
  return resolveLinks(path).path;
}

std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// The destination with its directory made absolute and free of links, to
/// compare destinations; "" where the directory does not resolve.
std::string canonicalDestination(const std::string &path) {
  std::string dest = followLinks(path);
  char *dir = ::realpath(directoryOf(dest).c_str(), nullptr);
  if (!dir)
    return "";
  std::string out = std::string(dir) + "/" + dest.substr(dest.rfind('/') + 1);
  std::free(dir);
  return out;
}

/// Whether `path` is written in place rather than through a temporary
/// file and a rename: what it leads to is not a regular file (a FIFO, a
/// device, a socket), or it goes through a descriptor (/proc/PID/fd/N,
/// /dev/fd/N).
bool writeInPlace(const std::string &path) {
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) &&
      !S_ISDIR(st.st_mode))
    return true;
  return resolveLinks(path).throughProc;
}

/// Creates a temporary file beside `dest` under a new, short name
/// (".attn-<pid>-<n>.tmp": a long destination name plus a suffix could
/// pass NAME_MAX) that no other call of this process or another one uses
/// (exclusive creation); "" if none can be created.
std::string createTemporaryBeside(const std::string &dest) {
  static std::atomic<unsigned long> counter{0};
  std::string dir = directoryOf(dest);
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string name = dir + "/.attn-" + std::to_string(::getpid()) + "-" +
                       std::to_string(counter.fetch_add(1)) + ".tmp";
    int fd =
        ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return name;
    }
    if (errno != EEXIST)
      return "";
  }
  return "";
}

/// Writes the header and the tensor's own bytes (no serialized copy of
/// them; bf16 is converted to f32 first) to `file`: a new file, or one
/// written in place (`append`: after what is there, as a stream or a file
/// redirected as stdout with >> expects it).
Status writeTo(const std::string &file, const std::string &what,
               const Tensor &t, bool append = false) {
  std::ofstream out(file, std::ios::binary |
                              (append ? std::ios::app : std::ios::trunc));
  if (!out)
    return Status::error(what + ": cannot open for writing: " + errnoText());
  Tensor f32;
  const Tensor &src =
      t.dtype() == DType::BF16 ? (f32 = convertFloat(t, DType::F32)) : t;
  std::string header = npyHeader(src);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char *>(src.data()),
            static_cast<std::streamsize>(src.byteSize()));
  out.flush();
  if (!out)
    return Status::error(what + ": write failed: " + errnoText());
  return Status::ok();
}
} // namespace

Status checkOutputPaths(const std::vector<std::string> &paths) {
  std::vector<std::string> seen;
  for (size_t i = 0; i < paths.size(); ++i) {
    const std::string &path = paths[i];
    if (path.empty())
      return Status::error("an output path is empty");
    std::string dest = followLinks(path);
    struct stat st;
    if (::stat(dest.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      return Status::error(path + ": is a directory, not a file to write");
    std::string dir = directoryOf(dest);
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
      return Status::error(path + ": cannot write there: directory " + dir +
                           (::stat(dir.c_str(), &st) != 0
                                ? ": " + errnoText()
                                : std::string(" is not a directory")));
    // An existing file that cannot be replaced (another user's, in a
    // sticky directory; a read-only one), or a directory that takes no
    // new file: refused now, before any output is written.
    if (!writeInPlace(path)) {
      if (::access(dir.c_str(), W_OK) != 0)
        return Status::error(path + ": cannot write there: directory " + dir +
                             ": " + errnoText());
      struct stat dirStat;
      bool sticky = ::stat(dir.c_str(), &dirStat) == 0 &&
                    (dirStat.st_mode & S_ISVTX) != 0;
      bool exists = ::stat(dest.c_str(), &st) == 0;
      bool othersInSticky =
          exists && sticky && st.st_uid != ::geteuid() && ::geteuid() != 0;
      if (exists && (::access(dest.c_str(), W_OK) != 0 || othersInSticky))
        return Status::error(path + ": cannot replace the existing file (" +
                             "not writable by this user, or another " +
                             "user's in a sticky directory)");
    }
    std::string canonical = canonicalDestination(path);
    for (size_t j = 0; j < seen.size(); ++j)
      if (!canonical.empty() && seen[j] == canonical)
        return Status::error(path + ": output " + std::to_string(i) +
                             " names the same file as output " +
                             std::to_string(j) + " (" + paths[j] + ")");
    seen.push_back(canonical);
  }
  return Status::ok();
}

Status writeNpyFiles(const std::vector<std::string> &paths,
                     const std::vector<const Tensor *> &tensors) {
  if (paths.size() != tensors.size())
    return Status::error("writeNpyFiles: " + std::to_string(paths.size()) +
                         " paths for " + std::to_string(tensors.size()) +
                         " tensors");
  if (Status s = checkOutputPaths(paths); !s)
    return s;
  std::vector<std::string> temps(paths.size());
  auto removeTemps = [&] {
    for (const std::string &t : temps)
      if (!t.empty())
        std::remove(t.c_str());
  };
  for (size_t i = 0; i < paths.size(); ++i) {
    if (writeInPlace(paths[i]))
      continue;
    temps[i] = createTemporaryBeside(followLinks(paths[i]));
    if (temps[i].empty()) {
      std::string why = errnoText();
      removeTemps();
      return Status::error(paths[i] + ": cannot create a temporary file " +
                           "beside it: " + why);
    }
    if (Status s = writeTo(temps[i], paths[i], *tensors[i]); !s) {
      removeTemps();
      return s;
    }
  }
  for (size_t i = 0; i < paths.size(); ++i)
    if (temps[i].empty())
      if (Status s = writeTo(paths[i], paths[i], *tensors[i],
                             /*append=*/true);
          !s) {
        removeTemps();
        return s;
      }
  for (size_t i = 0; i < paths.size(); ++i) {
    if (temps[i].empty())
      continue;
    if (std::rename(temps[i].c_str(), followLinks(paths[i]).c_str()) != 0) {
      std::string why = errnoText();
      removeTemps();
      return Status::error(paths[i] + ": cannot rename the temporary file " +
                           "into place: " + why);
    }
    temps[i].clear();
  }
  return Status::ok();
}

Status checkOutputsAreNotInputs(const std::vector<std::string> &outputs,
                                const std::vector<std::string> &inputs) {
  for (const std::string &out : outputs) {
    struct stat o;
    if (out.empty() || ::stat(out.c_str(), &o) != 0 || writeInPlace(out))
      continue;
    for (const std::string &in : inputs) {
      struct stat i;
      if (!in.empty() && ::stat(in.c_str(), &i) == 0 && o.st_dev == i.st_dev &&
          o.st_ino == i.st_ino)
        return Status::error(out + ": names the same file as the input " + in +
                             ", which writing it would destroy");
    }
  }
  return Status::ok();
}

std::string stagingDirectoryFor(const std::string &path) {
  if (writeInPlace(path)) {
    const char *tmp = std::getenv("TMPDIR");
    return tmp && *tmp ? tmp : "/tmp";
  }
  return directoryOf(followLinks(path));
}

std::string createStagingFile(const std::string &path) {
  return createTemporaryBeside(stagingDirectoryFor(path) + "/file");
}

Status placeFile(const std::string &temporary, const std::string &path) {
  auto fail = [&](const std::string &message) {
    std::string why = errnoText();
    std::remove(temporary.c_str());
    return Status::error(path + ": " + message + ": " + why);
  };
  if (writeInPlace(path)) {
    std::ifstream in(temporary, std::ios::binary);
    std::ofstream out(path, std::ios::binary | std::ios::app);
    if (!in || !out)
      return fail("cannot open for writing");
    out << in.rdbuf();
    out.flush();
    if (!out)
      return fail("write failed");
    std::remove(temporary.c_str());
    return Status::ok();
  }
  // A file replaced keeps its permission bits (a private one stays so).
  std::string dest = followLinks(path);
  struct stat old;
  if (::stat(dest.c_str(), &old) == 0 && S_ISREG(old.st_mode))
    (void)::chmod(temporary.c_str(), old.st_mode & 07777);
  if (std::rename(temporary.c_str(), dest.c_str()) != 0)
    return fail("cannot move into place");
  return Status::ok();
}

Status writeNpyAtomic(const std::string &path, const Tensor &t) {
  return writeNpyFiles({path}, {&t});
}

} // namespace attnrt
