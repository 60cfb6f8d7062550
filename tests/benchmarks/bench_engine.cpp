// Training-engine speed on one core (Google Benchmark). Issue 4: tokens/s of the `tiny`
// and `small` presets, and the engine's GEMM rate against Eigen's own product at the same
// shapes (target: within 2x). Run: ./build/tests/bench_engine
#include <benchmark/benchmark.h>

#include <mpi.h>

#include "engine/ops/linear.h"
#include "engine/optimizer.h"
#include "engine/pipeline_runner.h"
#include "sim/presets.h"

namespace {

using namespace cc;
using namespace cc::engine;

// One optimizer step of a single-rank run: forward and backward of every microbatch, then
// AdamW — exactly what `clustercast train` does per step, without data loading.
void train_step(benchmark::State& state, const char* preset) {
  const ModelSpec spec = load_model(preset);
  ParallelConfig c;
  c.micro_batch = 8;
  c.global_batch = 8;
  c.precision = Precision::FP32;
  const ProcessGroups groups = make_process_groups(1, 1, 1);
  const RankModel m = make_rank_model(spec, c, 0, 0);
  ModelWeights<float> w = allocate_weights<float>(m), g = allocate_weights<float>(m);
  initialise_weights(w, m, 1);
  PipelineRunner<float> runner(m, c, groups);
  Optimizer<float> optimizer(m, c, groups, w, AdamWConfig{}, 1.0);
  const int rows = c.micro_batch * spec.seq_length;
  MicrobatchTokens tokens;
  for (int r = 0; r < rows; ++r) {
    tokens.inputs.push_back((r * 31 + 7) % 256);
    tokens.targets.push_back((r * 17 + 3) % 256);
  }
  for (int b = 0; b < c.micro_batch; ++b) tokens.sample_ids.push_back(static_cast<std::uint64_t>(b));
  PassEnv env;
  env.tp = &groups.tp;
  env.batch = c.micro_batch;
  env.seq = spec.seq_length;
  env.hidden = spec.hidden_size;
  env.heads = env.global_heads = spec.num_attention_heads;
  env.head_dim = spec.head_dim();
  env.sample_ids = tokens.sample_ids;
  long step = 0;
  ActivationPeak peak;
  for (auto _ : state) {
    set_zero(g, m);
    benchmark::DoNotOptimize(
        runner.train(w, g, [&](int) { return tokens; }, [&](int) { return env; }, 1.0 / rows, peak));
    optimizer.step(w, g, ++step, 1e-3);
  }
  state.SetItemsProcessed(state.iterations() * rows);  // tokens
  state.counters["tokens_per_s"] = benchmark::Counter(static_cast<double>(rows), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_TrainStep_Tiny(benchmark::State& s) { train_step(s, "tiny"); }
void BM_TrainStep_Small(benchmark::State& s) { train_step(s, "small"); }

// The engine's GEMM (linear_forward) against Eigen's product at a layer's QKV shape.
template <bool engine_op>
void gemm(benchmark::State& state) {
  const Eigen::Index rows = state.range(0), in = state.range(1), out = state.range(2);
  const Mat<float> x = Mat<float>::Random(rows, in), w = Mat<float>::Random(in, out);
  const Vec<float> b = Vec<float>::Random(out);
  Mat<float> y(rows, out);
  for (auto _ : state) {
    if constexpr (engine_op) {
      linear_forward(x, w, b, y);
    } else {
      y.noalias() = x * w;
      y.rowwise() += b.transpose();
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOP_per_s"] =
      benchmark::Counter(2.0 * rows * in * out * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Gemm_Engine(benchmark::State& s) { gemm<true>(s); }
void BM_Gemm_Eigen(benchmark::State& s) { gemm<false>(s); }

BENCHMARK(BM_TrainStep_Tiny)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TrainStep_Small)->Unit(benchmark::kMillisecond);
// tiny QKV (1024 x 128 -> 384) and small FC1 (2048 x 256 -> 1024)
BENCHMARK(BM_Gemm_Engine)->Args({1024, 128, 384})->Args({2048, 256, 1024})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Gemm_Eigen)->Args({1024, 128, 384})->Args({2048, 256, 1024})->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
