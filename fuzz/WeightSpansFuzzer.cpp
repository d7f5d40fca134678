//===- WeightSpansFuzzer.cpp - the wire-format walker against protobuf
//-----===//
//
// Differential: for any bytes from which stripWeightBytes cuts weights out,
// protobuf must parse the stripped bytes exactly when it parses the
// original, and the two parses must be the same message once every cut-out
// raw_data is put back into its initializer. (A threshold of 1 byte, so
// that the fuzzer's small inputs have weights.) Any difference traps.
//
//===----------------------------------------------------------------------===//

#include "WeightSpans.h"

#include "onnx/onnx_pb.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 20)
    return 0;
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  auto stripped = mlir::attn::onnx_import::stripWeightBytes(bytes, 1);
  if (!stripped)
    return 0;
  onnx::ModelProto original, cut;
  bool parsedOriginal = original.ParseFromArray(data, static_cast<int>(size));
  bool parsedCut = cut.ParseFromString(stripped->bytes);
  if (parsedOriginal != parsedCut)
    __builtin_trap();
  if (!parsedOriginal)
    return 0;
  auto &initializers = *cut.mutable_graph()->mutable_initializer();
  if (stripped->rawData.size() != static_cast<size_t>(initializers.size()))
    __builtin_trap();
  for (int i = 0; i < initializers.size(); ++i) {
    const std::optional<llvm::StringRef> &raw = stripped->rawData[i];
    if (!raw)
      continue;
    if (initializers[i].has_raw_data())
      __builtin_trap(); // cut, yet protobuf still sees one
    initializers[i].set_raw_data(raw->str());
  }
  if (original.SerializeAsString() != cut.SerializeAsString())
    __builtin_trap();
  return 0;
}
