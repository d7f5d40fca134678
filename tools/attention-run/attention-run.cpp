//===- attention-run.cpp - compile and run attention modules --------------===//
//
// A thin client of the runtime: compiles an MLIR file (or loads a saved
// shared object), binds .npy inputs to an entry point, runs it, optionally
// times it, and writes .npy outputs atomically. Every failure is a message
// on stderr and a non-zero exit; no output file is created then.
//
// Built without MLIR (ATTN_ENABLE_MLIR=OFF) it only runs saved shared
// objects, CPU or GPU: a deployment tool. llvm::cl is then unavailable, so
// that build parses the same flags by hand, with llvm::cl's messages.
//
//===----------------------------------------------------------------------===//

#include "attnrt/Cuda.h"
#include "attnrt/Module.h"
#include "attnrt/Npy.h"
#include "attnrt/Memory.h"
#include "attnrt/Threads.h"

#ifdef ATTN_HAVE_JIT
#include "attn/OnnxImporter.h"
#include "attnrt/Jit.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#endif

#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

using namespace attnrt;

namespace {

/// The most threads --threads accepts (OpenMP would start them all).
constexpr int kMaxThreads = 4096;

/// --print-signature: the signature, then one line per group of dynamic
/// input dims that the module needs equal ("input 0 dim 1 = input 2 dim
/// 0"), which the signature's "?" cannot show.
void printSignature(const std::string &entry, const FunctionSignature &sig) {
  std::printf("@%s %s\n", entry.c_str(), sig.describe().c_str());
  std::map<int, std::string> groups;
  for (size_t i = 0; i < sig.inputs.size(); ++i)
    for (size_t d = 0; d < sig.inputs[i].sameAs.size(); ++d)
      if (int id = sig.inputs[i].sameAs[d]; id > 0) {
        std::string &g = groups[id];
        g += (g.empty() ? "" : " = ") + std::string("input ") +
             std::to_string(i) + " dim " + std::to_string(d);
      }
  for (auto &[id, g] : groups)
    if (g.find(" = ") != std::string::npos)
      std::printf("  equal sizes: %s\n", g.c_str());
}

/// Everything the command line sets.
struct Options {
  std::string inputFile;
  /// Empty: `main`, or the module's only entry point.
  std::string entry;
  std::vector<std::string> inputs, outputs;
  unsigned repeat = 0;
  int threads = 0;
  std::string target = "cpu";
  /// --target was given: a saved module must have been compiled for it.
  bool targetGiven = false;
  std::string pipelineOptions;
  /// The CPU to compile for ("host": this machine).
  std::string targetCpu = "host";
  std::string emitSharedObject;
  bool printIR = false;
  bool verifyEach = false;
  bool timing = false;
  bool onnxRaise = true;
  bool printSignature = false;
  bool compileOnly = false;
  bool retainMemory = true;
  /// Constants of at least this many bytes bypass LLVM (CompileOptions).
  uint64_t inlineConstantsBelow = 65536;
  /// The options given that only a compile uses (refused for a .so, where
  /// they would silently change nothing), in command-line spelling.
  std::vector<std::string> compileOptionsGiven;
  /// (Built without the compiler: only recorded, to refuse it.)
  std::string inlineConstantsBelowText;
  /// How often each single-valued option was given ("entry" -> 2): twice
  /// is an error, not the last one silently winning.
  std::map<std::string, unsigned> occurrences;
};

/// A single-valued option given more than once, or one of those that name
/// something given an empty value: the error, or "".
std::string checkOptionValues(const Options &o) {
  for (const auto &[name, count] : o.occurrences)
    if (count > 1)
      return "--" + name + " may be given once, it was given " +
             std::to_string(count) + " times";
  for (const auto &[name, value] :
       {std::make_pair("entry", &o.entry), std::make_pair("target", &o.target),
        std::make_pair("target-cpu", &o.targetCpu),
        std::make_pair("emit-shared-object", &o.emitSharedObject)})
    if (o.occurrences.count(name) && value->empty())
      return "--" + std::string(name) + " needs a value, got an empty one";
  return "";
}

int fail(const std::string &msg) {
  std::fprintf(stderr, "attention-run: error: %s\n", msg.c_str());
  return 1;
}

/// The entry point to run: --entry, else `main`, else the module's only
/// public function (a module whose one function is not called main).
std::string resolveEntry(CompiledModule &m, const std::string &given) {
  if (!given.empty())
    return given;
  std::vector<std::string> names = m.entryPoints();
  if (names.size() == 1)
    return names.front();
  return "main";
}

[[maybe_unused]] std::string formatFixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

constexpr const char *kOverview =
    "attention-run: compile and run attention modules\n"
    "  --threads N   worker threads (default: all cores)\n";
constexpr const char *kTargetHelp =
    "cpu or cuda (default cpu; a .so runs on the target it was compiled "
    "for, which --target must match if given)";

#ifdef ATTN_HAVE_JIT

llvm::cl::OptionCategory category("attention-run options");
llvm::cl::opt<std::string>
    inputFileOpt(llvm::cl::Positional, llvm::cl::Required,
                 llvm::cl::desc("<module.mlir | model.onnx | module.so>"),
                 llvm::cl::cat(category));
llvm::cl::opt<std::string> entryOpt(
    "entry",
    llvm::cl::desc("Entry point to run (default: main, or the only one)"),
    llvm::cl::init(""), llvm::cl::cat(category));
llvm::cl::list<std::string>
    inputsOpt("input",
              llvm::cl::desc("[NAME=|argN=|N=]PATH.npy, one per function "
                             "argument (NAME: an ONNX graph input, which wins "
                             "over an index of the same spelling; - reads "
                             "standard input, once)"),
              llvm::cl::cat(category));
llvm::cl::list<std::string>
    outputsOpt("output", llvm::cl::desc("PATH.npy, one per result"),
               llvm::cl::cat(category));
llvm::cl::opt<unsigned>
    repeatOpt("repeat", llvm::cl::desc("Timed runs after one warm-up"),
              llvm::cl::init(0), llvm::cl::cat(category));
llvm::cl::opt<std::string> targetOpt("target", llvm::cl::desc(kTargetHelp),
                                     llvm::cl::init("cpu"),
                                     llvm::cl::cat(category));
llvm::cl::opt<std::string> targetCpuOpt(
    "target-cpu",
    llvm::cl::desc("CPU to compile for: host (default), or an x86-64 CPU "
                   "name as for clang's -march (x86-64-v3, x86-64-v4, "
                   "znver4, sapphirerapids, ...). Code for a CPU with "
                   "extensions this host lacks is only saved: "
                   "--compile-only --emit-shared-object"),
    llvm::cl::init("host"), llvm::cl::cat(category));
llvm::cl::opt<std::string> pipelineOptionsOpt(
    "pipeline-options",
    llvm::cl::desc("Options of attn-lower-to-cpu-pipeline (or "
                   "attn-lower-to-nvvm-pipeline for --target cuda)"),
    llvm::cl::init(""), llvm::cl::cat(category));
llvm::cl::opt<std::string>
    emitSharedObjectOpt("emit-shared-object",
                        llvm::cl::desc("Also save the compiled module as a "
                                       "shared object loadable without the "
                                       "compiler"),
                        llvm::cl::init(""), llvm::cl::cat(category));
llvm::cl::opt<bool> printIROpt("print-ir-after-all",
                               llvm::cl::desc("Print the IR after every pass"),
                               llvm::cl::init(false), llvm::cl::cat(category));
llvm::cl::opt<bool> verifyEachOpt(
    "verify-each",
    llvm::cl::desc("Verify the IR after every pass of the pipeline (default: "
                   "once, after the last; verifying a whole model's IR "
                   "after every pass took a third of its pipeline time)"),
    llvm::cl::init(false), llvm::cl::cat(category));
llvm::cl::opt<bool> timingOpt("mlir-timing",
                              llvm::cl::desc("Print the time of every pass"),
                              llvm::cl::init(false), llvm::cl::cat(category));
llvm::cl::opt<bool> onnxRaiseOpt(
    "onnx-raise",
    llvm::cl::desc("ONNX input: raise attention subgraphs to attn ops "
                   "(default on; =false imports op by op)"),
    llvm::cl::init(true), llvm::cl::cat(category));
llvm::cl::opt<bool>
    printSignatureOpt("print-signature",
                      llvm::cl::desc("Print the entry point's signature "
                                     "(without --input: print it and exit)"),
                      llvm::cl::init(false), llvm::cl::cat(category));

llvm::cl::opt<bool> retainMemoryOpt(
    "retain-memory",
    llvm::cl::desc("Keep freed memory for the next run, as inference arenas "
                   "do (default on; =false returns it to the kernel, and "
                   "every run page-faults its buffers afresh)"),
    llvm::cl::init(true), llvm::cl::cat(category));

llvm::cl::opt<bool> compileOnlyOpt(
    "compile-only",
    llvm::cl::desc("Compile (and save with --emit-shared-object) but do not "
                   "run: --target cuda then needs no GPU"),
    llvm::cl::init(false), llvm::cl::cat(category));

llvm::cl::opt<uint64_t> inlineConstantsBelowOpt(
    "inline-constants-below",
    llvm::cl::desc("CPU modules: constants (weights) of at least this many "
                   "bytes are linked beside the code as data instead of "
                   "passing through LLVM, which copies them several times "
                   "(default 65536; only those the pipeline holds as bytes "
                   "qualify: 4096 bytes and more, or 1-D i8; a size above "
                   "the largest keeps all in LLVM)"),
    llvm::cl::init(65536), llvm::cl::cat(category));

/// llvm::cl parses `args` (it exits on errors and --help itself).
bool parseOptions(std::vector<char *> &args, Options &o, int & /*exitCode*/) {
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(static_cast<int>(args.size()), args.data(),
                                    kOverview);
  o.inputFile = inputFileOpt;
  o.entry = entryOpt;
  o.inputs.assign(inputsOpt.begin(), inputsOpt.end());
  o.outputs.assign(outputsOpt.begin(), outputsOpt.end());
  o.repeat = repeatOpt;
  o.target = targetOpt;
  o.targetGiven = targetOpt.getNumOccurrences() > 0;
  o.pipelineOptions = pipelineOptionsOpt;
  o.targetCpu = targetCpuOpt;
  o.emitSharedObject = emitSharedObjectOpt;
  o.printIR = printIROpt;
  o.verifyEach = verifyEachOpt;
  o.timing = timingOpt;
  o.onnxRaise = onnxRaiseOpt;
  o.printSignature = printSignatureOpt;
  o.compileOnly = compileOnlyOpt;
  o.retainMemory = retainMemoryOpt;
  o.inlineConstantsBelow = inlineConstantsBelowOpt;
  for (llvm::cl::Option *opt : std::initializer_list<llvm::cl::Option *>{
           &entryOpt, &repeatOpt, &targetOpt, &targetCpuOpt,
           &pipelineOptionsOpt, &emitSharedObjectOpt, &printIROpt,
           &verifyEachOpt, &timingOpt, &onnxRaiseOpt, &printSignatureOpt,
           &retainMemoryOpt, &compileOnlyOpt, &inlineConstantsBelowOpt})
    if (opt->getNumOccurrences())
      o.occurrences[opt->ArgStr.str()] = opt->getNumOccurrences();
  for (llvm::cl::Option *opt : std::initializer_list<llvm::cl::Option *>{
           &pipelineOptionsOpt, &targetCpuOpt, &printIROpt, &verifyEachOpt,
           &timingOpt, &onnxRaiseOpt, &compileOnlyOpt,
           &inlineConstantsBelowOpt})
    if (opt->getNumOccurrences())
      o.compileOptionsGiven.push_back("--" + opt->ArgStr.str());
  return true;
}

#else // !ATTN_HAVE_JIT

/// The llvm::cl subset attention-run uses: `-name` or `--name`, values after
/// '=' or as the next argument (booleans only after '='), `--` ends the
/// options. Messages are llvm::cl's; repeats are counted (checkOptionValues).
bool parseOptions(std::vector<char *> &args, Options &o, int &exitCode) {
  std::string argv0 = args.empty() ? "attention-run" : args[0];
  std::string prog = argv0.substr(argv0.rfind('/') + 1);
  auto error = [&](const std::string &msg) {
    std::fprintf(stderr, "%s: %s\n", prog.c_str(), msg.c_str());
    exitCode = 1;
    return false;
  };
  std::map<std::string, std::string *> strings = {
      {"entry", &o.entry},
      {"target", &o.target},
      {"pipeline-options", &o.pipelineOptions},
      {"target-cpu", &o.targetCpu},
      {"emit-shared-object", &o.emitSharedObject},
      {"inline-constants-below", &o.inlineConstantsBelowText}};
  std::map<std::string, std::vector<std::string> *> lists = {
      {"input", &o.inputs}, {"output", &o.outputs}};
  std::map<std::string, bool *> bools = {{"print-ir-after-all", &o.printIR},
                                         {"verify-each", &o.verifyEach},
                                         {"mlir-timing", &o.timing},
                                         {"onnx-raise", &o.onnxRaise},
                                         {"print-signature", &o.printSignature},
                                         {"retain-memory", &o.retainMemory}};

  std::vector<std::string> positional;
  bool optionsEnded = false;
  for (size_t i = 1; i < args.size(); ++i) {
    std::string a = args[i];
    if (optionsEnded || a.size() < 2 || a[0] != '-') {
      positional.push_back(a);
      continue;
    }
    if (a == "--") {
      optionsEnded = true;
      continue;
    }
    std::string name = a.substr(a[1] == '-' ? 2 : 1), value;
    size_t eq = name.find('=');
    bool hasValue = eq != std::string::npos;
    if (hasValue) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    auto takeValue = [&]() {
      if (hasValue)
        return true;
      if (i + 1 < args.size()) {
        value = args[++i];
        return true;
      }
      return error("for the --" + name + " option: requires a value!");
    };
    if (name == "help" || name == "h" || name == "help-list") {
      std::printf("OVERVIEW: %s\nUSAGE: %s [options] <module.so>\n\n"
                  "OPTIONS:\n"
                  "  --entry=<string>      - Entry point to run (default: "
                  "main, or the only one)\n"
                  "  --input=<string>      - [argN=|NAME=]PATH.npy, one per "
                  "function argument (NAME: an ONNX graph input)\n"
                  "  --output=<string>     - PATH.npy, one per result\n"
                  "  --print-signature     - Print the entry point's "
                  "signature (without --input: print it and exit)\n"
                  "  --repeat=<uint>       - Timed runs after one warm-up\n"
                  "  --retain-memory       - Keep freed memory for the next "
                  "run (default on)\n"
                  "  --target=<string>     - %s\n\n"
                  "This attention-run was built without the compiler "
                  "(ATTN_ENABLE_MLIR=OFF): it runs modules saved with "
                  "--emit-shared-object only.\n",
                  kOverview, prog.c_str(), kTargetHelp);
      exitCode = 0;
      return false;
    }
    if (strings.count(name) || bools.count(name) || name == "repeat")
      ++o.occurrences[name];
    if (auto str = strings.find(name); str != strings.end()) {
      if (!takeValue())
        return false;
      *str->second = value;
      if (name == "target")
        o.targetGiven = true;
      if (name == "pipeline-options" || name == "target-cpu" ||
          name == "inline-constants-below")
        o.compileOptionsGiven.push_back("--" + name);
    } else if (auto list = lists.find(name); list != lists.end()) {
      if (!takeValue())
        return false;
      list->second->push_back(value);
    } else if (auto flag = bools.find(name); flag != bools.end()) {
      if (!hasValue || value == "true" || value == "TRUE" || value == "True" ||
          value == "1")
        *flag->second = true;
      else if (value == "false" || value == "FALSE" || value == "False" ||
               value == "0")
        *flag->second = false;
      else
        return error("for the --" + name + " option: '" + value +
                     "' is invalid value for boolean argument! Try 0 or 1");
      if (name != "print-signature" && name != "retain-memory")
        o.compileOptionsGiven.push_back("--" + name);
    } else if (name == "repeat") {
      if (!takeValue())
        return false;
      if (value.empty() || value.size() > 10 ||
          value.find_first_not_of("0123456789") != std::string::npos ||
          std::stoull(value) > UINT_MAX)
        return error("for the --repeat option: '" + value +
                     "' value invalid for uint argument!");
      o.repeat = static_cast<unsigned>(std::stoul(value));
    } else {
      return error("Unknown command line argument '" + a + "'.  Try: '" +
                   argv0 + " --help'");
    }
  }
  if (positional.empty())
    return error("Not enough positional command line arguments specified!\n"
                 "Must specify at least 1 positional argument: See: " +
                 argv0 + " --help");
  if (positional.size() > 1)
    return error("Too many positional arguments specified!\n"
                 "Can specify at most 1 positional arguments: See: " +
                 argv0 + " --help");
  o.inputFile = positional[0];
  return true;
}

#endif // ATTN_HAVE_JIT

} // namespace

