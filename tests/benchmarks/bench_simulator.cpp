// Simulator speed (Google Benchmark). Targets, issue 2: one iteration of GPT-3 175B on
// 1,024 GPUs in symmetric mode <= 10 ms on one core; every-rank mode <= 2 s; Llama-3 405B
// on 16,384 GPUs symmetric <= 50 ms. Run: ./build/tests/bench_simulator
#include <benchmark/benchmark.h>

#include "sim/analytic_costs.h"
#include "sim/presets.h"
#include "sim/simulator.h"

namespace {

using namespace cc;

ParallelConfig gpt3_1024() {
  ParallelConfig c;
  c.tp = 8;
  c.pp = 16;
  c.dp = 8;
  c.sequence_parallel = true;
  c.recompute = RecomputeGranularity::Selective;
  c.global_batch = 1536;
  return c;
}

ParallelConfig llama405b_16384() {
  // Meta's Llama 3 405B layout (Dubey et al. 2024, Table 4): TP 8, PP 16, DP 128, 16M-token
  // batches of 8K sequences, 126 layers split 7 + 14x8 + 7.
  ParallelConfig c;
  c.tp = 8;
  c.pp = 16;
  c.dp = 128;
  c.first_stage_layers = 7;
  c.last_stage_layers = 7;
  c.sequence_parallel = true;
  c.global_batch = 2048;
  c.distributed_optimizer = true;
  c.attention = AttentionKernel::Flash;
  return c;
}

void run(benchmark::State& state, const char* model_name, const char* cluster_name, const ParallelConfig& c,
         bool every_rank) {
  const ModelSpec m = load_model(model_name);
  const ClusterSpec cluster = load_cluster(cluster_name);
  const AnalyticCosts costs(cluster, c.precision);
  SimOptions o;
  o.every_rank = every_rank;
  for (auto _ : state) {
    SimResult each = simulate(m, cluster, c, costs, o);
    benchmark::DoNotOptimize(each.iteration_time_s);
  }
  const SimResult r = simulate(m, cluster, c, costs, o);
  state.counters["tasks"] = static_cast<double>(r.tasks);
  state.counters["events"] = static_cast<double>(r.events);
  state.counters["iteration_s"] = r.iteration_time_s;
}

void BM_Gpt3_175B_1024_Symmetric(benchmark::State& s) { run(s, "gpt3-175b", "dgx-a100-80gb", gpt3_1024(), false); }
void BM_Gpt3_175B_1024_EveryRank(benchmark::State& s) { run(s, "gpt3-175b", "dgx-a100-80gb", gpt3_1024(), true); }
void BM_Llama3_405B_16384_Symmetric(benchmark::State& s) {
  run(s, "llama3-405b", "dgx-h100", llama405b_16384(), false);
}

BENCHMARK(BM_Gpt3_175B_1024_Symmetric)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Gpt3_175B_1024_EveryRank)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Llama3_405B_16384_Symmetric)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
