//===- Passes.h - passes of the attention compiler -------------*- C++ -*-===//
//
// Declares every pass (generated from Passes.td) and their registration.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_PASSES_H
#define ATTN_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;
namespace attn {

#define GEN_PASS_DECL
#include "attn/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "attn/Passes.h.inc"

/// The attribute in which attn-externalize-constant-globals leaves the bytes
/// of a global it made a declaration, for the code generator to define.
inline constexpr llvm::StringLiteral kExternalDataAttrName =
    "attn.external_data";

} // namespace attn
} // namespace mlir

#endif // ATTN_PASSES_H
