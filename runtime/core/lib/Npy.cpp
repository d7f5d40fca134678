//===- Npy.cpp - NumPy .npy files -------------------------------------------===//
//
// A strict parser: anything the runtime cannot represent exactly (big-endian
// data, Fortran order, other dtypes, truncated payloads, shapes whose element
// count overflows) is rejected with a message naming the file and the field.
//
//===----------------------------------------------------------------------===//

#include "attnrt/Npy.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
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

} // namespace

Status parseNpy(const std::string &bytes, const std::string &what,
                Tensor &out) {
  static const char magic[] = "\x93NUMPY";
  if (bytes.size() < 10 || bytes.compare(0, 6, magic, 6) != 0)
    return fail(what, "not a .npy file (missing the \\x93NUMPY magic)");
  unsigned major = static_cast<unsigned char>(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<unsigned char>(bytes[8]) |
                (static_cast<unsigned char>(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return fail(what, "truncated .npy header");
    headerLen = 0;
    for (int i = 3; i >= 0; --i)
      headerLen = (headerLen << 8) | static_cast<unsigned char>(bytes[8 + i]);
    headerStart = 12;
  } else {
    return fail(what, "unsupported .npy version " + std::to_string(major));
  }
  if (bytes.size() < headerStart + headerLen)
    return fail(what, "truncated .npy header");
  std::string h = bytes.substr(headerStart, headerLen);

  size_t p;
  if (!findKey(h, "descr", p) || p >= h.size() || (h[p] != '\'' && h[p] != '"'))
    return fail(what, "header has no 'descr'");
  size_t e = h.find(h[p], p + 1);
  if (e == std::string::npos)
    return fail(what, "malformed 'descr' in header");
  std::string descr = h.substr(p + 1, e - p - 1);
  DType dtype;
  if (descr == "<f4")
    dtype = DType::F32;
  else if (descr == "<f2")
    dtype = DType::F16;
  else if (descr == "|b1")
    dtype = DType::Bool;
  else if (descr == "<i8")
    dtype = DType::I64;
  else if (descr == "<i4")
    dtype = DType::I32;
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
  std::vector<int64_t> shape;
  std::string dims = h.substr(p + 1, e - p - 1);
  std::stringstream ss(dims);
  std::string tok;
  const int64_t maxElems = int64_t(1) << 40;
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
    shape.push_back(d);
    if (d != 0 && count > maxElems / d)
      return fail(what, "shape (" + dims + ") has too many elements");
    count *= d;
  }
  if (shape.size() > 16)
    return fail(what, "rank " + std::to_string(shape.size()) + " exceeds 16");
  size_t dataStart = headerStart + headerLen;
  size_t need = static_cast<size_t>(count) * dtypeSize(dtype);
  if (bytes.size() - dataStart < need)
    return fail(what, "truncated data: shape (" + dims + ") needs " +
                          std::to_string(need) + " bytes, file has " +
                          std::to_string(bytes.size() - dataStart));
  if (bytes.size() - dataStart > need)
    return fail(what, "trailing bytes after the array data");
  Tensor t(dtype, shape);
  std::memcpy(t.data(), bytes.data() + dataStart, need);
  if (dtype == DType::Bool)
    for (int64_t i = 0; i < count; ++i)
      if (t.as<uint8_t>()[i] > 1)
        return fail(what, "bool array holds a byte other than 0 or 1");
  out = std::move(t);
  return Status::ok();
}

Status readNpy(const std::string &path, Tensor &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error(path + ": cannot open for reading");
  std::stringstream buf;
  buf << in.rdbuf();
  return parseNpy(buf.str(), path, out);
}

std::string serializeNpy(const Tensor &t0) {
  Tensor t = t0.dtype() == DType::BF16 ? convertFloat(t0, DType::F32) : t0;
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
  // Pad so that the data starts at a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  out.append(static_cast<const char *>(t.data()), t.byteSize());
  return out;
}

Status writeNpyAtomic(const std::string &path, const Tensor &t) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      return Status::error(path + ": cannot open for writing");
    std::string bytes = serializeNpy(t);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      return Status::error(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return Status::error(path + ": cannot rename the temporary file into place");
  }
  return Status::ok();
}

} // namespace attnrt
