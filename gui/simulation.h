// simulation.h — one simulation of a Project, as the worker thread runs it: the cost
// source, validation and simulate() from the library, the memory curve from the library,
// and, on bad input, the library's own message with the setup field it names.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gui/project.h"
#include "sim/cost_database.h"
#include "sim/memory_timeline.h"
#include "sim/simulator.h"

namespace cc::gui {

struct SimulationOutcome {
  std::shared_ptr<const SimResult> result;      // null on error
  std::vector<StageMemoryCurve> memory_curves;  // one per pipeline stage
  std::shared_ptr<const CostDatabase> costs;    // the database used, when not analytic
  std::string error;        // SpecError message, empty on success
  std::string error_field;  // setup field the error is about (see setup_field_of)
  std::vector<std::string> warnings;  // the resolver's, e.g. a database measured on another GPU
  double wall_seconds = 0;
  bool ok() const { return result != nullptr; }
};

SimulationOutcome run_simulation(const Project& project);

// The setup field that edits the flag or key a SpecError names (SpecError::field()): "tp",
// "cp", "cp_comm_type", "cp_a2a_size", "pp", "dp", "gpus", "micro_batch", "global_batch",
// "virtual_stages", "microbatch_group_size", "first_stage_layers", "last_stage_layers",
// "account_for_embedding", "account_for_loss", "pipeline_layout", "recompute", "sequence_parallel",
// "distributed_optimizer", "tp_comm_overlap", "precision", "attention", "model", "cluster", "costs";
// "layout" for any other.
std::string setup_field_of(const std::string& field);

}  // namespace cc::gui
