#!/usr/bin/env bash
# The main job: set up and build (scripts/setup.sh), then compile and run the
# seed's GPT-2-small causal multi-head attention (d=768, 12 heads, T=1024),
# check it against a float64 reference and print ms and GFLOP/s.
# Extra arguments go to bench/gpt2_main.py (--tokens, --repeat, --threads).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
bash "$root/scripts/setup.sh" "$build"
exec /usr/bin/python3 "$root/bench/gpt2_main.py" "$build" "$@"
