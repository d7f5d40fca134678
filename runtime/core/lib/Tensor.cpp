//===- Tensor.cpp - host tensors of the runtime ----------------------------===//

#include "attnrt/Tensor.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace attnrt {

size_t dtypeSize(DType t) {
  switch (t) {
  case DType::F32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::Bool:
    return 1;
  case DType::I64:
    return 8;
  case DType::I32:
    return 4;
  }
  return 0;
}

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::Bool:
    return "i1";
  case DType::I64:
    return "i64";
  case DType::I32:
    return "i32";
  }
  return "?";
}

bool parseDType(const std::string &s, DType &out) {
  static const std::pair<const char *, DType> names[] = {
      {"f32", DType::F32}, {"f16", DType::F16}, {"bf16", DType::BF16},
      {"i1", DType::Bool}, {"i64", DType::I64}, {"i32", DType::I32}};
  for (auto &[n, t] : names)
    if (s == n) {
      out = t;
      return true;
    }
  return false;
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  // 64-byte alignment: one cache line, one zmm register.
  size_t bytes = byteSize();
  size_t rounded = ((bytes + 63) / 64) * 64;
  if (rounded == 0)
    rounded = 64;
  void *p = std::aligned_alloc(64, rounded);
  if (p)
    std::memset(p, 0, rounded);
  data_ = std::shared_ptr<uint8_t>(static_cast<uint8_t *>(p),
                                   [](uint8_t *q) { std::free(q); });
}

Tensor::Tensor(DType dtype, std::vector<int64_t> shape,
               std::shared_ptr<uint8_t> data)
    : dtype_(dtype), shape_(std::move(shape)), data_(std::move(data)) {}

int64_t Tensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape_)
    n *= d;
  return n;
}

std::string Tensor::describe() const {
  std::string s = std::string(dtypeName(dtype_)) + "[";
  for (size_t i = 0; i < shape_.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape_[i]);
  return s + "]";
}

uint16_t floatToBF16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f))
    return static_cast<uint16_t>((u >> 16) | 0x40);
  uint32_t rounding = 0x7FFF + ((u >> 16) & 1);
  return static_cast<uint16_t>((u + rounding) >> 16);
}

float bf16ToFloat(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

uint16_t floatToF16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7FFFFFFF;
  if (absx >= 0x7F800000) // inf or NaN
    return static_cast<uint16_t>(sign | 0x7C00 | (absx > 0x7F800000 ? 0x200 : 0));
  if (absx >= 0x477FF000) // rounds to >= 65520: overflow to inf
    return static_cast<uint16_t>(sign | 0x7C00);
  if (absx < 0x38800000) { // subnormal half (or zero)
    float af;
    std::memcpy(&af, &absx, 4);
    // Scale so that the half subnormal unit (2^-24) becomes 1, then round.
    float scaled = af * 16777216.0f;
    uint32_t m = static_cast<uint32_t>(std::nearbyint(scaled));
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t exp = ((absx >> 23) - 127 + 15) << 10;
  uint32_t mant = absx & 0x7FFFFF;
  uint32_t half = exp | (mant >> 13);
  uint32_t rest = mant & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return static_cast<uint16_t>(sign | half);
}

float f16ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F, mant = h & 0x3FF;
  float f;
  if (exp == 0) {
    f = std::ldexp(static_cast<float>(mant), -24);
    uint32_t u;
    std::memcpy(&u, &f, 4);
    u |= sign;
    std::memcpy(&f, &u, 4);
    return f;
  }
  uint32_t u;
  if (exp == 31)
    u = sign | 0x7F800000 | (mant << 13);
  else
    u = sign | ((exp - 15 + 127) << 23) | (mant << 13);
  std::memcpy(&f, &u, 4);
  return f;
}

Tensor convertFloat(const Tensor &t, DType to) {
  if (t.dtype() == to)
    return t;
  Tensor out(to, t.shape());
  int64_t n = t.numElements();
  for (int64_t i = 0; i < n; ++i) {
    float v = 0;
    switch (t.dtype()) {
    case DType::F32:
      v = t.as<float>()[i];
      break;
    case DType::F16:
      v = f16ToFloat(t.as<uint16_t>()[i]);
      break;
    case DType::BF16:
      v = bf16ToFloat(t.as<uint16_t>()[i]);
      break;
    default:
      break;
    }
    switch (to) {
    case DType::F32:
      out.as<float>()[i] = v;
      break;
    case DType::F16:
      out.as<uint16_t>()[i] = floatToF16(v);
      break;
    case DType::BF16:
      out.as<uint16_t>()[i] = floatToBF16(v);
      break;
    default:
      break;
    }
  }
  return out;
}

} // namespace attnrt
