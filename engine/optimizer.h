// optimizer.h — everything between the last backward pass and updated weights, as
// Megatron-LM orders it: sum the sequence-parallel partial gradients over TP, sum the tied
// embedding's two copies (first and last stage), reduce over DP (all-reduce, or
// reduce-scatter with the distributed optimizer), clip by the global norm, AdamW, and with
// the distributed optimizer all-gather the updated parameters.
#pragma once

#include <vector>

#include "engine/comm.h"
#include "engine/flag_runs.h"
#include "engine/gpt_weights.h"
#include "engine/ops/adamw.h"
#include "sim/parallel_config.h"

namespace cc::engine {

// Where each kind of tensor sits in a rank's flat parameter vector.
struct FlatLayout {
  std::size_t size = 0;
  std::vector<std::uint8_t> decay, counted, sp_partial, tied;  // per element
  std::vector<std::pair<std::size_t, std::size_t>> embedding;  // [begin, end) of wte, if held
};

template <typename T>
FlatLayout flat_layout(ModelWeights<T>& w, const RankModel& m);

// The part of a rank's flat vector of `size` elements its optimizer updates: all of it, or
// with the distributed optimizer shard `dp_rank` of the size padded to a multiple of DP.
struct OptimizerShard {
  std::size_t padded = 0;  // length of the (padded) flat vectors
  std::size_t size = 0;    // elements of the shard
  std::size_t begin = 0;   // its first element
};
inline OptimizerShard optimizer_shard(std::size_t size, const ParallelConfig& c, int dp_rank) {
  if (!c.distributed_optimizer) return {size, size, 0};
  const auto dp = static_cast<std::size_t>(c.dp);
  const std::size_t padded = (size + dp - 1) / dp * dp;
  return {padded, padded / dp, padded / dp * static_cast<std::size_t>(dp_rank)};
}

template <typename T>
class Optimizer {
 public:
  Optimizer(const RankModel& model, const ParallelConfig& config, const ProcessGroups& groups, ModelWeights<T>& w,
            AdamWConfig adam, double clip);
  // Returns the global gradient norm before clipping.
  double step(ModelWeights<T>& w, ModelWeights<T>& g, long step, double lr);

  // Adam moments: the whole vector, or this rank's shard with the distributed optimizer.
  std::vector<T>& first_moment() { return m_; }
  std::vector<T>& second_moment() { return v_; }

 private:
  const RankModel& model_;
  const ParallelConfig& c_;
  const ProcessGroups& g_;
  FlatLayout layout_;
  AdamWConfig adam_;
  double clip_;
  std::size_t padded_ = 0, shard_ = 0, shard_begin_ = 0;
  std::vector<T> m_, v_;
};

}  // namespace cc::engine

#include "engine/optimizer_impl.h"
