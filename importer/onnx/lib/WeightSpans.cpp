//===- WeightSpans.cpp - weights located in a serialized model ------------===//
//
// The protobuf wire format: a message is a sequence of fields, each a varint
// tag (field number << 3 | wire type) and a value: a varint (type 0), 8
// bytes (1), a varint length and that many bytes (2: strings, bytes,
// embedded messages, packed arrays) or 4 bytes (5). Types 3 and 4 (groups)
// are not used by onnx.proto.
//
//===----------------------------------------------------------------------===//

#include "WeightSpans.h"

#include <climits>
#include <cstdint>

namespace mlir::attn::onnx_import {
namespace {

// Field numbers of onnx.proto.
constexpr uint32_t kModelGraph = 7;          // ModelProto.graph
constexpr uint32_t kGraphInitializer = 5;    // GraphProto.initializer
constexpr uint32_t kTensorDataType = 2;      // TensorProto.data_type
constexpr uint32_t kTensorRawData = 9;       // TensorProto.raw_data
constexpr uint32_t kTensorDataLocation = 14; // TensorProto.data_location
// TensorProto.DataType values.
constexpr int32_t kFloat = 1, kFloat16 = 10, kDouble = 11, kBFloat16 = 16;

constexpr uint8_t kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

struct Field {
  uint32_t number = 0;
  uint8_t wireType = 0;
  size_t begin = 0; // the tag's first byte
  size_t value = 0; // a length-delimited field's bytes, after the length
  size_t end = 0;   // one past the field
  uint64_t varint =
      0; // a varint field's value; a length-delimited one's length
};

/// Reads the fields of one message, `bytes[begin, end)`, in order.
class FieldReader {
public:
  FieldReader(llvm::StringRef bytes, size_t begin, size_t end)
      : bytes(bytes), pos(begin), end(end) {}

  /// The next field; false at the end of the message, or (then `failed`)
  /// where the bytes are not a well-formed field within it.
  bool next(Field &f) {
    if (pos >= end)
      return false;
    f.begin = pos;
    // Protobuf reads a tag or a length in at most 5 bytes (32 bits; a
    // length up to INT32_MAX); stricter here than there is safe (protobuf
    // then parses the original), laxer is not (the cut-out fields are
    // re-encoded, which would hide what it rejects).
    uint64_t tag;
    if (!readVarint(tag, 5) || tag > UINT32_MAX || tag >> 3 == 0)
      return fail();
    f.number = static_cast<uint32_t>(tag >> 3);
    f.wireType = static_cast<uint8_t>(tag & 7);
    switch (f.wireType) {
    case kVarint:
      if (!readVarint(f.varint, 10))
        return fail();
      break;
    case kFixed64:
      if (end - pos < 8)
        return fail();
      pos += 8;
      break;
    case kFixed32:
      if (end - pos < 4)
        return fail();
      pos += 4;
      break;
    case kLengthDelimited:
      if (!readVarint(f.varint, 5) || f.varint > INT32_MAX ||
          f.varint > end - pos)
        return fail();
      f.value = pos;
      pos += f.varint;
      break;
    default:
      return fail();
    }
    f.end = pos;
    return true;
  }

