//===- SignatureCheck.cpp - signature text and output sizing ---------------===//
//
// usage: attnrt-signature-check SIGNATURE [SHAPE...]
//   SHAPE: one per input, "2x4x1x64".
// Parses SIGNATURE as the runtime parses the text a compiled module embeds,
// prints it formatted again (the round trip must give the same text) and
// described, then checks the input shapes against it and prints the output
// shapes the runtime would allocate for a GPU entry point. Errors go to
// stdout with "error: " and exit 1.
//
//===----------------------------------------------------------------------===//

#include "attnrt/Module.h"

#include <cstdio>
#include <string>
#include <vector>

using namespace attnrt;

static int fail(const std::string &message) {
  std::printf("error: %s\n", message.c_str());
  return 1;
}

int main(int argc, char **argv) {
  if (argc < 2)
    return fail("usage: attnrt-signature-check SIGNATURE [SHAPE...]");
  FunctionSignature sig;
  if (Status s = parseSignature(argv[1], sig); !s)
    return fail(s.message());
  std::printf("format: %s\n", formatSignature(sig).c_str());
  std::printf("describe: %s\n", sig.describe().c_str());
  if (argc == 2)
    return 0;
  std::vector<Tensor> inputs;
  for (int i = 2; i < argc; ++i) {
    std::vector<int64_t> shape;
    std::string text = argv[i];
    size_t p = 0;
    while (p <= text.size()) {
      size_t x = text.find('x', p);
      std::string dim = text.substr(p, x == std::string::npos ? x : x - p);
      if (dim.empty() || dim.size() > 9 ||
          dim.find_first_not_of("0123456789") != std::string::npos)
        return fail("bad shape '" + text + "'");
      shape.push_back(std::stoll(dim));
      if (x == std::string::npos)
        break;
      p = x + 1;
    }
    size_t index = inputs.size();
    DType dtype = index < sig.inputs.size() ? sig.inputs[index].dtype
                                            : DType::F32;
    inputs.emplace_back(dtype, shape);
  }
  if (Status s = checkInputs("main", sig, inputs); !s)
    return fail(s.message());
  std::vector<std::vector<int64_t>> shapes;
  if (Status s = outputShapes("main", sig, inputs, shapes); !s)
    return fail(s.message());
  for (size_t o = 0; o < shapes.size(); ++o) {
    std::string s;
    for (int64_t d : shapes[o])
      s += (s.empty() ? "" : "x") + std::to_string(d);
    std::printf("output %zu: %s\n", o, s.c_str());
  }
  return 0;
}
