// pipeline_runner_impl.h — template bodies for pipeline_runner.h.
#pragma once

#include <algorithm>

#include "sim/error.h"

namespace cc::engine {

inline std::vector<PlannedPass> forward_passes_of_one_microbatch(const std::vector<PlannedPass>& stage_passes) {
  std::vector<PlannedPass> out;
  for (const PlannedPass& p : stage_passes)
    if (p.kind == PassKind::Forward && p.microbatch == 0) out.push_back(p);
  std::sort(out.begin(), out.end(), [](const PlannedPass& a, const PlannedPass& b) { return a.chunk < b.chunk; });
  return out;
}

template <typename T>
PipelineRunner<T>::PipelineRunner(const RankModel& model, const ParallelConfig& config, const ProcessGroups& groups)
    : m_(model), c_(config), g_(groups), chunk_(model),
      passes_(std::move(planned_passes(config)[static_cast<std::size_t>(model.stage)])) {
  int* upper = nullptr;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &upper, &found);
  const long needed = 2L * c_.virtual_stages * c_.num_microbatches() + 2;
  if (found && needed > *upper)
    fail("{} microbatches x {} chunks per stage need more MPI tags than this MPI offers ({})", c_.num_microbatches(),
         c_.virtual_stages, *upper);
}

template <typename T>
int PipelineRunner<T>::tag(bool forward, int receiving_chunk, int microbatch) const {
  return 2 * (receiving_chunk * c_.num_microbatches() + microbatch) + (forward ? 0 : 1);
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
  std::map<std::pair<int, int>, ChunkSaved<T>> live;  // (microbatch, chunk) -> kept activations
  const auto account = [&] { note_activation_peak(live, [](const ChunkSaved<T>& s) -> const auto& { return s; }, peak); };
  double loss = 0;
  for (const PlannedPass& pass : passes_) {
    const PassEnv e = env(pass.microbatch);
    const bool forward = pass.kind == PassKind::Forward;
    // A message is tagged by the chunk that receives it.
    const int received_tag = tag(forward, pass.chunk, pass.microbatch);
    const int sent_tag = tag(forward, pass.send_to_chunk, pass.microbatch);
    if (forward) {
      const MicrobatchTokens mb = chunk_.first_virtual_stage(pass.chunk) || chunk_.last_virtual_stage(pass.chunk)
                                      ? tokens(pass.microbatch)
                                      : MicrobatchTokens{};
      Mat<T> x, out;
      if (pass.receive_from >= 0) receive(x, e.region_rows(), pass.receive_from, received_tag);
      ChunkSaved<T>& saved = live[{pass.microbatch, pass.chunk}];
      chunk_.forward(w, e, pass.chunk, x, mb.inputs, mb.targets, out, &loss, saved);
      if (pass.send_to >= 0) send(out, pass.send_to, sent_tag);
      account();
    } else {
      Mat<T> dout, dx;
      if (pass.receive_from >= 0) receive(dout, e.region_rows(), pass.receive_from, received_tag);
      auto it = live.find({pass.microbatch, pass.chunk});
      chunk_.backward(w, g, e, pass.chunk, it->second, dout, loss_scale, dx, account);
      live.erase(it);
      if (pass.send_to >= 0) send(dx, pass.send_to, sent_tag);
    }
  }
  finish_sends();
  return loss;
}

template <typename T>
template <typename TokensFn, typename EnvFn>
double PipelineRunner<T>::evaluate(const ModelWeights<T>& w, int microbatches, TokensFn tokens, EnvFn env) {
  const std::vector<PlannedPass> chunks = forward_passes_of_one_microbatch(passes_);
  double loss = 0;
  for (int mb = 0; mb < microbatches; ++mb)
    for (const PlannedPass& pass : chunks) {
      const PassEnv e = env(mb);
      const MicrobatchTokens t = chunk_.first_virtual_stage(pass.chunk) || chunk_.last_virtual_stage(pass.chunk)
                                     ? tokens(mb)
                                     : MicrobatchTokens{};
      // Tags reuse the step's microbatch slots: each microbatch's sends finish before the next.
      const int slot = mb % c_.num_microbatches();
      Mat<T> x, out;
      if (pass.receive_from >= 0) receive(x, e.region_rows(), pass.receive_from, tag(true, pass.chunk, slot));
      ChunkSaved<T> saved;
      chunk_.forward(w, e, pass.chunk, x, t.inputs, t.targets, out, &loss, saved);
      if (pass.send_to >= 0) send(out, pass.send_to, tag(true, pass.send_to_chunk, slot));
      finish_sends();
    }
  return loss;
}

}  // namespace cc::engine
