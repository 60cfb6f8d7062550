// attention.h — causal multi-head attention core: the part between the QKV projection and
// the output projection, which selective activation recomputation (Korthikanti et al.
// 2022) drops and recomputes because its S×S activations dominate memory.
//
// For each sample b and head h, with Q, K, V the S×d slices of that head:
//   scores  = Q Kᵀ / sqrt(d)
//   P(i, j) = softmax_j(scores(i, ·)) over keys j <= i, and 0 for j > i  (causal mask)
//   D       = dropout(P)                 (mask from the counter RNG, see AttentionIndex)
//   out     = D V
// Backward, from dout:
//   dD = dout Vᵀ,   dV = Dᵀ dout
//   dP = dD ⊙ mask / (1 - p)            (dP = dD when p == 0)
//   dscores(i, j) = P(i, j) · (dP(i, j) - Σ_k P(i, k) dP(i, k))   (softmax Jacobian)
//   dQ = dscores K / sqrt(d),   dK = dscoresᵀ Q / sqrt(d)
//
// Layout: q, k, v, out are [seq·batch × heads·d], row = pos·batch + b (sequence-first),
// head h in columns [h·d, (h+1)·d). A (b, h) slice is therefore a strided view — rows
// b, b+batch, ... — taken with an Eigen::Map and an outer stride, without copying.
// Saved per (b, h), index b·heads + h: the softmax P (S×S), and when p > 0 also the byte
// mask and the dropped probabilities D — the 2·a·s²·b + a·s²·b + 2·a·s²·b of Korthikanti's
// activation-memory count (in fp16 bytes).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "engine/annotations.h"
#include "engine/ops/dropout.h"
#include "engine/tensor.h"

namespace cc::engine {

struct AttentionShape {
  int batch;
  int seq;
  int heads;  // heads on this rank
  int head_dim;
};

// Makes dropout masks independent of the TP/DP split: mask index of (b, h, i, j) =
//   ((sample_ids[b] · global_heads + head_offset + h) · seq + i) · seq + j
struct AttentionIndex {
  std::vector<std::uint64_t> sample_ids;  // global id of each local sample b
  std::int64_t head_offset = 0;           // global index of local head 0
  std::int64_t global_heads = 0;

