//===- Status.h - error reporting without exceptions -------------*- C++ -*-===//
//
// The runtime is built without exceptions (like LLVM); every fallible call
// returns a Status whose message is meant for the user as it stands.
//
//===----------------------------------------------------------------------===//
#ifndef ATTNRT_STATUS_H
#define ATTNRT_STATUS_H

#include <string>
#include <utility>

namespace attnrt {

class Status {
public:
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.failed_ = true;
    s.message_ = std::move(message);
    return s;
  }
  bool isOk() const { return !failed_; }
  explicit operator bool() const { return !failed_; }
  const std::string &message() const { return message_; }

private:
  bool failed_ = false;
  std::string message_;
};

} // namespace attnrt

#endif // ATTNRT_STATUS_H
