#!/usr/bin/env bash
# The GPU benchmark: compile every GPU case (attn-lower-to-nvvm-pipeline,
# saved as shared objects), run them on the GPU through the runtime's CUDA
# backend, check each against an independent reference, and print a table
# of ms and TFLOP/s next to PyTorch's SDPA (written to
# build-gpu-bench/gpu-results.md).
#
#   bash bench/gpu/run.sh          both phases and the CUDA lit test (needs the
#                                  compiler and a GPU)
#   bash bench/gpu/run.sh prepare  compile only, into build-gpu-bench/ (no GPU)
#   bash bench/gpu/run.sh run      run build-gpu-bench/ on a GPU; needs only
#                                  the runtime (built here if missing, without
#                                  LLVM/MLIR)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${ATTN_GPU_BENCH_DIR:-$ROOT/build-gpu-bench}"
PHASE="${1:-all}"
case "$PHASE" in all | prepare | run) ;; *)
  echo "usage: bench/gpu/run.sh [all|prepare|run]" >&2
  exit 2
  ;;
esac

# A python3 with numpy, preferably with PyTorch too (the peer and the
# reference of the large cases).
PY=""
for want in "numpy, torch" "numpy"; do
  for candidate in python3 /usr/bin/python3; do
    if [ -z "$PY" ] && "$candidate" -c "import $want" 2>/dev/null; then PY="$candidate"; fi
  done
done
if [ -z "$PY" ]; then
  echo "bench/gpu/run.sh: no python3 with numpy found" >&2
  exit 1
fi

if [ "$PHASE" != run ]; then
  if [ ! -x "$ROOT/build/bin/attention-run" ]; then
    bash "$ROOT/scripts/setup.sh"
  fi
  ninja -C "$ROOT/build" attention-run
  "$PY" "$ROOT/bench/gpu/run.py" prepare --out "$OUT" \
    --attention-run "$ROOT/build/bin/attention-run"
  # A runtime-only attention-run to take along to GPU machines without
  # LLVM/MLIR.
  cmake -G Ninja -S "$ROOT" -B "$OUT/runtime-build" -DATTN_ENABLE_MLIR=OFF \
    -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$OUT/runtime-build" attention-run >/dev/null
fi

if [ "$PHASE" = all ]; then
  # The CUDA execution test (JIT, every correctness case, REQUIRES: cuda).
  LIT="$(command -v lit || echo /usr/lib/llvm-22/bin/lit)"
  ninja -C "$ROOT/build" attention-opt attention-run >/dev/null
  "$LIT" -sv "$ROOT/build/test/execution/gpu_sdpa.py"
fi

if [ "$PHASE" != prepare ]; then
  RUNNER="$OUT/runtime-build/bin/attention-run"
  if ! "$RUNNER" --help >/dev/null 2>&1; then
    # Built elsewhere and unusable here: build the runtime on this machine.
    rm -rf "$OUT/runtime-build"
    cmake -G Ninja -S "$ROOT" -B "$OUT/runtime-build" -DATTN_ENABLE_MLIR=OFF \
      -DCMAKE_BUILD_TYPE=Release >/dev/null
    ninja -C "$OUT/runtime-build" attention-run >/dev/null
  fi
  "$PY" "$ROOT/bench/gpu/run.py" run --out "$OUT" --attention-run "$RUNNER"
fi
