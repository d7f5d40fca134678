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
#include <vector>

namespace attnrt {

/// Parses .npy bytes; `what` names the source in error messages.
Status parseNpy(const std::string &bytes, const std::string &what, Tensor &out);

/// Reads a .npy file.
Status readNpy(const std::string &path, Tensor &out);

/// Serialises a tensor (bf16 is written as f32).
std::string serializeNpy(const Tensor &t);

/// Checks that files can be written at `paths` (before any is): no path is
/// empty, a directory, in a missing or unwritable directory, or an existing
/// file this user may not replace, and no two name the same file (also
/// through symbolic links).
Status checkOutputPaths(const std::vector<std::string> &paths);

/// Writes `tensors[i]` to `paths[i]`, all or none: each goes to a temporary
/// file beside its destination (beside a symbolic link's target; a name no
/// other call uses), and the temporary files are renamed into place once
/// all are written, so a failed write leaves no file of the set. (The
/// renames themselves were checked possible beforehand; one that still
/// fails, the file system changing meanwhile, leaves the earlier ones
/// done.) A destination that is not a regular file (a FIFO, a device,
/// /dev/stdout or anything else under /proc or /dev/fd) is written in
/// place, after the others were written and before they are renamed.
Status writeNpyFiles(const std::vector<std::string> &paths,
                     const std::vector<const Tensor *> &tensors);

/// Checks that no output in `outputs` names the same file as an input in
/// `inputs` (existing files compared by device and inode, through links):
/// writing it would destroy what is read.
Status checkOutputsAreNotInputs(const std::vector<std::string> &outputs,
                                const std::vector<std::string> &inputs);

/// Where a file for `path` is best built before placeFile moves it there:
/// beside the file `path` leads to (through symbolic links), or, where that
/// is written in place (a FIFO, a device), in the temporary directory.
std::string stagingDirectoryFor(const std::string &path);

/// A new empty file in stagingDirectoryFor(`path`) under a name no other
/// call uses, to write `path`'s contents into before placeFile; "" (with
/// errno) if none can be created.
std::string createStagingFile(const std::string &path);

/// Moves the finished file `temporary` to `path` as writeNpyFiles places
/// its outputs: a symbolic link's target is replaced (the link stays), a
/// FIFO or device is written in place (the bytes copied), anything else is
/// renamed over. `temporary` is gone afterwards, on success or not.
Status placeFile(const std::string &temporary, const std::string &path);

/// writeNpyFiles of one tensor.
Status writeNpyAtomic(const std::string &path, const Tensor &t);

} // namespace attnrt

#endif // ATTNRT_NPY_H
