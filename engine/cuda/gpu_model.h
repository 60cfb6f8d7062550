// gpu_model.h — the GPT of the CPU engine on one GPU rank: transformer layers under TP and
// SP (engine/transformer_layer.h), model chunks with the embedding, final norm, tied
// output layer and vocab-parallel loss, and the three recompute modes
// (engine/model_chunk.h) — the same steps, in the same order, under the same annotation
// names, shapes and phases, so a profile of either backend feeds the simulator alike.
// Differences from the CPU, each Megatron-LM's choice too: GEMMs are cuBLAS's with fp32
// accumulation; weight gradients accumulate into fp32 (gemm_f32_out); Q, K and V are
// contiguous copies split off the QKV output so each head is a constant-stride view for
// one strided-batched GEMM per attention stage.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "engine/cuda/gpu_context.h"
#include "engine/cuda/gpu_weights.h"
#include "engine/cuda/kernels.h"
#include "engine/pass_env.h"
#include "engine/pipeline_runner.h"
#include "sim/parallel_config.h"

namespace cc::cuda {

inline constexpr float kLayerNormEps = 1e-5f;  // engine/ops/layernorm.h's default, which the CPU engine uses

// One microbatch pass on the GPU: the CPU's PassEnv (shapes, TP group, annotations, global
// sample ids) plus the device copies of its tokens and of the dropout row indices.
struct GpuPass {
  engine::PassEnv env;
  Tensor<int> tokens, targets;            // full rows, sequence-first; first / last virtual stage
  Tensor<std::uint64_t> hidden_rows;      // global row ids of the region rows (hidden-state dropout)
  Tensor<std::uint64_t> attention_rows;   // global row ids of the [blocks·seq × seq] probabilities
  DeviceMaskIndex hidden_mask() const { return {hidden_rows.data(), 0, env.hidden}; }
  DeviceMaskIndex attention_mask() const { return {attention_rows.data(), 0, env.seq}; }
};
// `tokens` may be null (a middle stage). Uploads on `stream`.
GpuPass make_gpu_pass(const engine::PassEnv& env, const engine::MicrobatchTokens* tokens, cudaStream_t stream);

template <typename T>
struct GpuLayerSaved {
  Tensor<T> x;  // input, always kept
  bool complete = false;
  bool attention_kept = false;
  Tensor<float> ln1_mean, ln1_rstd;
  Tensor<T> ln1_out;  // region rows
  Tensor<T> q, k, v, attn_out;
  Tensor<T> probs, dropped;     // [blocks·seq × seq]; dropped only with dropout
  Tensor<std::uint8_t> attn_mask;
  Tensor<std::uint8_t> mask1;
  Tensor<T> x2;
  Tensor<float> ln2_mean, ln2_rstd;
  Tensor<T> ln2_out, fc1_out, gelu_out;
  Tensor<std::uint8_t> mask2;

  std::size_t scores_bytes() const { return probs.bytes() + dropped.bytes() + attn_mask.bytes(); }
  std::size_t bytes() const;
};

template <typename T>
struct GpuChunkSaved {
  std::vector<GpuLayerSaved<T>> layers;
  Tensor<std::uint8_t> embedding_mask;
  Tensor<T> final_in, final_out;
  Tensor<float> final_mean, final_rstd;
  Tensor<float> softmax;  // vocab slice, full rows; fp32 whatever T is

  std::size_t bytes() const;
  std::size_t scores_bytes() const;
  std::size_t layer_input_bytes() const;
};

template <typename T>
class GpuModel {
 public:
  GpuModel(const engine::RankModel& model, GpuContext& ctx, GpuWeights<T>& weights);

