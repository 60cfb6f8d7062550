// validation_report.h — what `clustercast validate` found, as a terminal table and as the
// Markdown report it writes: per layout the predicted and measured iteration time and
// activation memory, their errors, and where a miss sits (the category of the step whose
// predicted and measured seconds differ most), with the machine and the exact command.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/cost_database.h"
#include "sim/simulator.h"

namespace cc::cli {

// A step in the categories both sides can be split into: the engine's blocking receives
// hold both pipeline transfers and the bubble, so those two are one category here.
struct StepSplit {
  double compute = 0, tp = 0, pipeline = 0, dp = 0, optimizer = 0, other = 0;
};
StepSplit split_of(const TimeBreakdown& simulated);
StepSplit add(const StepSplit& sum, const StepSplit& s, double weight);  // sum + weight · s

struct LayoutCheck {
  std::string layout;            // as written in --layouts
  std::string summary;           // ParallelConfig::summary()
  bool in_sample = false;        // the profile itself ran exactly this layout
  bool new_shape = false;        // seq= or layers=: a model shape the profile never ran
  int ops_scaled = 0;            // (op, phase) pairs priced from the nearest measured shape
  int ops_analytic = 0;          // (op, phase) pairs the database lacks (analytic model)
  // Each round's prediction (the profiles around it) and measurement (the median of its timed
  // steps on the slowest rank); predicted_s and measured_s are their medians over the rounds,
  // so one round caught in a slow spell of the machine moves neither.
  struct Round {
    double predicted_s = 0, measured_s = 0;
  };
  std::vector<Round> rounds;
  double predicted_s = 0;
  double measured_s = 0;
  double measured_min_s = 0, measured_max_s = 0;
  int timed_steps = 0;
  double predicted_activation_bytes = 0;  // the stage with the largest error
  double measured_activation_bytes = 0;
  int activation_stage = 0;
  StepSplit predicted_split;
  std::optional<StepSplit> measured_split;  // CPU backend (host-timed scopes)
  double time_error() const { return predicted_s / measured_s - 1; }
  double memory_error() const { return predicted_activation_bytes / measured_activation_bytes - 1; }
  std::string miss_sits() const;  // e.g. "compute -0.041 s"
};

struct ValidationSummary {
  std::string command;
  MachineFingerprint machine;       // this machine
  std::string costs_path;           // the database the predictions came from
  CostDatabase costs;
  std::string model;
  int ranks = 0;
  int rounds = 1;  // each layout trained this many times, the layouts in turn each round
  std::string backend;
  double tolerance = 0, memory_tolerance = 0;
  std::vector<LayoutCheck> layouts;
  double profile_s = 0, training_s = 0, prediction_s = 0;  // wall time of each part
  // How much slower the last profile's first run measured than the first profile's: the
  // machine's drift over the validation (none with --costs, which profiles nothing).
  std::optional<double> machine_drift;
  bool passed() const;
};

std::string terminal_table(const ValidationSummary& v);
std::string markdown_report(const ValidationSummary& v);

}  // namespace cc::cli
