//===- Tensor.h - host tensors of the runtime --------------------*- C++ -*-===//
//
// A dense, row-major, 64-byte aligned host tensor: what the runtime hands to
// compiled functions (as memref descriptors) and gets back from them.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNRT_TENSOR_H
#define ATTNRT_TENSOR_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attnrt {

enum class DType { F32, F16, BF16, Bool, I64, I32 };

/// Bytes per element.
size_t dtypeSize(DType t);
/// The MLIR spelling: f32, f16, bf16, i1, i64.
const char *dtypeName(DType t);
/// Parses an MLIR element type spelling; false if unknown.
bool parseDType(const std::string &s, DType &out);

/// The largest element count of a tensor, and so the largest size of one
/// of its dims even beside a 0: products of sizes in compiled code stay
/// far from int64's range.
constexpr int64_t kMaxElements = int64_t(1) << 40;

class Tensor {
public:
  Tensor() = default;
  /// A zero-initialised tensor.
  Tensor(DType dtype, std::vector<int64_t> shape);
  /// A tensor over memory it takes ownership of: `data` (dense, row-major,
  /// 64-byte aligned) is released by `data`'s deleter with the last copy.
  Tensor(DType dtype, std::vector<int64_t> shape,
         std::shared_ptr<uint8_t> data);

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numElements() const;
  size_t byteSize() const { return numElements() * dtypeSize(dtype_); }
  void *data() { return data_.get(); }
  const void *data() const { return data_.get(); }
  template <typename T> T *as() { return static_cast<T *>(data()); }
  template <typename T> const T *as() const {
    return static_cast<const T *>(data());
  }
  /// "f32[1, 1024, 768]".
  std::string describe() const;

private:
  DType dtype_ = DType::F32;
  std::vector<int64_t> shape_;
  std::shared_ptr<uint8_t> data_;
};

/// bf16 <-> f32 (round to nearest even; NaN stays NaN).
uint16_t floatToBF16(float f);
float bf16ToFloat(uint16_t h);
/// f16 <-> f32 (IEEE binary16, round to nearest even).
uint16_t floatToF16(float f);
float f16ToFloat(uint16_t h);

/// Converts between float dtypes (f32, f16, bf16).
Tensor convertFloat(const Tensor &t, DType to);

} // namespace attnrt

#endif // ATTNRT_TENSOR_H
