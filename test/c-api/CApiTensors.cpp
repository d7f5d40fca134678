//===- CApiTensors.cpp - the C API's tensors on bad shapes ------------------===//
//
// A test tool. attnrt_tensor_create must return NULL, with a message in
// attnrt_last_error, where a tensor could not hold its shape: a negative
// dim, a byte count that overflows int64, or an allocation that fails; it
// used to return a tensor with a NULL or undersized buffer, which an invoke
// then wrote through. The accessors take NULL. Prints one line per check.
//
//===----------------------------------------------------------------------===//

#include "CheckList.h"
#include "attnrt/attnrt.h"

#include <cstdint>
#include <string>

int main() {
  attn_test::CheckList checks;
  auto refused = [&](const char *what, int64_t rank, const int64_t *shape,
                     const char *message) {
    attnrt_tensor *t = attnrt_tensor_create(ATTNRT_F32, rank, shape);
    std::string error = attnrt_last_error();
    checks.expect(!t && error.find(message) != std::string::npos, what,
                  t ? "got a tensor" : error);
    attnrt_tensor_free(t);
  };
  const int64_t negative[2] = {4, -1};
  refused("a negative dim", 2, negative, "a negative dim");
  const int64_t overflows[3] = {2, int64_t(1) << 61, 8}; // 2^65 floats
  refused("a byte count beyond int64", 3, overflows, "the size overflows");
  const int64_t huge[1] = {int64_t(1) << 59}; // 2^61 bytes: no such memory
  refused("an allocation that fails", 1, huge, "cannot allocate");
  refused("a null shape", 2, nullptr, "null shape");

  const int64_t ok[2] = {3, 5};
  attnrt_tensor *t = attnrt_tensor_create(ATTNRT_BF16, 2, ok);
  checks.expect(t && attnrt_tensor_data(t) && attnrt_tensor_rank(t) == 2 &&
                    attnrt_tensor_dim(t, 1) == 5 &&
                    attnrt_tensor_dtype(t) == ATTNRT_BF16,
                "a valid shape");
  attnrt_tensor_free(t);
  checks.expect(!attnrt_tensor_data(nullptr) &&
                    attnrt_tensor_rank(nullptr) == -1 &&
                    attnrt_tensor_dim(nullptr, 0) == -1 &&
                    attnrt_tensor_dtype(nullptr) == ATTNRT_F32,
                "the accessors of a null tensor");
  return checks.finish();
}
