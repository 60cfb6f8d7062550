// Search speed (Google Benchmark). Targets: the whole layout space of GPT-3 175B on 1,024 GPUs
// in <= 5 s, Llama-3 405B on 16,384 H100s in <= 30 s, and Llama 3.1 405B at 128K tokens on
// 16,384 H100s, context parallelism included, in <= 5 s, on this 2-core machine.
// Run: ./build/tests/bench_search
#include <benchmark/benchmark.h>

#include "sim/presets.h"
#include "sim/search.h"

namespace {

using namespace cc;

void run(benchmark::State& state, const char* model, const char* cluster, int gpus, int batch, bool flash,
         int seq_length = 0) {
  SearchRequest r;
  r.model = load_model(model);
  if (seq_length) r.model.seq_length = seq_length;
  r.cluster = load_cluster(cluster);
  r.gpus = gpus;
  r.global_batch = batch;
  r.top = 20;
  r.space.attention = flash ? AttentionKernel::Flash : AttentionKernel::Unfused;
  SearchOutcome out;
  for (auto _ : state) {
    out = search(r);
    benchmark::DoNotOptimize(out.ranked.data());
  }
  state.counters["layouts"] = static_cast<double>(out.enumerated);
  state.counters["fitting"] = static_cast<double>(out.fitting);
  state.counters["simulated"] = static_cast<double>(out.simulated);
}

void BM_Search_Gpt3_175B_1024(benchmark::State& s) { run(s, "gpt3-175b", "dgx-a100-80gb", 1024, 1536, false); }
void BM_Search_Llama3_405B_16384(benchmark::State& s) { run(s, "llama3-405b", "dgx-h100", 16384, 2048, true); }
// Llama 3's long-context stage (Table 4 of the Llama 3 paper): 16M tokens a step, 128 sequences of 131,072.
void BM_Search_Llama3_405B_128K_16384(benchmark::State& s) {
  run(s, "llama3-405b", "dgx-h100", 16384, 128, true, 131072);
}

// Issue 31's target: the whole DeepSeek-V3 space (EP and ETP beside TP, CP, PP, DP, micro batch
// and recompute) on 2,048 H100s in <= 5 s, at the report's final batch of 15,360 sequences.
void BM_Search_DeepSeekV3_2048(benchmark::State& s) { run(s, "deepseek-v3", "dgx-h100", 2048, 15360, true); }

BENCHMARK(BM_Search_Gpt3_175B_1024)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Search_Llama3_405B_16384)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Search_Llama3_405B_128K_16384)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Search_DeepSeekV3_2048)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
