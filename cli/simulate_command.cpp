#include "cli/simulate_command.h"

#include <iostream>
#include <memory>

#include "cli/common_options.h"
#include "cli/report.h"
#include "sim/atomic_file.h"
#include "sim/error.h"
#include "sim/result_json.h"
#include "sim/simulator.h"

namespace cc::cli {

namespace {

struct SimulateFlags {
  ModelFlags model;
  ClusterFlags cluster;
  LayoutFlags layout;
  std::string train_tokens;
  std::string costs;
  bool json = false;
  std::string trace_out;
  bool every_rank = false;
  std::vector<std::string> stragglers;
};

Straggler parse_straggler(const std::string& text) {
  const auto colon = text.find(':');
  try {
    if (colon == std::string::npos) throw std::invalid_argument("no colon");
    Straggler s{std::stoi(text.substr(0, colon)), std::stod(text.substr(colon + 1))};
    if (s.slowdown < 1.0) fail("--straggler '{}': the slowdown must be >= 1", text);
    return s;
  } catch (const std::logic_error&) {
    fail("--straggler '{}' is not RANK:SLOWDOWN (e.g. 17:1.3)", text);
  }
}

void run(const SimulateFlags& f) {
  const std::optional<LayoutFile> file = f.layout.read_file();
  const ModelSpec model = f.model.resolve(file ? file->model : std::nullopt);
  const ClusterSpec cluster = f.cluster.resolve(file ? file->cluster : std::nullopt);
  const std::optional<int> gpus = f.cluster.gpus ? f.cluster.gpus : file ? file->gpus : std::nullopt;
  std::optional<CostDatabase> measured = read_costs(f.costs);
  const ParallelConfig config = f.layout.resolve(model, gpus, file ? &*file : nullptr, measured_framework(measured));
  validate(config, model, cluster, gpus.value_or(0));

  SimOptions options;
  options.every_rank = f.every_rank;
  options.keep_timeline = !f.trace_out.empty();
  options.reserve = f.cluster.reserve(file ? file->reserve : std::nullopt);
  if (!f.train_tokens.empty()) options.train_tokens = parse_token_count(f.train_tokens, "--train-tokens");
  for (const auto& s : f.stragglers) options.stragglers.push_back(parse_straggler(s));

  const std::unique_ptr<CostSource> costs = make_cost_source(std::move(measured), f.costs, cluster, config.precision, config.framework);
  const SimResult result = simulate(model, cluster, config, *costs, options);

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
  flags->model.add_to(*sub);
  flags->cluster.add_to(*sub);
  flags->layout.add_to(*sub);
  sub->add_option("--train-tokens", flags->train_tokens, "Token budget for training_days (e.g. 300e9, 300B)");
  sub->add_option("--costs", flags->costs,
                  "Cost database from `clustercast profile` (default: the analytic model of the cluster)");
  sub->add_flag("--json", flags->json, "Print one JSON document instead of the report");
  sub->add_option("--trace-out", flags->trace_out, "Write the simulated iteration as a Chrome trace / Perfetto JSON");
  sub->add_flag("--every-rank", flags->every_rank, "Simulate every DP replica instead of one rank per stage");
  sub->add_option("--straggler", flags->stragglers, "RANK:SLOWDOWN, a rank whose compute is slower (every-rank mode)");
  sub->callback([flags] { run(*flags); });
}

}  // namespace cc::cli
