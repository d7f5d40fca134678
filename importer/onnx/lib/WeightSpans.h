//===- WeightSpans.h - weights located in a serialized model ----*- C++ -*-===//
//
// Protobuf copies every bytes field it parses into a string of its own: for
// a model's weights (GPT-2 small: 620 MiB) a copy of the whole file, into
// freshly faulted memory. This reads the protobuf wire format directly, finds
// the raw_data of the top-level graph's large float initializers, and gives
// back the model without them (what protobuf then parses: the graph's
// structure and its small tensors) and where each one's bytes are in the
// original, so that they can be used in place.
//
// It speaks bytes only; no protobuf type appears here.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_ONNX_WEIGHTSPANS_H
#define ATTN_ONNX_WEIGHTSPANS_H

#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace mlir::attn::onnx_import {

struct StrippedModel {
  /// The ModelProto with the raw_data field of each located initializer
  /// left out (lengths of the enclosing messages re-encoded).
  std::string bytes;
  /// Per initializer of the graph, in the order of the file (the order of
  /// GraphProto.initializer once parsed): its raw_data as a slice of the
  /// original bytes, or nullopt where it was left in `bytes`.
  std::vector<std::optional<llvm::StringRef>> rawData;
};

/// Cuts out the raw_data of the graph's FLOAT, FLOAT16, BFLOAT16 and DOUBLE
/// initializers of at least `minBytes` bytes whose data_location is unset
/// or DEFAULT.
/// Returns nullopt when there is none, or when the bytes are not the wire
/// format this expects (truncated, groups, a second graph field, ...): the
/// caller then parses the original, and protobuf reports what is wrong.
std::optional<StrippedModel> stripWeightBytes(llvm::StringRef model,
                                              size_t minBytes);

} // namespace mlir::attn::onnx_import

#endif // ATTN_ONNX_WEIGHTSPANS_H
