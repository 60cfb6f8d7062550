#!/usr/bin/env bash
# Every test on a fresh machine: set up, build, run the test suite; then the same suite
# again under AddressSanitizer + UndefinedBehaviorSanitizer — all of it but the 46-layout
# MPI equivalence matrix, of which a sample covering each code path runs (the sanitized
# engine is ~20x slower; the full matrix runs in the plain build above), the profile timing
# check (a prediction-vs-measurement bound, meaningless under a sanitizer; the profiler's
# code paths run in the other profile tests), the cross-validation and the search-estimate
# accuracy check (refits and thousands of simulated layouts through code the other accuracy
# and search tests run); the sanitizer build leaves out the benchmarks too. The CUDA backend
# builds and its GPU tests register (skipping without a GPU) in the plain build only.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh default
ctest --preset default -j "$(nproc)"
bash scripts/build.sh asan
ctest --preset asan -j "$(nproc)"
ctest --preset asan-mpi-sample -j "$(nproc)"
bash scripts/fuzz.sh 60
