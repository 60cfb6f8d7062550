// gpu_pipeline.h — one iteration of this rank's passes on the GPU: the step plan's passes
// (sim/step_plan.h, the ones the simulator replays and the CPU engine runs), each a
// GpuModel chunk pass, activations and gradients over the NCCL pipeline links of
// GpuContext. The host only enqueues: no pass waits for the device.
#pragma once

#include <functional>
#include <vector>

#include "engine/cuda/gpu_model.h"

namespace cc::cuda {

using TokensFn = std::function<engine::MicrobatchTokens(int microbatch)>;
using EnvFn = std::function<engine::PassEnv(int microbatch)>;

template <typename T>
class GpuPipeline {
 public:
  GpuPipeline(const engine::RankModel& model, const ParallelConfig& config, GpuContext& ctx, GpuModel<T>& chunks);

  // Forward and backward of every microbatch; the last stage adds its rows' summed loss to
  // *loss_sum (device). `peak` gets the largest activation bytes held at once.
  void train(const TokensFn& tokens, const EnvFn& env, double loss_scale, double* loss_sum,
             engine::ActivationPeak& peak);
  // Forward only, microbatch after microbatch (validation).
  void evaluate(int microbatches, const TokensFn& tokens, const EnvFn& env, double* loss_sum);

 private:
  GpuPass pass_for(int microbatch, int chunk, const TokensFn& tokens, const EnvFn& env);

  const engine::RankModel& m_;
  GpuContext& ctx_;
  GpuModel<T>& chunks_;
  std::vector<PlannedPass> passes_;  // this stage's, in run order
};

}  // namespace cc::cuda
