#!/usr/bin/env bash
# Sets up and builds (scripts/setup.sh), then runs every test twice: the lit
# suite of the release build (compiler tests with FileCheck, execution tests
# against numpy/torch references, runtime tests), then the same suite on an
# AddressSanitizer + UndefinedBehaviorSanitizer build of the project.
# Ends with one line "N passed, N failed" over both.
# Usage: scripts/test.sh   (ATTN_SKIP_SANITIZERS=1 skips the second run)
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
asan_build="${ASAN_BUILD_DIR:-$root/build-asan}"
bash "$root/scripts/setup.sh" "$build" || { echo "0 passed, 1 failed"; exit 1; }

total_passed=0
total_failed=0
status=0

# run_suite NAME BUILD_DIR: runs lit on BUILD_DIR/test and adds its counts.
run_suite() {
  local name=$1 dir=$2 log="$2/lit-results.txt" start=$SECONDS
  echo "== $name: lit $dir/test"
  # --time-tests: the log ends with the slowest tests, to keep the run short.
  /usr/lib/llvm-22/bin/lit -sv --time-tests --order=lexical "$dir/test" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local passed failed=0 n kind
  passed=$(grep -E '^ *Passed *:' "$log" | grep -oE '[0-9]+' | head -1)
  for kind in Failed Unresolved 'Timed Out' XPASS; do
    n=$(grep -E "^ *$kind *:" "$log" | grep -oE ':[[:space:]]*[0-9]+' | grep -oE '[0-9]+' | head -1)
    failed=$((failed + ${n:-0}))
  done
  # A runner that died before reporting counts as one failure.
  if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
  echo "== $name: ${passed:-0} passed, $failed failed ($((SECONDS - start)) s)"
  total_passed=$((total_passed + ${passed:-0}))
  total_failed=$((total_failed + failed))
  [ "$rc" -eq 0 ] || status=1
}

run_suite release "$build"

if [ "${ATTN_SKIP_SANITIZERS:-0}" != 1 ]; then
  if [ ! -f "$asan_build/build.ninja" ]; then
    # Line tables only: reports still name file and line, and the build
    # takes about a quarter less time than with full debug info.
    cmake -G Ninja -S "$root" -B "$asan_build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DATTN_SANITIZE=ON >/dev/null
  fi
  if ninja -C "$asan_build" -j2 >"$asan_build.log" 2>&1; then
    # Any sanitizer report fails the test that triggered it. The quarantine
    # that catches a use after free holds the last 16 MB freed instead of
    # 256: compiling a module frees far more than either, and with the
    # larger one every compile (MLIR and LLVM allocate without end) took
    # about 45% longer.
    export ASAN_OPTIONS="abort_on_error=0:detect_leaks=1:halt_on_error=1:quarantine_size_mb=16"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
    run_suite "asan+ubsan" "$asan_build"
  else
    tail -20 "$asan_build.log"
    echo "== asan+ubsan: build failed"
    total_failed=$((total_failed + 1))
    status=1
  fi
fi

echo "${total_passed} passed, ${total_failed} failed"
exit "$status"
