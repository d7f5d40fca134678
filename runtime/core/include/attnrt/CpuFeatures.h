//===- CpuFeatures.h - instruction sets a compiled module needs -*- C++ -*-===//
//
// Code compiled for one CPU dies with SIGILL on a CPU without its
// instruction sets. A CPU module therefore lists the x86 extensions it was
// compiled for in `__attn_cpu_features` (LLVM's names, comma-separated:
// "avx,avx2,avx512f,..."), and the runtime refuses to run it on a host that
// lacks any of them, naming them. The host is read with CPUID (and XGETBV:
// the OS must also save the wider registers), so this needs no LLVM.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNRT_CPUFEATURES_H
#define ATTNRT_CPUFEATURES_H

#include "attnrt/Status.h"

#include <string>
#include <vector>

namespace attnrt {

constexpr const char *kCpuFeaturesSymbol = "__attn_cpu_features";

/// The extensions the runtime can check, in LLVM's spelling: the vector,
/// bit-manipulation and crypto extensions code generation may use. A module
/// lists only these.
const std::vector<std::string> &checkableCpuFeatures();

/// Whether this host (CPU and OS) supports `feature` (a name of
/// checkableCpuFeatures(); false for any other).
bool hostHasCpuFeature(const std::string &feature);

/// OK if this host has every feature of the comma-separated `features`;
/// otherwise an error naming the missing ones (or the ones this runtime
/// cannot check), prefixed with `what`.
Status checkHostCpuFeatures(const std::string &features,
                            const std::string &what);

} // namespace attnrt

#endif // ATTNRT_CPUFEATURES_H
