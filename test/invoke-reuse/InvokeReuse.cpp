//===- InvokeReuse.cpp - invoke with reused and aliased result vectors ----===//
//
// A test tool. CompiledModule::invoke frees the previous call's results
// held in its `outputs` vector before the call allocates new ones, so that a
// loop of calls reuses one set of result buffers. That must not free what
// the caller still uses: results copied out of the vector (shared buffers)
// keep their values, and a vector passed as both inputs and outputs (a
// result fed back as the next input) is read before it is replaced.
// Usage: attnrt-invoke-reuse MODULE.so, a module whose @residual maps
// f32[64, 16] to f32[64, 16] and whose @passthrough returns its f32[64, 16]
// argument first (test/runtime/Inputs/multi-result.mlir). Each result is
// compared bit for bit with the same call on fresh vectors (or the input).
// Prints one line per check and exits 1 if any failed.
//
//===----------------------------------------------------------------------===//

#include "CheckList.h"
#include "attnrt/Module.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

attn_test::CheckList checks;

bool sameBits(const attnrt::Tensor &a, const attnrt::Tensor &b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.data(), b.data(), a.byteSize()) == 0;
}

/// @residual on fresh vectors: the reference for the reusing calls.
attnrt::Tensor fresh(attnrt::CompiledModule &m, const attnrt::Tensor &x) {
  std::vector<attnrt::Tensor> out;
  attnrt::Status s = m.invoke("residual", {x}, out);
  if (!s || out.size() != 1) {
    checks.expect(false, "a call on fresh vectors", s ? "" : s.message());
    return attnrt::Tensor(attnrt::DType::F32, {64, 16});
  }
  return out[0];
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: attnrt-invoke-reuse MODULE.so\n");
    return 2;
  }
  std::unique_ptr<attnrt::SharedObjectModule> m;
  if (attnrt::Status s = attnrt::SharedObjectModule::load(argv[1], m); !s) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  attnrt::Tensor x(attnrt::DType::F32, {64, 16});
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.as<float>()[i] = float((i * 37) % 101) / 50.0f - 1.0f;
  attnrt::Tensor once = fresh(*m, x);
  attnrt::Tensor twice = fresh(*m, once);

  // One vector over several calls; the first result held elsewhere.
  std::vector<attnrt::Tensor> out;
  attnrt::Status s = m->invoke("residual", {x}, out);
  checks.expect(s && out.size() == 1 && sameBits(out[0], once),
                "first call into a vector", s ? "" : s.message());
  attnrt::Tensor held = out[0];
  for (int i = 0; i < 3 && s; ++i)
    s = m->invoke("residual", {once}, out);
  checks.expect(s && out.size() == 1 && sameBits(out[0], twice),
                "three more calls into the same vector", s ? "" : s.message());
  checks.expect(sameBits(held, once),
                "a result held by the caller keeps its values");

  // The same vector as inputs and outputs: x -> once -> twice.
  std::vector<attnrt::Tensor> state{x};
  s = m->invoke("residual", state, state);
  checks.expect(s && state.size() == 1 && sameBits(state[0], once),
                "inputs and outputs one vector, first call",
                s ? "" : s.message());
  s = m->invoke("residual", state, state);
  checks.expect(s && state.size() == 1 && sameBits(state[0], twice),
                "fed back as the next input", s ? "" : s.message());

  // The same vector, the only owner of its input, with a result that is
  // that input (@passthrough returns its argument, which the runtime
  // copies): the copy is made before the input is released.
  attnrt::Tensor only(attnrt::DType::F32, {64, 16});
  std::memcpy(only.data(), x.data(), x.byteSize());
  std::vector<attnrt::Tensor> alone;
  alone.push_back(std::move(only));
  s = m->invoke("passthrough", alone, alone);
  checks.expect(s && alone.size() == 3 && sameBits(alone[0], x),
                "an input returned as it is, inputs and outputs one vector",
                s ? "" : s.message());
  return checks.finish();
}
