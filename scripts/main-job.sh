#!/usr/bin/env bash
# The main job on a fresh machine: set up, build, and simulate GPT-3 175B on 1,024 A100-80GB
# with the layout of Korthikanti et al. 2022 (TP 8, PP 16, sequence parallelism, selective
# recomputation, and the unfused attention of that run, which stored the s x s scores) for a
# 300B-token run.
set -euo pipefail
cd "$(dirname "$0")/.."
# Only the command-line program: the tests, benchmarks and GUI are scripts/test-all.sh's and
# scripts/gui.sh's to build (on a fresh 2-core machine this answers in under five minutes).
bash scripts/build.sh default clustercast
./build/cli/clustercast simulate --model gpt3-175b --cluster dgx-a100-80gb --gpus 1024 \
  --tensor-model-parallel-size 8 --pipeline-model-parallel-size 16 --sequence-parallel \
  --recompute-granularity selective --micro-batch-size 1 --global-batch-size 1536 \
  --attention-backend unfused --train-tokens 300e9
