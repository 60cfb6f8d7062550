#!/usr/bin/env bash
# Configures and builds one CMake preset (default: "default"), installing dependencies first;
# with more arguments, only those targets (scripts/main-job.sh builds just the CLI).
set -euo pipefail
cd "$(dirname "$0")/.."
preset="${1:-default}"
shift || true
bash scripts/install-deps.sh
cmake --preset "$preset" >/dev/null
if [ "$#" -gt 0 ]; then
  cmake --build --preset "$preset" -j "$(nproc)" --target "$@"
else
  cmake --build --preset "$preset" -j "$(nproc)"
fi
