// cluster_spec.h — the hardware a run is simulated on: the GPU, the node and the fabrics.
// Presets are data files in traces/presets/clusters/, each number with its datasheet source.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace cc {

enum class Precision { BF16, FP16, FP8, FP32 };

struct GpuSpec {
  std::string name;
  double peak_tflops_bf16 = 0;  // dense Tensor Core peak
  double peak_tflops_fp16 = 0;
  double peak_tflops_fp8 = 0;   // 0 = not supported
  double peak_tflops_tf32 = 0;
  double peak_tflops_fp32 = 0;  // non-tensor-core, for fp32 elementwise math
  double hbm_gib = 0;
  double hbm_bandwidth_gbs = 0;  // GB/s
  int sm_count = 0;

  // Dense matrix peak in FLOP/s for the given precision; 0 when unsupported.
  double peak_flops(Precision p) const;
};

enum class NetworkTopology { RailOptimized, FatTree };

struct LinkSpec {
  std::string name;
  double bandwidth_gbs = 0;  // GB/s per direction (per GPU for NVLink, per NIC for the network)
  double latency_us = 0;
};

struct ClusterSpec {
  std::string name = "custom";
  GpuSpec gpu;
  int gpus_per_node = 8;
  LinkSpec intra_node;  // NVLink / NVSwitch, per GPU
  LinkSpec inter_node;  // per NIC
  int nics_per_node = 8;
  NetworkTopology topology = NetworkTopology::RailOptimized;
  double oversubscription = 1.0;  // fat-tree: bisection bandwidth = injection / oversubscription
  int max_nodes = 0;              // 0: no limit

  // Network bandwidth, GB/s, that `gpus_in_node` GPUs of one node reach when they all talk to
  // other nodes at once: each GPU uses its nearest NIC, oversubscription divides the core.
  double node_injection_gbs(int gpus_in_node) const;
  void validate(const std::string& where) const;
};

ClusterSpec cluster_from_json(const nlohmann::json& doc, const std::string& where);
nlohmann::json cluster_to_json(const ClusterSpec& cluster);
const char* to_string(Precision p);

}  // namespace cc
