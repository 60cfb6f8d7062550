#!/usr/bin/env bash
# The measured path as a user runs it, checked end to end: one plain `profile` per shape (the
# README's command), `simulate --costs` for layouts that profile never ran, and plain `train`
# of each layout three times (8 steps; a run's time is the median of steps 3-8 on the slowest
# rank, a layout's the median over its three runs). Two shapes: the `small` preset (six layouts)
# and one no preset has (four layers, hidden 384, six heads, sequence 128; five layouts).
# Prints a Markdown table and the mean, worst and signed errors. Run it on a quiet machine
# (about 8 minutes on 2 cores); nothing else may compete for the cores.
# Usage: plain-profile-check.sh [CLUSTERCAST_BINARY] [WORK_DIR]   (defaults: build/, a temporary folder)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cc="$(realpath "${1:-$root/build/cli/clustercast}")"
work="${2:-$(mktemp -d)}"
mkdir -p "$work" && cd "$work"
mpirun=(mpirun -np 2)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
declare -A shape=([small]="--model small"
                  [own]="--model small --num-layers 4 --hidden-size 384 --num-attention-heads 6 --seq-length 128")
layouts=(
  "small|--pp 2 --micro-batch-size 2 --global-batch-size 8"
  "small|--pp 2 --micro-batch-size 1 --global-batch-size 4 --recompute-granularity full"
  "small|--pp 2 --num-layers-per-virtual-pipeline-stage 1 --micro-batch-size 1 --global-batch-size 4"
  "small|--tp 2 --micro-batch-size 2 --global-batch-size 8"
  "small|--tp 2 --sequence-parallel --recompute-granularity selective --micro-batch-size 4 --global-batch-size 16"
  "small|--use-distributed-optimizer --micro-batch-size 2 --global-batch-size 16"
  "own|--pp 2 --micro-batch-size 2 --global-batch-size 8"
  "own|--pp 2 --micro-batch-size 1 --global-batch-size 4 --recompute-granularity full"
  "own|--tp 2 --micro-batch-size 2 --global-batch-size 8"
  "own|--tp 2 --sequence-parallel --recompute-granularity selective --micro-batch-size 4 --global-batch-size 16"
  "own|--use-distributed-optimizer --micro-batch-size 2 --global-batch-size 16"
)
for s in small own; do
  echo "profiling $s (log: $work/$s-profile.log)" >&2
  # shellcheck disable=SC2086
  "${mpirun[@]}" "$cc" profile ${shape[$s]} --tp 1,2 --micro-batch-size 1,2,4 --sequence-parallel \
    --recompute-granularity selective --out "$s.json" > "$s-profile.log" 2>&1
done
for round in 1 2 3; do
  for i in "${!layouts[@]}"; do
    s=${layouts[$i]%%|*}; flags=${layouts[$i]#*|}
    echo "round $round: training $s $flags" >&2
    # shellcheck disable=SC2086
    "${mpirun[@]}" "$cc" train ${shape[$s]} $flags --steps 8 --report-json "train-$i-$round.json" \
      > "train-$i-$round.log" 2>&1
  done
done
for i in "${!layouts[@]}"; do
  s=${layouts[$i]%%|*}; flags=${layouts[$i]#*|}
  # shellcheck disable=SC2086
  "$cc" simulate --costs "$s.json" ${shape[$s]} --gpus 2 --precision fp32 $flags --json > "predicted-$i.json"
done
python3 - "${layouts[@]}" <<'PY'
import json, statistics, sys
errors = []
print("| shape | layout | predicted s | measured s (3 runs) | error |")
print("|---|---|---|---|---|")
for i, row in enumerate(sys.argv[1:]):
    shape, flags = row.split("|")
    runs = []
    for r in (1, 2, 3):
        d = json.load(open(f"train-{i}-{r}.json"))
        runs.append(statistics.median(d["step_seconds"][d["first_timed_step"] - 1:]))
    measured = statistics.median(runs)
    predicted = json.load(open(f"predicted-{i}.json"))["iteration_time_s"]
    e = predicted / measured - 1
    errors.append(e)
    print(f"| {shape} | `{flags}` | {predicted:.4f} | {measured:.4f} ({', '.join(f'{x:.4f}' for x in runs)}) | {e:+.1%} |")
print(f"\nmean |error| {statistics.mean(abs(e) for e in errors):.1%}, worst {max(abs(e) for e in errors):.1%}, "
      f"signed mean {statistics.mean(errors):+.1%}, {sum(e > 0 for e in errors)} of {len(errors)} predicted slow")
PY
