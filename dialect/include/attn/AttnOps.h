//===- AttnOps.h - operations of the attn dialect --------------*- C++ -*-===//
//
// Declares the attn operations (generated from AttnOps.td).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_ATTNOPS_H
#define ATTN_ATTNOPS_H

#include "attn/AttnDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "attn/AttnOps.h.inc"

#endif // ATTN_ATTNOPS_H
