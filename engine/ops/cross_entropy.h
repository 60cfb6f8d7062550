// cross_entropy.h — vocab-parallel softmax cross-entropy (Megatron-LM's
// vocab_parallel_cross_entropy): each tensor-parallel rank holds the logits of vocab ids
// [vocab_start, vocab_start + cols) and the full [rows × V] logits are never gathered.
// Per row r with target t and global vocab V:
//   m        = max_v z_v                         (local max, then all-reduce MAX)
//   Z        = Σ_v exp(z_v - m)                  (local sum, then all-reduce SUM)
//   z_t - m                                      (owner contributes it, others 0; all-reduce SUM)
//   loss     = log Z - (z_t - m)  = -log softmax(z)_t
//   softmax  = exp(z - m) / Z                    (local slice, saved for backward)
// Backward, from dloss[r] (no communication: the softmax slice already holds the global Z):
//   dz_v = dloss · (softmax_v - [v == t])
// Three all-reduces of one value per row: what Megatron does, instead of gathering
// logits that are rows × V large.
#pragma once

#include <cmath>
#include <stdexcept>
#include <vector>

#include "engine/tensor.h"

namespace cc::engine {

// reduce_max(Vec<T>&) and reduce_sum(Vec<T>&) all-reduce a per-row vector in place across
// the TP group; pass identity lambdas when the slice is the whole vocabulary. Every target
// must be a valid global vocab id (no ignore index). Every rank of the group must call this
// (the reductions are collective), in the same order: max, sum of exp, target logit.
template <typename T, typename ReduceMax, typename ReduceSum>
void vocab_parallel_cross_entropy_forward(const Mat<T>& logits, const std::vector<int>& targets,
                                          int vocab_start, ReduceMax reduce_max,
                                          ReduceSum reduce_sum, Vec<T>& losses, Mat<T>& softmax) {
  const Eigen::Index rows = logits.rows(), cols = logits.cols();
  if (targets.size() != static_cast<std::size_t>(rows) || cols == 0)
    throw std::invalid_argument("cross_entropy: need one target per row and a non-empty slice");

  Vec<T> row_max = logits.rowwise().maxCoeff();
  reduce_max(row_max);

  softmax = (logits.colwise() - row_max).array().exp().matrix();
  Vec<T> sum_exp = softmax.rowwise().sum();
  reduce_sum(sum_exp);

  Vec<T> target_logit = Vec<T>::Zero(rows);  // z_t - m, from the owning rank only
  for (Eigen::Index r = 0; r < rows; ++r) {
    const int local = targets[static_cast<std::size_t>(r)] - vocab_start;
    if (local >= 0 && local < cols) target_logit(r) = logits(r, local) - row_max(r);
  }
  reduce_sum(target_logit);

  losses = sum_exp.array().log() - target_logit.array();
  softmax.array().colwise() /= sum_exp.array();
}

template <typename T>
void vocab_parallel_cross_entropy_backward(const Mat<T>& softmax, const std::vector<int>& targets,
                                           int vocab_start, const Vec<T>& dlosses,
                                           Mat<T>& dlogits) {
  const Eigen::Index rows = softmax.rows(), cols = softmax.cols();
  if (targets.size() != static_cast<std::size_t>(rows) || dlosses.size() != rows)
    throw std::invalid_argument("cross_entropy_backward: need one target and dloss per row");
  dlogits = softmax.array().colwise() * dlosses.array();
  for (Eigen::Index r = 0; r < rows; ++r) {
    const int local = targets[static_cast<std::size_t>(r)] - vocab_start;
    if (local >= 0 && local < cols) dlogits(r, local) -= dlosses(r);
  }
}

}  // namespace cc::engine
