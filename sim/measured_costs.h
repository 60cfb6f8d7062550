// measured_costs.h — prices ops from a profiled cost database (cost_database.h): an exact
// (name, phase, shape) hit uses the measured mean; another shape of a measured op uses
// the op's measured shapes: between two of them interpolated in log(work)-log(time), beyond
// them the nearest end's measured throughput (work: FLOPs or bytes);
// collectives on a measured group size inside a node use the sweep itself, interpolated
// between measured sizes (a single latency/bandwidth line misses shared-memory transports
// by up to 3x: bandwidth peaks while messages fit in cache and falls beyond), at the level
// the same collective had inside the profiled steps (in_step_factor). Context-parallel
// collectives are never measured (no sweep runs on a CP group): the analytic model prices them.
// Only what the database has no measurement of at all is priced by the analytic model, and
// coverage() names it: the share of measured time is always reported, never hidden.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "sim/analytic_costs.h"
#include "sim/cost_database.h"
#include "sim/cost_source.h"

namespace cc {

// Time of a collective of `bytes` from its measured curve: log-log interpolation between
// the sweep's sizes; below the smallest, the fitted latency plus proportional transfer;
// above the largest, the largest size's bandwidth.
double measured_collective_time(const CollectiveCurve& curve, double bytes);

// How much longer a collective takes inside a training step than in the sweep's loop, at
// `bytes`: the database's in-step records of the curve's kind and group size, each as its
// time over its kind's sweep at its size, interpolated in log(bytes) between them and the
// nearest end's beyond them. A kind the steps never ran (the all-gathers of sequence
// parallelism when the profile ran without it) takes the records of every kind on that group
// size: what slows a collective inside a step (data just written by compute, a peer that
// just arrived) is the step's, not the kind's; measured on the 2-core CPU machine
// (2026-12-03, `tiny`, TP 2) all-reduce ran 3.1-3.7x its sweep, all-gather 2.7-4.0x,
// reduce-scatter 2.1-2.8x. Pipeline sends (send_recv) take only their own records. 1
// without records. The sweep keeps the shape over message
// sizes, the engine's own steps set the level (cost_database.h InStepCollective).
double in_step_factor(const CostDatabase& db, const CollectiveCurve& curve, double bytes);
// The same in two steps, so a cost source finds each curve's ratios once, not per collective
// it prices: the (bytes, in-step / sweep) pairs, ascending, and the factor they give at `bytes`.
std::vector<std::pair<double, double>> in_step_ratios(const CostDatabase& db, const CollectiveCurve& curve);
double in_step_factor(const std::vector<std::pair<double, double>>& ratios, double bytes);

class MeasuredCosts final : public CostSource {
 public:
  // Throws SpecError (naming `path`) when the database was measured in another precision
  // than the simulation asks for.
  MeasuredCosts(CostDatabase db, std::string path, const ClusterSpec& cluster, Precision precision);

  OpCost compute(const ComputeOp& op) const override;
  OpCost collective(const CollectiveOp& op) const override;
  double overlap_interference() const override { return analytic_.overlap_interference(); }
  std::string describe() const override;
  std::string coverage() const override;

  // How the (op, phase) pairs priced so far were priced (coverage() says it in words).
  struct PricingCounts {
    int exact = 0, scaled = 0, fused = 0;
    std::vector<std::string> analytic;  // ops the database lacks
  };
  PricingCounts pricing_counts() const;

  const CostDatabase& database() const { return db_; }

 private:
  enum class Pricing { Exact, Scaled, Fused, Analytic };
  const OpRecord* exact(const ComputeOp& op) const;
  const OpRecord* nearest(const ComputeOp& op) const;
  double scaled_time(const ComputeOp& op, const OpRecord& nearest) const;
  void note(const std::string& name, Phase phase, Pricing how) const;

  CostDatabase db_;
  std::string path_;
  AnalyticCosts analytic_;
  std::vector<std::vector<std::pair<double, double>>> in_step_ratios_;  // one per db_.collectives curve
  // How each (op, phase) asked for was priced, for coverage(); lookups may come from the
  // search's worker threads.
  mutable std::mutex mutex_;
  mutable std::map<std::string, Pricing> pricing_;
};

}  // namespace cc
