"""Prints an x86-64 CPU name (for --target-cpu) with an extension this host
lacks: graniterapids (AMX) on hosts without amx_tile, else znver5
(avx512_vp2intersect, which no CPU with AMX has)."""
import sys

with open("/proc/cpuinfo") as f:
    flags = next((set(line.split(":", 1)[1].split()) for line in f
                  if line.startswith("flags")), set())
if "amx_tile" not in flags:
    print("graniterapids")
elif "avx512_vp2intersect" not in flags:
    print("znver5")
else:
    sys.exit("foreign_cpu.py: this host has both AMX and avx512_vp2intersect; "
             "no CPU name to test with")
