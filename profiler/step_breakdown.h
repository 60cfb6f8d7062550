// step_breakdown.h — where one rank's timed training steps went, in the simulator's own
// categories (sim/simulator.h TimeBreakdown), so a measured step and a simulated one can be
// laid side by side: compute, recompute, tensor-parallel, pipeline and data-parallel
// communication, the optimizer, and the host time no scope covers. Self times of the
// recorded scopes (host clock on the CPU backend), so nested scopes never count twice.
#pragma once

#include <vector>

#include "profiler/host_recorder.h"
#include "sim/simulator.h"

namespace cc::profiler {

struct MeasuredBreakdown {
  int steps = 0;
  // Per step (the mean over the timed steps). A blocking pipeline receive waits for the
  // neighbouring stage, so the engine's pp_comm holds both transfers and the pipeline bubble;
  // `bubble` stays 0 here.
  TimeBreakdown time;
  double unannotated = 0;  // step time outside every op scope: data loading, glue
  double step() const { return time.total() + unannotated; }
};

// Whether a collective scope of the engine runs over the tensor-parallel group (its
// all-reduces, reduce-scatters, sequence parallelism's all-gathers, the vocab-parallel loss's
// all-reduces), whatever its name says.
bool is_tp_collective(const char* name);

// Steps numbered below `first_timed_step` (warm-up) are left out.
MeasuredBreakdown step_breakdown(const std::vector<RecordedOp>& events, long first_timed_step);

}  // namespace cc::profiler
