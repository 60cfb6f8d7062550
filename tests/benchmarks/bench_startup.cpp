// Whole-process cost of the light commands (Google Benchmark). Target, issue 15: `clustercast
// simulate` of GPT-3 175B on 1,024 GPUs in <= 15 ms and <= 40 MB peak memory on this 2-core
// machine, with the CUDA backend built (before the engine commands moved to
// clustercast-engine: 65 ms and 225 MB, most of it loading CUDA, cuBLAS, NCCL, CUPTI and MPI).
// Each iteration starts the real binary and waits for it; peak_rss_MiB is the largest
// resident set any of those processes reached (wait4's ru_maxrss).
// Run: ./build/tests/bench_startup
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <fcntl.h>
#include <stdexcept>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

extern char** environ;

namespace {

// Runs `args` with stdout and stderr sent to /dev/null; returns its peak resident set in KiB.
long run_process(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int err = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (err != 0) throw std::runtime_error("cannot start " + args[0]);
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(args[1] + " did not exit 0");
  return usage.ru_maxrss;
}

void run(benchmark::State& state, const std::vector<std::string>& args) {
  long peak_kib = 0;
  for (auto _ : state) peak_kib = std::max(peak_kib, run_process(args));
  state.counters["peak_rss_MiB"] = static_cast<double>(peak_kib) / 1024.0;
}

const std::string kBinary = CLUSTERCAST_BINARY;

void BM_SimulateGpt3_175B_1024(benchmark::State& s) {
  run(s, {kBinary, "simulate", "--model", "gpt3-175b", "--cluster", "dgx-a100-80gb", "--gpus", "1024",
          "--tensor-model-parallel-size", "8", "--pipeline-model-parallel-size", "16", "--sequence-parallel",
          "--recompute-granularity", "selective", "--micro-batch-size", "1", "--global-batch-size", "1536"});
}
// Issue 31's target: DeepSeek-V3 (MLA, MoE, one MTP layer) on 2,048 H100s at its report's layout
// (PP 16, EP 64, no TP) in <= 20 ms, whole process.
void BM_SimulateDeepSeekV3_2048(benchmark::State& s) {
  run(s, {kBinary, "simulate", "--model", "deepseek-v3", "--cluster", "dgx-h100", "--gpus", "2048",
          "--pipeline-model-parallel-size", "16", "--expert-model-parallel-size", "64",
          "--decoder-first-pipeline-num-layers", "3", "--decoder-last-pipeline-num-layers", "2",
          "--use-distributed-optimizer", "--micro-batch-size", "1", "--global-batch-size", "15360",
          "--moe-token-dispatcher-type", "alltoall", "--moe-grouped-gemm"});
}
void BM_Help(benchmark::State& s) { run(s, {kBinary, "--help"}); }
// The reference: what every command paid before the split, loading MPI and (where built) CUDA.
void BM_EngineHelp(benchmark::State& s) { run(s, {kBinary + "-engine", "--help"}); }

BENCHMARK(BM_SimulateGpt3_175B_1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_SimulateDeepSeekV3_2048)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Help)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_EngineHelp)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
