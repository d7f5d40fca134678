#!/usr/bin/env bash
# Benchmarks against ONNX Runtime: sets up and builds the project, installs
# onnxruntime-node 1.30.0 from the npm registry if missing, measures the FMA
# peak, runs every case on both, writes bench/results/bench-<date>.{md,png}.
# Usage: bench/run.sh [--threads N] [--repeat N]
#                     [--sweep [--sweep-weights-as-arguments] [--sweep-rounds N]]
#                     [--tag NAME] [--target-cpu CPU] [--gpt-blocks N]
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="${BUILD_DIR:-$root/build}"
bash "$root/scripts/setup.sh" "$build" >/dev/null
command -v node >/dev/null || { export DEBIAN_FRONTEND=noninteractive; apt-get install -y -qq nodejs npm >/dev/null; }
if [ ! -f "$here/node_modules/onnxruntime-node/package.json" ]; then
  (cd "$here" && npm install --ignore-scripts --no-audit --no-fund >/dev/null)
fi
exec /usr/bin/python3 "$here/run.py" "$build" "$@"
