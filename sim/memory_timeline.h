// memory_timeline.h — memory one GPU of each pipeline stage holds over a simulated
// iteration: the static part (weights, gradients, optimizer state, reserve) plus the
// activations of every (microbatch, chunk) whose forward pass has started and whose
// backward pass has not yet finished, replayed from the pipeline schedule at the times the
// simulator ran each pass. Its peak is memory_model()'s stage total (the same formulas).
#pragma once

#include <vector>

#include "sim/memory_model.h"
#include "sim/simulator.h"
#include "sim/units.h"

namespace cc {

struct MemoryPoint {
  SimTime time = 0;
  double bytes = 0;  // held from `time` until the next point's time
};

struct StageMemoryCurve {
  int stage = 0;
  std::vector<MemoryPoint> points;  // ascending time; first at 0, last at the iteration end
  double peak_bytes = 0;
  SimTime peak_time = 0;  // first time the peak is reached
};

// One curve per pipeline stage (every-rank mode: of the stage's first replica). Needs a
// result simulated with `keep_timeline`; throws SpecError otherwise.
std::vector<StageMemoryCurve> memory_timeline(const SimResult& result, const MemoryReserve& reserve = {});

}  // namespace cc
