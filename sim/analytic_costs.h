// analytic_costs.h — the embedded default cost source: prices every op from its FLOPs and
// bytes against the GPU's peak and bandwidth, and every collective from the fabric's
// bandwidth and latency. Needs no GPU and no profile. docs: sim/README.md "Cost model".
#pragma once

#include <vector>

#include "sim/analytic_params.h"
#include "sim/cluster_spec.h"
#include "sim/cost_source.h"
#include "sim/framework_spec.h"

namespace cc {

class AnalyticCosts final : public CostSource {
 public:
  // The calibrated constants (calibration.h) for this GPU generation and software stack.
  AnalyticCosts(const ClusterSpec& cluster, Precision precision, const std::string& framework = kDefaultFramework);
  AnalyticCosts(const ClusterSpec& cluster, Precision precision, AnalyticParams params);

  OpCost compute(const ComputeOp& op) const override;
  OpCost collective(const CollectiveOp& op) const override;
  std::string describe() const override;
  double overlap_interference() const override { return params_.overlap_interference; }
  double pass_overhead_s() const override { return params_.pass_overhead_s * params_.host_time_factor; }
  double iteration_overhead_s() const override { return params_.iteration_overhead_s * params_.host_time_factor; }
  std::optional<ErrorBand> error_band(int gpus) const override;

  // Exposed for tests and the profiler's fit: achieved fraction of peak for one GEMM shape.
  double gemm_efficiency(std::int64_t m, std::int64_t n, std::int64_t k) const;
  // Bus bandwidth (bytes/s) a collective reaches on this placement, before latency.
  double bus_bandwidth(const GroupPlacement& group) const;
  const AnalyticParams& params() const { return params_; }

 private:
  ClusterSpec cluster_;
  Precision precision_;
  AnalyticParams params_;
  bool calibrated_ = false;  // the constants came from the calibration file (so has its error)
};

}  // namespace cc