int main(int argc, char **argv) {
#ifdef ATTN_HAVE_JIT
  llvm::InitLLVM y(argc, argv);
#endif
  Options opts;
  // --threads is parsed by hand: libLLVM already registers a "threads"
  // option.
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
        std::stoi(value) < 1 || std::stoi(value) > kMaxThreads)
      return fail("--threads expects an integer from 1 to " +
                  std::to_string(kMaxThreads) + ", got '" + value + "'");
    opts.threads = std::stoi(value);
    ++opts.occurrences["threads"];
  }
  int exitCode = 0;
  if (!parseOptions(rest, opts, exitCode))
    return exitCode;
  if (std::string error = checkOptionValues(opts); !error.empty())
    return fail(error);

  if (opts.target != "cpu" && opts.target != "cuda")
    return fail("unknown target '" + opts.target + "' (supported: cpu, cuda)");
  if (opts.repeat > 100000)
    return fail("--repeat must be at most 100000");
  if (opts.target == "cuda" &&
      std::find(opts.compileOptionsGiven.begin(),
                opts.compileOptionsGiven.end(),
                "--inline-constants-below") != opts.compileOptionsGiven.end())
    return fail("--inline-constants-below applies to --target cpu only (a "
                "cuda module's host code keeps its constants)");

  if (opts.compileOnly && (!opts.inputs.empty() || !opts.outputs.empty()))
    return fail("--compile-only runs nothing: it takes no --input or "
                "--output");
  // "-" reads an input from standard input, which holds one .npy; results
  // go to files (standard output carries the run's report).
  if (std::count(opts.outputs.begin(), opts.outputs.end(), "-"))
    return fail("--output -: results are written to .npy files, not to "
                "standard output; name a file");
  if (std::count_if(opts.inputs.begin(), opts.inputs.end(),
                    [](const std::string &spec) {
                      return spec == "-" || endsWith(spec, "=-");
                    }) > 1)
    return fail("--input -: standard input holds one .npy; only one input "
                "can be read from it");
  // Before anything runs: a result that could not be written would waste
  // the run (and two results for one file would lose one).
  if (Status s = checkOutputPaths(opts.outputs); !s)
    return fail(s.message());
  if (!opts.emitSharedObject.empty()) {
    if (Status s = checkOutputPaths({opts.emitSharedObject}); !s)
      return fail("--emit-shared-object " + s.message());
    std::vector<std::string> all = opts.outputs;
    all.push_back(opts.emitSharedObject);
    if (Status s = checkOutputPaths(all); !s)
      return fail("--emit-shared-object " + s.message());
  }
  // Nothing written may be what is read: the module, an input, or an ONNX
  // model's external weights (listed only when a written file exists: only
  // then can it be one of them).
  {
    std::vector<std::string> written = opts.outputs, read = {opts.inputFile};
    if (!opts.emitSharedObject.empty())
      written.push_back(opts.emitSharedObject);
    for (const std::string &spec : opts.inputs) {
      read.push_back(spec); // a path, or NAME=PATH:
      if (size_t eq = spec.find('='); eq != std::string::npos)
        read.push_back(spec.substr(eq + 1));
    }
#ifdef ATTN_HAVE_JIT
    if (endsWith(opts.inputFile, ".onnx") &&
        std::any_of(written.begin(), written.end(), [](const std::string &w) {
          return llvm::sys::fs::exists(w);
        }))
      for (std::string &file :
           mlir::attn::onnxExternalDataFiles(opts.inputFile))
        read.push_back(std::move(file));
#endif
    if (Status s = checkOutputsAreNotInputs(written, read); !s)
      return fail(s.message());
  }

  // Repeated runs reuse their buffers instead of page-faulting fresh ones,
  // and so does the compile, which copies constant weights (ONNX parse,
  // packing, JIT memory). Only a speed hint: where the allocator is not glibc's
  // (sanitizers, other C libraries) it has no effect, and that is no error.
  if (opts.retainMemory)
    (void)retainFreedMemory(std::size_t(1) << 30);

  // 1. The module.
  std::unique_ptr<CompiledModule> module;
  if (endsWith(opts.inputFile, ".so")) {
    if (!opts.emitSharedObject.empty())
      return fail(
          "--emit-shared-object needs an MLIR input, got a shared object");
    // Options of the compile would silently change nothing.
    if (!opts.compileOptionsGiven.empty())
      return fail(opts.compileOptionsGiven.front() +
                  " needs an MLIR or ONNX input to compile; " + opts.inputFile +
                  " is already compiled");
    std::unique_ptr<SharedObjectModule> so;
    if (Status s = SharedObjectModule::load(opts.inputFile, so); !s)
      return fail(s.message());
    std::string compiledFor = so->target();
    if (opts.targetGiven && compiledFor != opts.target)
      return fail("--target " + opts.target + ": " + opts.inputFile +
                  " was compiled for --target " + compiledFor);
    module = std::move(so);
  } else {
#ifdef ATTN_HAVE_JIT
    // Before compiling: without a GPU the compile would be wasted.
    if (opts.target == "cuda" && !opts.compileOnly)
      if (Status s = cuda::available(); !s)
        return fail("--target cuda: " + s.message() +
                    " (--compile-only compiles without one)");
    CompileOptions options;
    options.pipelineOptions = opts.pipelineOptions;
    options.printIRAfterAll = opts.printIR;
    options.verifyEachPass = opts.verifyEach;
    options.timing = opts.timing;
    options.onnxRaise = opts.onnxRaise;
    options.target = opts.target;
    options.compileOnly = opts.compileOnly;
    options.targetCpu = opts.targetCpu;
    options.inlineConstantsBelow = opts.inlineConstantsBelow;
    std::unique_ptr<JitModule> jit;
    if (Status s =
            compileFile(opts.inputFile, options, jit, opts.emitSharedObject);
        !s)
      return fail(s.message());
    std::string importTime, constantsNote;
    if (endsWith(opts.inputFile, ".onnx"))
      importTime = "import " + formatFixed(jit->importSeconds, 3) + " s, ";
    if (jit->externalConstants)
      constantsNote =
          "; " + std::to_string(jit->externalConstants) +
          (jit->externalConstants == 1 ? " constant (" : " constants (") +
          (jit->externalConstantBytes < (1u << 20)
               ? formatFixed(jit->externalConstantBytes / 1024.0, 1) + " KiB"
               : formatFixed(jit->externalConstantBytes / 1048576.0, 1) +
                     " MiB") +
          ") linked as data";
    std::fprintf(stderr, "compiled %s: %spipeline %.3f s, codegen %.3f s%s\n",
                 opts.inputFile.c_str(), importTime.c_str(),
                 jit->pipelineSeconds, jit->codegenSeconds,
                 constantsNote.c_str());
    if (opts.compileOnly) {
      if (!opts.emitSharedObject.empty())
        std::fprintf(stderr, "saved %s (%s)\n", opts.emitSharedObject.c_str(),
                     opts.target == "cpu" ? ("cpu " + jit->targetCpu()).c_str()
                                          : opts.target.c_str());
      if (opts.printSignature) {
        std::string entry = resolveEntry(*jit, opts.entry);
        FunctionSignature sig;
        if (Status s = jit->signature(entry, sig); !s)
          return fail(s.message());
        printSignature(entry, sig);
      }
      return 0;
    }
    module = std::move(jit);
#else
    return fail(opts.inputFile +
                ": this attention-run was built without the compiler; give it "
                "a .so (a module saved with attention-run "
                "--emit-shared-object)");
#endif
  }
  if (module->target() == "cuda")
    std::fprintf(stderr, "device: %s\n", cuda::deviceName().c_str());

  const std::string entry = resolveEntry(*module, opts.entry);
  FunctionSignature sig;
  if (Status s = module->signature(entry, sig); !s)
    return fail(s.message());
  if (opts.printSignature) {
    printSignature(entry, sig);
    // Asked for the signature and given no inputs: that is the answer (it
    // is how a user learns what to pass), not a run missing its inputs.
    if (opts.inputs.empty() && !sig.inputs.empty())
      return 0;
  }

  // 2. Inputs: positional, or argN=PATH / N=PATH.
  std::vector<Tensor> args(sig.inputs.size());
  std::vector<bool> bound(sig.inputs.size(), false);
  size_t next = 0;
  for (const std::string &spec : opts.inputs) {
    std::string path = spec;
    // A positional input takes the next argument not bound by index or
    // name yet (--input 1=k.npy --input q.npy --input v.npy: q is 0, v 2).
    while (next < bound.size() && bound[next])
      ++next;
    size_t index = next;
    // "NAME=PATH" (an ONNX input name) / "argN=PATH" / "N=PATH" bind by
    // name or index; anything else is a path (which may contain '=').
    // A name comes first: torch exports may name inputs "0", "1", ... in
    // another order than their positions.
    size_t eq = spec.find('=');
    std::string name = eq == std::string::npos ? "" : spec.substr(0, eq);
    std::string digits = name.rfind("arg", 0) == 0 ? name.substr(3) : name;
    bool named = false;
    for (size_t i = 0; !name.empty() && i < sig.inputs.size(); ++i)
      if (sig.inputs[i].name == name) {
        index = i;
        named = true;
      }
    if (!named && !digits.empty() && digits.size() <= 6 &&
        digits.find_first_not_of("0123456789") == std::string::npos) {
      index = std::stoul(digits);
      named = true;
    }
    if (named) {
      path = spec.substr(eq + 1);
    } else if (!name.empty() && !std::ifstream(spec).good()) {
      // NAME=PATH with a name no input has (and no file of that name): a
      // misspelt input name, not a path to report as unreadable.
      std::string names;
      for (const TensorSpec &in : sig.inputs)
        if (!in.name.empty())
          names += (names.empty() ? "" : ", ") + in.name;
      return fail("--input " + spec + ": @" + entry + " has no input named '" +
                  name + "' (" +
                  (names.empty() ? "its inputs have no names: bind them by "
                                   "position or with argN=PATH"
                                 : "inputs: " + names) +
                  ")");
    } else {
      ++next;
    }
    if (index >= sig.inputs.size())
      return fail("@" + entry + " takes " + std::to_string(sig.inputs.size()) +
                  " inputs " + sig.describe() + "; --input " + spec +
                  " would be input " + std::to_string(index));
    if (bound[index])
      return fail("input " + std::to_string(index) + " is given twice");
    Tensor t;
    // "-": the input comes on standard input.
    if (Status s = readNpy(path == "-" ? "/dev/stdin" : path, t); !s)
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
  if (!opts.outputs.empty() && opts.outputs.size() != sig.outputs.size())
    return fail("@" + entry + " returns " + std::to_string(sig.outputs.size()) +
                " results, got " + std::to_string(opts.outputs.size()) +
                " --output paths");

  int numThreads = opts.threads > 0 ? opts.threads : hardwareThreads();
  if (Status s = setNumThreads(*module, numThreads); !s)
    return fail(s.message());

  // 3. Run: one warm-up + `repeat` timed runs (GPU runs time the entry
  // point without the transfers).
  std::vector<Tensor> results;
  std::vector<double> ms;
  if (Status s = module->invokeTimed(entry, args, results, opts.repeat, ms); !s)
    return fail(s.message());
  if (!ms.empty()) {
    std::sort(ms.begin(), ms.end());
    double median = ms.size() % 2
                        ? ms[ms.size() / 2]
                        : 0.5 * (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]);
    std::printf("median_ms=%.3f min_ms=%.3f max_ms=%.3f\n", median, ms.front(),
                ms.back());
  }

  // 4. Outputs, all or none.
  std::vector<const Tensor *> written;
  for (size_t i = 0; i < opts.outputs.size(); ++i)
    written.push_back(&results[i]);
  if (Status s = writeNpyFiles(opts.outputs, written); !s)
    return fail(s.message());
  if (opts.outputs.empty())
    for (size_t i = 0; i < results.size(); ++i)
      std::printf("result %zu: %s\n", i, results[i].describe().c_str());
  return 0;
}