  bool failed = false;

private:
  bool readVarint(uint64_t &v, int maxBytes) {
    v = 0;
    for (int shift = 0; shift < 7 * maxBytes && pos < end; shift += 7) {
      uint8_t byte = static_cast<uint8_t>(bytes[pos++]);
      v |= uint64_t(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return true;
    }
    return false;
  }
  bool fail() {
    failed = true;
    return false;
  }

  llvm::StringRef bytes;
  size_t pos, end;
};

void appendVarint(std::string &out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

/// Appends a length-delimited field `number` holding `content`.
void appendMessage(std::string &out, uint32_t number,
                   const std::string &content) {
  appendVarint(out, uint64_t(number) << 3 | kLengthDelimited);
  appendVarint(out, content.size());
  out += content;
}

/// A raw_data field to cut: the field (tag to end) and its bytes.
struct Cut {
  size_t fieldBegin, fieldEnd, value, size;
};

/// First locates (no copies; nothing at all is copied for a model without
/// weights to cut), then writes.
struct Stripper {
  llvm::StringRef model;
  size_t minBytes;
  std::vector<std::optional<Cut>> cuts; // per initializer
  Field graphField;
  bool any = false;

  /// The raw_data to cut from the TensorProto `model[begin, end)`, if it is
  /// a weight's; false where its fields do not read.
  bool locateInTensor(size_t begin, size_t end) {
    // (32-bit: protobuf keeps a varint's low 32 bits.)
    int32_t dataType = 0;
    // Any data_location but DEFAULT (0) leaves the tensor to protobuf: an
    // enum value it does not know would not override an EXTERNAL before it.
    bool located = false;
    int rawFields = 0;
    Field raw, f;
    FieldReader fields(model, begin, end);
    while (fields.next(f)) {
      // A field of another wire type than its declaration's is kept by
      // protobuf as an unknown field: it does not set the value.
      if (f.number == kTensorDataType && f.wireType == kVarint)
        dataType = static_cast<int32_t>(f.varint);
      else if (f.number == kTensorDataLocation && f.wireType == kVarint)
        located |= static_cast<int32_t>(f.varint) != 0;
      else if (f.number == kTensorRawData) {
        ++rawFields;
        raw = f;
      }
    }
    if (fields.failed)
      return false;
    bool isFloat = dataType == kFloat || dataType == kFloat16 ||
                   dataType == kDouble || dataType == kBFloat16;
    // (Two raw_data fields: protobuf keeps the last; left to it.)
    if (!isFloat || located || rawFields != 1 ||
        raw.wireType != kLengthDelimited || raw.varint < minBytes) {
      cuts.push_back(std::nullopt);
      return true;
    }
    cuts.push_back(Cut{raw.begin, raw.end, raw.value, size_t(raw.varint)});
    any = true;
    return true;
  }

  bool locate() {
    int graphs = 0;
    Field f;
    FieldReader fields(model, 0, model.size());
    while (fields.next(f)) {
      if (f.number != kModelGraph || f.wireType != kLengthDelimited)
        continue;
      // Protobuf merges a repeated message field; left to it.
      if (++graphs > 1)
        return false;
      graphField = f;
      Field g;
      FieldReader graphFields(model, f.value, f.end);
      while (graphFields.next(g))
        if (g.number == kGraphInitializer && g.wireType == kLengthDelimited &&
            !locateInTensor(g.value, g.end))
          return false;
      if (graphFields.failed)
        return false;
    }
    return !fields.failed && any;
  }

  /// The model with the cuts made: the fields outside the graph and the
  /// initializers without a cut as they are, the graph's and the cut
  /// initializers' lengths re-encoded.
  StrippedModel write() {
    StrippedModel result;
    std::string graph;
    size_t initializer = 0;
    Field g;
    FieldReader graphFields(model, graphField.value, graphField.end);
    while (graphFields.next(g)) {
      std::optional<Cut> cut;
      if (g.number == kGraphInitializer && g.wireType == kLengthDelimited)
        cut = cuts[initializer++];
      if (!cut) {
        graph.append(model.data() + g.begin, g.end - g.begin);
        continue;
      }
      std::string tensor(model.data() + g.value, cut->fieldBegin - g.value);
      tensor.append(model.data() + cut->fieldEnd, g.end - cut->fieldEnd);
      appendMessage(graph, kGraphInitializer, tensor);
    }
    for (const std::optional<Cut> &cut : cuts)
      result.rawData.push_back(cut ? std::optional<llvm::StringRef>(
                                         model.substr(cut->value, cut->size))
                                   : std::nullopt);
    result.bytes.reserve(model.size() - (graphField.end - graphField.begin) +
                         graph.size() + 16);
    result.bytes.append(model.data(), graphField.begin);
    appendMessage(result.bytes, kModelGraph, graph);
    result.bytes.append(model.data() + graphField.end,
                        model.size() - graphField.end);
    return result;
  }
};

} // namespace

std::optional<StrippedModel> stripWeightBytes(llvm::StringRef model,
                                              size_t minBytes) {
  Stripper s{model, minBytes, {}, {}};
  if (!s.locate())
    return std::nullopt;
  return s.write();
}

} // namespace mlir::attn::onnx_import
