#include "cli/validation.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/child_process.h"
#include "cli/common_options.h"
#include "cli/exit_code.h"
#include "cli/validation_layouts.h"
#include "cli/validation_report.h"
#include "cli/value_lists.h"
#include "engine/trainer.h"
#include "interop/resolver.h"
#include "profiler/machine_fingerprint.h"
#include "profiler/op_statistics.h"
#include "profiler/pooled_profiles.h"
#include "sim/atomic_file.h"
#include "sim/error.h"
#include "sim/measured_costs.h"
#include "sim/presets.h"
#include "sim/simulator.h"
#ifdef CLUSTERCAST_HAVE_CUDA
#include "engine/cuda/cuda_check.h"
#endif

namespace cc::cli {

namespace {

// Whether `program` names an executable file: a path with a slash as it is, a bare name on PATH.
bool runnable(const std::string& program) {
  if (program.empty()) return false;
  if (program.find('/') != std::string::npos) return ::access(program.c_str(), X_OK) == 0 &&
                                                     std::filesystem::is_regular_file(program);
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (std::size_t start = 0; start <= dirs.size();) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    const std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + program;
    if (::access(candidate.c_str(), X_OK) == 0 && std::filesystem::is_regular_file(candidate)) return true;
    start = end + 1;
  }
  return false;
}

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A private folder for the children's files, removed however validation ends (an
// interrupted validation leaves nothing behind).
class ScratchFolder {
 public:
  ScratchFolder() {
    std::string pattern = (fs::temp_directory_path() / "clustercast-validate-XXXXXX").string();
    if (!mkdtemp(pattern.data())) fail("cannot create a scratch folder under {}", fs::temp_directory_path().string());
    path_ = pattern;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

int cores() { return static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)); }

// Fewest timed steps whose median means anything: with two, a slow step is half the sample.
constexpr int kMinTimedSteps = 3;

void check_flags(const ValidationRequest& f) {
  if (f.ranks < 1) fail("--ranks is {}; it must be >= 1", f.ranks);
  if (f.ranks > cores() && !f.oversubscribe)
    fail("--ranks {} is more than this machine's {} cores; ranks sharing cores time each other's work, so a "
         "measurement would not be one: use fewer ranks, or --oversubscribe to run anyway",
         f.ranks, cores());
  if (f.rounds < 1 || f.rounds > 100) fail("--rounds is {}; it must be between 1 and 100", f.rounds);
  if (f.profile_steps < kMinTimedSteps)
    fail("--profile-steps is {}; a profile's median needs at least {} timed steps", f.profile_steps, kMinTimedSteps);
  if (f.warmup_steps < 0) fail("--warmup-steps is {}; it must be >= 0", f.warmup_steps);
  if (f.steps - f.warmup_steps < kMinTimedSteps)
    fail("--steps {} with --warmup-steps {} leaves {} timed steps; a median needs at least {}", f.steps,
         f.warmup_steps, f.steps - f.warmup_steps, kMinTimedSteps);
  if (f.tolerance && !(*f.tolerance > 0 && *f.tolerance < 1))
    fail("--tolerance is {}; it must be a fraction in (0, 1), e.g. 0.1", *f.tolerance);
  if (!(f.memory_tolerance > 0 && f.memory_tolerance < 1))
    fail("--memory-tolerance is {}; it must be a fraction in (0, 1), e.g. 0.05", f.memory_tolerance);
  if (!runnable(f.mpirun))
    fail("--mpirun '{}' is not a program this machine can run (not an executable file, nor found on PATH); give "
         "the MPI launcher, e.g. --mpirun mpirun",
         f.mpirun);
  check_outputs_apart({{f.report, "--report"}, {f.costs_out, "--costs-out"}}, {{f.costs, "--costs"}});
  if (!f.report.empty()) check_output_folder(f.report, "--report");
  if (!f.costs_out.empty()) check_output_folder(f.costs_out, "--costs-out");
  if (!f.costs.empty() && !f.costs_out.empty()) fail("--costs-out keeps a new profile; with --costs nothing is profiled");
  if (f.backend == "cuda") {
#ifdef CLUSTERCAST_HAVE_CUDA
    if (const std::string why = cuda::no_gpu_reason(); !why.empty()) fail("--backend cuda: {}", why);
#else
    fail("--backend cuda: this clustercast was built without CUDA (no CUDA toolkit was found when it was built)");
#endif
  }
}

// The per-layer shapes a database was measured at must be the model's: a profile of
// another model prices other GEMMs. The sequence length may differ (it scales).
void check_same_model(const CostDatabase& db, const ModelSpec& m, const std::string& path) {
  for (const auto& run : db.runs) {
    const ModelSpec p = model_from_json(nlohmann::json::parse(run.model), path);
    if (p.hidden_size == m.hidden_size && p.num_attention_heads == m.num_attention_heads &&
        p.num_query_groups == m.num_query_groups && p.ffn_hidden_size == m.ffn_hidden_size &&
        p.activation == m.activation && p.dropout == m.dropout)
      return;
  }
  if (db.runs.empty()) fail("cost database '{}' holds no profiled runs (made with --no-ops); profile the model", path);
  const ModelSpec p = model_from_json(nlohmann::json::parse(db.runs.front().model), path);
  fail("cost database '{}' was profiled on model '{}' (hidden {}, {} heads, ffn {}); this validation is of '{}' "
       "(hidden {}, {} heads, ffn {}): profile '{}' or drop --costs",
       path, p.name, p.hidden_size, p.num_attention_heads, p.ffn_hidden_size, m.name, m.hidden_size,
       m.num_attention_heads, m.ffn_hidden_size, m.name);
}

// In-sample: the profile ran this very layout (same TP, micro batch, global batch,
// recompute, SP, sequence length and depth; the profile never pipelines or shards the
// optimizer).
bool profiled_exactly(const CostDatabase& db, const ValidationLayout& l, const ModelSpec& m) {
  const ParallelConfig& c = l.config;
  for (const auto& run : db.runs) {
    const ModelSpec p = model_from_json(nlohmann::json::parse(run.model), "cost database");
    if (c.pp == 1 && !c.distributed_optimizer && run.tp == c.tp && run.micro_batch == c.micro_batch &&
        run.global_batch == c.global_batch && run.recompute == to_string(c.recompute) &&
        run.sequence_parallel == c.sequence_parallel && p.seq_length == l.model_for(m).seq_length &&
        p.num_layers == l.model_for(m).num_layers)
      return true;
  }
  return false;
}

std::vector<std::string> mpirun_prefix(const ValidationRequest& f) {
  std::vector<std::string> a = {f.mpirun, "-np", std::to_string(f.ranks)};
  if (f.oversubscribe) a.push_back("--oversubscribe");
  if (geteuid() == 0) a.push_back("--allow-run-as-root");  // containers run as root; mpirun refuses it otherwise
  a.push_back(fs::read_symlink("/proc/self/exe").string());
  return a;
}

// Runs one MPI job; an interrupted one ends validation (exit 130), a failed one says why.
void run_job(std::vector<std::string> argv, const std::string& log, const std::string& what) {
  const ChildOutcome out = run_child(argv, log);
  if (out.interrupted) {
    std::cerr << "\nvalidate: interrupted; no report written\n";
    throw ExitCode{130};
  }
  if (out.exit_code != 0) {
    std::cerr << fmt::format("validate: {} failed with exit status {}; the end of its output:\n{}", what,
                             out.exit_code, log_tail(log, 15));
    throw ExitCode{out.exit_code == 2 ? 2 : 1};
  }
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The measured side of one layout from `train --report-json`, beside its prediction: step
// times, rank 0's time split, and the stage whose activations the model gets most wrong.
nlohmann::json read_train_report(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// The step times of a `train --report-json` report, warm-up steps left out.
std::vector<double> timed_steps(const nlohmann::json& report, int first_timed_step) {
  const std::vector<double> steps = report.at("step_seconds").get<std::vector<double>>();
  return {steps.begin() + std::min<std::ptrdiff_t>(first_timed_step - 1, static_cast<std::ptrdiff_t>(steps.size())),
          steps.end()};
}

// A given database must be of this model and backend; another machine's only earns a note.
void check_database(const CostDatabase& db, const std::string& path, const ModelSpec& model, const std::string& backend,
                    const MachineFingerprint& here) {
  check_same_model(db, model, path);
  if (db.machine.backend != backend)
    fail("cost database '{}' was measured on the {} backend; this validation runs --backend {}", path,
         db.machine.backend, backend);
  if (db.machine.cpu_model != here.cpu_model)
    fmt::print("note: the cost database was measured on '{}', this machine is '{}': its predictions are of that "
               "machine\n", db.machine.cpu_model, here.cpu_model);
}

// The median over a layout's rounds (nearest rank: with an even count, the lower middle).
// Not their mean: on the shared 2-core machine a slow spell of some seconds falls on a few
// consecutive runs, and one such round carried a layout's mean 10-30% off while its other two
// rounds agreed within 3% (`tiny`, 2026-12-03: tp=2,sp,recompute=selective,mbs=4 measured
// 0.2545 s in round 1 against 0.192 and 0.199 s; 13:41 UTC, seven layouts of round 1 read
// 22-38% slow, rounds 2 and 3 within 5%). Both sides take it, as each takes the median step.
double over_rounds(std::vector<double> per_round) { return profiler::percentile(std::move(per_round), 50); }

// Several reports are the rounds of one layout: each round's median step, their median over
// the rounds (over_rounds), and the splits' mean; min and max over every timed step.
LayoutCheck measured_check(const std::vector<std::string>& report_paths, int first_timed_step,
                           const SimResult& predicted) {
  std::vector<double> timed;
  nlohmann::json j;
  std::vector<StepSplit> splits;
  LayoutCheck c;
  for (const std::string& path : report_paths) {
    j = read_train_report(path);
    const std::vector<double> steps = timed_steps(j, first_timed_step);
    timed.insert(timed.end(), steps.begin(), steps.end());
    c.rounds.push_back({0, profiler::percentile(steps, 50)});
    if (j.contains("breakdown")) {
      const auto& b = j["breakdown"];
      splits.push_back(StepSplit{b["compute_s"].get<double>() + b["recompute_s"].get<double>(),
                                 b["tp_comm_s"].get<double>(), b["pp_comm_s"].get<double>(),
                                 b["dp_comm_s"].get<double>(), b["optimizer_s"].get<double>(),
                                 b["unannotated_s"].get<double>()});
    }
  }
  std::vector<double> per_round;
  for (const LayoutCheck::Round& r : c.rounds) per_round.push_back(r.measured_s);
  c.measured_s = over_rounds(per_round);
  c.timed_steps = static_cast<int>(timed.size());
  c.measured_min_s = *std::min_element(timed.begin(), timed.end());
  c.measured_max_s = *std::max_element(timed.begin(), timed.end());
  if (!splits.empty()) {
    StepSplit mean{};
    for (const StepSplit& s : splits) mean = add(mean, s, 1.0 / static_cast<double>(splits.size()));
    c.measured_split = mean;
  }
  // The activation accounting is the same every round (it does not depend on timing).
  const auto& stages = j.at("stage_activations");
  double worst = -1;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const double meas = stages[s].at("peak_bytes").get<double>();
    // What the engine counts: the tensors it keeps for backward, not the loss's workspace.
    const double pred = predicted.memory.stages[s].bytes.activations - predicted.memory.stages[s].loss_peak_extra;
    if (const double e = std::abs(pred / meas - 1); e > worst) {
      worst = e;
      c.activation_stage = static_cast<int>(s);
      c.predicted_activation_bytes = pred;
      c.measured_activation_bytes = meas;
    }
  }
  return c;
}

}  // namespace

ValidationSummary run_validation(const ValidationRequest& f) {
  check_flags(f);
  const ModelSpec& model = f.model;
  const Precision precision = f.backend == "cuda" ? Precision::BF16 : Precision::FP32;
  const std::vector<ValidationLayout> layouts = parse_validation_layouts(f.layouts, model, f.ranks, precision);
  engine::TrainOptions options;
  options.steps = f.steps;
  options.dropout = engine::megatron_dropout(model);
  options.eval_windows = 0;
  for (const auto& l : layouts) engine::validate_training(l.model_for(model), l.config, options, f.ranks);

  const ScratchFolder scratch;
  const std::string model_file = scratch.file("model.json");
  write_file_atomically(model_file, model_to_json(model).dump(1) + "\n");
  const std::vector<std::string> mpirun = mpirun_prefix(f);
  ValidationSummary v;
  v.command = f.command;
  v.machine = profiler::host_fingerprint();
  v.machine.backend = f.backend;
  v.model = fmt::format("{} ({} layers, hidden {}, {} heads, seq {}, {} parameters)", model.name, model.num_layers,
                        model.hidden_size, model.num_attention_heads, model.seq_length, model.total_parameters());
  v.ranks = f.ranks;
  v.rounds = f.rounds;
  v.backend = f.backend;
  v.tolerance = f.tolerance.value_or(kStatedMeasuredError);
  v.memory_tolerance = f.memory_tolerance;
  fmt::print("validating {} layouts of {} on {} ranks ({} backend): train each {} time{}{}, then predict each from "
             "the profile alone\n",
             layouts.size(), model.name, f.ranks, f.backend, f.rounds, f.rounds > 1 ? "s" : "",
             f.costs.empty() ? ", profiling in every round" : "");

  // 1. Every layout trained for real, `--rounds` times: the layouts in turn each round, and
  // without --costs a profile first in every round (the collective sweep in the first only)
  // and one more after the last, so every training run sits between two profiles.
  const bool profiling = f.costs.empty();
  const std::string tp = f.profile_tp.empty() ? (f.ranks > 1 ? fmt::format("1,{}", f.ranks) : "1") : f.profile_tp;
  std::vector<CostDatabase> profiles;
  if (!profiling) {
    profiles.push_back(read_cost_database(f.costs));
    check_database(profiles.back(), f.costs, model, f.backend, v.machine);
  }
  std::vector<std::vector<std::string>> reports(layouts.size());
  const std::size_t jobs = layouts.size() * static_cast<std::size_t>(f.rounds);
  const auto started = Clock::now();
  std::vector<double> profiled_at;                              // each profile's midpoint, s since `started`
  std::vector<std::vector<double>> trained_at(layouts.size());  // each round's training midpoint
  // Every profiled run is its own MPI job, as every training run is: in one process a run
  // after another measures faster than a fresh one (profiler::join_profiles).
  const std::vector<int> profile_tps = parse_int_list(tp, "--profile-tp");
  const std::vector<int> profile_micro_batches = parse_int_list(f.profile_micro_batch, "--profile-micro-batch-size");
  const auto take_profile = [&](const std::string& name, const std::string& when, bool with_sweep) {
    fmt::print("[profile{}] TP {} x micro batch {}{}, each run its own job\n", when, tp, f.profile_micro_batch,
               with_sweep ? " and the collective sweep" : "");
    std::cout.flush();
    const double from = seconds_since(started);
    std::vector<CostDatabase> parts;
    for (const int t : profile_tps) {
      for (const int mb : profile_micro_batches) {
        const std::string part = fmt::format("{}-tp{}-mb{}", name, t, mb);
        const std::string out = scratch.file(part + ".json");
        std::vector<std::string> argv = mpirun;
        argv.insert(argv.end(), {"profile", "--model", model_file, "--tp", std::to_string(t), "--micro-batch-size",
                                 std::to_string(mb), "--backend", f.backend, "--steps", std::to_string(f.profile_steps),
                                 "--rounds", "1", "--out", out});
        if (!(with_sweep && parts.empty())) argv.push_back("--no-collectives");
        const std::string log = scratch.file(part + ".log");
        fmt::print("      TP {}, micro batch {} (log: {})\n", t, mb, log);
        std::cout.flush();
        run_job(argv, log, "the profile");
        parts.push_back(read_cost_database(out));
      }
    }
    const double to = seconds_since(started);
    v.profile_s += to - from;
    profiled_at.push_back((from + to) / 2);
    profiles.push_back(profiler::join_profiles(parts));
  };
  for (std::size_t job = 0; job < jobs; ++job) {
    const std::size_t i = job % layouts.size();
    const int round = static_cast<int>(job / layouts.size()) + 1;
    const std::string of_rounds = f.rounds > 1 ? fmt::format(" (round {} of {})", round, f.rounds) : std::string();
    if (profiling && i == 0) take_profile(fmt::format("costs-round{}", round), of_rounds, round == 1);
    const ValidationLayout& l = layouts[i];
    const std::string name = fmt::format("train-{}-round{}", i, round);
    reports[i].push_back(scratch.file(name + ".json"));
    std::vector<std::string> argv = mpirun;
    argv.insert(argv.end(), {"train", "--model", model_file, "--backend", f.backend, "--precision", to_string(precision)});
    const std::vector<std::string> layout_flags = l.train_flags(model);
    argv.insert(argv.end(), layout_flags.begin(), layout_flags.end());
    argv.insert(argv.end(), {"--steps", std::to_string(f.steps), "--timed-from", std::to_string(f.warmup_steps + 1),
                             "--dropout", fmt::format("{}", options.dropout), "--eval-windows", "0", "--log-every",
                             std::to_string(f.steps), "--report-json", reports[i].back()});
    const double elapsed = seconds_since(started);
    const std::string eta =
        job == 0 ? "" : fmt::format(", about {:.0f} s left", elapsed / static_cast<double>(job) * (jobs - job));
    fmt::print("[{}/{}] {}{}: training {} steps{}\n", job + 1, jobs, l.text, of_rounds, f.steps, eta);
    std::cout.flush();
    const double from = seconds_since(started);
    run_job(argv, scratch.file(name + ".log"), fmt::format("training layout '{}'", l.text));
    const double to = seconds_since(started);
    v.training_s += to - from;
    trained_at[i].push_back((from + to) / 2);
    fmt::print("      measured {:.4f} s\n", profiler::percentile(timed_steps(read_train_report(reports[i].back()), f.warmup_steps + 1), 50));
  }
  if (profiling) take_profile("costs-closing", " (after the last round)", false);

  // 2. The cost database: the one given, or every profile pooled.
  v.costs_path = f.costs;
  v.costs = profiles.size() == 1 ? profiles.front() : profiler::pool_profiles(profiles);
  if (profiling) {
    v.costs_path = f.costs_out.empty() ? scratch.file("costs.json") : f.costs_out;
    write_cost_database(v.costs_path, v.costs);
    v.machine_drift = profiles.back().runs.front().iteration_median_s / profiles.front().runs.front().iteration_median_s - 1;
  }

  // 3. Predictions from the database alone, replaying the semantics of the engine it measured.
  // Without --costs, each training run is priced by the profiles before and after its round,
  // weighted by when it ran (weight_of_later_profile: a shared machine's speed drifts over
  // minutes). A layout's prediction and measurement are each the median over its rounds. The
  // pooled database prices the memory and says how each op was priced.
  const ClusterSpec cluster = load_cluster("dgx-a100-80gb");  // only its GPU count matters: every cost is measured
  std::vector<CostDatabase> bracketing;  // each profile alone, with the first one's collective sweep
  if (profiling)
    for (CostDatabase db : profiles) {
      if (db.collectives.empty()) db.collectives = profiles.front().collectives;
      bracketing.push_back(std::move(db));
    }
  const auto t = Clock::now();
  std::vector<SimResult> predicted;
  std::vector<MeasuredCosts::PricingCounts> pricing;
  std::vector<std::vector<double>> by_round(layouts.size());  // each round's predicted time
  std::vector<StepSplit> bracketed_split(layouts.size());     // the predicted split, mean over rounds
  for (std::size_t i = 0; i < layouts.size(); ++i) {
    const ValidationLayout& l = layouts[i];
    ParallelConfig c = l.config;
    apply_framework(c, resolved_stack(std::nullopt, &v.costs));  // the measured stack, as simulate --costs
    const MeasuredCosts costs(v.costs, v.costs_path, cluster, precision);  // one per layout: its own pricing counts
    predicted.push_back(simulate(l.model_for(model), cluster, c, costs, SimOptions{}));
    pricing.push_back(costs.pricing_counts());
    if (bracketing.empty()) {
      by_round[i].assign(trained_at[i].size(), predicted.back().iteration_time_s);
      continue;
    }
    std::vector<SimResult> by_profile;
    for (std::size_t k = 0; k < bracketing.size(); ++k)
      by_profile.push_back(simulate(l.model_for(model), cluster, c,
                                    MeasuredCosts(bracketing[k], fmt::format("profile {}", k + 1), cluster, precision),
                                    SimOptions{}));
    StepSplit& split = bracketed_split[i];
    const double rounds = static_cast<double>(trained_at[i].size());
    for (std::size_t r = 0; r < trained_at[i].size(); ++r) {
      const double w = profiler::weight_of_later_profile(trained_at[i][r], profiled_at[r], profiled_at[r + 1]);
      by_round[i].push_back((1 - w) * by_profile[r].iteration_time_s + w * by_profile[r + 1].iteration_time_s);
      split = add(split, split_of(by_profile[r].breakdown), (1 - w) / rounds);
      split = add(split, split_of(by_profile[r + 1].breakdown), w / rounds);
    }
  }
  v.prediction_s = seconds_since(t);

  for (std::size_t i = 0; i < layouts.size(); ++i) {
    const ValidationLayout& l = layouts[i];
    LayoutCheck c = measured_check(reports[i], f.warmup_steps + 1, predicted[i]);
    c.layout = l.text;
    c.summary = l.config.summary();
    c.in_sample = profiled_exactly(v.costs, l, model);
    c.new_shape = l.seq_length || l.num_layers;
    c.ops_scaled = pricing[i].scaled;
    c.ops_analytic = static_cast<int>(pricing[i].analytic.size());
    for (std::size_t r = 0; r < c.rounds.size(); ++r) c.rounds[r].predicted_s = by_round[i][r];
    c.predicted_s = over_rounds(by_round[i]);
    c.predicted_split = bracketing.empty() ? split_of(predicted[i].breakdown) : bracketed_split[i];
    v.layouts.push_back(c);
  }
  return v;
}

}  // namespace cc::cli
