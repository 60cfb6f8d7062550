// transformer_layer.h — one pre-LayerNorm GPT layer on one rank, forward and backward,
// under tensor and sequence parallelism exactly as Megatron-LM splits it:
//
//   x ─ LN1 ─[enter]─ QKV (column-parallel) ─ attention core ─ proj (row-parallel) ─[leave]─ +b ─ dropout ─ + x = x2
//   x2 ─ LN2 ─[enter]─ FC1 (column-parallel) ─ GeLU ─ FC2 (row-parallel) ─[leave]─ +b ─ dropout ─ + x2 = out
//
// [enter]/[leave] are the f/g conjugates of pass_env.h. What the layer keeps for backward
// depends on the recompute mode: everything (none), everything but the attention core's
// S×S tensors (selective, Korthikanti et al. 2022), or only its input (full; the caller
// reruns the forward before the backward). Row-parallel biases, norms and their gradients
// live in the sequence-parallel region; under SP those gradients are partial per rank and
// are summed over TP after the backward pass (optimizer.h).
#pragma once

#include "engine/gpt_weights.h"
#include "engine/ops/attention.h"
#include "engine/ops/dropout.h"
#include "engine/ops/gelu.h"
#include "engine/ops/layernorm.h"
#include "engine/ops/linear.h"
#include "engine/pass_env.h"

namespace cc::engine {

template <typename T>
struct LayerSaved {
  Mat<T> x;  // input, always kept
  bool complete = false;  // everything below is present
  bool attention_kept = false;
  LayerNormSaved<T> ln1;
  Mat<T> ln1_out;  // region rows (the SP shard: re-gathered in backward, as Megatron does)
  Mat<T> q, k, v, attn_out;
  AttentionSaved<T> attn;
  Mask mask1;
  Mat<T> x2;
  LayerNormSaved<T> ln2;
  Mat<T> ln2_out, fc1_out, gelu_out;
  Mask mask2;

