#!/usr/bin/env bash
# tests/gpu/run.sh OUT_DIR — the GPU check, one command, on a machine with NVIDIA GPUs:
#   1. builds clustercast with the CUDA backend (build-gpu/), unless --no-build;
#   2. runs the GPU tests (kernels against the CPU engine's ops, cuBLAS GEMMs, CUPTI
#      attribution, GPU fingerprint, the CUDA backend's losses against the CPU backend's
#      for the same seed over 4 steps in every recompute mode — and, with 2+ GPUs, TP, SP,
#      PP 1F1B and interleaved, DP with the distributed optimizer — and a GPU profile that
#      must time every op a CPU profile times with no CUPTI record dropped); a skipped test is
#      a failure here (a test needing 2 GPUs is skipped, and reported, on a 1-GPU machine);
#   3. profiles a real run of a GPT-3-shaped layer set on every GPU (GPT-3 6.7B's shapes:
#      hidden 4096, 32 heads, seq 2048, vocab 51200; 2 layers; bf16; micro batch 1 and 2; TP
#      1, 2, 4, 8 as far as the GPUs go; SP and selective recomputation) with CUPTI, plus the
#      NCCL collective sweep with 2+ GPUs, and writes the cost database
#      OUT_DIR/gpu-gpt3-layers.json and its timeline OUT_DIR/gpu-gpt3-layers-trace.json;
#   4. prices GPT-3 175B on 1,024 GPUs of this kind from that database (simulate --costs);
#   5. validates the promise on the GPUs (clustercast validate --backend cuda): profiles
#      `small` once, predicts layouts that profile never ran, trains each for real and writes
#      OUT_DIR/validation-gpu.md — on one GPU the recompute modes, micro batches and layer
#      counts; on several, every parallelism (the CPU default layout list);
#   6. prints a summary table last.
# Everything it writes goes under OUT_DIR. Budget: under 10 minutes on one GPU (build about
# 4 minutes on 16 cores, tests about 2, profile about 2).
set -euo pipefail

build=1
if [[ "${1:-}" == "--no-build" ]]; then build=0; shift; fi
out="${1:?usage: tests/gpu/run.sh [--no-build] OUT_DIR}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
log() { printf '[gpu-check %s] %s\n' "$(date +%H:%M:%S)" "$*"; }

if ! command -v nvidia-smi > /dev/null || ! nvidia-smi -L > "$out/gpus.txt" 2>&1; then
  log "no NVIDIA GPU visible (nvidia-smi -L failed); this script needs one"
  exit 1
fi
gpus=$(grep -c '^GPU ' "$out/gpus.txt")
log "$gpus GPU(s): $(head -1 "$out/gpus.txt")"

if (( build )); then
  log "building (build-gpu/, CUDA architectures 80 and 90)"
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$out/configure.log" 2>&1 ||
    { tail -30 "$out/configure.log"; log "configure failed (needs cmake, ninja, a C++20 compiler, MPI, Eigen, gtest)"; exit 1; }
  grep -q "CUDA backend: nvcc" "$out/configure.log" || { log "CMake did not find the CUDA toolkit"; exit 1; }
  cmake --build build-gpu -j"$(nproc)" --target clustercast gpu_tests > "$out/build.log" 2>&1 ||
    { tail -30 "$out/build.log"; log "build failed"; exit 1; }
fi

log "GPU tests"
status=0
./build-gpu/tests/gpu_tests --gtest_output=json:"$out/gpu_tests.json" > "$out/gpu_tests.log" 2>&1 || status=$?
# gtest's closing summary: "[  PASSED  ] N tests.", "[  SKIPPED ] N tests, ...", "[  FAILED  ] N tests, ...".
summary_count() { sed -n "s/^\[  $1 *\] \([0-9][0-9]*\) tests\{0,1\}[,.].*/\1/p" "$out/gpu_tests.log" | tail -1; }
passed=$(summary_count PASSED); passed=${passed:-0}
failed=$(summary_count FAILED); failed=${failed:-0}
skipped=$(summary_count SKIPPED); skipped=${skipped:-0}
(( failed == 0 )) || status=1
# Only the multi-GPU layouts may skip, and only on a machine with one GPU.
if (( skipped > 0 )); then
  grep -B1 '^\[  SKIPPED \]' "$out/gpu_tests.log" | grep -v '^--' | head -6 || true
  if (( gpus >= 2 )) || grep -B1 '^\[  SKIPPED \]' "$out/gpu_tests.log" | grep -q 'no usable CUDA device'; then status=1; fi
