//===- attention-run.cpp - compile and run attention modules
//---------------===//
//
// A thin client of the runtime: compiles an MLIR file (or loads a saved
// shared object), binds .npy inputs to an entry point, runs it, optionally
// times it, and writes .npy outputs atomically. Every failure is a message
// on stderr and a non-zero exit; no output file is created then.
//
//===----------------------------------------------------------------------===//

#include "attnrt/Jit.h"
#include "attnrt/Module.h"
#include "attnrt/Npy.h"
#include "attnrt/Threads.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

using namespace llvm;
using namespace attnrt;

static cl::OptionCategory category("attention-run options");
static cl::opt<std::string>
    inputFile(cl::Positional, cl::Required,
              cl::desc("<module.mlir | model.onnx | module.so>"),
              cl::cat(category));
static cl::opt<std::string> entry("entry", cl::desc("Entry point to run"),
                                  cl::init("main"), cl::cat(category));
static cl::list<std::string>
    inputs("input",
           cl::desc("[argN=|NAME=]PATH.npy, one per function argument "
                    "(NAME: an ONNX graph input)"),
           cl::cat(category));
static cl::list<std::string>
    outputs("output", cl::desc("PATH.npy, one per result"), cl::cat(category));
static cl::opt<unsigned> repeat("repeat",
                                cl::desc("Timed runs after one warm-up"),
                                cl::init(0), cl::cat(category));
// --threads is parsed by hand: libLLVM already registers a "threads" option.
static int threads = 0;
static cl::opt<std::string> target("target", cl::desc("cpu"), cl::init("cpu"),
                                   cl::cat(category));
static cl::opt<std::string>
    pipelineOptions("pipeline-options",
                    cl::desc("Options of attn-lower-to-cpu-pipeline"),
                    cl::init(""), cl::cat(category));
static cl::opt<std::string>
    emitSharedObject("emit-shared-object",
                     cl::desc("Also save the compiled module as a shared "
                              "object loadable without the compiler"),
                     cl::init(""), cl::cat(category));
static cl::opt<bool> printIR("print-ir-after-all",
                             cl::desc("Print the IR after every pass"),
                             cl::init(false), cl::cat(category));
static cl::opt<bool> timing("mlir-timing",
                            cl::desc("Print the time of every pass"),
                            cl::init(false), cl::cat(category));
static cl::opt<bool> onnxRaise(
    "onnx-raise",
    cl::desc("ONNX input: raise attention subgraphs to attn ops (default on; "
             "=false imports op by op)"),
    cl::init(true), cl::cat(category));
static cl::opt<bool>
    printSignature("print-signature",
                   cl::desc("Print the entry point's signature"),
                   cl::init(false), cl::cat(category));

static int fail(const std::string &msg) {
  std::fprintf(stderr, "attention-run: error: %s\n", msg.c_str());
  return 1;
}

static bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  std::vector<char *> rest;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    std::string value;
    if (a == "--threads" || a == "-threads") {
      if (i + 1 >= argc)
        return fail("--threads needs a value");
      value = argv[++i];
    } else if (a.rfind("--threads=", 0) == 0) {
      value = a.substr(10);
    } else {
      rest.push_back(argv[i]);
      continue;
    }
    if (value.empty() || value.size() > 4 ||
        value.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(value) < 1)
      return fail("--threads expects a positive integer, got '" + value + "'");
    threads = std::stoi(value);
  }
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      static_cast<int>(rest.size()), rest.data(),
      "attention-run: compile and run attention modules\n"
      "  --threads N   worker threads (default: all cores)\n");

  if (target != "cpu")
    return fail("unknown target '" + target + "' (supported: cpu)");
  if (repeat > 100000)
    return fail("--repeat must be at most 100000");

  // 1. The module.
  std::unique_ptr<CompiledModule> module;
  if (endsWith(inputFile, ".so")) {
    if (!emitSharedObject.empty())
      return fail(
          "--emit-shared-object needs an MLIR input, got a shared object");
    std::unique_ptr<SharedObjectModule> so;
    if (Status s = SharedObjectModule::load(inputFile, so); !s)
      return fail(s.message());
    module = std::move(so);
  } else {
    CompileOptions options;
    options.pipelineOptions = pipelineOptions;
    options.printIRAfterAll = printIR;
    options.timing = timing;
    options.onnxRaise = onnxRaise;
    std::unique_ptr<JitModule> jit;
    if (Status s = compileFile(inputFile, options, jit, emitSharedObject); !s)
      return fail(s.message());
    std::fprintf(stderr, "compiled %s: pipeline %.3f s, codegen %.3f s\n",
                 inputFile.c_str(), jit->pipelineSeconds, jit->codegenSeconds);
    module = std::move(jit);
  }

  FunctionSignature sig;
  if (Status s = module->signature(entry, sig); !s)
    return fail(s.message());
  if (printSignature)
    std::printf("@%s %s\n", entry.c_str(), sig.describe().c_str());

  // 2. Inputs: positional, or argN=PATH / N=PATH.
  std::vector<Tensor> args(sig.inputs.size());
  std::vector<bool> bound(sig.inputs.size(), false);
  size_t next = 0;
  for (const std::string &spec : inputs) {
    std::string path = spec;
    size_t index = next;
    // "argN=PATH" / "N=PATH" / "NAME=PATH" (an ONNX input name) bind by
    // index or name; anything else is a path (which may contain '=').
    size_t eq = spec.find('=');
    std::string name = eq == std::string::npos ? "" : spec.substr(0, eq);
    std::string digits = name.rfind("arg", 0) == 0 ? name.substr(3) : name;
    bool named = false;
    if (!digits.empty() && digits.size() <= 6 &&
        digits.find_first_not_of("0123456789") == std::string::npos) {
      index = std::stoul(digits);
      named = true;
    } else if (!name.empty()) {
      for (size_t i = 0; i < sig.inputs.size(); ++i)
        if (sig.inputs[i].name == name) {
          index = i;
          named = true;
        }
    }
    if (named)
      path = spec.substr(eq + 1);
    else
      ++next;
    if (index >= sig.inputs.size())
      return fail("@" + entry + " takes " + std::to_string(sig.inputs.size()) +
                  " inputs " + sig.describe() + "; --input " + spec +
                  " would be input " + std::to_string(index));
    if (bound[index])
      return fail("input " + std::to_string(index) + " is given twice");
    Tensor t;
    if (Status s = readNpy(path, t); !s)
      return fail(s.message());
    // bf16 travels as f32 .npy files: round to nearest even here.
    if (sig.inputs[index].dtype == DType::BF16 && t.dtype() == DType::F32)
      t = convertFloat(t, DType::BF16);
    if (Status s =
            checkTensor(t, sig.inputs[index],
                        "input " + std::to_string(index) + " (" + path + ")");
        !s)
      return fail(s.message());
    args[index] = std::move(t);
    bound[index] = true;
  }
  for (size_t i = 0; i < bound.size(); ++i)
    if (!bound[i])
      return fail("@" + entry + " takes " + std::to_string(sig.inputs.size()) +
                  " inputs " + sig.describe() + ", but input " +
                  std::to_string(i) + " was not given (--input)");
  {
    std::vector<const Tensor *> ptrs;
    std::vector<std::string> names;
    for (size_t i = 0; i < args.size(); ++i) {
      ptrs.push_back(&args[i]);
      names.push_back("input " + std::to_string(i));
    }
    if (Status s = checkSameSizes(ptrs, sig.inputs, names); !s)
      return fail(s.message());
  }
  if (!outputs.empty() && outputs.size() != sig.outputs.size())
    return fail("@" + entry + " returns " + std::to_string(sig.outputs.size()) +
                " results, got " + std::to_string(outputs.size()) +
                " --output paths");

  int numThreads = threads > 0 ? threads : hardwareThreads();
  if (Status s = setNumThreads(*module, numThreads); !s)
    return fail(s.message());

  // 3. Run (one warm-up + `repeat` timed runs when timing).
  std::vector<Tensor> results;
  if (Status s = module->invoke(entry, args, results); !s)
    return fail(s.message());
  if (repeat > 0) {
    std::vector<double> ms;
    for (unsigned i = 0; i < repeat; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      if (Status s = module->invoke(entry, args, results); !s)
        return fail(s.message());
      ms.push_back(std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - t0)
                       .count());
    }
    std::sort(ms.begin(), ms.end());
    double median = ms.size() % 2
                        ? ms[ms.size() / 2]
                        : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
    std::printf("median_ms=%.3f min_ms=%.3f max_ms=%.3f\n", median, ms.front(),
                ms.back());
  }

  // 4. Outputs.
  for (size_t i = 0; i < outputs.size(); ++i)
    if (Status s = writeNpyAtomic(outputs[i], results[i]); !s)
      return fail(s.message());
  if (outputs.empty())
    for (size_t i = 0; i < results.size(); ++i)
      std::printf("result %zu: %s\n", i, results[i].describe().c_str());
  return 0;
}
