// pipeline_runner_impl.h — template bodies for pipeline_runner.h.
#pragma once

#include "sim/error.h"

namespace cc::engine {

template <typename T>
PipelineRunner<T>::PipelineRunner(const RankModel& model, const ParallelConfig& config, const ProcessGroups& groups)
    : m_(model), c_(config), g_(groups), chunk_(model, config) {
  int* upper = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &upper, &found);
  const long needed = 2L * c_.pp * c_.virtual_stages * c_.num_microbatches() + 2;
  if (found && needed > *upper)
    fail("{} microbatches x {} virtual stages need more MPI tags than this MPI offers ({})", c_.num_microbatches(),
         c_.pp * c_.virtual_stages, *upper);
}

template <typename T>
int PipelineRunner<T>::tag(bool forward, int virtual_stage, int microbatch) const {
  return 2 * (virtual_stage * c_.num_microbatches() + microbatch) + (forward ? 0 : 1);
}

template <typename T>
void PipelineRunner<T>::send(const Mat<T>& data, int to_stage, int tag) {
  RankCoords peer = g_.me;
  peer.pp = to_stage;
  pending_.push_back({MPI_REQUEST_NULL, data});
  Pending& p = pending_.back();
  ScopedOp op({"p2p.send", Phase::Forward, -1, -1, {static_cast<std::int64_t>(data.size() * sizeof(T)), 0, 0, 0}, true, CollectiveKind::SendRecv});
  MPI_Isend(p.data.data(), static_cast<int>(p.data.size()), mpi_type<T>(), g_.layout.rank(peer), tag, MPI_COMM_WORLD,
            &p.request);
}

template <typename T>
void PipelineRunner<T>::receive(Mat<T>& data, Eigen::Index rows, int from_stage, int tag) {
  RankCoords peer = g_.me;
  peer.pp = from_stage;
  data.resize(rows, m_.spec.hidden_size);
  ScopedOp op({"p2p.recv", Phase::Forward, -1, -1, {static_cast<std::int64_t>(data.size() * sizeof(T)), 0, 0, 0}, true, CollectiveKind::SendRecv});
  MPI_Recv(data.data(), static_cast<int>(data.size()), mpi_type<T>(), g_.layout.rank(peer), tag, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
}

template <typename T>
void PipelineRunner<T>::finish_sends() {
  for (Pending& p : pending_) MPI_Wait(&p.request, MPI_STATUS_IGNORE);
  pending_.clear();
}

template <typename T>
template <typename TokensFn, typename EnvFn>
double PipelineRunner<T>::train(const ModelWeights<T>& w, ModelWeights<T>& g, TokensFn tokens, EnvFn env,
                                double loss_scale, ActivationPeak& peak) {
  const int p = c_.pp, v = c_.virtual_stages, s = m_.stage;
  const auto schedule = pipeline_schedule(p, c_.num_microbatches(), v);
  std::map<std::pair<int, int>, ChunkSaved<T>> live;  // (microbatch, chunk) -> kept activations
  // The activations held now, after every forward pass and after every full-recompute
  // group's rerun (when that group's activations are back, next to everything kept).
  const auto account = [&] {
    std::size_t total = 0, scores = 0, inputs = 0;
    for (const auto& [key, kept] : live) {
      total += kept.bytes();
      scores += kept.scores_bytes();
      inputs += kept.layer_input_bytes();
    }
    if (total > peak.total) peak = {total, scores, inputs, static_cast<int>(live.size())};
  };
  double loss = 0;
  for (const PipelinePass& pass : schedule[static_cast<std::size_t>(s)]) {
    const PassEnv e = env(pass.microbatch);
    const int vs = pass.chunk * p + s;
    if (pass.kind == PassKind::Forward) {
      const MicrobatchTokens mb = chunk_.first_virtual_stage(pass.chunk) || chunk_.last_virtual_stage(pass.chunk)
                                      ? tokens(pass.microbatch)
                                      : MicrobatchTokens{};
      Mat<T> x, out;
      if (vs > 0) receive(x, e.region_rows(), (s + p - 1) % p, tag(true, vs, pass.microbatch));
      ChunkSaved<T>& saved = live[{pass.microbatch, pass.chunk}];
      chunk_.forward(w, e, pass.chunk, x, mb.inputs, mb.targets, out, &loss, saved);
      if (vs < p * v - 1) send(out, (s + 1) % p, tag(true, vs + 1, pass.microbatch));
      account();
    } else {
      Mat<T> dout, dx;
      if (vs < p * v - 1) receive(dout, e.region_rows(), (s + 1) % p, tag(false, vs, pass.microbatch));
      auto it = live.find({pass.microbatch, pass.chunk});
      chunk_.backward(w, g, e, pass.chunk, it->second, dout, loss_scale, dx, account);
      live.erase(it);
      if (vs > 0) send(dx, (s + p - 1) % p, tag(false, vs - 1, pass.microbatch));
    }
  }
  finish_sends();
  return loss;
}

template <typename T>
template <typename TokensFn, typename EnvFn>
double PipelineRunner<T>::evaluate(const ModelWeights<T>& w, int microbatches, TokensFn tokens, EnvFn env) {
  const int p = c_.pp, v = c_.virtual_stages, s = m_.stage;
  double loss = 0;
  for (int mb = 0; mb < microbatches; ++mb)
    for (int c = 0; c < v; ++c) {
      const PassEnv e = env(mb);
      const int vs = c * p + s;
      const MicrobatchTokens t = chunk_.first_virtual_stage(c) || chunk_.last_virtual_stage(c) ? tokens(mb)
                                                                                               : MicrobatchTokens{};
      Mat<T> x, out;
      if (vs > 0) receive(x, e.region_rows(), (s + p - 1) % p, tag(true, vs, mb % c_.num_microbatches()));
      ChunkSaved<T> saved;
      chunk_.forward(w, e, c, x, t.inputs, t.targets, out, &loss, saved);
      if (vs < p * v - 1) send(out, (s + 1) % p, tag(true, vs + 1, mb % c_.num_microbatches()));
      finish_sends();
    }
  return loss;
}

}  // namespace cc::engine
