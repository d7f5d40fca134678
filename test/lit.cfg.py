# lit configuration of the attention compiler's tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "ATTN"
# The external shell: tests use `test`, redirections and subshells.
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".mlir", ".py", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
# Helper modules and inputs used by tests, not tests themselves.
# (__pycache__: helper modules imported by tests and formats leave one.)
config.excludes = ["__pycache__", "lit.cfg.py", "attn_exec.py", "gpu_cases.py", "Inputs",
                   "CMakeLists.txt", "GpuKernelEmulator.cpp", "CpuFeatures.cpp"]

llvm_config.use_default_substitutions()
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%attn_src", config.attn_src_root))
config.substitutions.append(("%attn_tools", config.attn_tools_dir))
config.substitutions.append(("%attn_obj", config.attn_obj_root))

tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
# `not`, `count` and FileCheck come from LLVM's tool directory (as do opt
# and mlir-translate, substituted by path: /usr/bin may hold other versions).
for d in tool_dirs:
    llvm_config.with_environment("PATH", d, append_path=True)
llvm_config.add_tool_substitutions(
    ["attention-opt", "attention-run", "attention-translate", "attnrt-c-demo",
     "attn-gpu-emulator", "attnrt-cuda-error-slots", "attnrt-retain-memory",
     "attnrt-cpu-features", "attn-philox-check", "attnrt-signature-check",
     "attnrt-invoke-reuse", "attnrt-c-api-tensors", "attnrt-two-loads",
     "attnrt-checked-allocation", "opt", "mlir-translate"],
    tool_dirs)
config.environment["ATTENTION_RUN"] = os.path.join(config.attn_tools_dir, "attention-run")
config.environment["ATTENTION_OPT"] = os.path.join(config.attn_tools_dir, "attention-opt")
config.environment["ATTN_GPU_EMULATOR"] = os.path.join(config.attn_tools_dir, "attn-gpu-emulator")


# ASan builds (ATTN_SANITIZE, ATTN_FUZZ) replace glibc's malloc: tests of
# what the runtime asks of glibc check the sanitizers' refusal there instead
# (%malloc names the FileCheck prefix).
if config.attn_sanitized_malloc.upper() in ("ON", "1", "TRUE", "YES"):
    config.substitutions.append(("%malloc", "SANITIZED"))
    # Tests whose variant loops repeat the same code with other option
    # values run a named subset under the sanitizers (they print it).
    config.environment["ATTN_SANITIZED"] = "1"
else:
    config.substitutions.append(("%malloc", "GLIBC"))

# GPU: compile-only tests need the CUDA toolkit's ptxas (PTX -> sm_90 code,
# register and spill report); execution tests need a CUDA driver and GPU.
cuda_toolkit = os.environ.get("ATTN_CUDA_TOOLKIT", "/usr/local/cuda")
ptxas = os.path.join(cuda_toolkit, "bin", "ptxas")
if os.access(ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
    config.substitutions.append(("%cuda_toolkit", cuda_toolkit))
else:
    lit_config.note("no %s: the PTX assembly tests are unsupported" % ptxas)

# An allocation beyond the machine's memory (but within the address space)
# fails at once only where the kernel refuses obvious overcommits
# (vm.overcommit_memory 0, the default, or 2); with 1 it is granted and the
# code then touches terabytes.
try:
    with open("/proc/sys/vm/overcommit_memory") as f:
        if f.read().strip() in ("0", "2"):
            config.available_features.add("refuses-overcommit")
except OSError:
    pass
if "refuses-overcommit" not in config.available_features:
    lit_config.note("vm.overcommit_memory is 1: the test of a reshape's stand-in too large for memory is unsupported")

# bench/compare_options.py --paired pins its two runs to two CPUs.
if len(os.sched_getaffinity(0)) >= 2:
    config.available_features.add("two-cpus")
else:
    lit_config.note("one CPU: the paired comparison test is unsupported")


def _has_cuda_driver():
    import ctypes

    try:
        lib = ctypes.CDLL(os.environ.get("ATTNRT_LIBCUDA", "libcuda.so.1"))
        count = ctypes.c_int(0)
        return lib.cuInit(0) == 0 and lib.cuDeviceGetCount(ctypes.byref(count)) == 0 and count.value > 0
    except (OSError, AttributeError):
        return False


if _has_cuda_driver():
    config.available_features.add("cuda")
