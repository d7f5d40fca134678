"""Copies a saved module (argv[1] -> argv[2]) with one extension of its
__attn_cpu_features list, bmi2, renamed to xop (AMD's XOP, an LLVM feature
name outside the runtime's CPUID table), the same length padded with an
empty entry: a module from a compiler that knows more extensions than this
runtime."""
import sys

data = open(sys.argv[1], "rb").read()
old, new = b",bmi2,", b",xop,,"
if data.count(old) != 1:
    sys.exit("unknown_feature.py: expected one %r in %s, found %d" %
             (old, sys.argv[1], data.count(old)))
open(sys.argv[2], "wb").write(data.replace(old, new))
