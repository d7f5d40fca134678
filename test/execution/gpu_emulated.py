# RUN: %python %s %t | FileCheck %s
#
# The GPU kernels of convert-attn-to-gpu, checked numerically on every
# machine: attn-gpu-emulator runs the generated kernel IR on the CPU (thread
# blocks in lockstep, PTX semantics for mma.sync, ldmatrix, shuffles and
# cp.async) and each result is compared element by element with a float64
# NumPy reference at the GPU tolerances (f16 1e-2, bf16 and f32 operands
# 2e-2). Every correctness case of gpu_cases (tails, each causal alignment,
# rows without keys, GQA, both layouts, rank 2, head dims 1..256, dv != d,
# f32 operands, a decode step, GPT-2 small) runs with the default kernel;
# the small ones also with synchronous staging, without ldmatrix, and with
# 8 warps and 128-key tiles, and some with tiles the shared-memory limit
# shrinks. The emulator defers cp.async data to its wait_group, poisons
# shared memory, results and undefined values with NaN, and fails on
# out-of-bounds or misaligned accesses. (gpu_sdpa.py runs the same cases on a real GPU
# where one is present.)
#
# In the sanitizer run of the suite (ATTN_SANITIZED=1) the emulator is
# instrumented and two to three times slower: the three GPT-2-sized cases
# (the same kernels as the smaller ones, over more blocks) are left out, and
# each small case runs the default kernel and one of the variants in turn
# (attn_exec.SanitizerTurns). The test prints what it left out.
#
# CHECK-NOT: FAIL
# CHECK: gpu_emulated: {{[0-9]+}} passed, 0 failed

import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_exec  # noqa: E402
import gpu_cases  # noqa: E402

EMULATOR = os.environ["ATTN_GPU_EMULATOR"]
workdir = sys.argv[1]
os.makedirs(workdir, exist_ok=True)

VARIANTS = ["stages=1", "ldmatrix=false", "warps=8 block-kv=128"]
# Tile shapes the shared-memory limit shrinks (d = 128: 48 -> 16 keys).
EXTRA = {"gqa_causal_bf16": ["block-kv=48", "warps=3 block-kv=240"],
         "head_dim_256_bf16": ["block-kv=112"]}
runs = []
turns = attn_exec.SanitizerTurns(always={""})
for case in gpu_cases.CORRECTNESS:
    small = case.B * case.Hq * case.Tq * case.Tk <= 2e6
    if attn_exec.SANITIZED and not small:
        print("sanitizer run: %s left out (the release run has it)" % case.name)
        continue
    options = [("",)] + ([(v,) for v in VARIANTS] if small else [])
    runs += [(case, v[0]) for v in turns.pick(options)]
    runs += [(case, v) for v in EXTRA.get(case.name, [])]
turns.report("gpu_emulated")

passed = failed = 0
for case, options in runs:
    ins = case.inputs(seed=1)
    tag = "%s_%d" % (case.name, len(options))
    paths = []
    for i, a in enumerate(ins):
        p = os.path.join(workdir, "%s_in%d.npy" % (tag, i))
        # bf16 values travel as float32 (exactly representable).
        np.save(p, a if a.dtype in (np.float16, np.bool_) else a.astype(np.float32))
        paths.append(p)
    module = os.path.join(workdir, tag + ".mlir")
    with open(module, "w") as f:
        f.write(case.module())
    out = os.path.join(workdir, tag + "_out.npy")
    cmd = [EMULATOR, module, "--output", out, "--pass-options", options]
    for p in paths:
        cmd += ["--input", p]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True)
    label = case.name + (" [%s]" % options if options else "")
    if proc.returncode != 0:
        print("FAIL %s: emulator exit %d\n%s" % (label, proc.returncode, proc.stdout))
        failed += 1
        continue
    err, ok = gpu_cases.check(case, np.load(out), *ins)
    print("%s %s: max_abs_err=%.3g (tolerance %g)"
          % ("PASS" if ok else "FAIL", label, err, gpu_cases.TOLERANCE[case.dtype]))
    passed += ok
    failed += not ok
print("gpu_emulated: %d passed, %d failed" % (passed, failed))
