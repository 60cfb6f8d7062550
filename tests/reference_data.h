// reference_data.h — loads the published measurements in tests/reference/ for the tests.
#pragma once

#include <string>
#include <vector>

#include "sim/cluster_spec.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc::test {

struct ReferenceRun {
  std::string model_preset;
  ParallelConfig config;
  double iteration_time_s = 0;
  double mfu = 0, hfu = 0;  // 0 where the paper does not report them
};

struct ReferenceLayer {
  std::string variant;
  ParallelConfig config;
  double forward_ms = 0, backward_ms = 0;
};

std::vector<ReferenceRun> korthikanti_runs();      // Table 3 + Table 5
std::vector<ReferenceLayer> korthikanti_layers();  // Table 4 (one 22B layer)

}  // namespace cc::test
