#include "engine/cuda/gpu_optimizer.h"

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>

#include "engine/cuda/kernels.h"
#include "engine/cuda/training_kernels.h"

namespace cc::cuda {

namespace {

engine::OpAnnotation annotate(const char* name) { return {name, Phase::Backward, -1, -1, {}, true}; }

}  // namespace

template <typename T>
GpuOptimizer<T>::GpuOptimizer(const engine::RankModel&, const ParallelConfig& config, GpuContext& ctx,
                              GpuWeights<T>& weights, const engine::FlatLayout& layout, engine::AdamWConfig adam,
                              double clip)
    : c_(config), ctx_(ctx), w_(weights), adam_(adam), clip_(clip) {
  const engine::OptimizerShard shard = engine::optimizer_shard(layout.size, c_, ctx_.groups().me.dp);
  shard_ = shard.size;
  shard_begin_ = shard.begin;
  sp_partial_ = engine::flagged_ranges(layout.sp_partial, 0, layout.size);
  embedding_ = layout.embedding;
  counted_ = engine::flagged_ranges(layout.counted, shard_begin_, shard_begin_ + shard_);
  for (const engine::FlagRun& r : engine::flag_runs(layout.decay, shard_begin_, shard_begin_ + shard_))
    decay_runs_.push_back({{r.begin - shard_begin_, r.end - shard_begin_}, r.flag});
  m_ = DeviceBuffer<float>(shard_);
  v_ = DeviceBuffer<float>(shard_);
  m_.upload(std::vector<float>(shard_, 0.0f));
  v_.upload(std::vector<float>(shard_, 0.0f));
  if (c_.distributed_optimizer) local_ = DeviceBuffer<float>(shard_);
  norm_ = DeviceBuffer<double>(1);
  scratch_ = DeviceBuffer<double>(kSumSquaresBlocks);
}

template <typename T>
double GpuOptimizer<T>::step(long step, double lr) {
  engine::ScopedOp whole({"optimizer.adam", Phase::Forward, -1, -1, {static_cast<std::int64_t>(shard_), 1, 1, 1}, false});
  const cudaStream_t stream = ctx_.compute();
  float* grad = w_.grads();
  // 1. Sequence parallelism: norms, row-parallel biases and positions saw only this rank's rows.
  if (c_.sequence_parallel) ctx_.all_reduce_ranges(ctx_.tp(), grad, sp_partial_, annotate("tp.sp_grad_reduce"));
  // 2. Tied embeddings: the first stage's table and the last stage's copy get the sum.
  if (c_.pp > 1)
    for (const auto& [begin, end] : embedding_)
      ctx_.all_reduce(ctx_.embedding(), grad + begin, end - begin, ncclSum, annotate("embedding_grad_sync"));
  // 3. Data parallelism.
  float* local = grad;
  if (c_.distributed_optimizer) {
    local = local_.data();
    ctx_.reduce_scatter(ctx_.dp(), grad, local, shard_, annotate("dp.grad_reduce_scatter"));
  } else {
    ctx_.all_reduce(ctx_.dp(), grad, w_.padded(), ncclSum, annotate("dp.grad_all_reduce"));
  }
  // 4. Global norm over every parameter counted once, and clipping.
  CC_CUDA(cudaMemsetAsync(norm_.data(), 0, sizeof(double), stream));
  for (const auto& [begin, end] : counted_)
    sum_squares_add(local + (begin - shard_begin_), static_cast<std::int64_t>(end - begin), norm_.data(),
                    scratch_.data(), stream);
  ctx_.all_reduce(c_.distributed_optimizer ? ctx_.world() : ctx_.model_parallel(), norm_.data(), 1, ncclSum,
                  annotate("grad_norm"));
  double sumsq = 0;
  CC_CUDA(cudaMemcpyAsync(&sumsq, norm_.data(), sizeof(double), cudaMemcpyDeviceToHost, stream));
  CC_CUDA(cudaStreamSynchronize(stream));
  const double norm = std::sqrt(sumsq);
  const double clip_scale = clip_ > 0 && norm > clip_ ? clip_ / (norm + 1e-6) : 1.0;
  if (clip_scale != 1.0) scale(local, static_cast<std::int64_t>(shard_), static_cast<float>(clip_scale), stream);
  // 5. AdamW on this rank's shard; decay only matrices and embeddings.
  engine::AdamWConfig a = adam_;
  a.lr = lr;
  for (const auto& [range, decay] : decay_runs_)
    adamw_update<float>(w_.master() + shard_begin_ + range.first, local + range.first, m_.data() + range.first,
                        v_.data() + range.first, range.second - range.first, a, step, decay, stream);
  // 6. Distributed optimizer: every DP rank gathers the others' updated shards (in place).
  if (c_.distributed_optimizer)
    ctx_.all_gather(ctx_.dp(), w_.master() + shard_begin_, shard_, w_.master(), annotate("dp.param_all_gather"));
  w_.refresh_compute();
  w_.zero_grads();  // ready for the next step's accumulation over microbatches
  return norm;
}

template class GpuOptimizer<float>;
template class GpuOptimizer<__nv_bfloat16>;

}  // namespace cc::cuda
