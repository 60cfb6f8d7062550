#!/usr/bin/env bash
# Every test on a fresh machine: set up, build, run the test suite; then the same suite
# again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh default
ctest --preset default -j "$(nproc)"
bash scripts/build.sh asan
ctest --preset asan -j "$(nproc)"
