//===- TwoLoads.cpp - one shared object loaded twice, called at once ------===//
//
// usage: attnrt-two-loads PATH_A PATH_B CALLS
// Loads one saved module (gather_computed_ids of test/onnx: its Gathers
// check their indices while running) through two paths, which dlopen maps
// to one handle and so to one set of index-check slots. One thread calls
// through the first load with ids in range, another through the second
// with a last id of 12 (outside [-10, 10)), CALLS times each at once.
// Prints how many good calls failed and how many bad ones succeeded:
// both must be 0 (each call sees only its own indices).
//
//===----------------------------------------------------------------------===//

#include "attnrt/attnrt.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <thread>

namespace {

attnrt_tensor *ids(int64_t last) {
  int64_t shape[2] = {2, 3};
  attnrt_tensor *t = attnrt_tensor_create(ATTNRT_I64, 2, shape);
  auto *p = static_cast<int64_t *>(attnrt_tensor_data(t));
  for (int i = 0; i < 6; ++i)
    p[i] = i % 3;
  p[5] = last;
  return t;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: attnrt-two-loads PATH_A PATH_B CALLS\n");
    return 2;
  }
  attnrt_module *a = nullptr, *b = nullptr;
  if (attnrt_module_load(argv[1], &a) || attnrt_module_load(argv[2], &b)) {
    std::fprintf(stderr, "error: %s\n", attnrt_last_error());
    return 1;
  }
  int calls = std::atoi(argv[3]);
  int64_t xShape[3] = {2, 3, 4};
  attnrt_tensor *x = attnrt_tensor_create(ATTNRT_F32, 3, xShape);
  attnrt_tensor *good[2] = {ids(1), x}, *bad[2] = {ids(12), x};
  std::atomic<int> goodFailed{0}, badPassed{0};
  auto run = [&](attnrt_module *m, attnrt_tensor **in, bool inRange) {
    for (int i = 0; i < calls; ++i) {
      attnrt_tensor *out[5] = {};
      int rc = attnrt_invoke(m, "main", in, 2, out, 5);
      if (inRange && rc)
        ++goodFailed;
      if (!inRange && !rc)
        ++badPassed;
      if (!rc)
        for (attnrt_tensor *t : out)
          attnrt_tensor_free(t);
    }
  };
  std::thread first(run, a, good, true), second(run, b, bad, false);
  first.join();
  second.join();
  std::printf("good calls failed: %d, bad calls succeeded: %d\n",
              goodFailed.load(), badPassed.load());
  for (attnrt_tensor *t : {good[0], bad[0], x})
    attnrt_tensor_free(t);
  attnrt_module_free(a);
  attnrt_module_free(b);
  return 0;
}
