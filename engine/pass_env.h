// pass_env.h — what every op of one microbatch pass needs to know: the rank's TP group and
// sequence-parallel mode, the per-rank shapes, and the global identity of the microbatch's
// samples (so dropout masks and position embeddings do not depend on the layout).
#pragma once

#include <cstdint>
#include <vector>

#include "engine/annotations.h"
#include "engine/comm.h"
#include "engine/ops/attention.h"
#include "engine/ops/dropout.h"
#include "engine/rng.h"
#include "engine/tensor.h"

namespace cc::engine {

struct PassEnv {
  const Group* tp = nullptr;
  bool sequence_parallel = false;
  int batch = 1;         // samples in the microbatch
  int seq = 1;
  int hidden = 1;
  int heads = 1;         // on this rank
  int global_heads = 1;
  int head_dim = 1;
  int microbatch = 0;
  long step = 0;
  std::uint64_t seed = 0;
  double dropout = 0;
  std::vector<std::uint64_t> sample_ids;  // global sample ids, one per local sample

  int full_rows() const { return batch * seq; }
  int region_rows() const { return sequence_parallel ? full_rows() / tp->size() : full_rows(); }
  // First row of this rank's sequence-parallel shard within the microbatch.
  int region_offset() const { return sequence_parallel ? tp->rank() * region_rows() : 0; }
  // Rows are sequence-first: row = position · batch + sample.
  int position_of(int full_row) const { return full_row / batch; }

  MaskIndex hidden_mask_index() const {
    MaskIndex m;
    m.global_cols = hidden;
    for (int r = 0; r < region_rows(); ++r) {
      const int full = region_offset() + r;
      m.row_ids.push_back(sample_ids[static_cast<std::size_t>(full % batch)] * static_cast<std::uint64_t>(seq) +
                          static_cast<std::uint64_t>(position_of(full)));
    }
    return m;
  }
  AttentionIndex attention_index() const {
    return {sample_ids, static_cast<std::int64_t>(tp->rank()) * heads, global_heads};
  }
  // Dropout stream of one site: step, layer (-1 for the embedding) and which dropout.
  std::uint64_t dropout_stream(int layer, int site) const {
    return hash3(static_cast<std::uint64_t>(step), static_cast<std::uint64_t>(layer + 1), static_cast<std::uint64_t>(site));
  }
  OpAnnotation op(const char* name, Phase phase, int layer, std::int64_t a = 0, std::int64_t b = 0,
                  std::int64_t c = 0, std::int64_t d = 0) const {
    OpAnnotation x;
    x.name = name;
    x.phase = phase;
    x.layer = layer;
    x.microbatch = microbatch;
    x.shape = {a, b, c, d};
    return x;
  }
};

// Megatron-LM's conjugate operators between the sequence-parallel (or replicated) region
// and the tensor-parallel region. With SP: all-gather rows in, reduce-scatter rows out.
// Without: identity in, all-reduce out. Backward swaps them.
template <typename T>
Mat<T> enter_tp_region(const PassEnv& env, const Mat<T>& region, const OpAnnotation& what) {
  if (!env.sequence_parallel) return region;
  Mat<T> full(static_cast<Eigen::Index>(env.full_rows()), region.cols());
  env.tp->all_gather(region.data(), static_cast<std::size_t>(region.size()), full.data(), what);
  return full;
}

template <typename T>
Mat<T> leave_tp_region(const PassEnv& env, Mat<T> partial, const OpAnnotation& what) {
  if (!env.sequence_parallel) {
    env.tp->all_reduce_sum(partial.data(), static_cast<std::size_t>(partial.size()), what);
    return partial;
  }
  Mat<T> shard(static_cast<Eigen::Index>(env.region_rows()), partial.cols());
  env.tp->reduce_scatter_sum(partial.data(), shard.data(), static_cast<std::size_t>(shard.size()), what);
  return shard;
}

}  // namespace cc::engine
