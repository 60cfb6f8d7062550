#include "engine/cuda/gpu_pipeline.h"

#include <cuda_bf16.h>

#include <map>

#include "sim/pipeline_schedule.h"

namespace cc::cuda {

template <typename T>
GpuPipeline<T>::GpuPipeline(const engine::RankModel& model, const ParallelConfig& config, GpuContext& ctx,
                            GpuModel<T>& chunks)
    : m_(model), c_(config), ctx_(ctx), chunks_(chunks) {}

template <typename T>
GpuPass GpuPipeline<T>::pass_for(int microbatch, int chunk, const TokensFn& tokens, const EnvFn& env) {
  const bool needs_tokens = chunks_.first_virtual_stage(chunk) || chunks_.last_virtual_stage(chunk);
  const engine::MicrobatchTokens t = needs_tokens ? tokens(microbatch) : engine::MicrobatchTokens{};
  return make_gpu_pass(env(microbatch), needs_tokens ? &t : nullptr, ctx_.compute());
}

template <typename T>
void GpuPipeline<T>::train(const TokensFn& tokens, const EnvFn& env, double loss_scale, double* loss_sum,
                           engine::ActivationPeak& peak) {
  const int p = c_.pp, v = c_.virtual_stages, s = m_.stage;
  const std::int64_t h = m_.spec.hidden_size;
  const auto schedule = pipeline_schedule(p, c_.num_microbatches(), v);
  struct Live {
    GpuPass pass;
    GpuChunkSaved<T> saved;
  };
  std::map<std::pair<int, int>, Live> live;  // (microbatch, chunk) -> its pass and kept activations
  for (const PipelinePass& pass : schedule[static_cast<std::size_t>(s)]) {
    const int vs = pass.chunk * p + s;
    if (pass.kind == PassKind::Forward) {
      Live& l = live[{pass.microbatch, pass.chunk}];
      l.pass = pass_for(pass.microbatch, pass.chunk, tokens, env);
      Tensor<T> x;
      if (vs > 0) x = ctx_.receive<T>(l.pass.env.region_rows(), h, true);
      Tensor<T> out = chunks_.chunk_forward(l.pass, pass.chunk, std::move(x), loss_sum, l.saved);
      if (vs < p * v - 1) ctx_.send(std::move(out), true);
      std::size_t total = 0, scores = 0, inputs = 0;
      for (const auto& [key, kept] : live) {
        total += kept.saved.bytes();
        scores += kept.saved.scores_bytes();
        inputs += kept.saved.layer_input_bytes();
      }
      if (total > peak.total) peak = {total, scores, inputs, static_cast<int>(live.size())};
    } else {
      auto it = live.find({pass.microbatch, pass.chunk});
      Tensor<T> dout;
      if (vs < p * v - 1) dout = ctx_.receive<T>(it->second.pass.env.region_rows(), h, false);
      Tensor<T> dx = chunks_.chunk_backward(it->second.pass, pass.chunk, it->second.saved, std::move(dout), loss_scale);
      live.erase(it);
      if (vs > 0) ctx_.send(std::move(dx), false);
    }
  }
  ctx_.finish_sends();
}

template <typename T>
void GpuPipeline<T>::evaluate(int microbatches, const TokensFn& tokens, const EnvFn& env, double* loss_sum) {
  const int p = c_.pp, v = c_.virtual_stages, s = m_.stage;
  const std::int64_t h = m_.spec.hidden_size;
  for (int mb = 0; mb < microbatches; ++mb)
    for (int c = 0; c < v; ++c) {
      const int vs = c * p + s;
      const GpuPass pass = pass_for(mb, c, tokens, env);
      Tensor<T> x;
      if (vs > 0) x = ctx_.receive<T>(pass.env.region_rows(), h, true);
      GpuChunkSaved<T> saved;
      Tensor<T> out = chunks_.chunk_forward(pass, c, std::move(x), loss_sum, saved);
      if (vs < p * v - 1) ctx_.send(std::move(out), true);
      ctx_.finish_sends();
    }
}

template class GpuPipeline<float>;
template class GpuPipeline<__nv_bfloat16>;

}  // namespace cc::cuda
