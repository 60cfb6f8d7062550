// embedding.h — vocab-parallel token embedding (Megatron-LM's VocabParallelEmbedding).
// Each tensor-parallel rank holds rows [vocab_start, vocab_start + rows) of the [V × h]
// table. A rank writes the embedding of the tokens it owns and zeros elsewhere; summing
// the outputs over the TP group (an all-reduce, or a reduce-scatter under sequence
// parallelism — the caller's job) gives the full lookup, since exactly one rank owns
// each token.
//   out[r]                       = table[tokens[r] - vocab_start]   if owned, else 0
//   dtable[tokens[r] - vocab_start] += dout[r]                      for owned tokens
// Backward accumulates in row order, so repeated tokens sum deterministically.
// The same table, transposed, is the output layer (weight tying); that gradient is the
// linear op's and is added by the caller into the same dtable.
#pragma once

#include <stdexcept>
#include <vector>

#include "engine/tensor.h"

namespace cc::engine {

namespace embedding_detail {
// Local row of a token, or -1 when another rank owns it.
inline Eigen::Index local_row(int token, int vocab_start, Eigen::Index slice_rows) {
  const Eigen::Index local = static_cast<Eigen::Index>(token) - vocab_start;
  return (local >= 0 && local < slice_rows) ? local : -1;
}
}  // namespace embedding_detail

template <typename T>
void embedding_forward(const std::vector<int>& tokens, const Mat<T>& table, int vocab_start,
                       Mat<T>& out) {
  const Eigen::Index n = static_cast<Eigen::Index>(tokens.size());
  out.setZero(n, table.cols());
  for (Eigen::Index r = 0; r < n; ++r) {
    const Eigen::Index row = embedding_detail::local_row(tokens[static_cast<std::size_t>(r)],
                                                         vocab_start, table.rows());
    if (row >= 0) out.row(r) = table.row(row);
  }
}

template <typename T>
void embedding_backward(const Mat<T>& dout, const std::vector<int>& tokens, int vocab_start,
                        Mat<T>& dtable) {
  const Eigen::Index n = static_cast<Eigen::Index>(tokens.size());
  if (dout.rows() != n || dout.cols() != dtable.cols())
    throw std::invalid_argument("embedding_backward: shape mismatch");
  for (Eigen::Index r = 0; r < n; ++r) {
    const Eigen::Index row = embedding_detail::local_row(tokens[static_cast<std::size_t>(r)],
                                                         vocab_start, dtable.rows());
    if (row >= 0) dtable.row(row) += dout.row(r);
  }
}

}  // namespace cc::engine
