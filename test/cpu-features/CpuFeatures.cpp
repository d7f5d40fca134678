//===- CpuFeatures.cpp - the runtime's host check against LLVM's ----------===//
//
// For every extension the runtime can check, prints the runtime's answer
// (CPUID and XCR0, no LLVM) and LLVM's (sys::getHostCPUFeatures, what the
// JIT compiles for), and fails on any disagreement: a module compiled for
// this host must always load here, and the check must see what LLVM sees.
//
//===----------------------------------------------------------------------===//

#include "attnrt/CpuFeatures.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/TargetParser/Host.h"

#include <cstdio>

int main() {
  llvm::StringMap<bool> llvmFeatures = llvm::sys::getHostCPUFeatures();
  int disagreements = 0, present = 0;
  for (const std::string &name : attnrt::checkableCpuFeatures()) {
    bool ours = attnrt::hostHasCpuFeature(name);
    bool llvms = llvmFeatures.lookup(name);
    present += ours;
    if (ours != llvms) {
      ++disagreements;
      std::printf("MISMATCH %s: runtime %d, LLVM %d\n", name.c_str(), ours,
                  llvms);
    }
  }
  std::printf("%zu features checked, %d on this host, %d disagreements\n",
              attnrt::checkableCpuFeatures().size(), present, disagreements);
  // Names outside the table are never claimed.
  if (attnrt::hostHasCpuFeature("not-a-feature")) {
    std::printf("MISMATCH: an unknown name is reported present\n");
    return 1;
  }
  return disagreements ? 1 : 0;
}