  // Global row of query position i of local head h of local sample b in the
  // [samples·heads·seq × seq] probability matrix (its columns are the keys).
  std::uint64_t row_id(int b, int h, int i, int seq) const {
    const std::uint64_t head = sample_ids[static_cast<std::size_t>(b)] * static_cast<std::uint64_t>(global_heads) +
                               static_cast<std::uint64_t>(head_offset + h);
    return head * static_cast<std::uint64_t>(seq) + static_cast<std::uint64_t>(i);
  }
};

template <typename T>
struct AttentionSaved {
  std::vector<Mat<T>> probs;    // softmax P, one S×S per (b, h)
  std::vector<Mask> masks;      // empty when p == 0
  std::vector<Mat<T>> dropped;  // D = dropout(P); empty when p == 0
};

namespace attention_detail {

template <typename T>
using HeadView = Eigen::Map<Mat<T>, 0, Eigen::OuterStride<>>;
template <typename T>
using ConstHeadView = Eigen::Map<const Mat<T>, 0, Eigen::OuterStride<>>;

// Rows b, b+batch, b+2·batch, ... and columns [h·d, (h+1)·d) of a [seq·batch × heads·d] matrix.
inline Eigen::Index view_offset(const AttentionShape& s, int b, int h) {
  return static_cast<Eigen::Index>(b) * s.heads * s.head_dim +
         static_cast<Eigen::Index>(h) * s.head_dim;
}
inline Eigen::OuterStride<> view_stride(const AttentionShape& s) {
  return Eigen::OuterStride<>(static_cast<Eigen::Index>(s.batch) * s.heads * s.head_dim);
}
template <typename T>
ConstHeadView<T> head(const Mat<T>& m, const AttentionShape& s, int b, int h) {
  return ConstHeadView<T>(m.data() + view_offset(s, b, h), s.seq, s.head_dim, view_stride(s));
}
template <typename T>
HeadView<T> head(Mat<T>& m, const AttentionShape& s, int b, int h) {
  return HeadView<T>(m.data() + view_offset(s, b, h), s.seq, s.head_dim, view_stride(s));
}

// Calls body(b, h, block index) for every (sample, head) block, block = b·heads + h.
template <typename Body>
void for_each_block(const AttentionShape& s, Body&& body) {
  for (int b = 0; b < s.batch; ++b)
    for (int h = 0; h < s.heads; ++h)
      body(b, h, static_cast<std::size_t>(b) * static_cast<std::size_t>(s.heads) + static_cast<std::size_t>(h));
}

template <typename T>
void check_shape(const Mat<T>& m, const AttentionShape& s, const char* what) {
  if (m.rows() != static_cast<Eigen::Index>(s.seq) * s.batch ||
      m.cols() != static_cast<Eigen::Index>(s.heads) * s.head_dim)
    throw std::invalid_argument(std::string("attention: wrong shape of ") + what);
}

}  // namespace attention_detail

// Each stage runs over every (b, h) block before the next starts, so each is one "kernel"
// the profiler can time under the simulator's name for it (layer_program.cpp, unfused
// attention). `base` carries the phase, layer and microbatch; every stage is annotated
// with its own name and shape.
inline OpAnnotation attention_stage(const OpAnnotation& base, const char* name, const AttentionShape& s,
                                    std::int64_t m, std::int64_t n, std::int64_t k) {
  OpAnnotation a = base;
  a.name = name;
  a.shape = {m, n, k, static_cast<std::int64_t>(s.batch) * s.heads};
  return a;
}
inline OpAnnotation attention_elementwise(const OpAnnotation& base, const char* name, const AttentionShape& s) {
  OpAnnotation a = base;
  a.name = name;
  a.shape = {static_cast<std::int64_t>(s.batch) * s.heads * s.seq * s.seq, 1, 1, 1};
  return a;
}

template <typename T>
void attention_forward(const Mat<T>& q, const Mat<T>& k, const Mat<T>& v, const AttentionShape& s,
                       T dropout_p, std::uint64_t seed, std::uint64_t stream,
                       const AttentionIndex& where, Mat<T>& out, AttentionSaved<T>& saved,
                       const OpAnnotation& base = {}) {
  using namespace attention_detail;
  check_shape(q, s, "q");
  check_shape(k, s, "k");
  check_shape(v, s, "v");
  const bool drop = dropout_p != T(0);
  if (drop && where.sample_ids.size() != static_cast<std::size_t>(s.batch))
    throw std::invalid_argument("attention_forward: AttentionIndex needs one id per sample");
  const std::size_t blocks = static_cast<std::size_t>(s.batch) * static_cast<std::size_t>(s.heads);
  const Eigen::Index S = s.seq;
  const T scale = T(1) / std::sqrt(static_cast<T>(s.head_dim));
  out.resize(q.rows(), q.cols());
  saved.probs.resize(blocks);
  saved.masks.resize(drop ? blocks : 0);
  saved.dropped.resize(drop ? blocks : 0);
  {
    ScopedOp op(attention_stage(base, "attention_scores", s, S, S, s.head_dim));
    for_each_block(s, [&](int b, int h, std::size_t blk) {
      saved.probs[blk].noalias() = (head(q, s, b, h) * head(k, s, b, h).transpose()) * scale;
    });
  }
  {
    ScopedOp op(attention_elementwise(base, "softmax", s));
    for_each_block(s, [&](int, int, std::size_t blk) {
      Mat<T>& P = saved.probs[blk];
      for (Eigen::Index i = 0; i < S; ++i) {
        // Row i sees keys 0..i; subtract the row max so exp never overflows.
        const T row_max = P.row(i).head(i + 1).maxCoeff();
        P.row(i).head(i + 1).array() = (P.row(i).head(i + 1).array() - row_max).exp();
        P.row(i).head(i + 1) /= P.row(i).head(i + 1).sum();
        P.row(i).tail(S - i - 1).setZero();
      }
    });
  }
  if (drop) {
    ScopedOp op(attention_elementwise(base, "attention_dropout", s));
    MaskIndex mask_index;  // rows of the global [samples·heads·seq × seq] probability matrix
    mask_index.row_ids.resize(static_cast<std::size_t>(S));
    mask_index.global_cols = S;
    for_each_block(s, [&](int b, int h, std::size_t blk) {
      for (int i = 0; i < s.seq; ++i) mask_index.row_ids[static_cast<std::size_t>(i)] = where.row_id(b, h, i, s.seq);
      dropout_forward(saved.probs[blk], dropout_p, seed, stream, mask_index, saved.dropped[blk], saved.masks[blk]);
    });
  }
  {
    ScopedOp op(attention_stage(base, "attention_context", s, S, s.head_dim, S));
    for_each_block(s, [&](int b, int h, std::size_t blk) {
      head(out, s, b, h).noalias() = (drop ? saved.dropped[blk] : saved.probs[blk]) * head(v, s, b, h);
    });
  }
}

template <typename T>
void attention_backward(const Mat<T>& dout, const Mat<T>& q, const Mat<T>& k, const Mat<T>& v,
                        const AttentionShape& s, T dropout_p, const AttentionSaved<T>& saved,
                        Mat<T>& dq, Mat<T>& dk, Mat<T>& dv, const OpAnnotation& base = {}) {
  using namespace attention_detail;
  check_shape(dout, s, "dout");
  check_shape(q, s, "q");
  check_shape(k, s, "k");
  check_shape(v, s, "v");
  const bool drop = dropout_p != T(0);
  const std::size_t blocks = static_cast<std::size_t>(s.batch) * static_cast<std::size_t>(s.heads);
  if (saved.probs.size() != blocks ||
      (drop && (saved.masks.size() != blocks || saved.dropped.size() != blocks)))
    throw std::invalid_argument("attention_backward: saved state does not match the shape");
  const Eigen::Index S = s.seq;
  const T scale = T(1) / std::sqrt(static_cast<T>(s.head_dim));
  const T keep_scale = dropout_scale(dropout_p);
  dq.resize(q.rows(), q.cols());
  dk.resize(k.rows(), k.cols());
  dv.resize(v.rows(), v.cols());
  std::vector<Mat<T>> grad(blocks);  // dD, then dP, then dscores, in place
  {
    ScopedOp op(attention_stage(base, "attention_context.dgrad_probs", s, S, S, s.head_dim));
    for_each_block(s, [&](int b, int h, std::size_t blk) {
      grad[blk].noalias() = head(dout, s, b, h) * head(v, s, b, h).transpose();
    });
  }
  {
    ScopedOp op(attention_stage(base, "attention_context.dgrad_values", s, S, s.head_dim, S));
    for_each_block(s, [&](int b, int h, std::size_t blk) {
      const Mat<T>& D = drop ? saved.dropped[blk] : saved.probs[blk];  // what multiplied V in the forward
      head(dv, s, b, h).noalias() = D.transpose() * head(dout, s, b, h);
    });
  }
  if (drop) {
    ScopedOp op(attention_elementwise(base, "attention_dropout.backward", s));
    for_each_block(s, [&](int, int, std::size_t blk) {
      grad[blk].array() *= saved.masks[blk].template cast<T>().array() * keep_scale;
    });
  }
  {
    ScopedOp op(attention_elementwise(base, "softmax.backward", s));
    for_each_block(s, [&](int, int, std::size_t blk) {
      // Softmax backward per row; masked entries have P = 0 and so get no gradient.
      const Mat<T>& P = saved.probs[blk];
      const Vec<T> row_dot = (P.array() * grad[blk].array()).rowwise().sum();
      grad[blk] = (P.array() * (grad[blk].colwise() - row_dot).array()).matrix() * scale;
    });
  }
  {
    ScopedOp op(attention_stage(base, "attention_scores.dgrad_query", s, S, s.head_dim, S));
    for_each_block(s, [&](int b, int h, std::size_t blk) { head(dq, s, b, h).noalias() = grad[blk] * head(k, s, b, h); });
  }
  {
    ScopedOp op(attention_stage(base, "attention_scores.dgrad_key", s, S, s.head_dim, S));
    for_each_block(s, [&](int b, int h, std::size_t blk) {
      head(dk, s, b, h).noalias() = grad[blk].transpose() * head(q, s, b, h);
    });
  }
}

// Bytes held by the saved state: probabilities, masks and dropped probabilities.
template <typename T>
std::size_t saved_bytes(const AttentionSaved<T>& s) {
  std::size_t bytes = 0;
  for (const auto& m : s.probs) bytes += static_cast<std::size_t>(m.size()) * sizeof(T);
  for (const auto& m : s.masks) bytes += static_cast<std::size_t>(m.size()) * sizeof(std::uint8_t);
  for (const auto& m : s.dropped) bytes += static_cast<std::size_t>(m.size()) * sizeof(T);
  return bytes;
}

}  // namespace cc::engine
