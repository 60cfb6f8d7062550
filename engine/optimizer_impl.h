// optimizer_impl.h — template bodies for optimizer.h.
#pragma once

#include <cmath>

namespace cc::engine {

template <typename T>
FlatLayout flat_layout(ModelWeights<T>& w, const RankModel& m) {
  FlatLayout f;
  for_each_tensor(w, m, [&](const TensorInfo& info, T*, std::int64_t rows, std::int64_t cols) {
    const auto n = static_cast<std::size_t>(rows * cols);
    if (info.name == "wte") f.embedding.emplace_back(f.size, f.size + n);
    // A replicated tensor is counted once, by TP rank 0; the tied copy not at all.
    const bool counted = info.counted && (info.split != Split::Replicated || m.tp_rank == 0);
    f.decay.insert(f.decay.end(), n, info.decay);
    f.counted.insert(f.counted.end(), n, counted);
    f.sp_partial.insert(f.sp_partial.end(), n, info.sp_partial);
    f.tied.insert(f.tied.end(), n, info.tied_copy);
    f.size += n;
  });
  return f;
}

template <typename T>
Optimizer<T>::Optimizer(const RankModel& model, const ParallelConfig& config, const ProcessGroups& groups,
                        ModelWeights<T>& w, AdamWConfig adam, double clip)
    : model_(model), c_(config), g_(groups), layout_(flat_layout(w, model)), adam_(adam), clip_(clip) {
  const OptimizerShard shard = optimizer_shard(layout_.size, c_, g_.me.dp);
  padded_ = shard.padded;
  shard_ = shard.size;
  shard_begin_ = shard.begin;
  m_.assign(shard_, T(0));
  v_.assign(shard_, T(0));
}

template <typename T>
double Optimizer<T>::step(ModelWeights<T>& w, ModelWeights<T>& g, long step, double lr) {
  // The whole step is the simulator's "optimizer.adam" op (copies into flat buffers,
  // gradient norm, clipping, AdamW, copy back); its collectives are annotated inside it and
  // a profiler counts their time to them, not to this op.
  ScopedOp whole({"optimizer.adam", Phase::Forward, -1, -1, {static_cast<std::int64_t>(shard_), 1, 1, 1}, false});
  std::vector<T> grad;
  pack(g, model_, grad);
  const OpAnnotation none{"optimizer", Phase::Backward, -1, -1, {}, true};
  auto annotate = [&](const char* name) {
    OpAnnotation a = none;
    a.name = name;
    return a;
  };

  // 1. Sequence parallelism: norms, row-parallel biases and positions saw only this rank's
  //    rows, so their gradients are partial sums over the TP group.
  if (c_.sequence_parallel) {
    std::vector<T> partial;
    for (std::size_t i = 0; i < grad.size(); ++i)
      if (layout_.sp_partial[i]) partial.push_back(grad[i]);
    g_.tp.all_reduce_sum(partial.data(), partial.size(), annotate("tp.sp_grad_reduce"));
    std::size_t k = 0;
    for (std::size_t i = 0; i < grad.size(); ++i)
      if (layout_.sp_partial[i]) grad[i] = partial[k++];
  }
  // 2. Tied embeddings: the first stage's table and the last stage's copy get the sum.
  if (c_.pp > 1)
    for (const auto& [begin, end] : layout_.embedding)
      g_.embedding.all_reduce_sum(grad.data() + begin, end - begin, annotate("embedding_grad_sync"));

  // 3. Data parallelism.
  std::vector<T> params;
  pack(w, model_, params);
  grad.resize(padded_, T(0));
  params.resize(padded_, T(0));
  std::vector<T> local(grad.begin() + static_cast<std::ptrdiff_t>(shard_begin_),
                       grad.begin() + static_cast<std::ptrdiff_t>(shard_begin_ + shard_));
  if (c_.distributed_optimizer)
    g_.dp.reduce_scatter_sum(grad.data(), local.data(), shard_, annotate("dp.grad_reduce_scatter"));
  else {
    g_.dp.all_reduce_sum(grad.data(), grad.size(), annotate("dp.grad_all_reduce"));
    local = grad;
  }

  // 4. Global norm over every parameter counted once, and clipping.
  double sumsq = 0;
  for (std::size_t i = 0; i < shard_; ++i) {
    const std::size_t at = shard_begin_ + i;
    if (at < layout_.size && layout_.counted[at]) sumsq += static_cast<double>(local[i]) * static_cast<double>(local[i]);
  }
  (c_.distributed_optimizer ? g_.world : g_.model_parallel).all_reduce_sum(&sumsq, 1, annotate("grad_norm"));
  const double norm = std::sqrt(sumsq);
  const double scale = clip_ > 0 && norm > clip_ ? clip_ / (norm + 1e-6) : 1.0;
  for (T& x : local) x = static_cast<T>(x * scale);

  // 5. AdamW on this rank's part, in a fixed order; decay only matrices and embeddings.
  AdamWConfig a = adam_;
  a.lr = lr;
  for (const FlagRun& r : flag_runs(layout_.decay, shard_begin_, shard_begin_ + shard_)) {
    const std::size_t i = r.begin - shard_begin_;
    adamw_update(params.data() + r.begin, local.data() + i, m_.data() + i, v_.data() + i, r.end - r.begin, a, step,
                 r.flag);
  }
  // 6. Distributed optimizer: every DP rank gathers the others' updated shards.
  if (c_.distributed_optimizer) {
    std::vector<T> updated(params.begin() + static_cast<std::ptrdiff_t>(shard_begin_),
                           params.begin() + static_cast<std::ptrdiff_t>(shard_begin_ + shard_));
    g_.dp.all_gather(updated.data(), shard_, params.data(), annotate("dp.param_all_gather"));
  }
  params.resize(layout_.size);
  unpack(params, w, model_);
  set_zero(g, model_);  // ready for the next step's accumulation over microbatches
  return norm;
}

}  // namespace cc::engine
