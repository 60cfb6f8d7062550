#!/usr/bin/env bash
# Installs what the GUI needs, builds clustercast-gui (default preset, build/) and opens it.
# Arguments go to clustercast-gui (e.g. --model llama3-70b --gpus 2048 --tp 8 --pp 8).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake --preset default >/dev/null
cmake --build --preset default -j "$(nproc)" --target clustercast-gui clustercast
exec build/cli/clustercast-gui "$@"
