// cost_source.h — the one interface through which the simulator asks what an op costs.
// The analytic hardware model implements it; a measured cost database (profiler/)
// implements it too, and plugs in without any change to the simulator.
#pragma once

#include <optional>
#include <string>

#include "sim/ops.h"

namespace cc {

// The held-out (cross-validated) error of a cost source: measured / predicted time on runs the
// constants were not fitted to, [low, high] as wide as held 80% of the measurements of sources
// it was not built from (the central 80%, widened where that held fewer; docs/accuracy.md).
struct ErrorBand {
  int min_gpus = 1;               // the regime: runs on at least this many GPUs
  double low = 1.0, high = 1.0;   // ratio bounds, measured / predicted
  double mean_abs = 0;            // mean |predicted / measured - 1|
  // The same within one job (model, cluster, GPUs, batch): how far a layout's error strays
  // from its job's common offset, which is what decides whether two layouts can be told
  // apart. The search's tie tolerance.
  double within_job_mean_abs = 0;
  std::string basis;              // e.g. "leave-one-source-out over 1,530 published runs"
};

struct OpCost {
  double seconds = 0;     // on the device (GPU stream)
  bool measured = false;  // true when the figure comes from a measurement, not a formula
  // Host time to issue it (Python, framework dispatch, the launch call). The host runs ahead
  // of the device, so this costs time only where the host falls behind (cost_of()). A measured
  // database has it where the profile recorded it (a GPU profile, OpRecord::host_mean_s);
  // without it the op means are priced device-only.
  double host_s = 0;
};

class CostSource {
 public:
  virtual ~CostSource() = default;
  virtual OpCost compute(const ComputeOp& op) const = 0;
  virtual OpCost collective(const CollectiveOp& op) const = 0;
  // Fraction of an overlapped collective's time that still slows the kernel it hides
  // behind (shared SMs and memory bandwidth).
  virtual double overlap_interference() const { return 0.0; }
  // Software-stack time outside the priced kernels (0 for a measured database, whose
  // per-op means already add up to the measured step): per pass of one model chunk, and
  // per iteration.
  virtual double pass_overhead_s() const { return 0.0; }
  virtual double iteration_overhead_s() const { return 0.0; }
  // How far off this source's predictions have been on runs of `gpus` GPUs it was not
  // fitted to; none when nobody has measured that.
  virtual std::optional<ErrorBand> error_band(int gpus) const {
    (void)gpus;
    return std::nullopt;
  }
  // One line for reports, e.g. "analytic model (A100-SXM4-80GB)".
  virtual std::string describe() const = 0;
  // One line on how the ops asked for so far were priced (measured, scaled, analytic);
  // empty for a source that is all one kind.
  virtual std::string coverage() const { return {}; }
};

}  // namespace cc
