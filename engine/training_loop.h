// training_loop.h — the parts of a training run that do not depend on the backend, shared
// by the CPU trainer (trainer.cpp) and the GPU trainer (cuda/gpu_trainer.cpp): agreeing on
// rank-local failures, the learning-rate schedule, which samples a microbatch holds, each
// pass's environment, validation windows, the layout-independent update fingerprint and
// the per-stage activation report.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <utility>
#include <vector>

#include "engine/comm.h"
#include "engine/data.h"
#include "engine/gpt_weights.h"
#include "engine/pass_env.h"
#include "engine/pipeline_runner.h"
#include "engine/trainer.h"

namespace cc::engine {

// Runs `local` on every rank; if it failed anywhere, every rank throws the first failing
// rank's message, so all exit together and rank 0 can print it.
void agree(const Group& world, const std::function<void()>& local);

// Linear warm-up, then cosine decay to min_lr_fraction · lr; step is 1-based.
double learning_rate(const TrainOptions& o, long step);

// Tokens of `samples` consecutive windows starting at global sample id `first`, laid out
// sequence-first (row = position · samples + sample).
MicrobatchTokens gather_tokens(const WindowSampler& sampler, std::uint64_t first, int samples, int seq);

// The environment of one microbatch pass of this rank.
PassEnv pass_env(const ModelSpec& model, const ParallelConfig& c, const TrainOptions& o, const ProcessGroups& groups,
                 long step, const std::vector<std::uint64_t>& sample_ids, int microbatch);

// Step `step` (1-based): replica d trains on samples [d·B/dp, (d+1)·B/dp) of the step's
// global batch of B; microbatch j is the next micro_batch of them. Its tokens and its pass.
MicrobatchTokens step_tokens(const WindowSampler& sampler, const ParallelConfig& c, const ProcessGroups& groups,
                             int seq, long step, int microbatch);
PassEnv step_pass_env(const ModelSpec& model, const ParallelConfig& c, const TrainOptions& o,
                      const ProcessGroups& groups, long step, int microbatch);
// A validation microbatch's pass: no dropout.
PassEnv validation_pass_env(const ModelSpec& model, const ParallelConfig& c, const TrainOptions& o,
                            const ProcessGroups& groups, int microbatch);

// The per-step progress line, on rank 0, every --log-every steps and at the last.
void print_step(std::ostream& log, const TrainOptions& o, const ProcessGroups& groups, long step, double loss,
                double grad_norm, double tokens_per_s);

// Validation: this replica's share of the first `eval_windows` windows of the held-out
// tail, as microbatch token sets (empty when the share is less than one microbatch).
std::vector<MicrobatchTokens> validation_microbatches(const Corpus& corpus, const ModelSpec& model,
                                                      const ParallelConfig& c, const TrainOptions& o,
                                                      const ProcessGroups& groups);

// Σ w·(after − before) over every parameter counted once, with w a fixed pseudo-random
// weight of the parameter's global identity: equal for any layout that computes the same
// update, and different (with overwhelming probability) for any that does not. Also the
// update's norm.
std::pair<double, double> update_signature(ModelWeights<float>& after, ModelWeights<float>& before,
                                           const RankModel& m, const ProcessGroups& g);

// Fills report.update_fingerprint / update_norm from the weights before and after training
// and prints them with the throughput on rank 0.
void report_update(TrainReport& report, ModelWeights<float>& after, ModelWeights<float>& before, const RankModel& m,
                   const ProcessGroups& groups, std::ostream& log);

// Gathers every stage's activation peak (TP rank 0 of replica 0 reports its stage) into
// report.stage_activations and prints them on rank 0.
void report_stage_activations(TrainReport& report, const ParallelConfig& c, const ProcessGroups& groups,
                              std::ostream& log);

}  // namespace cc::engine
