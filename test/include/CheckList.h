//===- CheckList.h - one printed line per check, for test tools -*- C++ -*-===//
//
// The runtime's test tools print "ok: <what>" or "FAILED: <what>: <detail>"
// per check and end with PASSED or FAILED, which their lit tests match line
// by line with FileCheck.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_CHECKLIST_H
#define ATTN_TEST_CHECKLIST_H

#include <cstdio>
#include <string>

namespace attn_test {

class CheckList {
public:
  void expect(bool ok, const char *what, const std::string &detail = "") {
    std::printf("%s: %s%s%s\n", ok ? "ok" : "FAILED", what,
                detail.empty() ? "" : ": ", detail.c_str());
    if (!ok)
      ++failures;
  }
  /// Prints the verdict; the process's exit status.
  int finish() const {
    std::printf("%s\n", failures ? "FAILED" : "PASSED");
    return failures ? 1 : 0;
  }

private:
  int failures = 0;
};

} // namespace attn_test

#endif // ATTN_TEST_CHECKLIST_H
