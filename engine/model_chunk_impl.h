// model_chunk_impl.h — template bodies for model_chunk.h.
#pragma once

namespace cc::engine {

template <typename T>
void ModelChunk<T>::forward(const ModelWeights<T>& w, const PassEnv& env, int chunk, const Mat<T>& x_in,
                            const std::vector<int>& tokens, const std::vector<int>& targets, Mat<T>& out,
                            double* loss_sum, ChunkSaved<T>& saved) const {
  const Phase F = Phase::Forward;
  const int vocab_start = m_.tp_rank * (m_.spec.vocab_size / m_.tp);
  Mat<T> x;
  if (first_virtual_stage(chunk)) {
    // Vocab-parallel lookup, summed over TP (reduce-scattered along the sequence under SP),
    // plus learned positions for this rank's rows, then dropout.
    saved.tokens = tokens;
    Mat<T> partial;
    {
      ScopedOp op(env.op("embedding", F, -1, static_cast<std::int64_t>(tokens.size()) * env.hidden));
      embedding_forward(tokens, w.wte, vocab_start, partial);
    }
    Mat<T> summed = leave_tp_region(env, std::move(partial), env.op("tp_reduce", F, -1));
    ScopedOp op(env.op("embedding_dropout", F, -1, summed.size()));
    for (Eigen::Index r = 0; r < summed.rows(); ++r)
      summed.row(r) += w.wpe.row(env.position_of(env.region_offset() + static_cast<int>(r)));
    dropout_forward(summed, static_cast<T>(env.dropout), env.seed, env.dropout_stream(-1, 4), env.hidden_mask_index(),
                    x, saved.embedding_mask);
  } else {
    x = x_in;
  }

  const ChunkPlan& plan = m_.chunk(chunk);
  const int n = plan.layers.count;
  saved.layers.assign(static_cast<std::size_t>(n), LayerSaved<T>());
  for (int i = 0; i < n; ++i) {
    const auto& lw = w.layers[static_cast<std::size_t>(m_.local_index(chunk, i))];
    LayerSaved<T>& s = saved.layers[static_cast<std::size_t>(i)];
    Mat<T> y;
    layer_forward(lw, env, plan.layers.first + i, F, x, y, s);
    const bool all = plan.keeps_all(i);
    keep_for_backward(s, plan.recompute != RecomputeScope::CoreAttention, all);
    // Inside a recompute group only the group's first layer keeps its input.
    if (!all && plan.backward_group(i).first != i) s.x = Mat<T>();
    x = std::move(y);
  }

  if (!last_virtual_stage(chunk)) {
    out = std::move(x);
    return;
  }
  saved.targets = targets;
  saved.final_in = x;
  {
    ScopedOp op(env.op("final_norm", F, -1, x.size()));
    layernorm_forward(x, w.lnf_g, w.lnf_b, saved.final_out, saved.final_norm);
  }
  const Mat<T> gathered = enter_tp_region(env, saved.final_out, env.op("sp_all_gather", F, -1));
  Mat<T> logits;
  {
    ScopedOp op(env.op("logits", F, -1, gathered.rows(), w.wte.rows(), gathered.cols()));
    logits.noalias() = gathered * w.wte.transpose();
  }
  Vec<T> losses;
  {
    ScopedOp op(env.op("cross_entropy", F, -1, logits.size()));
    auto reduce_max = [&](Vec<T>& v) {
      env.tp->all_reduce_max(v.data(), static_cast<std::size_t>(v.size()), env.op("cross_entropy.all_reduce", F, -1));
    };
    auto reduce_sum = [&](Vec<T>& v) {
      env.tp->all_reduce_sum(v.data(), static_cast<std::size_t>(v.size()), env.op("cross_entropy.all_reduce", F, -1));
    };
    vocab_parallel_cross_entropy_forward(logits, targets, vocab_start, reduce_max, reduce_sum, losses, saved.softmax);
  }
  *loss_sum += static_cast<double>(losses.sum());
}

template <typename T>
void ModelChunk<T>::backward(const ModelWeights<T>& w, ModelWeights<T>& g, const PassEnv& env, int chunk,
                             ChunkSaved<T>& saved, const Mat<T>& dout, double loss_scale, Mat<T>& dx,
                             const std::function<void()>& recomputed) const {
  const Phase B = Phase::Backward;
  const int vocab_start = m_.tp_rank * (m_.spec.vocab_size / m_.tp);
  Mat<T> d;
  if (last_virtual_stage(chunk)) {
    Mat<T> dlogits;
    {
      ScopedOp op(env.op("cross_entropy.backward", B, -1, saved.softmax.size()));
      const Vec<T> dlosses = Vec<T>::Constant(saved.softmax.rows(), static_cast<T>(loss_scale));
      vocab_parallel_cross_entropy_backward(saved.softmax, saved.targets, vocab_start, dlosses, dlogits);
    }
    const Mat<T> gathered = enter_tp_region(env, saved.final_out, env.op("sp_all_gather.wgrad_input", B, -1));
    Mat<T> dgathered;
    {
      ScopedOp op(env.op("logits.dgrad", B, -1, gathered.rows(), gathered.cols(), w.wte.rows()));
      dgathered.noalias() = dlogits * w.wte;
    }
    {
      ScopedOp op(env.op("logits.wgrad", B, -1, gathered.cols(), w.wte.rows(), gathered.rows()));
      g.wte.noalias() += dlogits.transpose() * gathered;
    }
    const Mat<T> dfinal = leave_tp_region(env, std::move(dgathered), env.op("tp_reduce.input_grad", B, -1));
    ScopedOp op(env.op("final_norm.backward", B, -1, dfinal.size()));
    layernorm_backward(dfinal, saved.final_in, w.lnf_g, saved.final_norm, d, g.lnf_g, g.lnf_b);
  } else {
    d = dout;
  }

  // Layers, last first, a recompute group at a time.
  const ChunkPlan& plan = m_.chunk(chunk);
  for (int end = plan.layers.count; end > 0;) {
    const LayerRange group = plan.backward_group(end - 1);
    if (!plan.keeps_all(group.first)) {
      // Full recomputation: rerun the group's forward from its stored input.
      Mat<T> x = saved.layers[static_cast<std::size_t>(group.first)].x;
      for (int i = group.first; i < group.end(); ++i) {
        Mat<T> y;
        layer_forward(w.layers[static_cast<std::size_t>(m_.local_index(chunk, i))], env, plan.layers.first + i,
                      Phase::Recompute, x, y, saved.layers[static_cast<std::size_t>(i)]);
        x = std::move(y);
      }
      if (recomputed) recomputed();
    }
    for (int i = group.end() - 1; i >= group.first; --i) {
      const auto local = static_cast<std::size_t>(m_.local_index(chunk, i));
      Mat<T> dprev;
      layer_backward(w.layers[local], g.layers[local], env, plan.layers.first + i,
                     saved.layers[static_cast<std::size_t>(i)], d, dprev);
      saved.layers[static_cast<std::size_t>(i)] = LayerSaved<T>();  // free as soon as used
      d = std::move(dprev);
    }
    end = group.first;
  }

  if (!first_virtual_stage(chunk)) {
    dx = std::move(d);
    return;
  }
  Mat<T> dsum;
  {
    ScopedOp op(env.op("embedding_dropout.backward", B, -1, d.size()));
    dropout_backward(d, static_cast<T>(env.dropout), saved.embedding_mask, dsum);
    for (Eigen::Index r = 0; r < dsum.rows(); ++r)
      g.wpe.row(env.position_of(env.region_offset() + static_cast<int>(r))) += dsum.row(r);
  }
  const Mat<T> dpartial = enter_tp_region(env, dsum, env.op("sp_all_gather", B, -1));
  ScopedOp op(env.op("embedding.backward", B, -1, dpartial.size()));
  embedding_backward(dpartial, saved.tokens, vocab_start, g.wte);
}

}  // namespace cc::engine
