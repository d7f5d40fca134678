//===- OnnxImporter.h - ONNX models to MLIR ----------------------*- C++ -*-===//
//
// Imports an ONNX model into a module whose @main takes the graph inputs and
// returns the graph outputs. Attention nodes become attn ops. The protobuf
// types stay inside the implementation: this interface speaks MLIR only.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_ONNXIMPORTER_H
#define ATTN_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::attn {

struct OnnxImportOptions {
  /// Raise recognised attention subgraphs to attn ops.
  bool raise = true;
};

/// Imports the serialized ModelProto in `bytes`. `fileName` names the model
/// in diagnostics (emitted on `context`); returns null on failure. The
/// weights' blobs hold copies of their bytes.
OwningOpRef<ModuleOp> importOnnxModel(llvm::StringRef bytes,
                                      llvm::StringRef fileName,
                                      MLIRContext *context,
                                      const OnnxImportOptions &options = {});

/// Imports the model in `file`, whose weights are not copied: their blobs
/// view the buffer's bytes in place (so stating the alignment the file
/// gives them) and keep it alive. For a file mapped in memory
/// (llvm::MemoryBuffer::getFile), the file must then not change while one
/// of those blobs lives (in the context's blob manager, until released).
OwningOpRef<ModuleOp> importOnnxModel(std::shared_ptr<llvm::MemoryBuffer> file,
                                      llvm::StringRef fileName,
                                      MLIRContext *context,
                                      const OnnxImportOptions &options = {});

/// The files the model at `modelPath` keeps weights in (its initializers'
/// and Constants' external data, resolved as the importer resolves them),
/// for tools that must not overwrite them; empty when it has none or does
/// not parse.
std::vector<std::string> onnxExternalDataFiles(llvm::StringRef modelPath);

/// Registers the dialects the importer creates.
void registerOnnxImportDialects(DialectRegistry &registry);

} // namespace mlir::attn

#endif // ATTN_ONNXIMPORTER_H
