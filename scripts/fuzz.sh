#!/usr/bin/env bash
# Fuzzes every parser: builds the "fuzz" preset (clang, libFuzzer, ASan + UBSan; sim and
# interop only) and runs each target of tests/fuzz for SECONDS (default 60) on its committed
# seed corpus and dictionary, two at a time (FUZZ_JOBS). New inputs go to a temporary working corpus, so
# the committed one is never modified. Any finding — a crash, a sanitizer report, an
# exception other than cc::SpecError, a hang (-timeout), a huge allocation (-malloc_limit_mb)
# or a leak — fails the script, naming the target and the reproducer it saved.
#
#   bash scripts/fuzz.sh            # CI: 60 s per target
#   bash scripts/fuzz.sh 3600       # a long campaign: one hour per target
#   FUZZ_WORK=/path bash scripts/fuzz.sh 3600   # keep the grown corpora and logs there
#   FUZZ_JOBS=5 bash scripts/fuzz.sh 3600        # every target at once (one hour in all)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
[[ "$seconds" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: seconds per target must be a positive integer, got '$seconds'" >&2; exit 2; }

bash scripts/build.sh fuzz

targets=(fuzz_model_json fuzz_hf_config fuzz_cluster_json fuzz_cost_database fuzz_layout_file)
keep_work="${FUZZ_WORK:+1}"
work="${FUZZ_WORK:-$(mktemp -d "${TMPDIR:-/tmp}/clustercast-fuzz.XXXXXX")}"
mkdir -p "$work"
bin="$PWD/build-fuzz/tests/fuzz"
# A UBSan report with the stack that led to it (the build aborts on the first report).
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
seeds="$PWD/tests/fuzz/corpus"

run_target() {
  local t="$1" dir="$work/$1"
  mkdir -p "$dir/corpus" "$dir/artifacts"
  # The working corpus comes first: libFuzzer adds new inputs to the first folder only.
  # -timeout: one input running 10 s is a hang; -malloc_limit_mb: one allocation of 1 GiB is
  # a finding (no file this small needs it); the outer timeout catches a stuck process.
  set +e
  timeout -k 30 $((seconds + 120)) "$bin/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -print_final_stats=1 -dict="$PWD/tests/fuzz/$t.dict" \
    -artifact_prefix="$dir/artifacts/" "$dir/corpus" "$seeds/$t" >"$dir/log" 2>&1
  echo $? >"$dir/rc"
  set -e
}

# Two at a time: the CI machine has 2 cores.
start=$SECONDS
running=0
jobs="${FUZZ_JOBS:-2}"  # targets at a time: the 2 cores of the CI machine by default
[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || { echo "fuzz.sh: FUZZ_JOBS must be a positive integer, got '$jobs'" >&2; exit 2; }
for t in "${targets[@]}"; do
  if ((running >= jobs)); then
    wait -n || true
    running=$((running - 1))
  fi
  run_target "$t" &
  running=$((running + 1))
done
wait

failed=0
printf '%-20s %8s %12s %10s %s\n' target seconds executions corpus result
for t in "${targets[@]}"; do
  dir="$work/$t"
  rc=$(cat "$dir/rc" 2>/dev/null || echo 1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  ran=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$dir/log" | tail -1)
  corpus=$(grep -o 'corp: [0-9]*/[0-9]*[a-zA-Z]*' "$dir/log" | tail -1 | cut -d' ' -f2)
  artifacts=$(find "$dir/artifacts" -type f 2>/dev/null | grep -v '/slow-unit-' || true)
  if [[ "$rc" == 0 && -z "$artifacts" ]]; then
    result="no findings"
  else
    result="FINDING (exit $rc)"
    failed=1
  fi
  printf '%-20s %8s %12s %10s %s\n' "$t" "${ran:-?}" "${execs:-?}" "${corpus:-?}" "$result"
done
echo "fuzz.sh: ${#targets[@]} targets x ${seconds} s in $((SECONDS - start)) s of runs (corpus: entries/size)"

if ((failed)); then
  for t in "${targets[@]}"; do
    dir="$work/$t"
    [[ "$(cat "$dir/rc" 2>/dev/null || echo 1)" == 0 ]] && [[ -z "$(find "$dir/artifacts" -type f ! -name 'slow-unit-*')" ]] && continue
    echo "---- $t: finding; log $dir/log" >&2
    grep -E 'ERROR|runtime error|fuzz finding|terminate|uncaught|SUMMARY|Test unit written' "$dir/log" | head -20 >&2 || true
    for a in $(find "$dir/artifacts" -type f ! -name 'slow-unit-*'); do
      echo "reproducer: $a   (rerun: build-fuzz/tests/fuzz/$t $a)" >&2
    done
  done
  echo "fuzz.sh: findings; the working corpora, logs and reproducers are kept in $work" >&2
  exit 1
fi
if [[ -n "$keep_work" ]]; then
  echo "fuzz.sh: working corpora and logs kept in $work"
else
  rm -rf "$work"
fi
