// gpu_layer.cpp — GpuModel's transformer layer (engine/transformer_layer.h on the GPU) and
// the pieces the chunk shares with it: the TP-region conjugates, linears, bias-dropout-add.
#include <cuda_bf16.h>

#include <cmath>

#include "engine/cuda/gemm.h"
#include "engine/cuda/gpu_model.h"
#include "engine/cuda/training_kernels.h"

namespace cc::cuda {

using engine::OpAnnotation;
using engine::ScopedOp;

GpuPass make_gpu_pass(const engine::PassEnv& env, const engine::MicrobatchTokens* tokens, cudaStream_t stream) {
  GpuPass p;
  p.env = env;
  const auto rows = static_cast<std::int64_t>(env.full_rows());
  if (tokens && !tokens->inputs.empty()) {
    p.tokens = Tensor<int>::from_host(tokens->inputs, rows, 1, stream);
    p.targets = Tensor<int>::from_host(tokens->targets, rows, 1, stream);
  }
  if (env.dropout > 0) {
    p.hidden_rows = Tensor<std::uint64_t>::from_host(env.hidden_mask_index().row_ids, env.region_rows(), 1, stream);
    // Row (b·heads + h)·seq + i of the probabilities is query i of head h of sample b.
    const engine::AttentionIndex where = env.attention_index();
    std::vector<std::uint64_t> ids;
    ids.reserve(static_cast<std::size_t>(env.batch) * env.heads * env.seq);
    for (int b = 0; b < env.batch; ++b)
      for (int h = 0; h < env.heads; ++h)
        for (int i = 0; i < env.seq; ++i) ids.push_back(where.row_id(b, h, i, env.seq));
    p.attention_rows =
        Tensor<std::uint64_t>::from_host(ids, static_cast<std::int64_t>(ids.size()), 1, stream);
  }
  return p;
}

template <typename T>
std::size_t GpuLayerSaved<T>::bytes() const {
  std::size_t n = x.bytes();
  if (!complete) return n;
  n += ln1_mean.bytes() + ln1_rstd.bytes() + ln1_out.bytes() + q.bytes() + k.bytes() + v.bytes() + attn_out.bytes();
  n += mask1.bytes() + x2.bytes() + ln2_mean.bytes() + ln2_rstd.bytes() + ln2_out.bytes() + fc1_out.bytes();
  n += gelu_out.bytes() + mask2.bytes();
  return n + scores_bytes();
}

template <typename T>
GpuModel<T>::GpuModel(const engine::RankModel& model, GpuContext& ctx, GpuWeights<T>& weights)
    : m_(model), ctx_(ctx), w_(weights), stream_(ctx.compute()), partial_sums_(kSumSquaresBlocks, 1, ctx.compute()) {}

template <typename T>
const T* GpuModel<T>::enter_tp_region(const GpuPass& pass, const Tensor<T>& region, Tensor<T>& gathered,
                                      const OpAnnotation& what) {
  if (!pass.env.sequence_parallel) return region.data();
  gathered = Tensor<T>(pass.env.full_rows(), region.cols(), stream_);
  ctx_.all_gather(ctx_.tp(), region.data(), static_cast<std::size_t>(region.size()), gathered.data(), what);
  return gathered.data();
}

template <typename T>
Tensor<T> GpuModel<T>::leave_tp_region(const GpuPass& pass, Tensor<T> partial, const OpAnnotation& what) {
  if (!pass.env.sequence_parallel) {
    ctx_.all_reduce(ctx_.tp(), partial.data(), static_cast<std::size_t>(partial.size()), ncclSum, what);
    return partial;
  }
  Tensor<T> shard(pass.env.region_rows(), partial.cols(), stream_);
  ctx_.reduce_scatter(ctx_.tp(), partial.data(), shard.data(), static_cast<std::size_t>(shard.size()), what);
  return shard;
}

template <typename T>
Tensor<T> GpuModel<T>::linear(const T* x, std::int64_t rows, std::int64_t in, std::size_t w_slot, std::int64_t out,
                              const std::size_t* b_slot) {
  Tensor<T> y(rows, out, stream_);
  gemm<T>(ctx_.blas(), {rows, out, in}, x, w_.w(w_slot), y.data());
  if (b_slot) add_bias(y.data(), w_.f32(*b_slot), static_cast<int>(rows), static_cast<int>(out), stream_);
  return y;
}

template <typename T>
Tensor<T> GpuModel<T>::linear_backward(const GpuPass& pass, const char* dgrad, const char* wgrad, int layer,
                                       const Tensor<T>& dy, const Tensor<T>& input, bool input_is_sp_shard,
                                       std::size_t w_slot, std::int64_t in, const std::size_t* b_slot) {
  const engine::PassEnv& env = pass.env;
  const std::int64_t rows = dy.rows(), out = dy.cols();
  Tensor<T> dx(rows, in, stream_);
  {
    ScopedOp op(env.op(dgrad, Phase::Backward, layer, rows, in, out));
    // dx[rows × in] = dy[rows × out] · Wᵀ, W stored [in × out].
    gemm<T>(ctx_.blas(), {rows, in, out, false, true}, dy.data(), w_.w(w_slot), dx.data());
  }
  Tensor<T> gathered;
  const T* x = input.data();
  if (input_is_sp_shard && env.sequence_parallel)
    x = enter_tp_region(pass, input, gathered, env.op("sp_all_gather.wgrad_input", Phase::Backward, layer));
  ScopedOp op(env.op(wgrad, Phase::Backward, layer, in, out, rows));
  // dW[in × out] += xᵀ · dy, x stored [rows × in]; into the fp32 gradient.
  gemm_f32_out<T>(ctx_.blas(), {in, out, rows, true, false}, x, dy.data(), w_.grad(w_slot), 1.0f, 1.0f);
  if (b_slot) column_sums_add(dy.data(), static_cast<int>(rows), static_cast<int>(out), w_.grad(*b_slot), stream_);
  return dx;
}

template <typename T>
Tensor<T> GpuModel<T>::bias_dropout_add(const GpuPass& pass, int layer, int site, Tensor<T> x, std::size_t bias_slot,
                                        const Tensor<T>& residual, Tensor<std::uint8_t>& mask) {
  const engine::PassEnv& env = pass.env;
  const int rows = static_cast<int>(x.rows()), cols = static_cast<int>(x.cols());
  add_bias(x.data(), w_.f32(bias_slot), rows, cols, stream_);
  mask = Tensor<std::uint8_t>(rows, cols, stream_);
  dropout_forward(x.data(), x.data(), mask.data(), rows, cols, static_cast<float>(env.dropout), env.seed,
                  env.dropout_stream(layer, site), pass.hidden_mask(), stream_);
  add(residual.data(), x.data(), x.data(), x.size(), stream_);
  return x;
}

template <typename T>
void GpuModel<T>::attention_forward(const GpuPass& pass, int layer, Phase phase, GpuLayerSaved<T>& s) {
  const engine::PassEnv& env = pass.env;
  const engine::AttentionShape shape{env.batch, env.seq, env.heads, env.head_dim};
  const OpAnnotation base = env.op("attention_core", phase, layer);
  const std::int64_t S = env.seq, d = env.head_dim, blocks = static_cast<std::int64_t>(env.batch) * env.heads;
  const std::int64_t row_stride = static_cast<std::int64_t>(env.batch) * env.heads * d;  // Q/K/V rows
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  // Head (b, h) of the sequence-first Q is rows b, b+batch, ... columns [h·d, (h+1)·d): it
  // starts (b·heads + h)·d elements in, with rows row_stride apart.
  s.probs = Tensor<T>(blocks * S, S, stream_);
  {
    ScopedOp op(engine::attention_stage(base, "attention_scores", shape, S, S, d));
    GemmShape g{S, S, d, false, true, row_stride, row_stride, S};
    gemm_strided_batched<T>(ctx_.blas(), g, s.q.data(), d, s.k.data(), d, s.probs.data(), S * S, blocks, scale);
  }
  {
    ScopedOp op(engine::attention_elementwise(base, "softmax", shape));
    causal_softmax_forward(s.probs.data(), s.probs.data(), static_cast<int>(blocks), static_cast<int>(S), stream_);
  }
  const bool drop = env.dropout > 0;
  if (drop) {
    ScopedOp op(engine::attention_elementwise(base, "attention_dropout", shape));
    s.dropped = Tensor<T>(blocks * S, S, stream_);
    s.attn_mask = Tensor<std::uint8_t>(blocks * S, S, stream_);
    dropout_forward(s.probs.data(), s.dropped.data(), s.attn_mask.data(), static_cast<int>(blocks * S),
                    static_cast<int>(S), static_cast<float>(env.dropout), env.seed, env.dropout_stream(layer, 3),
                    pass.attention_mask(), stream_);
  }
  {
    ScopedOp op(engine::attention_stage(base, "attention_context", shape, S, d, S));
    s.attn_out = Tensor<T>(s.q.rows(), s.q.cols(), stream_);
    GemmShape g{S, d, S, false, false, S, row_stride, row_stride};
    gemm_strided_batched<T>(ctx_.blas(), g, (drop ? s.dropped : s.probs).data(), S * S, s.v.data(), d,
                            s.attn_out.data(), d, blocks);
  }
}

template <typename T>
void GpuModel<T>::attention_backward(const GpuPass& pass, int layer, GpuLayerSaved<T>& s, const Tensor<T>& dout,
                                     Tensor<T>& dq, Tensor<T>& dk, Tensor<T>& dv) {
  const engine::PassEnv& env = pass.env;
  const engine::AttentionShape shape{env.batch, env.seq, env.heads, env.head_dim};
  const OpAnnotation base = env.op("attention_core.backward", Phase::Backward, layer);
  const std::int64_t S = env.seq, d = env.head_dim, blocks = static_cast<std::int64_t>(env.batch) * env.heads;
  const std::int64_t row_stride = static_cast<std::int64_t>(env.batch) * env.heads * d;
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const bool drop = env.dropout > 0;
  dq = Tensor<T>(s.q.rows(), s.q.cols(), stream_);
  dk = Tensor<T>(s.k.rows(), s.k.cols(), stream_);
  dv = Tensor<T>(s.v.rows(), s.v.cols(), stream_);
  Tensor<T> grad(blocks * S, S, stream_);  // dD, then dP, then dscores, in place
  {
    ScopedOp op(engine::attention_stage(base, "attention_context.dgrad_probs", shape, S, S, d));
    GemmShape g{S, S, d, false, true, row_stride, row_stride, S};  // dD = dout · Vᵀ
    gemm_strided_batched<T>(ctx_.blas(), g, dout.data(), d, s.v.data(), d, grad.data(), S * S, blocks);
  }
  {
    ScopedOp op(engine::attention_stage(base, "attention_context.dgrad_values", shape, S, d, S));
    GemmShape g{S, d, S, true, false, S, row_stride, row_stride};  // dV = Dᵀ · dout
    gemm_strided_batched<T>(ctx_.blas(), g, (drop ? s.dropped : s.probs).data(), S * S, dout.data(), d, dv.data(),
                            d, blocks);
  }
  if (drop) {
    ScopedOp op(engine::attention_elementwise(base, "attention_dropout.backward", shape));
    dropout_backward(grad.data(), s.attn_mask.data(), grad.data(), grad.size(), static_cast<float>(env.dropout),
                     stream_);
  }
  {
    ScopedOp op(engine::attention_elementwise(base, "softmax.backward", shape));
    causal_softmax_backward(s.probs.data(), grad.data(), grad.data(), static_cast<int>(blocks), static_cast<int>(S),
                            scale, stream_);
  }
  {
    ScopedOp op(engine::attention_stage(base, "attention_scores.dgrad_query", shape, S, d, S));
    GemmShape g{S, d, S, false, false, S, row_stride, row_stride};  // dQ = dscores · K
    gemm_strided_batched<T>(ctx_.blas(), g, grad.data(), S * S, s.k.data(), d, dq.data(), d, blocks);
  }
  {
    ScopedOp op(engine::attention_stage(base, "attention_scores.dgrad_key", shape, S, d, S));
    GemmShape g{S, d, S, true, false, S, row_stride, row_stride};  // dK = dscoresᵀ · Q
    gemm_strided_batched<T>(ctx_.blas(), g, grad.data(), S * S, s.q.data(), d, dk.data(), d, blocks);
  }
}

namespace {

// Columns [first, first + width) of every row of src [rows × src_cols] into dst [rows × width],
// or the reverse (the QKV split and the dQ|dK|dV concatenation).
template <typename T>
void copy_columns(const T* src, std::int64_t src_cols, T* dst, std::int64_t dst_cols, std::int64_t width,
                  std::int64_t rows, cudaStream_t stream) {
  if (rows == 0 || width == 0) return;
  CC_CUDA(cudaMemcpy2DAsync(dst, static_cast<std::size_t>(dst_cols) * sizeof(T), src,
                            static_cast<std::size_t>(src_cols) * sizeof(T), static_cast<std::size_t>(width) * sizeof(T),
                            static_cast<std::size_t>(rows), cudaMemcpyDeviceToDevice, stream));
}

}  // namespace

template <typename T>
Tensor<T> GpuModel<T>::bias_dropout_add_backward(const GpuPass& pass, int layer, const Tensor<T>& dy,
                                                 const Tensor<std::uint8_t>& mask, std::size_t bias_slot) {
  const engine::PassEnv& env = pass.env;
  Tensor<T> d(dy.rows(), dy.cols(), stream_);
  {
    ScopedOp op(env.op("bias_dropout_add.backward", Phase::Backward, layer, dy.size()));
    dropout_backward(dy.data(), mask.data(), d.data(), d.size(), static_cast<float>(env.dropout), stream_);
    column_sums_add(d.data(), static_cast<int>(d.rows()), static_cast<int>(d.cols()), w_.grad(bias_slot), stream_);
  }
  if (!env.sequence_parallel) return d;
  Tensor<T> gathered;
  enter_tp_region(pass, d, gathered, env.op("sp_all_gather", Phase::Backward, layer));
  return gathered;
}

template <typename T>
Tensor<T> GpuModel<T>::norm_backward(const GpuPass& pass, const char* name, int layer, const Tensor<T>& dy,
                                     const Tensor<T>& x, std::size_t gamma_slot, std::size_t beta_slot,
                                     const Tensor<float>& mean, const Tensor<float>& rstd, const Tensor<T>& residual) {
  ScopedOp op(pass.env.op(name, Phase::Backward, layer, dy.size()));
  Tensor<T> dx(x.rows(), x.cols(), stream_);
  layernorm_backward(dy.data(), x.data(), w_.f32(gamma_slot), mean.data(), rstd.data(), dx.data(), w_.grad(gamma_slot),
                     w_.grad(beta_slot), static_cast<int>(x.rows()), static_cast<int>(x.cols()), stream_);
  add(dx.data(), residual.data(), dx.data(), dx.size(), stream_);  // the residual branch's gradient
  return dx;
}

template <typename T>
Tensor<T> GpuModel<T>::layer_forward(const LayerSlots& w, const GpuPass& pass, int layer, Phase phase, Tensor<T> x,
                                     GpuLayerSaved<T>& s) {
  const engine::PassEnv& env = pass.env;
  const std::int64_t h = env.hidden, width = static_cast<std::int64_t>(env.heads) * env.head_dim;
  const std::int64_t R = env.region_rows(), F = env.full_rows(), f = m_.spec.ffn_hidden_size / m_.tp;
  {
    ScopedOp op(env.op("input_norm", phase, layer, x.size()));
    s.ln1_out = Tensor<T>(R, h, stream_);
    s.ln1_mean = Tensor<float>(R, 1, stream_);
    s.ln1_rstd = Tensor<float>(R, 1, stream_);
    layernorm_forward(x.data(), w_.f32(w.ln1_g), w_.f32(w.ln1_b), s.ln1_out.data(), s.ln1_mean.data(),
                      s.ln1_rstd.data(), static_cast<int>(R), static_cast<int>(h), kLayerNormEps, stream_);
  }
  Tensor<T> gathered;
  const T* a_in = enter_tp_region(pass, s.ln1_out, gathered, env.op("sp_all_gather", phase, layer));
  {
    ScopedOp op(env.op("qkv", phase, layer, F, 3 * width, h));
    Tensor<T> qkv = linear(a_in, F, h, w.qkv_w, 3 * width, &w.qkv_b);
    // Split into contiguous Q, K, V (a copy, as the CPU's; timed with the GEMM).
    s.q = Tensor<T>(F, width, stream_);
    s.k = Tensor<T>(F, width, stream_);
    s.v = Tensor<T>(F, width, stream_);
    copy_columns(qkv.data(), 3 * width, s.q.data(), width, width, F, stream_);
    copy_columns(qkv.data() + width, 3 * width, s.k.data(), width, width, F, stream_);
    copy_columns(qkv.data() + 2 * width, 3 * width, s.v.data(), width, width, F, stream_);
  }
  gathered = Tensor<T>();
  attention_forward(pass, layer, phase, s);
  s.attention_kept = true;
  Tensor<T> partial;
  {
    ScopedOp op(env.op("attention_proj", phase, layer, F, h, width));
    partial = linear(s.attn_out.data(), F, width, w.proj_w, h, nullptr);
  }
  Tensor<T> proj = leave_tp_region(pass, std::move(partial), env.op("tp_reduce", phase, layer));
  {
    ScopedOp op(env.op("bias_dropout_add", phase, layer, proj.size()));
    s.x2 = bias_dropout_add(pass, layer, 1, std::move(proj), w.proj_b, x, s.mask1);
  }
  {
    ScopedOp op(env.op("post_attention_norm", phase, layer, x.size()));
    s.ln2_out = Tensor<T>(R, h, stream_);
    s.ln2_mean = Tensor<float>(R, 1, stream_);
    s.ln2_rstd = Tensor<float>(R, 1, stream_);
    layernorm_forward(s.x2.data(), w_.f32(w.ln2_g), w_.f32(w.ln2_b), s.ln2_out.data(), s.ln2_mean.data(),
                      s.ln2_rstd.data(), static_cast<int>(R), static_cast<int>(h), kLayerNormEps, stream_);
  }
  const T* m_in = enter_tp_region(pass, s.ln2_out, gathered, env.op("sp_all_gather", phase, layer));
  {
    ScopedOp op(env.op("fc1", phase, layer, F, f, h));
    s.fc1_out = linear(m_in, F, h, w.fc1_w, f, &w.fc1_b);
  }
  gathered = Tensor<T>();
  {
    ScopedOp op(env.op("gelu", phase, layer, s.fc1_out.size()));
    s.gelu_out = Tensor<T>(F, f, stream_);
    gelu_forward(s.fc1_out.data(), s.gelu_out.data(), s.fc1_out.size(), stream_);
  }
  {
    ScopedOp op(env.op("fc2", phase, layer, F, h, f));
    partial = linear(s.gelu_out.data(), F, f, w.fc2_w, h, nullptr);
  }
  Tensor<T> fc2 = leave_tp_region(pass, std::move(partial), env.op("tp_reduce", phase, layer));
  Tensor<T> out;
  {
    ScopedOp op(env.op("bias_dropout_add", phase, layer, fc2.size()));
    out = bias_dropout_add(pass, layer, 2, std::move(fc2), w.fc2_b, s.x2, s.mask2);
  }
  s.x = std::move(x);  // the layer input every recompute mode keeps
  s.complete = true;
  return out;
}

template <typename T>
Tensor<T> GpuModel<T>::layer_backward(const LayerSlots& w, const GpuPass& pass, int layer, GpuLayerSaved<T>& s,
                                      const Tensor<T>& dout) {
  const engine::PassEnv& env = pass.env;
  const Phase B = Phase::Backward;
  const std::int64_t h = env.hidden, width = static_cast<std::int64_t>(env.heads) * env.head_dim;
  const std::int64_t F = env.full_rows(), f = m_.spec.ffn_hidden_size / m_.tp;
  // MLP block.
  const Tensor<T> dfc2 = bias_dropout_add_backward(pass, layer, dout, s.mask2, w.fc2_b);
  Tensor<T> dgelu = linear_backward(pass, "fc2.dgrad", "fc2.wgrad", layer, dfc2, s.gelu_out, false, w.fc2_w, f, nullptr);
  Tensor<T> dfc1(F, f, stream_);
  {
    ScopedOp op(env.op("gelu.backward", B, layer, dgelu.size()));
    gelu_backward(dgelu.data(), s.fc1_out.data(), dfc1.data(), dgelu.size(), stream_);
  }
  Tensor<T> dm_in = linear_backward(pass, "fc1.dgrad", "fc1.wgrad", layer, dfc1, s.ln2_out, true, w.fc1_w, h, &w.fc1_b);
  const Tensor<T> dln2 = leave_tp_region(pass, std::move(dm_in), env.op("tp_reduce.input_grad", B, layer));
  const Tensor<T> dx2 = norm_backward(pass, "post_attention_norm.backward", layer, dln2, s.x2, w.ln2_g, w.ln2_b,
                                      s.ln2_mean, s.ln2_rstd, dout);
  // Attention block.
  const Tensor<T> dproj = bias_dropout_add_backward(pass, layer, dx2, s.mask1, w.proj_b);
  Tensor<T> dattn = linear_backward(pass, "attention_proj.dgrad", "attention_proj.wgrad", layer, dproj, s.attn_out,
                                    false, w.proj_w, width, nullptr);
  if (!s.attention_kept) attention_forward(pass, layer, Phase::Recompute, s);  // selective: rerun the core
  Tensor<T> dq, dk, dv;
  attention_backward(pass, layer, s, dattn, dq, dk, dv);
  Tensor<T> dqkv(F, 3 * width, stream_);
  copy_columns(dq.data(), width, dqkv.data(), 3 * width, width, F, stream_);
  copy_columns(dk.data(), width, dqkv.data() + width, 3 * width, width, F, stream_);
  copy_columns(dv.data(), width, dqkv.data() + 2 * width, 3 * width, width, F, stream_);
  Tensor<T> da_in = linear_backward(pass, "qkv.dgrad", "qkv.wgrad", layer, dqkv, s.ln1_out, true, w.qkv_w, h, &w.qkv_b);
  const Tensor<T> dln1 = leave_tp_region(pass, std::move(da_in), env.op("tp_reduce.input_grad", B, layer));
  return norm_backward(pass, "input_norm.backward", layer, dln1, s.x, w.ln1_g, w.ln1_b, s.ln1_mean, s.ln1_rstd, dx2);
}

template class GpuModel<float>;
template class GpuModel<__nv_bfloat16>;
template struct GpuLayerSaved<float>;
template struct GpuLayerSaved<__nv_bfloat16>;

}  // namespace cc::cuda
