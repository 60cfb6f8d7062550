// pipeline_runner.h — executes this rank's passes from the step plan (sim/step_plan.h, whose
// order is the pure pipeline schedule the simulator replays): forward and backward passes
// of (microbatch, chunk) pairs, activations and gradients sent point-to-point to the stages
// the plan names. Sends are non-blocking and receives blocking, so any valid 1F1B or
// interleaved list runs without deadlock. Tracks the activation bytes held at the peak.
#pragma once

#include <list>
#include <map>
#include <utility>

#include "engine/model_chunk.h"
#include "sim/step_plan.h"

namespace cc::engine {

struct MicrobatchTokens {
  std::vector<int> inputs, targets;        // full rows, sequence-first
  std::vector<std::uint64_t> sample_ids;   // global ids of its samples
};

// Of one stage's planned passes, the forward passes of microbatch 0 in chunk order, with
// their peers: what validation runs for every microbatch (forward only).
inline std::vector<PlannedPass> forward_passes_of_one_microbatch(const std::vector<PlannedPass>& stage_passes);

struct ActivationPeak {
  std::size_t total = 0;         // bytes of everything kept for backward, at the peak
  std::size_t scores = 0;        // of which the attention core's S×S tensors
  std::size_t layer_inputs = 0;  // of which layer inputs
  int in_flight = 0;             // (microbatch, chunk) pairs held at the peak
};

// The activations a rank holds now, every live (microbatch, chunk)'s kept tensors (`saved_of`
// gives an entry's: bytes(), scores_bytes(), layer_input_bytes()), noted in `peak` when they
// are the most so far. Both engines (CPU here, CUDA in engine/cuda/gpu_pipeline.cpp) call it at
// the same moments — after every forward pass, and after every full-recompute group's rerun,
// when that group's activations are held again beside everything kept — which are the moments
// the memory model's peak describes.
template <typename Live, typename SavedOf>
void note_activation_peak(const Live& live, SavedOf saved_of, ActivationPeak& peak) {
  std::size_t total = 0, scores = 0, inputs = 0;
  for (const auto& [key, entry] : live) {
    const auto& kept = saved_of(entry);
    total += kept.bytes();
    scores += kept.scores_bytes();
    inputs += kept.layer_input_bytes();
  }
  if (total > peak.total) peak = {total, scores, inputs, static_cast<int>(live.size())};
}

template <typename T>
class PipelineRunner {
 public:
  PipelineRunner(const RankModel& model, const ParallelConfig& config, const ProcessGroups& groups);

  // One iteration. `tokens(mb)` gives this replica's microbatch mb; `env(mb)` its pass
  // environment. Returns the loss summed over this rank's last-stage rows (0 elsewhere).
  template <typename TokensFn, typename EnvFn>
  double train(const ModelWeights<T>& w, ModelWeights<T>& g, TokensFn tokens, EnvFn env, double loss_scale,
               ActivationPeak& peak);
  // Forward only, microbatch after microbatch (validation).
  template <typename TokensFn, typename EnvFn>
  double evaluate(const ModelWeights<T>& w, int microbatches, TokensFn tokens, EnvFn env);

 private:
  // The MPI tag of the activation (forward) or gradient that chunk `receiving_chunk` of the
  // receiving stage gets for `microbatch`: unique between two stages within a step.
  int tag(bool forward, int receiving_chunk, int microbatch) const;
  void send(const Mat<T>& data, int to_stage, int tag);
  void receive(Mat<T>& data, Eigen::Index rows, int from_stage, int tag);
  void finish_sends();

  const RankModel& m_;
  const ParallelConfig& c_;
  const ProcessGroups& g_;
  ModelChunk<T> chunk_;
  std::vector<PlannedPass> passes_;  // this stage's, in run order
  struct Pending {
    MPI_Request request;
    Mat<T> data;
  };
  std::list<Pending> pending_;
};

}  // namespace cc::engine

#include "engine/pipeline_runner_impl.h"
