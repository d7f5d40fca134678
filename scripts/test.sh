#!/usr/bin/env bash
# Sets up and builds (scripts/setup.sh), then runs every test (lit: compiler
# tests with FileCheck, execution tests against numpy/torch references, runtime
# tests). Ends with a line "N passed, N failed". Usage: scripts/test.sh
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
bash "$root/scripts/setup.sh" "$build" || { echo "0 passed, 1 failed"; exit 1; }

log="$build/lit-results.txt"
/usr/lib/llvm-22/bin/lit -sv --order=lexical "$build/test" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
passed=$(grep -E '^ *Passed *:' "$log" | grep -oE '[0-9]+' | head -1)
failed=0
for kind in Failed Unresolved 'Timed Out' XPASS; do
  n=$(grep -E "^ *$kind *:" "$log" | grep -oE ':[[:space:]]*[0-9]+' | grep -oE '[0-9]+' | head -1)
  failed=$((failed + ${n:-0}))
done
echo "${passed:-0} passed, ${failed} failed"
exit "$status"
