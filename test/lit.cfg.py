# lit configuration of the attention compiler's tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".py", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
# Helper modules and inputs used by tests, not tests themselves.
config.excludes = ["lit.cfg.py", "attn_exec.py", "Inputs", "CMakeLists.txt"]

llvm_config.use_default_substitutions()
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%attn_src", config.attn_src_root))

tool_dirs = [config.attn_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(
    ["attention-opt", "attention-run", "attnrt-c-demo"], tool_dirs)
config.environment["ATTENTION_RUN"] = os.path.join(config.attn_tools_dir, "attention-run")
config.environment["ATTENTION_OPT"] = os.path.join(config.attn_tools_dir, "attention-opt")