  // As engine::ModelChunk: the first virtual stage embeds pass.tokens (x_in unused), the
  // last adds its rows' summed loss to *loss_sum (a device double) and returns nothing.
  Tensor<T> chunk_forward(const GpuPass& pass, int chunk, Tensor<T> x_in, double* loss_sum,
                          GpuChunkSaved<T>& saved);
  // The last virtual stage starts from the loss (gradient loss_scale per row), the first
  // returns an empty tensor (the embedding absorbs the gradient). `recomputed` runs after each
  // full-recompute group has rerun its forward, as engine::ModelChunk::backward's does.
  Tensor<T> chunk_backward(const GpuPass& pass, int chunk, GpuChunkSaved<T>& saved, Tensor<T> dout, double loss_scale,
                           const std::function<void()>& recomputed = {});

  bool first_virtual_stage(int chunk) const { return m_.chunk(chunk).has_embedding; }
  bool last_virtual_stage(int chunk) const { return m_.chunk(chunk).has_output; }

 private:
  Tensor<T> layer_forward(const LayerSlots& w, const GpuPass& pass, int layer, Phase phase, Tensor<T> x,
                          GpuLayerSaved<T>& s);
  Tensor<T> layer_backward(const LayerSlots& w, const GpuPass& pass, int layer, GpuLayerSaved<T>& s,
                           const Tensor<T>& dout);
  void attention_forward(const GpuPass& pass, int layer, Phase phase, GpuLayerSaved<T>& s);
  void attention_backward(const GpuPass& pass, int layer, GpuLayerSaved<T>& s, const Tensor<T>& dattn,
                          Tensor<T>& dq, Tensor<T>& dk, Tensor<T>& dv);

  // Megatron-LM's f/g conjugates (engine/pass_env.h): with SP, all-gather rows in and
  // reduce-scatter rows out; without, identity in and all-reduce out.
  const T* enter_tp_region(const GpuPass& pass, const Tensor<T>& region, Tensor<T>& gathered,
                           const engine::OpAnnotation& what);
  Tensor<T> leave_tp_region(const GpuPass& pass, Tensor<T> partial, const engine::OpAnnotation& what);
  // y = x·W (+ b), x [rows × in], W [in × out] at `w_slot`, b fp32 at `b_slot` (optional).
  Tensor<T> linear(const T* x, std::int64_t rows, std::int64_t in, std::size_t w_slot, std::int64_t out,
                   const std::size_t* b_slot);
  // dx = dy·Wᵀ then (re-gathering an SP-shard input first) dW += xᵀ·dy, db += Σ dy.
  Tensor<T> linear_backward(const GpuPass& pass, const char* dgrad, const char* wgrad, int layer,
                            const Tensor<T>& dy, const Tensor<T>& input, bool input_is_sp_shard,
                            std::size_t w_slot, std::int64_t in, const std::size_t* b_slot);
  // keep: dropout of `x` (+ bias) with the hidden-state mask; returns residual + dropped.
  Tensor<T> bias_dropout_add(const GpuPass& pass, int layer, int site, Tensor<T> x, std::size_t bias_slot,
                             const Tensor<T>& residual, Tensor<std::uint8_t>& mask);
  // Backward of bias-dropout-add: dropout's gradient, the bias gradient, and under SP the
  // all-gather into the TP region the row-parallel linear needs.
  Tensor<T> bias_dropout_add_backward(const GpuPass& pass, int layer, const Tensor<T>& dy,
                                      const Tensor<std::uint8_t>& mask, std::size_t bias_slot);
  // LayerNorm backward plus the gradient arriving through the residual branch.
  Tensor<T> norm_backward(const GpuPass& pass, const char* name, int layer, const Tensor<T>& dy, const Tensor<T>& x,
                          std::size_t gamma_slot, std::size_t beta_slot, const Tensor<float>& mean,
                          const Tensor<float>& rstd, const Tensor<T>& residual);
  int vocab_start() const { return m_.tp_rank * (m_.spec.vocab_size / m_.tp); }
  int local_vocab() const { return m_.spec.vocab_size / m_.tp; }

  const engine::RankModel& m_;
  GpuContext& ctx_;
  GpuWeights<T>& w_;
  cudaStream_t stream_;
  Tensor<double> partial_sums_;  // scratch of sum kernels
};

}  // namespace cc::cuda
