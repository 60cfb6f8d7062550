#include "engine/training_loop.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ostream.h>

#include "engine/rng.h"
#include "sim/error.h"

namespace cc::engine {
void agree(const Group& world, const std::function<void()>& local) {
  std::string error;
  try {
    local();
  } catch (const SpecError& e) {
    error = e.what();
  }
  int first = error.empty() ? INT_MAX : world.rank();
  MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, world.comm());
  if (first == INT_MAX) return;
  int length = static_cast<int>(error.size());
  MPI_Bcast(&length, 1, MPI_INT, first, world.comm());
  error.resize(static_cast<std::size_t>(length));
  MPI_Bcast(error.data(), length, MPI_CHAR, first, world.comm());
  throw SpecError(error);
}

double learning_rate(const TrainOptions& o, long step) {  // step is 1-based
  if (step <= o.warmup_steps) return o.lr * static_cast<double>(step) / std::max(1, o.warmup_steps);
  const double progress = static_cast<double>(step - o.warmup_steps) / std::max(1, o.steps - o.warmup_steps);
  const double cosine = 0.5 * (1 + std::cos(3.141592653589793 * std::min(1.0, progress)));
  return o.lr * (o.min_lr_fraction + (1 - o.min_lr_fraction) * cosine);
}

MicrobatchTokens gather_tokens(const WindowSampler& sampler, std::uint64_t first, int samples, int seq) {
  MicrobatchTokens t;
  t.inputs.resize(static_cast<std::size_t>(samples * seq));
  t.targets.resize(t.inputs.size());
  std::vector<int> in, out;
  for (int b = 0; b < samples; ++b) {
    t.sample_ids.push_back(first + static_cast<std::uint64_t>(b));
    sampler.sample(first + static_cast<std::uint64_t>(b), in, out);
    for (int p = 0; p < seq; ++p) {
      t.inputs[static_cast<std::size_t>(p * samples + b)] = in[static_cast<std::size_t>(p)];
      t.targets[static_cast<std::size_t>(p * samples + b)] = out[static_cast<std::size_t>(p)];
    }
  }
  return t;
}

std::pair<double, double> update_signature(ModelWeights<float>& after, ModelWeights<float>& before,
                                           const RankModel& m, const ProcessGroups& g) {
  using T = float;
  std::vector<T> a, b;
  pack(after, m, a);
  pack(before, m, b);
  double projection = 0, sumsq = 0;
  std::size_t at = 0;
  const bool replica0 = g.me.dp == 0;
  for_each_tensor(after, m, [&](const TensorInfo& info, T*, std::int64_t rows, std::int64_t cols) {
    const bool counted = replica0 && info.counted && (info.split != Split::Replicated || m.tp_rank == 0);
    const bool vector = info.global_rows == 1;
    const std::int64_t r_count = vector ? 1 : rows, c_count = vector ? rows * cols : cols;
    for (std::int64_t i = 0; i < r_count; ++i)
      for (std::int64_t j = 0; j < c_count; ++j, ++at) {
        if (!counted) continue;
        const double delta = static_cast<double>(a[at]) - static_cast<double>(b[at]);
        const double weight = uniform01(0xF1F1, name_hash(info.name), info.global_index(i, j, m.tp_rank, m.tp)) - 0.5;
        projection += weight * delta;
        sumsq += delta * delta;
      }
  });
  double both[2] = {projection, sumsq};
  g.world.all_reduce_sum(both, 2, {"fingerprint", Phase::Forward, -1, -1, {}, true});
  return {both[0], std::sqrt(both[1])};
}

PassEnv pass_env(const ModelSpec& model, const ParallelConfig& c, const TrainOptions& o, const ProcessGroups& groups,
                 long step, const std::vector<std::uint64_t>& sample_ids, int microbatch) {
  PassEnv e;
  e.tp = &groups.tp;
  e.sequence_parallel = c.sequence_parallel;
  e.batch = static_cast<int>(sample_ids.size());
  e.seq = model.seq_length;
  e.hidden = model.hidden_size;
  e.global_heads = model.num_attention_heads;
  e.heads = model.num_attention_heads / c.tp;
  e.head_dim = model.head_dim();
  e.microbatch = microbatch;
  e.step = step;
  e.seed = o.seed;
  e.dropout = o.dropout;
  e.sample_ids = sample_ids;
  return e;
}

namespace {

// Global sample id of microbatch j's first sample in step `step` on this replica.
std::uint64_t first_sample(const ParallelConfig& c, const ProcessGroups& groups, long step, int microbatch) {
  return static_cast<std::uint64_t>(step - 1) * static_cast<std::uint64_t>(c.global_batch) +
         static_cast<std::uint64_t>(groups.me.dp * (c.global_batch / c.dp)) +
         static_cast<std::uint64_t>(microbatch * c.micro_batch);
}

}  // namespace

MicrobatchTokens step_tokens(const WindowSampler& sampler, const ParallelConfig& c, const ProcessGroups& groups,
                             int seq, long step, int microbatch) {
  return gather_tokens(sampler, first_sample(c, groups, step, microbatch), c.micro_batch, seq);
}

