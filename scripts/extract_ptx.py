#!/usr/bin/env python3
"""Prints the PTX that `attn-lower-to-nvvm-pipeline{format=isa}` embedded in a
module (the `assembly = "..."` of each gpu.binary object), readable.

    attention-opt m.mlir --attn-lower-to-nvvm-pipeline="format=isa" -o m.ll.mlir
    scripts/extract_ptx.py m.ll.mlir > m.ptx
    /usr/local/cuda/bin/ptxas -arch=sm_90 -v m.ptx -o m.cubin
"""
import re
import sys


def unescape(text):
    # MLIR string escapes: \XX (two hex digits), \\ and \".
    out = bytearray()
    i = 0
    raw = text.encode()
    while i < len(raw):
        c = raw[i]
        if c == 0x5C and i + 2 < len(raw) + 1:
            nxt = raw[i + 1:i + 3]
            if re.fullmatch(rb"[0-9A-Fa-f]{2}", nxt):
                out.append(int(nxt, 16))
                i += 3
                continue
            out.append(raw[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return out.decode()


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: extract_ptx.py MODULE.mlir (lowered with format=isa)")
    try:
        text = open(sys.argv[1]).read()
    except OSError as e:
        sys.exit("extract_ptx.py: %s" % e)
    found = re.findall(r'assembly = "((?:[^"\\]|\\.)*)"', text)
    if not found:
        sys.exit("extract_ptx.py: %s holds no PTX (lower it with "
                 "attn-lower-to-nvvm-pipeline{format=isa})" % sys.argv[1])
    for ptx in found:
        sys.stdout.write(unescape(ptx))


if __name__ == "__main__":
    main()
