#include "sim/cluster_spec.h"

#include <algorithm>

#include "sim/error.h"
#include "sim/json_fields.h"

namespace cc {

const char* to_string(Precision p) {
  switch (p) {
    case Precision::BF16: return "bf16";
    case Precision::FP16: return "fp16";
    case Precision::FP8: return "fp8";
    case Precision::FP32: return "fp32";
  }
  return "?";
}

double GpuSpec::peak_flops(Precision p) const {
  switch (p) {
    case Precision::BF16: return peak_tflops_bf16 * 1e12;
    case Precision::FP16: return peak_tflops_fp16 * 1e12;
    case Precision::FP8: return peak_tflops_fp8 * 1e12;
    case Precision::FP32: return peak_tflops_tf32 * 1e12;  // fp32 GEMMs run as TF32 by default in Megatron
  }
  return 0;
}

double ClusterSpec::network_injection_gbs(int gpus_in_domain) const {
  const int nodes_used = (gpus_in_domain + gpus_per_node - 1) / gpus_per_node;
  const int nics_used = std::max(1, std::min(gpus_in_domain, nics_per_node * std::max(1, nodes_used)));
  const double core_share = topology == NetworkTopology::FatTree ? 1.0 / oversubscription : 1.0;
  return nics_used * inter_node.bandwidth_gbs * core_share;
}

void ClusterSpec::validate(const std::string& where) const {
  // A GPU needs one 16-bit Tensor Core format; V100 has fp16 only (bf16 0), and a run in the
  // format it lacks is refused by the parallel-config check, naming the formats it has.
  if (gpu.peak_tflops_bf16 <= 0 && gpu.peak_tflops_fp16 <= 0)
    fail_at("gpu.peak_tflops.bf16",
            "{}: gpu.peak_tflops.bf16 and gpu.peak_tflops.fp16 are both 0; at least one must be > 0", where);
  if (gpu.hbm_gib <= 0) fail_at("gpu.hbm_gib", "{}: gpu.hbm_gib must be > 0", where);
  if (gpu.hbm_bandwidth_gbs <= 0) fail_at("gpu.hbm_bandwidth_gbs", "{}: gpu.hbm_bandwidth_gbs must be > 0", where);
  if (gpus_per_node <= 0) fail_at("gpus_per_node", "{}: gpus_per_node must be a positive integer", where);
  // A domain is whole nodes: a node's GPUs share one NVLink switch fabric, and ranks fill nodes
  // in order, so a domain boundary inside a node would split GPUs that share a host.
  if (nvlink_domain_gpus < 0 || nvlink_domain_gpus % gpus_per_node != 0)
    fail_at("nvlink_domain_gpus",
            "{}: nvlink_domain_gpus is {}; it must be a positive multiple of gpus_per_node ({}): an NVLink "
            "domain is whole nodes",
            where, nvlink_domain_gpus, gpus_per_node);
  // A cluster of a limited size holds whole domains (an NVL72 rack is not sold by the tray).
  if (max_nodes > 0 && (static_cast<long long>(max_nodes) * gpus_per_node) % nvlink_domain_size() != 0)
    fail_at("max_nodes", "{}: max_nodes is {}; {} nodes x {} GPUs do not fill whole NVLink domains of {} GPUs",
            where, max_nodes, max_nodes, gpus_per_node, nvlink_domain_size());
  if (intra_node.bandwidth_gbs <= 0)
    fail_at("intra_node.bandwidth_gbs", "{}: intra_node.bandwidth_gbs must be > 0", where);
  if (inter_node.bandwidth_gbs <= 0)
    fail_at("inter_node.nic_bandwidth_gbs", "{}: inter_node.nic_bandwidth_gbs must be > 0", where);
  if (oversubscription < 1.0)
    fail_at("inter_node.oversubscription", "{}: inter_node.oversubscription is {}; it must be >= 1", where,
            oversubscription);
  // Physical ranges, far beyond any hardware on either side: outside them the simulated times
  // stop being representable (a latency of 1e18 us overflowed the event engine's clock) and
  // the value is a typo, not a cluster.
  const auto within = [&](const char* field, double value, double low, double high, const char* unit) {
    if (!(value >= low && value <= high))
      fail_at(field, "{}: {} is {} {}; it must be between {} and {} {}", where, field, value, unit, low, high, unit);
  };
  within("intra_node.bandwidth_gbs", intra_node.bandwidth_gbs, 1e-3, 1e6, "GB/s");
  within("inter_node.nic_bandwidth_gbs", inter_node.bandwidth_gbs, 1e-3, 1e6, "GB/s");
  within("gpu.hbm_bandwidth_gbs", gpu.hbm_bandwidth_gbs, 1e-3, 1e6, "GB/s");
  within("intra_node.latency_us", intra_node.latency_us, 0, 1e6, "us");
  within("inter_node.latency_us", inter_node.latency_us, 0, 1e6, "us");
  within("inter_node.oversubscription", oversubscription, 1, 1e3, "x");
  for (const auto& [field, peak] : {std::pair{"gpu.peak_tflops.bf16", gpu.peak_tflops_bf16},
                                    {"gpu.peak_tflops.fp16", gpu.peak_tflops_fp16},
                                    {"gpu.peak_tflops.fp8", gpu.peak_tflops_fp8},
                                    {"gpu.peak_tflops.tf32", gpu.peak_tflops_tf32},
                                    {"gpu.peak_tflops.fp32", gpu.peak_tflops_fp32}})
    within(field, peak, 0, 1e6, "TFLOPS");
  within("gpu.hbm_gib", gpu.hbm_gib, 1e-3, 1e6, "GiB");
  if (gpu.compute_capability != 0) within("gpu.compute_capability", gpu.compute_capability, 1, 20, "");
}

void check_gpu_count(long long gpus, const std::string& flag) {
  if (gpus < 1) fail_at(flag, "{} is {}; it must be >= 1", flag, gpus);
  if (gpus > kMaxGpus)
    fail_at(flag, "{} is {}; clustercast simulates clusters of up to {} GPUs (2^20)", flag, gpus, kMaxGpus);
}

ClusterSpec cluster_from_json(const nlohmann::json& doc, const std::string& where) {
  const JsonFields f(doc, where);
  ClusterSpec c;
  c.name = f.string_or("name", "custom");
  const JsonFields g = f.object("gpu");
  c.gpu.name = g.string("name");
  const JsonFields peak = g.object("peak_tflops");
  c.gpu.peak_tflops_bf16 = peak.number("bf16", 0);
  c.gpu.peak_tflops_fp16 = peak.number_or("fp16", 0, c.gpu.peak_tflops_bf16);
  c.gpu.peak_tflops_fp8 = peak.number_or("fp8", 0, 0);
  c.gpu.peak_tflops_tf32 = peak.number_or("tf32", 0, c.gpu.peak_tflops_bf16 / 2);
  c.gpu.peak_tflops_fp32 = peak.number_or("fp32", 0, c.gpu.peak_tflops_bf16 / 16);
  c.gpu.hbm_gib = g.number("hbm_gib", 0);
  c.gpu.hbm_bandwidth_gbs = g.number("hbm_bandwidth_gbs", 0);
  c.gpu.sm_count = static_cast<int>(g.integer("sm_count", 1));
  c.gpu.compute_capability = g.number_or("compute_capability", 1, 0);
  c.gpus_per_node = static_cast<int>(f.integer("gpus_per_node", 1));
  c.nvlink_domain_gpus = static_cast<int>(f.integer_or("nvlink_domain_gpus", 1, 0));
  const JsonFields intra = f.object("intra_node");
  c.intra_node = {intra.string_or("name", "intra-node"), intra.number("bandwidth_gbs", 0),
                  intra.number_or("latency_us", 0, 2.0)};
  const JsonFields inter = f.object("inter_node");
  c.inter_node = {inter.string_or("name", "network"), inter.number("nic_bandwidth_gbs", 0),
                  inter.number_or("latency_us", 0, 5.0)};
  c.nics_per_node = static_cast<int>(inter.integer("nics_per_node", 1));
  c.topology = inter.choice_or("topology", {"rail-optimized", "fat-tree"}, "rail-optimized") == "fat-tree"
                   ? NetworkTopology::FatTree
                   : NetworkTopology::RailOptimized;
  c.oversubscription = inter.number_or("oversubscription", 1.0, 1.0);
  c.max_nodes = static_cast<int>(f.integer_or("max_nodes", 0, 0));
  for (const JsonFields* part : {&peak, &g, &intra, &inter}) part->refuse_unread();
  f.refuse_unread({"description", "sources"});
  c.validate(where);
  return c;
}

nlohmann::json cluster_to_json(const ClusterSpec& c) {
  nlohmann::json doc = {{"name", c.name},
          {"gpu",
           {{"name", c.gpu.name},
            {"peak_tflops",
             {{"bf16", c.gpu.peak_tflops_bf16},
              {"fp16", c.gpu.peak_tflops_fp16},
              {"fp8", c.gpu.peak_tflops_fp8},
              {"tf32", c.gpu.peak_tflops_tf32},
              {"fp32", c.gpu.peak_tflops_fp32}}},
            {"hbm_gib", c.gpu.hbm_gib},
            {"hbm_bandwidth_gbs", c.gpu.hbm_bandwidth_gbs},
            {"sm_count", c.gpu.sm_count}}},
          {"gpus_per_node", c.gpus_per_node},
          {"intra_node",
           {{"name", c.intra_node.name},
            {"bandwidth_gbs", c.intra_node.bandwidth_gbs},
            {"latency_us", c.intra_node.latency_us}}},
          {"inter_node",
           {{"name", c.inter_node.name},
            {"nics_per_node", c.nics_per_node},
            {"nic_bandwidth_gbs", c.inter_node.bandwidth_gbs},
            {"latency_us", c.inter_node.latency_us},
            {"topology", c.topology == NetworkTopology::FatTree ? "fat-tree" : "rail-optimized"},
            {"oversubscription", c.oversubscription}}},
          {"max_nodes", c.max_nodes}};
  // Written only where it differs from the node, so the files of node-sized domains read as before.
  if (c.nvlink_domain_gpus > 0) doc["nvlink_domain_gpus"] = c.nvlink_domain_gpus;
  if (c.gpu.compute_capability > 0) doc["gpu"]["compute_capability"] = c.gpu.compute_capability;
  return doc;
}

}  // namespace cc
