#!/usr/bin/env bash
# Runs one libFuzzer target for a number of seconds, with a corpus seeded
# from the test fixtures. Crashing inputs land in fuzz/findings/TARGET/.
# Usage: scripts/fuzz.sh npy|mlir|onnx|weight-spans SECONDS
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target=${1:?usage: scripts/fuzz.sh npy|mlir|onnx|weight-spans SECONDS}
seconds=${2:?usage: scripts/fuzz.sh npy|mlir|onnx|weight-spans SECONDS}
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"
bash "$root/scripts/setup.sh" "$root/build" >/dev/null
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir -DATTN_FUZZ=ON >/dev/null
fi
ninja -C "$build" -j2 "attn-fuzz-$target" >/dev/null

corpus="$build/corpus/$target"
findings="$root/fuzz/findings/$target"
mkdir -p "$corpus" "$findings"
case "$target" in
  npy)
    /usr/bin/python3 "$root/test/runtime/Inputs/make_npy.py" "$corpus" >/dev/null
    dict=() ;;
  mlir)
    # Every lit input, one function per file, as seeds.
    find "$root/test" "$root/docs/tutorial" "$root/bench/models" -name '*.mlir' \
      -exec cp {} "$corpus/" \;
    dict=() ;;
  onnx|weight-spans)
    # The conformance models, the importer tests' models and the export
    # pattern fixtures.
    /usr/bin/python3 "$root/test/onnx/Inputs/make_models.py" "$corpus" >/dev/null
    # Real export shapes (torch exports with dynamic axes, GPT-2, BERT, ...).
    patterns="$build/pattern-models"
    /usr/bin/python3 "$root/test/onnx/Inputs/pattern_models.py" "$patterns" >/dev/null
    cp "$patterns"/*.onnx "$corpus/"
    find "$corpus" -type f ! -name '*.onnx' -delete
    for d in "$root"/../shared/conformance/onnx_attention/*/; do
      [ -f "$d/model.onnx" ] && cp "$d/model.onnx" "$corpus/$(basename "$d").onnx"
    done
    dict=() ;;
  *) echo "unknown target '$target' (npy, mlir, onnx or weight-spans)" >&2; exit 2 ;;
esac
"$build/bin/attn-fuzz-$target" "$corpus" -max_total_time="$seconds" \
  -artifact_prefix="$findings/" -print_final_stats=1 \
  -fork=1 -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 -timeout=30 2>&1 | tail -25
