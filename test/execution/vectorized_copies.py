# RUN: %python %s %t | FileCheck %s
#
# Transposes that keep their innermost dims in place (head splits and
# merges), which attn-vectorize-copies copies run by run in vectors,
# through the CPU pipeline against NumPy (exact): a head split
# [2, 10, 3, 64] -> [2, 3, 10, 64]; a head merge with dynamic batch and
# sequence and rows of 40 (two vectors and a tail of 8); a rank-5
# permutation keeping the last two dims (runs of 5 x 17 = 85); sources
# that are slices (rows 3..10 at an offset; 3 of 5 heads, whose permuted
# dims then have strides 320 and 64 rather than 192 and 64; every other
# element of the innermost dim, stride 2: runs of one element); a
# destination that is a slice of a larger buffer (strides 160, 40); f16
# rows of 48 (one 32-lane vector and a tail); and transposes that move the
# innermost dim, which the pass copies in 16 x 16 blocks transposed in
# registers, with scalar loops past the last whole strip and block: the two
# inner dims ([3, 16, 24] -> [3, 24, 16], 8 rows past the last strip),
# channels-last to channels-first ([0, 3, 1, 2] of [2, 5, 33, 40]: 8 rows
# of C and one column of W past the blocks), keys laid out for Q K ([0, 2,
# 3, 1] of [B, 37, 3, 64], B dynamic) and all dims reversed on i32 ([3, 2,
# 1, 0] of [17, 3, 4, 18], every bit pattern's value kept). First the IR
# is shown to have the twelve transposes
# before the pass and none after it, then every case runs on the host's
# code and compiled for
# x86-64-v3 (AVX2), with the default threads and on one thread.
#
# CHECK: IR before attn-vectorize-copies: 12 linalg.transpose (@channels_first, @every_other, @half, @heads_slice, @inner, @into_slice, @keys_for_qk, @merge, @rank5, @reverse, @slice, @split)
# CHECK: IR after attn-vectorize-copies: 0 linalg.transpose ()
# CHECK-NOT: FAIL
# CHECK: vectorized_copies: all 48 checks OK

import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import attn_exec  # noqa: E402

ATTENTION_OPT = os.path.join(os.path.dirname(attn_exec.ATTENTION_RUN), "attention-opt")

