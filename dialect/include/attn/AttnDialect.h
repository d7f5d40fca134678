//===- AttnDialect.h - the attn dialect ------------------------*- C++ -*-===//
//
// Declares the attn dialect and its enum attributes (generated from ODS).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_ATTNDIALECT_H
#define ATTN_ATTNDIALECT_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"

#include "attn/AttnDialect.h.inc"
#include "attn/AttnEnums.h.inc"

#endif // ATTN_ATTNDIALECT_H
