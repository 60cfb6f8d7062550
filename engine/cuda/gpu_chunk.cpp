// gpu_chunk.cpp — GpuModel's model chunk (engine/model_chunk_impl.h on the GPU): the
// embedding on the first virtual stage, the layers with what each recompute mode keeps, and
// the final norm, tied output layer and vocab-parallel loss on the last.
#include <cuda_bf16.h>

#include <type_traits>

#include "engine/cuda/gemm.h"
#include "engine/cuda/gpu_model.h"
#include "engine/cuda/training_kernels.h"

namespace cc::cuda {

using engine::ScopedOp;

template <typename T>
std::size_t GpuChunkSaved<T>::bytes() const {
  std::size_t n = embedding_mask.bytes() + final_in.bytes() + final_out.bytes() + final_mean.bytes() +
                  final_rstd.bytes() + softmax.bytes();
  for (const auto& l : layers) n += l.bytes();
  return n;
}

template <typename T>
std::size_t GpuChunkSaved<T>::scores_bytes() const {
  std::size_t n = 0;
  for (const auto& l : layers) n += l.scores_bytes();
  return n;
}

template <typename T>
std::size_t GpuChunkSaved<T>::layer_input_bytes() const {
  std::size_t n = 0;
  for (const auto& l : layers) n += l.x.bytes();
  return n;
}

template <typename T>
Tensor<T> GpuModel<T>::chunk_forward(const GpuPass& pass, int chunk, Tensor<T> x_in, double* loss_sum,
                                     GpuChunkSaved<T>& saved) {
  const engine::PassEnv& env = pass.env;
  const Phase F = Phase::Forward;
  const WeightSlots& slots = w_.slots();
  const std::int64_t h = env.hidden, R = env.region_rows(), rows = env.full_rows(), V = local_vocab();
  Tensor<T> x;
  if (first_virtual_stage(chunk)) {
    // Vocab-parallel lookup, summed over TP (reduce-scattered along the sequence under SP),
    // plus learned positions for this rank's rows, then dropout.
    Tensor<T> partial(rows, h, stream_);
    {
      ScopedOp op(env.op("embedding", F, -1, rows * h));
      embedding_forward(pass.tokens.data(), static_cast<int>(rows), w_.w(slots.wte), vocab_start(),
                        static_cast<int>(V), static_cast<int>(h), partial.data(), stream_);
    }
    Tensor<T> summed = leave_tp_region(pass, std::move(partial), env.op("tp_reduce", F, -1));
    ScopedOp op(env.op("embedding_dropout", F, -1, summed.size()));
    add_positions(summed.data(), w_.w(slots.wpe), static_cast<int>(R), static_cast<int>(h), env.batch,
                  env.region_offset(), stream_);
    saved.embedding_mask = Tensor<std::uint8_t>(R, h, stream_);
    x = Tensor<T>(R, h, stream_);
    dropout_forward(summed.data(), x.data(), saved.embedding_mask.data(), static_cast<int>(R), static_cast<int>(h),
                    static_cast<float>(env.dropout), env.seed, env.dropout_stream(-1, 4), pass.hidden_mask(), stream_);
  } else {
    x = std::move(x_in);
  }

  const ChunkPlan& plan = m_.chunk(chunk);
  const int n = plan.layers.count;
  saved.layers.clear();
  saved.layers.resize(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    GpuLayerSaved<T>& s = saved.layers[static_cast<std::size_t>(i)];
    Tensor<T> y = layer_forward(slots.layers[static_cast<std::size_t>(m_.local_index(chunk, i))], pass,
                                plan.layers.first + i, F, std::move(x), s);
    // Drop what the recompute scope does not keep (engine::keep_for_backward).
    if (!plan.keeps_all(i)) {
      Tensor<T> input = std::move(s.x);
      s = GpuLayerSaved<T>();
      // Inside a recompute group only the group's first layer keeps its input.
      if (plan.backward_group(i).first == i) s.x = std::move(input);
    } else if (plan.recompute == RecomputeScope::CoreAttention) {
      s.probs = Tensor<T>();
      s.dropped = Tensor<T>();
      s.attn_mask = Tensor<std::uint8_t>();
      s.attention_kept = false;
    }
    x = std::move(y);
  }

  if (!last_virtual_stage(chunk)) return x;
  saved.final_in = std::move(x);
  {
    ScopedOp op(env.op("final_norm", F, -1, saved.final_in.size()));
    saved.final_out = Tensor<T>(R, h, stream_);
    saved.final_mean = Tensor<float>(R, 1, stream_);
    saved.final_rstd = Tensor<float>(R, 1, stream_);
    layernorm_forward(saved.final_in.data(), w_.f32(slots.lnf_g), w_.f32(slots.lnf_b), saved.final_out.data(),
                      saved.final_mean.data(), saved.final_rstd.data(), static_cast<int>(R), static_cast<int>(h),
                      kLayerNormEps, stream_);
  }
  Tensor<T> gathered_holder;
  const T* gathered = enter_tp_region(pass, saved.final_out, gathered_holder, env.op("sp_all_gather", F, -1));
  // The logits leave the GEMM in fp32 whatever T is: the loss and its softmax are computed
  // and kept in fp32, as Megatron-LM's vocab-parallel cross-entropy casts them (bf16 logits
  // of size ~10 would carry errors of ~0.04 into the loss).
  Tensor<float> logits(rows, V, stream_);
  {
    ScopedOp op(env.op("logits", F, -1, rows, V, h));
    gemm_f32_out<T>(ctx_.blas(), {rows, V, h, false, true}, gathered, w_.w(slots.wte), logits.data());  // x · wteᵀ
  }
  ScopedOp op(env.op("cross_entropy", F, -1, logits.size()));
  const int r = static_cast<int>(rows), v = static_cast<int>(V);
  Tensor<float> row_max(rows, 1, stream_), stats(2 * rows, 1, stream_), losses(rows, 1, stream_);
  cross_entropy_local_max(logits.data(), r, v, row_max.data(), stream_);
  ctx_.all_reduce(ctx_.tp(), row_max.data(), static_cast<std::size_t>(rows), ncclMax,
                  env.op("cross_entropy.all_reduce", F, -1));
  // Σ exp and the target logit side by side: one all-reduce for both.
  cross_entropy_local_sums(logits.data(), pass.targets.data(), vocab_start(), row_max.data(), r, v, stats.data(),
                           stats.data() + rows, stream_);
  ctx_.all_reduce(ctx_.tp(), stats.data(), static_cast<std::size_t>(2 * rows), ncclSum,
                  env.op("cross_entropy.all_reduce", F, -1));
  cross_entropy_loss_softmax(logits.data(), row_max.data(), stats.data(), stats.data() + rows, r, v, losses.data(),
                             logits.data(), stream_);
  saved.softmax = std::move(logits);
  sum_add(losses.data(), rows, loss_sum, partial_sums_.data(), stream_);
  return Tensor<T>();
}

template <typename T>
Tensor<T> GpuModel<T>::chunk_backward(const GpuPass& pass, int chunk, GpuChunkSaved<T>& saved, Tensor<T> dout,
                                      double loss_scale, const std::function<void()>& recomputed) {
  const engine::PassEnv& env = pass.env;
  const Phase B = Phase::Backward;
  const WeightSlots& slots = w_.slots();
  const std::int64_t h = env.hidden, R = env.region_rows(), rows = env.full_rows(), V = local_vocab();
  Tensor<T> d;
  if (last_virtual_stage(chunk)) {
    Tensor<T> dlogits;
    {
      ScopedOp op(env.op("cross_entropy.backward", B, -1, saved.softmax.size()));
      Tensor<float> dlosses(rows, 1, stream_);
      fill(dlosses.data(), rows, static_cast<float>(loss_scale), stream_);
      cross_entropy_backward(saved.softmax.data(), pass.targets.data(), vocab_start(), dlosses.data(),
                             static_cast<int>(rows), static_cast<int>(V), saved.softmax.data(), stream_);
      // The GEMMs take T operands: one rounding of the fp32 loss gradient (Megatron's too).
      if constexpr (std::is_same_v<T, float>) {
        dlogits = std::move(saved.softmax);
      } else {
        dlogits = Tensor<T>(rows, V, stream_);
        cast_from_f32(saved.softmax.data(), dlogits.data(), dlogits.size(), stream_);
        saved.softmax = Tensor<float>();
      }
    }
    Tensor<T> gathered_holder;
    const T* gathered =
        enter_tp_region(pass, saved.final_out, gathered_holder, env.op("sp_all_gather.wgrad_input", B, -1));
    Tensor<T> dgathered(rows, h, stream_);
    {
      ScopedOp op(env.op("logits.dgrad", B, -1, rows, h, V));
      gemm<T>(ctx_.blas(), {rows, h, V}, dlogits.data(), w_.w(slots.wte), dgathered.data());  // dlogits · wte
    }
    {
      ScopedOp op(env.op("logits.wgrad", B, -1, h, V, rows));
      // dwte[V × h] += dlogitsᵀ · x
      gemm_f32_out<T>(ctx_.blas(), {V, h, rows, true, false}, dlogits.data(), gathered, w_.grad(slots.wte), 1.0f, 1.0f);
    }
    const Tensor<T> dfinal = leave_tp_region(pass, std::move(dgathered), env.op("tp_reduce.input_grad", B, -1));
    ScopedOp op(env.op("final_norm.backward", B, -1, dfinal.size()));
    d = Tensor<T>(R, h, stream_);
    layernorm_backward(dfinal.data(), saved.final_in.data(), w_.f32(slots.lnf_g), saved.final_mean.data(),
                       saved.final_rstd.data(), d.data(), w_.grad(slots.lnf_g), w_.grad(slots.lnf_b),
                       static_cast<int>(R), static_cast<int>(h), stream_);
  } else {
    d = std::move(dout);
  }

  // Layers, last first, a recompute group at a time.
  const ChunkPlan& plan = m_.chunk(chunk);
  auto layer_slots = [&](int i) -> const LayerSlots& {
    return slots.layers[static_cast<std::size_t>(m_.local_index(chunk, i))];
  };
  for (int end = plan.layers.count; end > 0;) {
    const LayerRange group = plan.backward_group(end - 1);
    if (!plan.keeps_all(group.first)) {
      // Full recomputation: rerun the group's forward from its stored input.
      Tensor<T> x = saved.layers[static_cast<std::size_t>(group.first)].x.clone();
      for (int i = group.first; i < group.end(); ++i)
        x = layer_forward(layer_slots(i), pass, plan.layers.first + i, Phase::Recompute, std::move(x),
                          saved.layers[static_cast<std::size_t>(i)]);
      if (recomputed) recomputed();  // the group's activations are held again: the peak's moment
    }
    for (int i = group.end() - 1; i >= group.first; --i) {
      Tensor<T> dprev = layer_backward(layer_slots(i), pass, plan.layers.first + i,
                                       saved.layers[static_cast<std::size_t>(i)], d);
      saved.layers[static_cast<std::size_t>(i)] = GpuLayerSaved<T>();  // free as soon as used
      d = std::move(dprev);
    }
    end = group.first;
  }

  if (!first_virtual_stage(chunk)) return d;
  Tensor<T> dsum(R, h, stream_);
  {
    ScopedOp op(env.op("embedding_dropout.backward", B, -1, d.size()));
    dropout_backward(d.data(), saved.embedding_mask.data(), dsum.data(), dsum.size(), static_cast<float>(env.dropout),
                     stream_);
    positions_backward(dsum.data(), static_cast<int>(R), static_cast<int>(h), env.batch, env.region_offset(),
                       w_.grad(slots.wpe), stream_);
  }
  Tensor<T> gathered_holder;
  const T* dpartial = enter_tp_region(pass, dsum, gathered_holder, env.op("sp_all_gather", B, -1));
  ScopedOp op(env.op("embedding.backward", B, -1, rows * h));
  embedding_backward(dpartial, pass.tokens.data(), static_cast<int>(rows), vocab_start(), static_cast<int>(V),
                     static_cast<int>(h), w_.grad(slots.wte), stream_);
  return Tensor<T>();
}

template Tensor<float> GpuModel<float>::chunk_forward(const GpuPass&, int, Tensor<float>, double*,
                                                      GpuChunkSaved<float>&);
template Tensor<__nv_bfloat16> GpuModel<__nv_bfloat16>::chunk_forward(const GpuPass&, int, Tensor<__nv_bfloat16>,
                                                                      double*, GpuChunkSaved<__nv_bfloat16>&);
template Tensor<float> GpuModel<float>::chunk_backward(const GpuPass&, int, GpuChunkSaved<float>&, Tensor<float>,
                                                       double, const std::function<void()>&);
template Tensor<__nv_bfloat16> GpuModel<__nv_bfloat16>::chunk_backward(const GpuPass&, int,
                                                                       GpuChunkSaved<__nv_bfloat16>&,
                                                                       Tensor<__nv_bfloat16>, double,
                                                                       const std::function<void()>&);
template struct GpuChunkSaved<float>;
template struct GpuChunkSaved<__nv_bfloat16>;

}  // namespace cc::cuda
