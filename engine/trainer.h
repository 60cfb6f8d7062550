// trainer.h — `clustercast train`: real training of a GPT on the shipped corpus under any
// TP × PP × DP layout (this process is one MPI rank), with every recompute mode, the
// distributed optimizer, checkpoints and resume. Read top to bottom in trainer.cpp.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "engine/pipeline_runner.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc::engine {

struct TrainOptions {
  int steps = 100;
  double lr = 1e-3;
  double min_lr_fraction = 0.1;  // cosine decay to this fraction of lr
  int warmup_steps = 10;
  double weight_decay = 0.1;
  double clip_grad = 1.0;
  double dropout = 0.0;
  std::uint64_t seed = 1234;
  std::string data;           // empty: the shipped corpus
  int eval_windows = 32;      // validation windows at the end (0: skip)
  std::string save_dir;       // empty: no checkpoints; else DIR/step-N/rank-R.ckpt
  int save_every = 0;         // 0: only at the end
  int save_keep = 0;          // keep the newest N step folders; 0: keep all
  std::string resume_dir;     // a DIR/step-N folder
  int log_every = 1;
  // Profiling a target model's shapes: byte tokens index the first 256 rows of a larger
  // vocabulary, so the embedding and logits GEMMs have the target's size.
  bool any_vocabulary = false;
};

struct TrainReport {
  std::vector<double> losses;  // per step, mean over the global batch
  double validation_loss = 0;
  ActivationPeak activations;  // this rank's peak
  std::vector<ActivationPeak> stage_activations;  // per pipeline stage (TP rank 0, DP replica 0)
  double update_fingerprint = 0;  // random projection of (final - initial) parameters, layout-independent
  double update_norm = 0;
  double tokens_per_s = 0;
  std::vector<double> step_seconds;  // wall time of each step this run trained (forward, backward, optimizer)
};

// Megatron-LM's GPT default (--hidden-dropout and --attention-dropout 0.1) for a model
// that has dropout layers, 0 for one without: what a profile trains with, and what a run
// it predicts must train with too.
inline double megatron_dropout(const ModelSpec& model) { return model.dropout ? 0.1 : 0.0; }

// Runs on every rank; rank 0 writes the log. Bad input throws SpecError on every rank.
TrainReport train(const ModelSpec& model, const ParallelConfig& config, const TrainOptions& options,
                  std::ostream& log);

// Validates everything train() would refuse, without communicating, so every rank reaches
// the same verdict.
void validate_training(const ModelSpec& model, const ParallelConfig& config, const TrainOptions& options,
                       int world_size);

}  // namespace cc::engine