MODULE = """
func.func @split(%x: tensor<2x10x3x64xf32>) -> tensor<2x3x10x64xf32> {
  %e = tensor.empty() : tensor<2x3x10x64xf32>
  %t = linalg.transpose ins(%x : tensor<2x10x3x64xf32>) outs(%e : tensor<2x3x10x64xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<2x3x10x64xf32>
}
func.func @merge(%x: tensor<?x3x?x40xf32>) -> tensor<?x?x3x40xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %b = tensor.dim %x, %c0 : tensor<?x3x?x40xf32>
  %n = tensor.dim %x, %c2 : tensor<?x3x?x40xf32>
  %e = tensor.empty(%b, %n) : tensor<?x?x3x40xf32>
  %t = linalg.transpose ins(%x : tensor<?x3x?x40xf32>) outs(%e : tensor<?x?x3x40xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<?x?x3x40xf32>
}
func.func @rank5(%x: tensor<2x3x4x5x17xf32>) -> tensor<4x2x3x5x17xf32> {
  %e = tensor.empty() : tensor<4x2x3x5x17xf32>
  %t = linalg.transpose ins(%x : tensor<2x3x4x5x17xf32>) outs(%e : tensor<4x2x3x5x17xf32>) permutation = [2, 0, 1, 3, 4]
  return %t : tensor<4x2x3x5x17xf32>
}
func.func @slice(%x: tensor<2x12x3x64xf32>) -> tensor<2x3x8x64xf32> {
  %s = tensor.extract_slice %x[0, 3, 0, 0] [2, 8, 3, 64] [1, 1, 1, 1] : tensor<2x12x3x64xf32> to tensor<2x8x3x64xf32>
  %e = tensor.empty() : tensor<2x3x8x64xf32>
  %t = linalg.transpose ins(%s : tensor<2x8x3x64xf32>) outs(%e : tensor<2x3x8x64xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<2x3x8x64xf32>
}
func.func @heads_slice(%x: tensor<2x8x5x64xf32>) -> tensor<2x3x8x64xf32> {
  %s = tensor.extract_slice %x[0, 0, 1, 0] [2, 8, 3, 64] [1, 1, 1, 1] : tensor<2x8x5x64xf32> to tensor<2x8x3x64xf32>
  %e = tensor.empty() : tensor<2x3x8x64xf32>
  %t = linalg.transpose ins(%s : tensor<2x8x3x64xf32>) outs(%e : tensor<2x3x8x64xf32>) permutation = [0, 2, 1, 3]
  return %t : tensor<2x3x8x64xf32>
}
func.func @every_other(%x: tensor<4x6x32xf32>) -> tensor<6x4x16xf32> {
  %s = tensor.extract_slice %x[0, 0, 1] [4, 6, 16] [1, 1, 2] : tensor<4x6x32xf32> to tensor<4x6x16xf32>
  %e = tensor.empty() : tensor<6x4x16xf32>
  %t = linalg.transpose ins(%s : tensor<4x6x16xf32>) outs(%e : tensor<6x4x16xf32>) permutation = [1, 0, 2]
  return %t : tensor<6x4x16xf32>
}
func.func @into_slice(%x: tensor<3x5x40xf32>) -> tensor<5x4x40xf32> {
  %zero = arith.constant 0.0 : f32
  %big = tensor.empty() : tensor<5x4x40xf32>
  %z = linalg.fill ins(%zero : f32) outs(%big : tensor<5x4x40xf32>) -> tensor<5x4x40xf32>
  %d = tensor.extract_slice %z[0, 1, 0] [5, 3, 40] [1, 1, 1] : tensor<5x4x40xf32> to tensor<5x3x40xf32>
  %t = linalg.transpose ins(%x : tensor<3x5x40xf32>) outs(%d : tensor<5x3x40xf32>) permutation = [1, 0, 2]
  %r = tensor.insert_slice %t into %z[0, 1, 0] [5, 3, 40] [1, 1, 1] : tensor<5x3x40xf32> into tensor<5x4x40xf32>
  return %r : tensor<5x4x40xf32>
}
func.func @half(%x: tensor<5x7x48xf16>) -> tensor<7x5x48xf16> {
  %e = tensor.empty() : tensor<7x5x48xf16>
  %t = linalg.transpose ins(%x : tensor<5x7x48xf16>) outs(%e : tensor<7x5x48xf16>) permutation = [1, 0, 2]
  return %t : tensor<7x5x48xf16>
}
func.func @inner(%x: tensor<3x16x24xf32>) -> tensor<3x24x16xf32> {
  %e = tensor.empty() : tensor<3x24x16xf32>
  %t = linalg.transpose ins(%x : tensor<3x16x24xf32>) outs(%e : tensor<3x24x16xf32>) permutation = [0, 2, 1]
  return %t : tensor<3x24x16xf32>
}
func.func @channels_first(%x: tensor<2x5x33x40xf32>) -> tensor<2x40x5x33xf32> {
  %e = tensor.empty() : tensor<2x40x5x33xf32>
  %t = linalg.transpose ins(%x : tensor<2x5x33x40xf32>) outs(%e : tensor<2x40x5x33xf32>) permutation = [0, 3, 1, 2]
  return %t : tensor<2x40x5x33xf32>
}
func.func @keys_for_qk(%x: tensor<?x37x3x64xf32>) -> tensor<?x3x64x37xf32> {
  %c0 = arith.constant 0 : index
  %b = tensor.dim %x, %c0 : tensor<?x37x3x64xf32>
  %e = tensor.empty(%b) : tensor<?x3x64x37xf32>
  %t = linalg.transpose ins(%x : tensor<?x37x3x64xf32>) outs(%e : tensor<?x3x64x37xf32>) permutation = [0, 2, 3, 1]
  return %t : tensor<?x3x64x37xf32>
}
func.func @reverse(%x: tensor<17x3x4x18xi32>) -> tensor<18x4x3x17xi32> {
  %e = tensor.empty() : tensor<18x4x3x17xi32>
  %t = linalg.transpose ins(%x : tensor<17x3x4x18xi32>) outs(%e : tensor<18x4x3x17xi32>) permutation = [3, 2, 1, 0]
  return %t : tensor<18x4x3x17xi32>
}
"""


