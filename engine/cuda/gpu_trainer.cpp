#include "engine/cuda/gpu_trainer.h"

#include <cuda_bf16.h>

#include <chrono>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "engine/cuda/gpu_optimizer.h"
#include "engine/cuda/gpu_pipeline.h"
#include "engine/cuda/nvtx_ranges.h"
#include "engine/stall_watchdog.h"
#include "engine/training_loop.h"
#include "sim/error.h"

namespace cc::cuda {

using engine::MicrobatchTokens;

namespace {

template <typename T>
void run(const ModelSpec& model, const ParallelConfig& c, const engine::TrainOptions& o,
         const engine::ProcessGroups& groups, const engine::RankModel& m, GpuContext& ctx, const engine::Corpus& corpus,
         engine::ModelWeights<float>& host, engine::TrainReport& report, std::ostream& log) {
  const bool root = groups.world_rank == 0;
  const int S = model.seq_length, B = c.global_batch, mb = c.micro_batch;
  const engine::WindowSampler sampler(corpus.train, S, o.seed);
  const engine::FlatLayout layout = engine::flat_layout(host, m);
  GpuWeights<T> w(host, m, engine::optimizer_shard(layout.size, c, groups.me.dp).padded, ctx.compute());
  GpuOptimizer<T> optimizer(m, c, ctx, w, layout, engine::AdamWConfig{o.lr, 0.9, 0.95, 1e-8, o.weight_decay},
                            o.clip_grad);
  GpuModel<T> chunks(m, ctx, w);
  GpuPipeline<T> pipeline(m, c, ctx, chunks);
  DeviceBuffer<double> loss_sum(1);

  // The last stage's TP rank 0 of each replica holds the loss; sum it over the world.
  const bool holds_loss = groups.me.pp == c.pp - 1 && groups.me.tp == 0;
  auto global_mean = [&](double tokens) {
    double v = 0;
    CC_CUDA(cudaMemcpyAsync(&v, loss_sum.data(), sizeof v, cudaMemcpyDeviceToHost, ctx.compute()));
    CC_CUDA(cudaStreamSynchronize(ctx.compute()));
    if (!holds_loss) v = 0;
    groups.world.all_reduce_sum(&v, 1, {"loss_reduce", Phase::Forward, -1, -1, {}, true});
    return v / tokens;
  };

  const auto t0 = std::chrono::steady_clock::now();
  for (long step = 1; step <= o.steps; ++step) {
    const TokensFn tokens = [&](int j) { return engine::step_tokens(sampler, c, groups, S, step, j); };
    const EnvFn env = [&](int j) { return engine::step_pass_env(model, c, o, groups, step, j); };
    const auto ts = std::chrono::steady_clock::now();
    double norm = 0, loss = 0;
    {
      engine::ScopedOp iteration({"train_step", Phase::Forward, -1, -1, {step, 1, 1, 1}, false});
      CC_CUDA(cudaMemsetAsync(loss_sum.data(), 0, sizeof(double), ctx.compute()));
      pipeline.train(tokens, env, 1.0 / (static_cast<double>(B) * S), loss_sum.data(), report.activations);
      norm = optimizer.step(step, engine::learning_rate(o, step));
      loss = global_mean(static_cast<double>(B) * S);  // waits for the step's last kernel
    }
    report.losses.push_back(loss);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - ts).count();
    report.step_seconds.push_back(seconds);
    engine::print_step(log, o, groups, step, loss, norm, B * S / seconds);
    engine::mark_progress("step", step);
  }
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  report.tokens_per_s = static_cast<double>(o.steps) * B * S / elapsed;

  if (o.eval_windows > 0) {
    const std::vector<MicrobatchTokens> windows = engine::validation_microbatches(corpus, model, c, o, groups);
    if (!windows.empty()) {
      CC_CUDA(cudaMemsetAsync(loss_sum.data(), 0, sizeof(double), ctx.compute()));
      const TokensFn tokens = [&](int j) { return windows[static_cast<std::size_t>(j)]; };
      const EnvFn env = [&](int j) { return engine::validation_pass_env(model, c, o, groups, j); };
      pipeline.evaluate(static_cast<int>(windows.size()), tokens, env, loss_sum.data());
      const int count = static_cast<int>(windows.size()) * mb * c.dp;
      report.validation_loss = global_mean(static_cast<double>(count) * S);
      if (root) fmt::print(log, "validation loss {:.4f} ({} windows)\n", report.validation_loss, count);
    }
  }
  w.download(host, m);
}

}  // namespace

void validate_gpu_training(const ModelSpec& model, const ParallelConfig& c, const engine::TrainOptions& o,
                           int world_size) {
  engine::validate_training(model, c, o, world_size);
  if (!o.save_dir.empty() || !o.resume_dir.empty())
    fail("--save / --resume: the CUDA backend does not write or read checkpoints yet; train with --backend cpu "
         "to checkpoint");
  if (model.hidden_size % model.num_attention_heads != 0)
    fail("hidden_size {} is not divisible by {} heads", model.hidden_size, model.num_attention_heads);
}

engine::TrainReport train_on_gpu(const ModelSpec& model, const ParallelConfig& c, const engine::TrainOptions& o,
                                 std::ostream& log) {
  int world_size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  validate_gpu_training(model, c, o, world_size);
  const engine::ProcessGroups groups = engine::make_process_groups(c.tp, c.dp, c.pp);
  const engine::RankModel m = engine::make_rank_model(model, c, groups.me.tp, groups.me.pp);
  engine::Corpus corpus;
  engine::agree(groups.world, [&] {
    corpus = engine::load_corpus(o.data.empty() ? engine::default_corpus_path() : o.data, model.seq_length);
  });
  // Every rank picks its GPU; a failure anywhere (too few GPUs) ends every rank.
  engine::agree(groups.world, [&] {
    if (const std::string why = no_gpu_reason(); !why.empty()) fail("--backend cuda: {}", why);
    try {
      select_device_for_rank(MPI_COMM_WORLD);
    } catch (const CudaError& e) {
      fail("--backend cuda: {}", e.what());
    }
  });
  engine::mark_progress("selecting the GPU");
  engine::ModelWeights<float> weights = engine::allocate_weights<float>(m);
  engine::initialise_weights(weights, m, o.seed);
  engine::ModelWeights<float> initial = weights;

  engine::TrainReport report;
  {
    NvtxRanges nvtx;
    const NvtxInstalled ranges(nvtx);  // op names on Nsight Systems' timeline
    GpuContext ctx(groups, c.virtual_stages > 1);
    engine::mark_progress("creating the NCCL communicators");
    if (c.precision == Precision::BF16)
      run<__nv_bfloat16>(model, c, o, groups, m, ctx, corpus, weights, report, log);
    else
      run<float>(model, c, o, groups, m, ctx, corpus, weights, report, log);
  }
  engine::report_stage_activations(report, c, groups, log);
  engine::report_update(report, weights, initial, m, groups, log);
  return report;
}

}  // namespace cc::cuda
