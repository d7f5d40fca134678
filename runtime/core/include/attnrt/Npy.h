//===- Npy.h - NumPy .npy files ----------------------------------*- C++
//-*-===//
//
// Reads and writes NumPy's .npy format (versions 1-3, little-endian,
// C order): f32 ('<f4'), f16 ('<f2'), bool ('|b1'), int64 ('<i8') and int32
// ('<i4').
// bf16 has no NumPy dtype: bf16 tensors travel as f32 files.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNRT_NPY_H
#define ATTNRT_NPY_H

#include "attnrt/Status.h"
#include "attnrt/Tensor.h"

#include <string>

namespace attnrt {

/// Parses .npy bytes; `what` names the source in error messages.
Status parseNpy(const std::string &bytes, const std::string &what, Tensor &out);

/// Reads a .npy file.
Status readNpy(const std::string &path, Tensor &out);

/// Serialises a tensor (bf16 is written as f32).
std::string serializeNpy(const Tensor &t);

/// Writes a .npy file atomically: a temporary file in the same directory is
/// renamed over `path`, so a failed run never leaves a partial file.
Status writeNpyAtomic(const std::string &path, const Tensor &t);

} // namespace attnrt

#endif // ATTNRT_NPY_H
