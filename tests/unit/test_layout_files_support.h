// test_layout_files_support.h — what the layout-file tests share: a simulated result to export, the
// reference fixtures' folder, and the message of a SpecError.
#pragma once

#include <string>

#include "sim/analytic_costs.h"
#include "sim/error.h"
#include "sim/presets.h"
#include "sim/simulator.h"

namespace cc::layout_test {

inline std::string reference(const std::string& name) { return std::string(CLUSTERCAST_REFERENCE_DIR) + "/" + name; }

inline SimResult simulated(const ModelSpec& model, ParallelConfig c, const std::string& cluster = "dgx-a100-80gb") {
  const ClusterSpec spec = load_cluster(cluster);
  const AnalyticCosts costs(spec, c.precision, c.framework);
  return simulate(model, spec, c, costs);
}

inline ParallelConfig layout(int tp, int pp, int dp, int micro, int global) {
  ParallelConfig c;
  c.tp = tp;
  c.pp = pp;
  c.dp = dp;
  c.micro_batch = micro;
  c.global_batch = global;
  return c;
}

inline std::string error_of(auto&& f) {
  try {
    f();
  } catch (const SpecError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace cc::layout_test
