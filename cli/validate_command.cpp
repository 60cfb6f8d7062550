#include "cli/validate_command.h"

#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/common_options.h"
#include "cli/engine_commands.h"
#include "cli/exit_code.h"
#include "cli/validation.h"
#include "sim/atomic_file.h"

namespace cc::cli {

namespace {

struct ValidateFlags {
  ModelFlags model;
  ValidationRequest request;
};

// The report's command must paste back into a shell: --layouts holds spaces and ';'.
std::string shell_quoted(const std::string& arg) {
  if (!arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=,:+-") ==
                          std::string::npos)
    return arg;
  std::string q = "'";
  for (char c : arg) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

void run(const ValidateFlags& f) {
  ValidationRequest request = f.request;
  request.model = f.model.resolve();
  const ValidationSummary v = run_validation(request);

  // The table, the report, and the verdict.
  std::cout << "\n" << terminal_table(v);
  if (!request.report.empty()) {
    write_file_atomically(request.report, markdown_report(v));
    fmt::print("wrote {}\n", request.report);
  }
  if (!v.passed()) {
    fmt::print(stderr, "validate: some layouts miss the tolerance ({:.0f}% time, {:.0f}% activation memory)\n",
               100 * v.tolerance, 100 * v.memory_tolerance);
    throw ExitCode{3};
  }
}

}  // namespace

void add_validate_command(CLI::App& app, int argc, char** argv) {
  auto f = std::make_shared<ValidateFlags>();
  f->model.model = "small";
  for (int i = 0; i < argc; ++i) f->request.command += (i ? " " : "") + shell_quoted(argv[i]);
  CLI::App* sub = app.add_subcommand("validate", engine_command_summary("validate"));
  f->model.add_to(*sub);
  sub->add_option("--ranks", f->request.ranks, "MPI ranks of every run")->capture_default_str();
  sub->add_option("--layouts", f->request.layouts,
                  "Layouts to check, ';'-separated: tp=N, pp=N, dp=N, mbs=N, gbs=N, vpp=N or lpvs=N, sp, recompute=none|selective|full, "
                  "method=uniform|block, rlayers=N, distopt, seq=N, layers=N (default: ten layouts of two ranks)");
  sub->add_option("--costs", f->request.costs, "Predict from this cost database instead of profiling first");
  sub->add_option("--costs-out", f->request.costs_out, "Keep the profile this validation makes");
  sub->add_option("--profile-tp", f->request.profile_tp,
                  "TP sizes the profile runs (default: 1 and --ranks); every TP x micro batch run is its own job");
  sub->add_option("--profile-micro-batch-size", f->request.profile_micro_batch, "Micro batch sizes the profile runs")
      ->capture_default_str();
  sub->add_option("--profile-steps", f->request.profile_steps, "Timed steps of every profiled run")->capture_default_str();
  sub->add_option("--steps", f->request.steps, "Steps of every training run")->capture_default_str();
  sub->add_option("--warmup-steps", f->request.warmup_steps, "Untimed steps first")->capture_default_str();
  sub->add_option("--rounds", f->request.rounds,
                  "Train every layout this many times, the layouts in turn each round (each round's median step; "
                  "the median over the rounds); without --costs a profile before every round and one after the last")
      ->capture_default_str();
  sub->add_option("--tolerance", f->request.tolerance,
                  fmt::format("Largest |error| of an iteration time (default {}: the stated error of a measured "
                              "prediction)", kStatedMeasuredError));
  sub->add_option("--memory-tolerance", f->request.memory_tolerance, "Largest |error| of the activation memory")
      ->capture_default_str();
  sub->add_option("--report", f->request.report, "Write the Markdown report here (atomically, at the end)");
  sub->add_option("--backend", f->request.backend, "cpu (MPI ranks) or cuda (one GPU per rank)")
      ->check(CLI::IsMember({"cpu", "cuda"}))
      ->capture_default_str();
  sub->add_flag("--oversubscribe", f->request.oversubscribe, "Allow more ranks than cores (measurements then share cores)");
  sub->add_option("--mpirun", f->request.mpirun, "The MPI launcher")->capture_default_str();
  sub->callback([f] { run(*f); });
}

}  // namespace cc::cli
