#include "sim/analytic_params.h"

namespace cc {

const std::vector<AnalyticParamField>& analytic_param_fields() {
  static const std::vector<AnalyticParamField> fields = {
      {"gemm_peak_fraction", &AnalyticParams::gemm_peak_fraction},
      {"gemm_k_half", &AnalyticParams::gemm_k_half},
      {"memory_fraction", &AnalyticParams::memory_fraction},
      {"kernel_overhead_s", &AnalyticParams::kernel_overhead_s},
      {"flash_forward_fraction", &AnalyticParams::flash_forward_fraction},
      {"flash_backward_fraction", &AnalyticParams::flash_backward_fraction},
      {"fp8_gemm_fraction", &AnalyticParams::fp8_gemm_fraction},
      {"nvlink_fraction", &AnalyticParams::nvlink_fraction},
      {"network_fraction", &AnalyticParams::network_fraction},
      {"overlap_interference", &AnalyticParams::overlap_interference},
      {"tree_bandwidth_fraction", &AnalyticParams::tree_bandwidth_fraction},
      {"host_launch_s", &AnalyticParams::host_launch_s},
      {"collective_launch_s", &AnalyticParams::collective_launch_s},
      {"pass_overhead_s", &AnalyticParams::pass_overhead_s},
      {"iteration_overhead_s", &AnalyticParams::iteration_overhead_s},
      {"host_time_factor", &AnalyticParams::host_time_factor},
      {"compute_time_factor", &AnalyticParams::compute_time_factor},
  };
  return fields;
}

}  // namespace cc
