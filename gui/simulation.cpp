#include "gui/simulation.h"

#include <chrono>
#include <utility>

#include "interop/resolver.h"
#include "sim/error.h"

namespace cc::gui {

std::string field_of_error(const std::string& message) {
  // Most specific first: the messages name Megatron-LM flags, or the spec they come from.
  static const std::pair<const char*, const char*> kNames[] = {
      {"--overlap-param-gather", "distributed_optimizer"},
      {"--tp-comm-overlap", "tp_comm_overlap"},
      {"--sequence-parallel", "sequence_parallel"},
      {"--tensor-model-parallel-size", "tp"},
      {"--pipeline-model-parallel-size", "pp"},
      {"--data-parallel-size", "dp"},
      {"--gpus", "gpus"},
      {"--global-batch-size", "global_batch"},
      {"--micro-batch-size", "micro_batch"},
      {"microbatch", "global_batch"},
      {"interleaved", "virtual_stages"},
      {"virtual stages", "virtual_stages"},
      {"first/last stage", "uneven"},
      {"--recompute", "recompute"},
      {"precision", "precision"},
      {"cost database", "costs"},
      {"model '", "model"},
      {"model:", "model"},
      {"cluster", "cluster"},
  };
  for (const auto& [needle, field] : kNames)
    if (message.find(needle) != std::string::npos) return field;
  return "layout";
}

SimulationOutcome run_simulation(const Project& project) {
  const auto start = std::chrono::steady_clock::now();
  SimulationOutcome out;
  try {
    // The CLI's own resolver: the same defaults, stack, checks and cost source as `simulate`.
    const ResolvedRun run = resolve_run(project.request());
    out.costs = run.measured;
    out.warnings = run.warnings;
    const std::unique_ptr<CostSource> costs = run.cost_source();
    SimOptions options;
    options.keep_timeline = true;  // the timeline and memory tabs need it
    options.every_rank = project.every_rank;
    options.train_tokens = project.train_tokens;
    options.reserve = project.reserve;
    auto result = std::make_shared<SimResult>(simulate(run.model, run.cluster, run.config, *costs, options));
    out.memory_curves = memory_timeline(*result, project.reserve);
    out.result = std::move(result);
  } catch (const SpecError& e) {
    out.error = e.what();
    out.error_field = field_of_error(out.error);
  }
  out.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

}  // namespace cc::gui
