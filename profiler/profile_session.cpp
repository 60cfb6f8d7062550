#include "profiler/profile_session.h"

#include "profiler/pooled_profiles.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <nlohmann/json.hpp>

#include "engine/trainer.h"
#include "profiler/gathered_events.h"
#include "profiler/in_step_collectives.h"
#include "profiler/op_statistics.h"
#include "profiler/pooled_profiles.h"
#include "sim/error.h"
#include "sim/layout_rules.h"

namespace cc::profiler {

namespace {

// Megatron-LM pads the vocabulary so every TP rank holds as many rows
// (--make-vocab-size-divisible-by 128): the engine splits the embedding by rows.
ModelSpec model_for(const ModelSpec& model, int tp) {
  ModelSpec m = model;
  const int multiple = 128 * tp;
  if (m.vocab_size % tp != 0) m.vocab_size = (m.vocab_size + multiple - 1) / multiple * multiple;
  return m;
}

ParallelConfig config_for(const ProfileRequest& r, int tp, int micro_batch, int world) {
  ParallelConfig c;
  c.tp = tp;
  c.pp = 1;
  // validate() has refused a world TP does not divide; data_parallel_size says none then.
  c.dp = data_parallel_size(world, tp, 1, 1).value_or(0);
  c.micro_batch = micro_batch;
  c.global_batch = micro_batch * c.dp * r.microbatches_per_step;
  c.sequence_parallel = r.sequence_parallel && tp > 1;
  c.recompute = r.recompute;
  c.precision = r.precision;
  return c;
}

engine::TrainOptions options_for(const ProfileRequest& r) {
  engine::TrainOptions o;
  o.steps = r.warmup_steps + r.timed_steps;
  o.seed = r.seed;
  o.dropout = engine::megatron_dropout(r.model);
  o.eval_windows = 0;
  o.any_vocabulary = true;  // byte tokens index a larger vocabulary: the shapes are the target's
  return o;
}

std::string today() {
  const std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

nlohmann::json trace_events(const std::vector<RecordedOp>& events, int rank) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& e : events) {
    nlohmann::json args = {{"phase", to_string(e.op.phase)},
                           {"shape", e.op.shape},
                           {"self_us", e.self_s * 1e6}};
    if (e.op.layer >= 0) args["layer"] = e.op.layer;
    if (e.op.microbatch >= 0) args["microbatch"] = e.op.microbatch;
    if (e.step >= 0) args["step"] = e.step;
    out.push_back({{"name", e.op.name},
                   {"cat", e.op.collective ? "collective" : "compute"},
                   {"ph", "X"},
                   {"ts", e.start_s * 1e6},
                   {"dur", e.duration_s * 1e6},
                   {"pid", rank},
                   {"tid", e.op.collective ? 1 : 0},
                   {"args", args}});
  }
  return out;
}

// `groups`: TP groups whose occurrences were pooled into each record's samples.
void print_run_summary(std::ostream& log, const std::vector<OpRecord>& ops, const StepCoverage& cov,
                       const ProfiledRun& run, int groups) {
  const double per_step = cov.step_s / std::max(1, cov.steps);
  fmt::print(log, "  iteration {:.4f} s mean, {:.4f} s median (p10 {:.4f}, p90 {:.4f}) over {} timed steps\n",
             run.iteration_mean_s, run.iteration_median_s, run.iteration_p10_s, run.iteration_p90_s, run.timed_steps);
  fmt::print(log, "  annotated compute {:.1f}%, collectives {:.1f}%, unannotated {:.1f}% of the step\n",
             100 * cov.compute_s / cov.step_s, 100 * cov.collective_s / cov.step_s, 100 * cov.unannotated_s / cov.step_s);
  // The heaviest ops by their share of a step (mean x occurrences per step).
  std::vector<std::pair<double, const OpRecord*>> heavy;
  for (const auto& r : ops) heavy.emplace_back(r.mean_s * r.samples / std::max(1, cov.steps * groups), &r);
  std::sort(heavy.begin(), heavy.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  fmt::print(log, "  {:<32} {:<9} {:>28} {:>6} {:>11} {:>11} {:>7}\n", "op", "phase", "shape (m, n, k, batch)",
             "count", "mean us", "p90 us", "% step");
  // count: occurrences in the timed steps, over every TP group
  for (std::size_t i = 0; i < std::min<std::size_t>(12, heavy.size()); ++i) {
    const OpRecord& r = *heavy[i].second;
    fmt::print(log, "  {:<32} {:<9} {:>28} {:>6} {:>11.1f} {:>11.1f} {:>6.1f}%\n", r.name, to_string(r.phase),
               fmt::format("{}x{}x{}x{}", r.shape[0], r.shape[1], r.shape[2], r.shape[3]), r.samples,
               r.mean_s * 1e6, r.p90_s * 1e6, 100 * heavy[i].first / per_step);
  }
}

// Each run's median step, round by round, beside the median the database keeps; a round
// more than 10% off it, slow or fast, is named, since the pool left it out.
void print_rounds(std::ostream& log, const std::vector<CostDatabase>& rounds, const CostDatabase& pooled) {
  fmt::print(log, "median step per round (the database keeps each op's median over the rounds):\n");
  for (std::size_t i = 0; i < pooled.runs.size(); ++i) {
    const ProfiledRun& p = pooled.runs[i];
    std::string line = fmt::format("  TP {} micro batch {}:", p.tp, p.micro_batch);
    std::string off;
    for (std::size_t k = 0; k < rounds.size(); ++k) {
      const double t = rounds[k].runs[i].iteration_median_s;
      line += fmt::format(" {:.4f}", t);
      if (std::abs(t / p.iteration_median_s - 1) > 0.1)
        off += fmt::format("; round {} {:+.0f}%", k + 1, 100 * (t / p.iteration_median_s - 1));
    }
    fmt::print(log, "{} s -> {:.4f} s{}\n", line, p.iteration_median_s,
               off.empty() ? std::string() : off + " (the machine's speed moved; the median leaves that round out)");
  }
}

class HostTimer final : public ScopeTimer {
 public:
  engine::OpRecorder& recorder() override { return host_; }
  const std::vector<RecordedOp>& collect() override { return host_.events(); }

 private:
  HostRecorder host_;
};

}  // namespace

void validate(const ProfileRequest& r, int world) {
  if (r.tp_sizes.empty()) fail("--tp: give at least one tensor-parallel size");
  if (r.micro_batches.empty()) fail("--micro-batch-size: give at least one micro batch size");
  if (r.warmup_steps < 0) fail("--warmup-steps is {}; it must be >= 0", r.warmup_steps);
  if (r.timed_steps < 1) fail("--steps is {}; it must be >= 1 (timed steps)", r.timed_steps);
  if (r.rounds < 1 || r.rounds > 100) fail("--rounds is {}; it must be in 1..100", r.rounds);
  if (r.microbatches_per_step < 1)
    fail("--microbatches-per-step is {}; it must be >= 1", r.microbatches_per_step);
  for (int tp : r.ops ? r.tp_sizes : std::vector<int>{}) {
    if (tp < 1 || world % tp != 0)
      fail("--tp {}: each TP size must divide the {} MPI ranks (DP = ranks / TP); run mpirun -np <multiple of {}>",
           tp, world, tp);
    for (int mb : r.micro_batches) {
      if (mb < 1) fail("--micro-batch-size {}: it must be >= 1", mb);
      engine::validate_training(model_for(r.model, tp), config_for(r, tp, mb, world), options_for(r), world);
    }
  }
  if (r.sweep) validate(r.sweep_options, world);
  if (!r.ops && !(r.sweep && world >= 2))
    fail("nothing to profile: --no-ops and {}; run the sweep on >= 2 ranks (mpirun -np N)",
         r.sweep ? fmt::format("{} rank", world) : std::string("--no-collectives"));
}

ProfileOutcome run_profile(const ProfileRequest& r, const ProfileBackend& backend, std::ostream& log) {
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  validate(r, world);

  ProfileOutcome out;
  CostDatabase& db = out.database;
  db.created = today();
  db.command = r.command;
  db.machine = backend.machine;
  db.dtype = to_string(r.precision);
  db.framework = kMeasuredEngineFramework;  // what a prediction from these costs replays
  if (r.precision != Precision::FP32 && !backend.gpu)
    fail("--precision {}: the CPU engine computes in fp32; profile bf16 on GPUs (--backend cuda)", db.dtype);
  // The engine's weight-gradient GEMMs accumulate straight into the fp32 gradient
  // (dW += xᵀ·dy): Megatron-LM's separate main-gradient accumulation has no cost of its own.
  db.fused_ops = {"main_grad_accumulate"};

  MPI_Barrier(MPI_COMM_WORLD);  // one time origin for every rank's timeline
  HostTimer host_timer;
  ScopeTimer& timer = backend.timer ? *backend.timer : host_timer;
  std::set<std::string> names;  // op names of events gathered from other ranks
  std::vector<std::vector<RecordedOp>> timeline(static_cast<std::size_t>(world));
  std::vector<CostDatabase> rounds(static_cast<std::size_t>(r.rounds), db);
  for (int round = 1; round <= (r.ops ? r.rounds : 0); ++round) {
    CostDatabase& measured = rounds[static_cast<std::size_t>(round - 1)];
    const std::string of_rounds = r.rounds > 1 ? fmt::format(" (round {} of {})", round, r.rounds) : std::string();
    for (int tp : r.tp_sizes) {
      for (int mb : r.micro_batches) {
        const ModelSpec model = model_for(r.model, tp);
        const ParallelConfig config = config_for(r, tp, mb, world);
        fmt::print(log,
                   "profiling {} ({} layers, hidden {}, {} heads, seq {}, vocab {}) with {}{}: {} warm-up + {} timed "
                   "steps\n",
                   model.name, model.num_layers, model.hidden_size, model.num_attention_heads, model.seq_length,
                   model.vocab_size, config.summary(), of_rounds, r.warmup_steps, r.timed_steps);
        log.flush();
        const std::size_t first_event = timer.collect().size();
        const std::size_t dropped_before = timer.dropped();
        engine::TrainReport report;
        {
          const RecorderInstalled installed(timer.recorder());
          report = backend.train(model, config, options_for(r), log);  // per-step lines: progress on long runs
        }
        const std::vector<RecordedOp>& all = timer.collect();
        const std::vector<RecordedOp> events(all.begin() + static_cast<std::ptrdiff_t>(first_event), all.end());
        unsigned long long lost = timer.dropped() - dropped_before;
        MPI_Allreduce(MPI_IN_PLACE, &lost, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (lost > 0)
          fmt::print(log, "  WARNING: {} activity records were dropped (all ranks): this run's op times are incomplete\n",
                     lost);
        const std::vector<std::vector<RecordedOp>> per_rank = gather_events(events, names);
        if (rank != 0) continue;
        if (r.keep_timeline)
          for (std::size_t k = 0; k < per_rank.size(); ++k)
            timeline[k].insert(timeline[k].end(), per_rank[k].begin(), per_rank[k].end());
        // The ranks of a TP group wait for each other at every collective: an op costs what
        // its slowest rank took. Every group's occurrences are samples.
        const long first_timed = r.warmup_steps + 1;
        const std::vector<std::vector<int>> tp_groups = config.grid().groups("tp");
        std::vector<RecordedOp> timed_ops = slowest_in_groups(per_rank, tp_groups);
        const std::set<long> stalled = stalled_steps(report.step_seconds, first_timed);
        std::erase_if(timed_ops, [&](const RecordedOp& e) { return stalled.count(e.step) > 0; });
        for (long s : stalled)
          fmt::print(log, "  step {} ({:.4f} s) left out of the op times: over {}x the median timed step, a one-off stall\n",
                     s, report.step_seconds[static_cast<std::size_t>(s - 1)], kStallRatio);
        std::vector<OpRecord> ops = summarize_ops(timed_ops, first_timed, db.dtype, tp);
        add_in_step_collectives(measured.in_step_collectives,
                                in_step_collectives(per_rank, tp_groups, first_timed, stalled));
        const StepCoverage coverage = step_coverage(events, first_timed);

        ProfiledRun run;
        run.model = model_to_json(model).dump();
        run.tp = tp;
        run.micro_batch = mb;
        run.global_batch = config.global_batch;
        run.recompute = to_string(config.recompute);
        run.sequence_parallel = config.sequence_parallel;
        run.timed_steps = r.timed_steps;
        const std::vector<double> timed(report.step_seconds.begin() + r.warmup_steps, report.step_seconds.end());
        run.iteration_mean_s = mean(timed);
        run.iteration_median_s = percentile(timed, 50);
        run.iteration_p10_s = percentile(timed, 10);
        run.iteration_p90_s = percentile(timed, 90);
        print_run_summary(log, ops, coverage, run, world / tp);
        measured.runs.push_back(run);
        measured.ops.insert(measured.ops.end(), ops.begin(), ops.end());
      }
    }
  }
  if (r.ops && rank == 0) {
    db = pool_profiles(rounds);
    db.command = r.command;
    if (r.rounds > 1) print_rounds(log, rounds, db);
  }
  if (r.keep_timeline && rank == 0) {
    nlohmann::json events = nlohmann::json::array();
    for (std::size_t k = 0; k < timeline.size(); ++k)
      for (auto& e : trace_events(timeline[k], static_cast<int>(k))) events.push_back(std::move(e));
    out.chrome_trace = nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() + "\n";
  }
  if (r.sweep && world >= 2) {
    fmt::print(log, "collective sweep over {} on {} ranks\n", backend.transport->name(), world);
    log.flush();
    db.collectives = sweep_collectives(MPI_COMM_WORLD, r.sweep_options, rank == 0 ? &log : nullptr, *backend.transport);
  }
  return out;
}

}  // namespace cc::profiler