  std::size_t scores_bytes() const { return saved_bytes(attn); }
  std::size_t bytes() const {
    auto m = [](const auto& a) { return static_cast<std::size_t>(a.size()) * sizeof(typename std::decay_t<decltype(a)>::Scalar); };
    std::size_t n = m(x);
    if (!complete) return n;
    n += m(ln1.mean) + m(ln1.rstd) + m(ln1_out) + m(q) + m(k) + m(v) + m(attn_out) + m(mask1) + m(x2);
    n += m(ln2.mean) + m(ln2.rstd) + m(ln2_out) + m(fc1_out) + m(gelu_out) + m(mask2);
    return n + scores_bytes();
  }
};

namespace layer_detail {

template <typename T>
void attention(const PassEnv& env, int layer, Phase phase, LayerSaved<T>& s) {
  const AttentionShape shape{env.batch, env.seq, env.heads, env.head_dim};
  attention_forward(s.q, s.k, s.v, shape, static_cast<T>(env.dropout), env.seed, env.dropout_stream(layer, 3),
                    env.attention_index(), s.attn_out, s.attn, env.op("attention_core", phase, layer));
}

template <typename T>
Vec<T> column_sums(const Mat<T>& m) {
  return m.colwise().sum().transpose();
}

// The backward of a linear as two annotated GEMMs, data gradient ("<name>.dgrad") then
// weight gradient ("<name>.wgrad"). A column-parallel linear under SP kept only its
// sequence shard of the input: it is re-gathered between the two, as Megatron-LM does
// (overlapped there with the dgrad GEMM).
struct GradNames {
  const char* dgrad;
  const char* wgrad;
};

template <typename T>
void linear_backward_annotated(const PassEnv& env, GradNames names, int layer, const Mat<T>& dy, const Mat<T>& input,
                               bool input_is_sp_shard, const Mat<T>& w, Mat<T>& dx, Mat<T>& dw, Vec<T>* db) {
  {
    ScopedOp op(env.op(names.dgrad, Phase::Backward, layer, dy.rows(), w.rows(), w.cols()));
    linear_backward_data(dy, w, dx);
  }
  Mat<T> gathered;
  const Mat<T>* x = &input;
  if (input_is_sp_shard && env.sequence_parallel) {
    gathered = enter_tp_region(env, input, env.op("sp_all_gather.wgrad_input", Phase::Backward, layer));
    x = &gathered;
  }
  ScopedOp op(env.op(names.wgrad, Phase::Backward, layer, w.rows(), w.cols(), dy.rows()));
  linear_backward_weight(dy, *x, dw, db);
}

}  // namespace layer_detail

// Runs the layer; fills `s` completely (the caller frees parts per recompute mode).
template <typename T>
void layer_forward(const LayerWeights<T>& w, const PassEnv& env, int layer, Phase phase, const Mat<T>& x,
                   Mat<T>& out, LayerSaved<T>& s) {
  using namespace layer_detail;
  const Eigen::Index h = env.hidden, width = env.heads * env.head_dim;
  {
    ScopedOp op(env.op("input_norm", phase, layer, x.size()));
    s.x = x;  // the layer input every recompute mode keeps
    layernorm_forward(x, w.ln1_g, w.ln1_b, s.ln1_out, s.ln1);
  }
  const Mat<T> a_in = enter_tp_region(env, s.ln1_out, env.op("sp_all_gather", phase, layer));
  Mat<T> qkv;
  {
    ScopedOp op(env.op("qkv", phase, layer, a_in.rows(), w.qkv_w.cols(), h));
    linear_forward(a_in, w.qkv_w, w.qkv_b, qkv);
    // Split into Q, K, V (a view in Megatron-LM; a copy here, so timed with the GEMM).
    s.q = qkv.leftCols(width);
    s.k = qkv.middleCols(width, width);
    s.v = qkv.rightCols(width);
  }
  attention(env, layer, phase, s);
  s.attention_kept = true;
  Mat<T> partial;
  {
    ScopedOp op(env.op("attention_proj", phase, layer, s.attn_out.rows(), h, width));
    linear_forward(s.attn_out, w.proj_w, Vec<T>(), partial);
  }
  Mat<T> proj = leave_tp_region(env, std::move(partial), env.op("tp_reduce", phase, layer));
  Mat<T> dropped;
  {
    ScopedOp op(env.op("bias_dropout_add", phase, layer, proj.size()));
    proj.rowwise() += w.proj_b.transpose();
    dropout_forward(proj, static_cast<T>(env.dropout), env.seed, env.dropout_stream(layer, 1),
                    env.hidden_mask_index(), dropped, s.mask1);
    s.x2 = x + dropped;
  }
  {
    ScopedOp op(env.op("post_attention_norm", phase, layer, x.size()));
    layernorm_forward(s.x2, w.ln2_g, w.ln2_b, s.ln2_out, s.ln2);
  }
  const Mat<T> m_in = enter_tp_region(env, s.ln2_out, env.op("sp_all_gather", phase, layer));
  {
    ScopedOp op(env.op("fc1", phase, layer, m_in.rows(), w.fc1_w.cols(), h));
    linear_forward(m_in, w.fc1_w, w.fc1_b, s.fc1_out);
  }
  {
    ScopedOp op(env.op("gelu", phase, layer, s.fc1_out.size()));
    gelu_forward(s.fc1_out, s.gelu_out);
  }
  {
    ScopedOp op(env.op("fc2", phase, layer, s.gelu_out.rows(), h, s.gelu_out.cols()));
    linear_forward(s.gelu_out, w.fc2_w, Vec<T>(), partial);
  }
  Mat<T> fc2 = leave_tp_region(env, std::move(partial), env.op("tp_reduce", phase, layer));
  {
    ScopedOp op(env.op("bias_dropout_add", phase, layer, fc2.size()));
    fc2.rowwise() += w.fc2_b.transpose();
    dropout_forward(fc2, static_cast<T>(env.dropout), env.seed, env.dropout_stream(layer, 2),
                    env.hidden_mask_index(), dropped, s.mask2);
    out = s.x2 + dropped;
  }
  s.complete = true;
}

// Drops what the recompute mode does not keep.
template <typename T>
void keep_for_backward(LayerSaved<T>& s, bool keep_attention, bool keep_rest) {
  if (!keep_rest) {
    Mat<T> x = std::move(s.x);
    s = LayerSaved<T>();
    s.x = std::move(x);
    return;
  }
  if (!keep_attention) {
    s.attn = AttentionSaved<T>();
    s.attention_kept = false;
  }
}

// Backward from dout; `s` must be complete (the caller recomputes a full-recompute layer
// first). Recomputes the attention core when selective recomputation dropped it.
template <typename T>
void layer_backward(const LayerWeights<T>& w, LayerWeights<T>& g, const PassEnv& env, int layer, LayerSaved<T>& s,
                    const Mat<T>& dout, Mat<T>& dx) {
  using namespace layer_detail;
  const Phase B = Phase::Backward;
  const Eigen::Index width = env.heads * env.head_dim;
  // MLP block.
  Mat<T> dfc2;
  {
    ScopedOp op(env.op("bias_dropout_add.backward", B, layer, dout.size()));
    dropout_backward(dout, static_cast<T>(env.dropout), s.mask2, dfc2);
    g.fc2_b += column_sums(dfc2);
  }
  const Mat<T> dfc2_full = enter_tp_region(env, dfc2, env.op("sp_all_gather", B, layer));
  Mat<T> dgelu, dfc1, dm_in;
  linear_backward_annotated(env, {"fc2.dgrad", "fc2.wgrad"}, layer, dfc2_full, s.gelu_out, false, w.fc2_w, dgelu,
                            g.fc2_w, static_cast<Vec<T>*>(nullptr));
  {
    ScopedOp op(env.op("gelu.backward", B, layer, dgelu.size()));
    gelu_backward(dgelu, s.fc1_out, dfc1);
  }
  linear_backward_annotated(env, {"fc1.dgrad", "fc1.wgrad"}, layer, dfc1, s.ln2_out, true, w.fc1_w, dm_in, g.fc1_w,
                            &g.fc1_b);
  const Mat<T> dln2 = leave_tp_region(env, std::move(dm_in), env.op("tp_reduce.input_grad", B, layer));
  Mat<T> dx2;
  {
    ScopedOp op(env.op("post_attention_norm.backward", B, layer, dln2.size()));
    layernorm_backward(dln2, s.x2, w.ln2_g, s.ln2, dx2, g.ln2_g, g.ln2_b);
    dx2 += dout;  // residual
  }
  // Attention block.
  Mat<T> dproj;
  {
    ScopedOp op(env.op("bias_dropout_add.backward", B, layer, dx2.size()));
    dropout_backward(dx2, static_cast<T>(env.dropout), s.mask1, dproj);
    g.proj_b += column_sums(dproj);
  }
  const Mat<T> dproj_full = enter_tp_region(env, dproj, env.op("sp_all_gather", B, layer));
  Mat<T> dattn;
  linear_backward_annotated(env, {"attention_proj.dgrad", "attention_proj.wgrad"}, layer, dproj_full, s.attn_out, false,
                            w.proj_w, dattn, g.proj_w, static_cast<Vec<T>*>(nullptr));
  if (!s.attention_kept) attention(env, layer, Phase::Recompute, s);  // selective: rerun the core
  Mat<T> dq, dk, dv;
  {
    const AttentionShape shape{env.batch, env.seq, env.heads, env.head_dim};
    attention_backward(dattn, s.q, s.k, s.v, shape, static_cast<T>(env.dropout), s.attn, dq, dk, dv,
                       env.op("attention_core.backward", B, layer));
  }
  Mat<T> dqkv(dq.rows(), 3 * width);
  dqkv << dq, dk, dv;
  Mat<T> da_in;
  linear_backward_annotated(env, {"qkv.dgrad", "qkv.wgrad"}, layer, dqkv, s.ln1_out, true, w.qkv_w, da_in, g.qkv_w,
                            &g.qkv_b);
  const Mat<T> dln1 = leave_tp_region(env, std::move(da_in), env.op("tp_reduce.input_grad", B, layer));
  {
    ScopedOp op(env.op("input_norm.backward", B, layer, dln1.size()));
    layernorm_backward(dln1, s.x, w.ln1_g, s.ln1, dx, g.ln1_g, g.ln1_b);
    dx += dx2;  // residual
  }
}

}  // namespace cc::engine