PassEnv step_pass_env(const ModelSpec& model, const ParallelConfig& c, const TrainOptions& o,
                      const ProcessGroups& groups, long step, int microbatch) {
  std::vector<std::uint64_t> ids;
  for (int b = 0; b < c.micro_batch; ++b)
    ids.push_back(first_sample(c, groups, step, microbatch) + static_cast<std::uint64_t>(b));
  return pass_env(model, c, o, groups, step, ids, microbatch);
}

PassEnv validation_pass_env(const ModelSpec& model, const ParallelConfig& c, const TrainOptions& o,
                            const ProcessGroups& groups, int microbatch) {
  PassEnv e = pass_env(model, c, o, groups, 0, std::vector<std::uint64_t>(static_cast<std::size_t>(c.micro_batch), 0),
                       microbatch);
  e.dropout = 0;  // evaluation
  return e;
}

void print_step(std::ostream& log, const TrainOptions& o, const ProcessGroups& groups, long step, double loss,
                double grad_norm, double tokens_per_s) {
  if (groups.world_rank != 0 || (step % std::max(1, o.log_every) != 0 && step != o.steps)) return;
  fmt::print(log, "step {} loss {:.4f} lr {:.3e} grad_norm {:.4f} tokens/s {:.0f}\n", step, loss,
             learning_rate(o, step), grad_norm, tokens_per_s);
  log.flush();  // progress shows as it happens, also when piped
}

void report_update(TrainReport& report, ModelWeights<float>& after, ModelWeights<float>& before, const RankModel& m,
                   const ProcessGroups& groups, std::ostream& log) {
  std::tie(report.update_fingerprint, report.update_norm) = update_signature(after, before, m, groups);
  if (groups.world_rank == 0)
    fmt::print(log, "update_fingerprint {:.9e} update_norm {:.9e} tokens/s {:.0f}\n", report.update_fingerprint,
               report.update_norm, report.tokens_per_s);
}

std::vector<MicrobatchTokens> validation_microbatches(const Corpus& corpus, const ModelSpec& model,
                                                      const ParallelConfig& c, const TrainOptions& o,
                                                      const ProcessGroups& groups) {
  const int S = model.seq_length, mb = c.micro_batch;
  std::vector<std::vector<int>> inputs, targets;
  validation_windows(corpus.validation, S, static_cast<std::size_t>(o.eval_windows), inputs, targets);
  // Split over the DP replicas, whole microbatches each.
  const int per_replica = static_cast<int>(inputs.size()) / c.dp / mb * mb;
  const int base = groups.me.dp * per_replica;
  std::vector<MicrobatchTokens> out;
  for (int j = 0; j < per_replica / mb; ++j) {
    MicrobatchTokens t;
    t.inputs.resize(static_cast<std::size_t>(mb * S));
    t.targets.resize(t.inputs.size());
    for (int b = 0; b < mb; ++b) {
      const auto& in = inputs[static_cast<std::size_t>(base + j * mb + b)];
      const auto& tg = targets[static_cast<std::size_t>(base + j * mb + b)];
      for (int p = 0; p < S; ++p) {
        t.inputs[static_cast<std::size_t>(p * mb + b)] = in[static_cast<std::size_t>(p)];
        t.targets[static_cast<std::size_t>(p * mb + b)] = tg[static_cast<std::size_t>(p)];
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

void report_stage_activations(TrainReport& report, const ParallelConfig& c, const ProcessGroups& groups,
                              std::ostream& log) {
  std::vector<double> peaks(static_cast<std::size_t>(4 * c.pp), 0.0);
  if (groups.me.tp == 0 && groups.me.dp == 0) {
    const auto at = static_cast<std::size_t>(4 * groups.me.pp);
    peaks[at] = static_cast<double>(report.activations.total);
    peaks[at + 1] = static_cast<double>(report.activations.scores);
    peaks[at + 2] = static_cast<double>(report.activations.layer_inputs);
    peaks[at + 3] = report.activations.in_flight;
  }
  groups.world.all_reduce_sum(peaks.data(), peaks.size(), {"report", Phase::Forward, -1, -1, {}, true});
  for (int s = 0; s < c.pp; ++s) {
    const auto at = static_cast<std::size_t>(4 * s);
    report.stage_activations.push_back({static_cast<std::size_t>(peaks[at]), static_cast<std::size_t>(peaks[at + 1]),
                                        static_cast<std::size_t>(peaks[at + 2]), static_cast<int>(peaks[at + 3])});
    if (groups.world_rank == 0)
      fmt::print(log, "activation_bytes stage {} peak {} attention_scores {} layer_inputs {} in_flight {}\n", s,
                 static_cast<std::size_t>(peaks[at]), static_cast<std::size_t>(peaks[at + 1]),
                 static_cast<std::size_t>(peaks[at + 2]), static_cast<int>(peaks[at + 3]));
  }
}

}  // namespace cc::engine
