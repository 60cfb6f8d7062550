// cost_source.h — the one interface through which the simulator asks what an op costs.
// The analytic hardware model implements it; a measured cost database (profiler/)
// implements it too, and plugs in without any change to the simulator.
#pragma once

#include <string>

#include "sim/ops.h"

namespace cc {

struct OpCost {
  double seconds = 0;
  bool measured = false;  // true when the figure comes from a measurement, not a formula
};

class CostSource {
 public:
  virtual ~CostSource() = default;
  virtual OpCost compute(const ComputeOp& op) const = 0;
  virtual OpCost collective(const CollectiveOp& op) const = 0;
  // Fraction of an overlapped collective's time that still slows the kernel it hides
  // behind (shared SMs and memory bandwidth).
  virtual double overlap_interference() const { return 0.0; }
  // One line for reports, e.g. "analytic model (A100-SXM4-80GB)".
  virtual std::string describe() const = 0;
  // One line on how the ops asked for so far were priced (measured, scaled, analytic);
  // empty for a source that is all one kind.
  virtual std::string coverage() const { return {}; }
};

}  // namespace cc
