# REQUIRES: cuda
# RUN: %python %s %t | FileCheck %s
#
# The GPU path end to end: each case of gpu_cases.CORRECTNESS is compiled by
# `attention-run --target cuda` (attn-lower-to-nvvm-pipeline, JIT), run on the
# GPU and compared element by element with a float64 NumPy reference
# (tolerances: f16 1e-2, bf16 and f32 operands 2e-2). Two cases also run with
# the ldmatrix-free fragment loads.
#
# CHECK-NOT: FAIL
# CHECK: gpu_sdpa: {{[0-9]+}} passed, 0 failed

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_exec  # noqa: E402
import gpu_cases  # noqa: E402

workdir = sys.argv[1]
passed = failed = 0
runs = [(c, "") for c in gpu_cases.CORRECTNESS]
runs += [(c, "ldmatrix=false") for c in gpu_cases.CORRECTNESS
         if c.name in ("gpt2_causal_f16", "gqa_causal_bf16")]
for case, options in runs:
    ins = case.inputs(seed=1)
    args = ["--target", "cuda"]
    if options:
        args += ["--pipeline-options", options]
    (out,) = attn_exec.run(case.module(), "main", ins, workdir, extra_args=args)
    err, ok = gpu_cases.check(case, out, *ins)
    label = case.name + (" [%s]" % options if options else "")
    print("%s %s: max_abs_err=%.3g (tolerance %g)"
          % ("PASS" if ok else "FAIL", label, err, gpu_cases.TOLERANCE[case.dtype]))
    passed += ok
    failed += not ok
print("gpu_sdpa: %d passed, %d failed" % (passed, failed))
