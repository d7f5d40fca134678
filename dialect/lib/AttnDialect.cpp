//===- AttnDialect.cpp - the attn dialect ----------------------------------===//
//
// Registers the attn operations and enum attributes.
//
//===----------------------------------------------------------------------===//

#include "attn/AttnDialect.h"
#include "attn/AttnOps.h"

using namespace mlir;
using namespace mlir::attn;

#include "attn/AttnDialect.cpp.inc"
#include "attn/AttnEnums.cpp.inc"

void AttnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "attn/AttnOps.cpp.inc"
      >();
}
