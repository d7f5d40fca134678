# RUN: %python %s %t | FileCheck %s
#
# The ONNX Attention conformance suite through the GPU kernel: every case
# whose imported module is an attention core the GPU target compiles (the
# function's results are attn.sdpa ops of its arguments) runs the kernel of
# convert-attn-to-gpu in attn-gpu-emulator, and its output is compared with
# the ONNX reference output. The kernel feeds the tensor cores f16 operands
# as f16 and f32 operands rounded to bf16, and rounds P to that type before
# P V: tolerance |d| <= 2e-2 + 2e-2 |ref| (f32 cases), 1e-2 + 1e-2 |ref|
# (f16); NaN and infinities exactly; every output (present_key and
# present_value too). 3-D cases reach the kernel through views of their
# [B, T, H * d] buffers, KV caches (past_key/past_value) through copy
# kernels that build present_key/present_value in their result buffers,
# masks built in the graph from nonpad_kv_seqlen as generators the kernel
# evaluates per score (a padded mask read from its argument), transposed
# head splits as permuted views. Every other case is listed with the
# reason the GPU target gives (they return qk_matmul_output, the raw
# scores),
# and the counts are checked below, so a case that stops reaching the
# kernel fails this test.
#
# CHECK-NOT: FAIL
# CHECK: conformance_gpu_emulated: 69 passed, 0 failed, 18 not GPU cores

import glob
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# The shared comparison lives beside the conformance format; importing it
# must not leave a __pycache__ in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(HERE, "conformance"))
from run_case import compare  # noqa: E402
TOOLS = os.path.dirname(os.environ["ATTENTION_RUN"])
TRANSLATE = os.path.join(TOOLS, "attention-translate")
EMULATOR = os.environ["ATTN_GPU_EMULATOR"]


def find_cases():
    root = os.path.join(HERE, "..", "..")
    for base in (os.path.join(root, "..", "shared"), os.path.join(root, "shared")):
        d = os.path.join(base, "conformance", "onnx_attention")
        if os.path.isdir(d):
            return sorted(glob.glob(os.path.join(os.path.abspath(d), "test_*")))
    raise SystemExit("no ONNX Attention conformance suite (shared/conformance/onnx_attention)")


def main():
    work = sys.argv[1]
    os.makedirs(work, exist_ok=True)
    passed = failed = skipped = 0
    for cdir in find_cases():
        name = os.path.basename(cdir)
        module = os.path.join(work, name + ".mlir")
        proc = subprocess.run([TRANSLATE, "--import-onnx", os.path.join(cdir, "model.onnx"),
                               "-o", module], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True)
        if proc.returncode != 0:
            print("FAIL %s: import failed\n%s" % (name, proc.stdout))
            failed += 1
            continue
        # The entry point's arguments in order, by their ONNX names.
        text = open(module).read()
        signature = re.search(r"func\.func @main\((.*?)\) ->", text, re.S).group(1)
        names = re.findall(r'onnx\.name = "([^"]+)"', signature)
        files = {re.match(r"input_\d+_(.*)\.npy", os.path.basename(p)).group(1): p
                 for p in glob.glob(os.path.join(cdir, "input_*.npy"))}
        outputs = sorted(glob.glob(os.path.join(cdir, "output_*.npy")))
        outs = [os.path.join(work, "%s_%s" % (name, os.path.basename(w))) for w in outputs]
        cmd = [EMULATOR, module]
        for o in outs:
            cmd += ["--output", o]
        for n in names:
            cmd += ["--input", files[n]]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)
        if proc.returncode != 0:
            # The GPU target's own refusal names why; anything else fails.
            why = [l for l in proc.stdout.splitlines()
                   if "cannot run on the GPU" in l or "the GPU target compiles" in l]
            if not why:
                print("FAIL %s: emulator exit %d\n%s" % (name, proc.returncode, proc.stdout))
                failed += 1
            else:
                print("not a GPU core %s: %s" % (name, why[0].split("error:", 1)[-1].strip()[:160]))
                skipped += 1
            continue
        notes, ok = [], True
        for o, w in zip(outs, outputs):
            good, note = compare(np.load(o), np.load(w),
                                 f32_tol=(2e-2, 2e-2), f16_tol=(1e-2, 1e-2))
            ok &= good
            notes.append("%s %s" % (os.path.basename(w)[:-4], note))
        print("%s %s: %s" % ("PASS" if ok else "FAIL", name, ", ".join(notes)))
        passed += ok
        failed += not ok
    print("conformance_gpu_emulated: %d passed, %d failed, %d not GPU cores"
          % (passed, failed, skipped))


if __name__ == "__main__":
    main()
