// op_statistics.h — turns the recorded scopes of a profiled run into cost-database records:
// one record per (op, phase, shape) with the mean, median and spread of its self time over every
// occurrence in the timed steps (warm-up steps are left out), and the measured iteration.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "profiler/host_recorder.h"
#include "sim/cost_database.h"

namespace cc::profiler {

double mean(const std::vector<double>& values);  // 0 when empty
// Nearest-rank percentile (0..100) of `values`; 0 when empty.
double percentile(std::vector<double> values, double pct);

// Compute ops only: collectives are priced from the collective sweep, because inside a
// run their time includes waiting for the slowest rank. Records keep execution order.
std::vector<OpRecord> summarize_ops(const std::vector<RecordedOp>& events, long first_timed_step,
                                    const std::string& dtype, int tp);

// Timed steps (1-based; step_seconds[k] is step k + 1) that took more than kStallRatio times
// the median timed step: one-off stalls, left out of the op times. A fresh CPU engine process
// stalls once, 15-20 ms about a quarter second into training (`tiny`, TP 1, micro batch 1,
// 2026-12-03: step 4 ran 0.067 s against 0.049-0.053 s in every one of six runs, profile and
// train alike). The training runs a profile predicts are measured by their median step, which
// such a stall does not move; op means would carry it, 7% on that profile's five timed steps.
inline constexpr double kStallRatio = 1.25;
std::set<long> stalled_steps(const std::vector<double>& step_seconds, long first_timed_step);

// Where a timed step's time went: annotated compute ops, annotated collectives, and the
// rest (data loading, glue between ops), summed over the timed steps.
struct StepCoverage {
  int steps = 0;
  double step_s = 0, compute_s = 0, collective_s = 0, unannotated_s = 0;
  std::vector<double> step_durations;
};
StepCoverage step_coverage(const std::vector<RecordedOp>& events, long first_timed_step);

}  // namespace cc::profiler