fi

# TP sizes the GPUs allow: 1, 2, 4, 8 up to the GPU count (DP fills the rest).
tp="1"
for t in 2 4 8; do (( gpus % t == 0 )) && tp="$tp,$t"; done
sweep=(); (( gpus >= 2 )) || sweep=(--no-collectives)
log "profiling GPT-3 6.7B-shaped layers on $gpus GPU(s), TP $tp"
profile_status=0
timeout 480 mpirun --allow-run-as-root --oversubscribe -np "$gpus" ./build-gpu/cli/clustercast profile \
  --backend cuda --precision bf16 --model gpt3-6.7b --num-layers 2 --tp "$tp" --micro-batch-size 1,2 \
  --sequence-parallel --recompute-granularity selective --warmup-steps 2 --steps 4 "${sweep[@]}" \
  --out "$out/gpu-gpt3-layers.json" --trace-out "$out/gpu-gpt3-layers-trace.json" \
  > "$out/profile.log" 2>&1 || profile_status=$?
grep -q 'dropped' "$out/profile.log" && profile_status=1

# The cluster preset of this GPU kind, so the simulator's analytic parts match the measured ones.
case "$(head -1 "$out/gpus.txt")" in
  *H200*) cluster=h200 ;;
  *H100*) cluster=dgx-h100 ;;
  *A100*40GB*) cluster=dgx-a100-40gb ;;
  *) cluster=dgx-a100-80gb ;;
esac
predict_status=1
if (( profile_status == 0 )); then
  ./build-gpu/cli/clustercast simulate --costs "$out/gpu-gpt3-layers.json" --model gpt3-175b --gpus 1024 \
    --cluster "$cluster" \
    --tp 8 --pp 8 --sequence-parallel --recompute-granularity selective --micro-batch-size 1 \
    --global-batch-size 1536 --num-layers-per-virtual-pipeline-stage 4 > "$out/predict.log" 2>&1 && predict_status=0
fi

if (( gpus >= 2 )); then
  layouts=""  # validate's default: TP, SP, PP 1F1B and interleaved, DP, distributed optimizer, recompute
  ranks=2
else
  layouts="mbs=2; mbs=4; recompute=selective,mbs=2; recompute=full,mbs=4; recompute=full,method=block,rlayers=2; layers=12,mbs=2; layers=4,recompute=selective,mbs=4"
  ranks=1
fi
log "validating: profile small, predict layouts it never ran, train each ($ranks GPU(s))"
validate_status=0
timeout 420 ./build-gpu/cli/clustercast validate --backend cuda --model small --ranks "$ranks" \
  ${layouts:+--layouts "$layouts"} --report "$out/validation-gpu.md" > "$out/validate.log" 2>&1 || validate_status=$?

echo
echo "== GPU check summary =="
printf '%-28s %s\n' "GPU" "$(head -1 "$out/gpus.txt")"
printf '%-28s %s passed, %s failed, %s skipped (log: gpu_tests.log)\n' "GPU tests" "$passed" "$failed" "$skipped"
printf '%-28s %s\n' "GPT-3 layer profile" \
  "$([[ $profile_status == 0 ]] && echo "ok: $out/gpu-gpt3-layers.json" || echo "FAILED ($profile_status): profile.log")"
grep -E '^  iteration |^  annotated compute' "$out/profile.log" | sed 's/^ */  /' || true
if (( gpus >= 2 )); then
  grep -E '^# [a-z_]+ on [0-9]+ ranks|^# fit:' "$out/profile.log" | sed 's/^/  /' || true
fi
printf '%-28s %s\n' "GPT-3 175B on 1,024 GPUs" \
  "$([[ $predict_status == 0 ]] && echo "from the measured database (predict.log):" || echo "not predicted")"
grep -E '^iteration|^training|measurements|^costs' "$out/predict.log" 2>/dev/null | sed 's/^/  /' || true
printf '%-28s %s\n' "validation (validate.log)" \
  "$([[ $validate_status == 0 ]] && echo "every layout within the tolerance: $out/validation-gpu.md" || echo "status $validate_status")"
grep -E '^iteration time: mean|^validation took' "$out/validate.log" 2>/dev/null | sed 's/^/  /' || true
(( status == 0 && profile_status == 0 && predict_status == 0 && validate_status == 0 ))
