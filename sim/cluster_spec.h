// cluster_spec.h — the hardware a run is simulated on: the GPU, the node, the NVLink domain and
// the fabrics. Presets are data files in traces/presets/clusters/, each number with its datasheet
// source. Two tiers, which differ on rack-scale systems (GB200 NVL72: a 4-GPU compute tray in a
// 72-GPU NVLink domain) and coincide everywhere else:
//   - the node: the GPUs that share a host and its NICs (NIC count, injection bandwidth, node
//     counts, GPUs per launcher process group);
//   - the NVLink domain: the GPUs that reach each other over NVLink, a whole number of nodes in
//     rank order. Collectives inside a domain ride NVLink; traffic between domains takes the network.
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
  // CUDA compute capability (8.0 Ampere, 9.0 Hopper, 10.0 Blackwell); 0: not stated. The GEMM
  // libraries size their workspaces by it (library_workspaces.h).
  double compute_capability = 0;

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
  // GPUs that share NVLink; 0: the node (every cluster but the rack-scale ones), so a cluster
  // whose node size is edited keeps its domain equal to it.
  int nvlink_domain_gpus = 0;
  LinkSpec intra_node;  // NVLink / NVSwitch, per GPU, between any two GPUs of one NVLink domain
  LinkSpec inter_node;  // per NIC
  int nics_per_node = 8;
  NetworkTopology topology = NetworkTopology::RailOptimized;
  double oversubscription = 1.0;  // fat-tree: bisection bandwidth = injection / oversubscription
  int max_nodes = 0;              // 0: no limit

  // GPUs of one NVLink domain (the node unless the cluster states a larger domain).
  int nvlink_domain_size() const { return nvlink_domain_gpus > 0 ? nvlink_domain_gpus : gpus_per_node; }
  // The NVLink domain of global rank r: ranks fill nodes, and nodes fill domains, in order.
  int nvlink_domain_of(int rank) const { return rank / nvlink_domain_size(); }
  bool same_nvlink_domain(int rank_a, int rank_b) const { return nvlink_domain_of(rank_a) == nvlink_domain_of(rank_b); }
  // Network bandwidth, GB/s, that `gpus_in_domain` GPUs of one NVLink domain reach when they all
  // talk to other domains at once: each GPU uses its nearest NIC, the GPUs filling as few nodes
  // as they can (a node's NICs serve its GPUs only); oversubscription divides the core.
  double network_injection_gbs(int gpus_in_domain) const;
  void validate(const std::string& where) const;
};

ClusterSpec cluster_from_json(const nlohmann::json& doc, const std::string& where);

// The most GPUs one simulated cluster may hold: 2^20, five times the largest single clusters
// built by 2025 (about 200,000 GPUs). Up to it `simulate` answers in well under a second; the
// per-rank structures grow with the count, so beyond it a typo (2^31 - 1) would run out of
// memory instead of answering.
inline constexpr long long kMaxGpus = 1 << 20;
// Refuses (SpecError on field `flag`) a GPU count below 1 or above kMaxGpus, naming the limit.
void check_gpu_count(long long gpus, const std::string& flag);
nlohmann::json cluster_to_json(const ClusterSpec& cluster);
const char* to_string(Precision p);

}  // namespace cc
