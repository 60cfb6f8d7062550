#include "engine/cuda/gpu_pipeline.h"

#include <cuda_bf16.h>

#include <map>

#include "sim/step_plan.h"

namespace cc::cuda {

template <typename T>
GpuPipeline<T>::GpuPipeline(const engine::RankModel& model, const ParallelConfig& config, GpuContext& ctx,
                            GpuModel<T>& chunks)
    : m_(model), ctx_(ctx), chunks_(chunks),
      passes_(std::move(planned_passes(config)[static_cast<std::size_t>(model.stage)])) {}

template <typename T>
GpuPass GpuPipeline<T>::pass_for(int microbatch, int chunk, const TokensFn& tokens, const EnvFn& env) {
  const bool needs_tokens = chunks_.first_virtual_stage(chunk) || chunks_.last_virtual_stage(chunk);
  const engine::MicrobatchTokens t = needs_tokens ? tokens(microbatch) : engine::MicrobatchTokens{};
  return make_gpu_pass(env(microbatch), needs_tokens ? &t : nullptr, ctx_.compute());
}

// The plan says whether a pass receives and sends; GpuContext's links join exactly the
// neighbouring stages the plan names (engine/pipeline_links.h), one channel per direction.
template <typename T>
void GpuPipeline<T>::train(const TokensFn& tokens, const EnvFn& env, double loss_scale, double* loss_sum,
                           engine::ActivationPeak& peak) {
  const std::int64_t h = m_.spec.hidden_size;
  struct Live {
    GpuPass pass;
    GpuChunkSaved<T> saved;
  };
  std::map<std::pair<int, int>, Live> live;  // (microbatch, chunk) -> its pass and kept activations
  const auto account = [&] {
    engine::note_activation_peak(live, [](const Live& l) -> const GpuChunkSaved<T>& { return l.saved; }, peak);
  };
  for (const PlannedPass& pass : passes_) {
    if (pass.kind == PassKind::Forward) {
      Live& l = live[{pass.microbatch, pass.chunk}];
      l.pass = pass_for(pass.microbatch, pass.chunk, tokens, env);
      Tensor<T> x;
      if (pass.receive_from >= 0) x = ctx_.receive<T>(l.pass.env.region_rows(), h, true);
      Tensor<T> out = chunks_.chunk_forward(l.pass, pass.chunk, std::move(x), loss_sum, l.saved);
      if (pass.send_to >= 0) ctx_.send(std::move(out), true);
      account();
    } else {
      auto it = live.find({pass.microbatch, pass.chunk});
      Tensor<T> dout;
      if (pass.receive_from >= 0) dout = ctx_.receive<T>(it->second.pass.env.region_rows(), h, false);
      Tensor<T> dx =
          chunks_.chunk_backward(it->second.pass, pass.chunk, it->second.saved, std::move(dout), loss_scale, account);
      live.erase(it);
      if (pass.send_to >= 0) ctx_.send(std::move(dx), false);
    }
  }
  ctx_.finish_sends();
}

template <typename T>
void GpuPipeline<T>::evaluate(int microbatches, const TokensFn& tokens, const EnvFn& env, double* loss_sum) {
  const std::int64_t h = m_.spec.hidden_size;
  const std::vector<PlannedPass> chunks = engine::forward_passes_of_one_microbatch(passes_);
  for (int mb = 0; mb < microbatches; ++mb)
    for (const PlannedPass& chunk : chunks) {
      const GpuPass pass = pass_for(mb, chunk.chunk, tokens, env);
      Tensor<T> x;
      if (chunk.receive_from >= 0) x = ctx_.receive<T>(pass.env.region_rows(), h, true);
      GpuChunkSaved<T> saved;
      Tensor<T> out = chunks_.chunk_forward(pass, chunk.chunk, std::move(x), loss_sum, saved);
      if (chunk.send_to >= 0) ctx_.send(std::move(out), true);
      ctx_.finish_sends();
    }
}

template class GpuPipeline<float>;
template class GpuPipeline<__nv_bfloat16>;

}  // namespace cc::cuda
