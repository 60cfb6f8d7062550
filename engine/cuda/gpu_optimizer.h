// gpu_optimizer.h — engine/optimizer.h on the GPU, step for step: sum the sequence-parallel
// partial gradients over TP, sum the tied embedding's two copies, reduce over DP (all-reduce,
// or reduce-scatter with the distributed optimizer), clip by the global norm, AdamW on the
// fp32 master weights (this rank's shard), all-gather the updated shards, refresh the
// compute copy and zero the gradients. The norm is the step's one host synchronisation
// (Megatron-LM reads it on the host too, to log it).
#pragma once

#include <utility>
#include <vector>

#include "engine/cuda/gpu_context.h"
#include "engine/cuda/gpu_weights.h"
#include "engine/optimizer.h"

namespace cc::cuda {

template <typename T>
class GpuOptimizer {
 public:
  GpuOptimizer(const engine::RankModel& model, const ParallelConfig& config, GpuContext& ctx, GpuWeights<T>& weights,
               const engine::FlatLayout& layout, engine::AdamWConfig adam, double clip);
  // Returns the global gradient norm before clipping.
  double step(long step, double lr);

 private:
  using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;

  const ParallelConfig& c_;
  GpuContext& ctx_;
  GpuWeights<T>& w_;
  engine::AdamWConfig adam_;
  double clip_;
  std::size_t shard_ = 0, shard_begin_ = 0;
  Ranges sp_partial_, embedding_, counted_;    // flat offsets
  std::vector<std::pair<Ranges::value_type, bool>> decay_runs_;  // shard offsets, whether decayed
  DeviceBuffer<float> m_, v_, local_;  // moments; the reduced gradient shard (distributed optimizer)
  DeviceBuffer<double> norm_, scratch_;
};

}  // namespace cc::cuda