# The cases whose transpose reads or writes a slice: the result NumPy gives.
SLICED = {
    "slice": lambda x: x[:, 3:11].transpose(0, 2, 1, 3),
    "heads_slice": lambda x: x[:, :, 1:4].transpose(0, 2, 1, 3),
    "every_other": lambda x: x[:, :, 1::2].transpose(1, 0, 2),
    "into_slice": lambda x: np.concatenate([np.zeros((5, 1, 40), np.float32),
                                            x.transpose(1, 0, 2)], axis=1),
}


def main():
    work = attn_exec.workdir_from_argv(sys.argv)
    checks = attn_exec.Checks()
    ir = subprocess.run([ATTENTION_OPT, "--attn-lower-to-cpu-pipeline",
                         "--mlir-print-ir-before=attn-vectorize-copies",
                         "--mlir-print-ir-after=attn-vectorize-copies", "-o", os.devnull, "-"],
                        input=MODULE, capture_output=True, text=True, check=True).stderr
    for when in ("Before", "After"):
        owners, current = [], None
        for dump in ir.split("// -----// IR Dump ")[1:]:
            if not dump.startswith(when + " AttnVectorizeCopiesPass"):
                continue
            for name, transpose in re.findall(r"func\.func @(\w+)|(linalg\.transpose)", dump):
                current = name or current
                if transpose:
                    owners.append(current)
        print("IR %s attn-vectorize-copies: %d linalg.transpose (%s)"
              % (when.lower(), len(owners), ", ".join("@" + o for o in sorted(owners))))

    rng = np.random.default_rng(7)
    normal = lambda *s: rng.standard_normal(s).astype(np.float32)
    cases = [("split", normal(2, 10, 3, 64), (0, 2, 1, 3)),
             ("merge", normal(3, 3, 11, 40), (0, 2, 1, 3)),
             ("rank5", normal(2, 3, 4, 5, 17), (2, 0, 1, 3, 4)),
             ("slice", normal(2, 12, 3, 64), None),
             ("heads_slice", normal(2, 8, 5, 64), None),
             ("every_other", normal(4, 6, 32), None),
             ("into_slice", normal(3, 5, 40), None),
             ("half", normal(5, 7, 48).astype(np.float16), (1, 0, 2)),
             ("inner", normal(3, 16, 24), (0, 2, 1)),
             ("channels_first", normal(2, 5, 33, 40), (0, 3, 1, 2)),
             ("keys_for_qk", normal(2, 37, 3, 64), (0, 2, 3, 1)),
             ("reverse", rng.integers(-2**31, 2**31, (17, 3, 4, 18), dtype=np.int32),
              (3, 2, 1, 0))]
    for variant, args in (("host", []), ("x86-64-v3", ["--target-cpu=x86-64-v3"])):
        compiled = attn_exec.compile_module(MODULE, work, extra_args=args)
        for threads in ("default", "1"):
            for entry, x, perm in cases:
                label = "%s %s threads=%s" % (entry, variant, threads)
                with checks(label):
                    want = x.transpose(perm) if perm else SLICED[entry](x)
                    (got,) = attn_exec.run(compiled, entry, [x], work,
                                           extra_args=[] if threads == "default"
                                           else ["--threads", threads])
                    assert got.dtype == want.dtype, (got.dtype, want.dtype)
                    assert got.shape == want.shape, (got.shape, want.shape)
                    assert np.array_equal(got, want), "differs in %d elements" % int(
                        (got != want).sum())
                    print("%s: exact" % label)
    checks.finish("vectorized_copies")


if __name__ == "__main__":
    main()
