#include "cli/simulate_command.h"

#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/common_options.h"
#include "cli/report.h"
#include "sim/atomic_file.h"
#include "sim/error.h"
#include "sim/result_json.h"
#include "sim/simulator.h"

namespace cc::cli {

namespace {

struct SimulateFlags {
  RunFlags run;
  std::string train_tokens;
  std::optional<long long> train_iters;  // Megatron-LM's budget: iterations of the global batch
  bool json = false;
  std::string trace_out;
  bool every_rank = false;
  std::vector<std::string> stragglers;
};

Straggler parse_straggler(const std::string& text) {
  const auto colon = text.find(':');
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    std::size_t rank_used = 0, slowdown_used = 0;
    const std::string rank = text.substr(0, colon), slowdown = text.substr(colon + 1);
    Straggler s{std::stoi(rank, &rank_used), std::stod(slowdown, &slowdown_used)};
    if (rank_used != rank.size() || slowdown_used != slowdown.size()) throw std::invalid_argument("trailing text");
    if (s.rank < 0) fail("--straggler '{}': the rank must be >= 0", text);
    // A rank 100 times slower than the rest is already a failed node, not a straggler;
    // beyond that (1e12, inf) the simulated times stop being representable.
    if (!(s.slowdown >= 1.0 && s.slowdown <= 100.0))  // also refuses NaN
      fail("--straggler '{}': the slowdown {} must be between 1 and 100", text, slowdown);
    return s;
  } catch (const std::logic_error&) {
    fail("--straggler '{}' is not RANK:SLOWDOWN (e.g. 17:1.3)", text);
  }
}

void run(const SimulateFlags& f) {
  check_outputs_apart({{f.trace_out, "--trace-out"}}, {{f.run.costs, "--costs"},
                                                      {f.run.model.model, "--model"},
                                                      {f.run.cluster.cluster, "--cluster"},
                                                      {f.run.layout.config_file, "--config"}});
  if (!f.trace_out.empty()) check_output_folder(f.trace_out, "--trace-out");
  const ResolvedRun run = resolve_run(f.run.request());
  const ModelSpec& model = run.model;
  const ParallelConfig& config = run.config;

  SimOptions options;
  options.every_rank = f.every_rank;
  options.keep_timeline = !f.trace_out.empty();
  options.reserve = run.reserve;
  if (!f.train_tokens.empty()) options.train_tokens = parse_token_count(f.train_tokens, "--train-tokens");
  if (f.train_iters) {
    if (!f.train_tokens.empty())
      fail("--train-iters {} and --train-tokens {} both set the budget; give one", *f.train_iters, f.train_tokens);
    if (*f.train_iters < 1) fail("--train-iters is {}; it must be >= 1", *f.train_iters);
    // The same bound as --train-tokens, reached through iterations x global batch x sequence.
    const double tokens = static_cast<double>(*f.train_iters) * config.global_batch * model.seq_length;
    const std::string what =
        fmt::format("--train-iters {} ({} x {} tokens)", *f.train_iters, config.global_batch, model.seq_length);
    options.train_tokens = parse_token_count(fmt::format("{}", tokens), what);
  }
  for (const auto& s : f.stragglers) options.stragglers.push_back(parse_straggler(s));

  for (const auto& warning : run.warnings) fmt::print(stderr, "warning: {}\n", warning);
  const std::unique_ptr<CostSource> costs = run.cost_source();
  const SimResult result = simulate(model, run.cluster, config, *costs, options);

  if (!f.trace_out.empty()) write_file_atomically(f.trace_out, timeline_to_chrome_trace(result).dump() + "\n");
  if (f.json)
    std::cout << result_to_json(result).dump(2) << "\n";
  else
    std::cout << format_report(result);
}

}  // namespace

void add_simulate_command(CLI::App& app) {
  auto flags = std::make_shared<SimulateFlags>();
  CLI::App* sub = app.add_subcommand("simulate", "Predict iteration time, memory and training days for one layout");
  flags->run.add_to(*sub);
  sub->add_option("--train-tokens", flags->train_tokens, "Token budget for training_days (e.g. 300e9, 300B)");
  sub->add_option("--train-iters", flags->train_iters,
                  "Token budget as Megatron-LM gives it: iterations of the global batch (x its sequence length)");
  sub->add_flag("--json", flags->json, "Print one JSON document instead of the report");
  sub->add_option("--trace-out", flags->trace_out, "Write the simulated iteration as a Chrome trace / Perfetto JSON");
  sub->add_flag("--every-rank", flags->every_rank, "Simulate every DP replica instead of one rank per stage");
  sub->add_option("--straggler", flags->stragglers, "RANK:SLOWDOWN, a rank whose compute is slower (every-rank mode)");
  sub->callback([flags] { run(*flags); });
}

}  // namespace cc::cli
