// The clusters of today's MoE runs (dgx-b200, gb200-nvl72, h800) against their datasheets, and
// the NVLink domain as its own tier: on GB200 NVL72 a 72-GPU domain of 4-GPU nodes (trays).
// Expected figures are the published ones, converted in the test (sparse -> dense, rack or
// system totals -> per GPU, bidirectional -> per direction, Gb/s -> GB/s).
#include <gtest/gtest.h>

#include <string>

#include "refusal.h"
#include "sim/analytic_costs.h"
#include "sim/cross_node_traffic.h"
#include "sim/embedded_presets.h"
#include "sim/iteration_costs.h"
#include "sim/memory_model.h"
#include "sim/parallel_layout.h"
#include "sim/presets.h"
#include "sim/search.h"

namespace cc {
namespace {

std::vector<int> ranks_from(int first, int count, int stride = 1) {
  std::vector<int> out;
  for (int i = 0; i < count; ++i) out.push_back(first + i * stride);
  return out;
}

double bytes_of(const CrossNodeTraffic& t, TrafficKind kind) {
  const auto it = t.total.find(kind);
  return it == t.total.end() ? 0 : it->second;
}

TEST(BlackwellPresets, DgxB200IsItsDatasheet) {
  const ClusterSpec c = load_cluster("dgx-b200");
  // HGX B200 datasheet, 8 GPUs, with sparsity: FP8 72 PFLOPS, FP16/BF16 36, TF32 18; FP32 600 TFLOPS.
  EXPECT_DOUBLE_EQ(c.gpu.peak_tflops_fp8, 72000.0 / 8 / 2);
  EXPECT_DOUBLE_EQ(c.gpu.peak_tflops_bf16, 36000.0 / 8 / 2);
  EXPECT_DOUBLE_EQ(c.gpu.peak_tflops_fp16, 36000.0 / 8 / 2);
  EXPECT_DOUBLE_EQ(c.gpu.peak_tflops_tf32, 18000.0 / 8 / 2);
  EXPECT_DOUBLE_EQ(c.gpu.peak_tflops_fp32, 600.0 / 8);
  // DGX B200 user guide: 1,440 GB over 8 GPUs; datasheet: 64 TB/s HBM3e over 8 GPUs.
  EXPECT_DOUBLE_EQ(c.gpu.hbm_gib, 1440.0 / 8);
  EXPECT_DOUBLE_EQ(c.gpu.hbm_bandwidth_gbs, 64000.0 / 8);
  // 8 GPUs; 2 NVSwitches, 14.4 TB/s aggregate = 1.8 TB/s per GPU both ways; 8 ConnectX-7 at 400 Gb/s.
  EXPECT_EQ(c.gpus_per_node, 8);
  EXPECT_EQ(c.nvlink_domain_size(), 8);
  EXPECT_DOUBLE_EQ(c.intra_node.bandwidth_gbs, 14400.0 / 8 / 2);
  EXPECT_EQ(c.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(c.inter_node.bandwidth_gbs, 400.0 / 8);
}

TEST(BlackwellPresets, Gb200Nvl72IsItsDatasheet) {
  const ClusterSpec c = load_cluster("gb200-nvl72");
  // GB200 NVL72 product page, 72 GPUs, with sparsity: FP8 720 PFLOPS, FP16/BF16 360, TF32 180;
  // FP32 5,760 TFLOPS; 13.4 TB HBM3e (186 GB a GPU, as MLPerf's system files list it), 576 TB/s.
  EXPECT_DOUBLE_EQ(c.gpu.peak_tflops_fp8, 720000.0 / 72 / 2);
  EXPECT_DOUBLE_EQ(c.gpu.peak_tflops_bf16, 360000.0 / 72 / 2);
  EXPECT_DOUBLE_EQ(c.gpu.peak_tflops_fp16, 360000.0 / 72 / 2);
  EXPECT_DOUBLE_EQ(c.gpu.peak_tflops_tf32, 180000.0 / 72 / 2);
  EXPECT_DOUBLE_EQ(c.gpu.peak_tflops_fp32, 5760.0 / 72);
  EXPECT_NEAR(c.gpu.hbm_gib, 13400.0 / 72, 0.2);
  EXPECT_DOUBLE_EQ(c.gpu.hbm_bandwidth_gbs, 576000.0 / 72);
  // DGX GB200 user guide: 18 compute trays of 4 GPUs with 4 ConnectX-7 400G NICs each, one
  // 72-GPU NVLink domain; NVLink 130 TB/s over 72 GPUs (1.8 TB/s each, both ways).
  EXPECT_EQ(c.gpus_per_node, 4);
  EXPECT_EQ(c.nvlink_domain_size(), 72);
  EXPECT_EQ(c.nvlink_domain_size() / c.gpus_per_node, 18);
  EXPECT_NEAR(c.intra_node.bandwidth_gbs, 130000.0 / 72 / 2, 3.0);  // 130 is 129.6 rounded
  EXPECT_DOUBLE_EQ(c.intra_node.bandwidth_gbs, 1800.0 / 2);
  EXPECT_EQ(c.nics_per_node, 4);
  EXPECT_DOUBLE_EQ(c.inter_node.bandwidth_gbs, 400.0 / 8);
}

TEST(BlackwellPresets, H800IsH100ComputeWithNVLinkCappedAt400) {
  const ClusterSpec h800 = load_cluster("h800");
  const ClusterSpec h100 = load_cluster("dgx-h100");
  // Same GH100 compute and memory as H100 SXM (Hopper whitepaper: 989.4 / 1978.9 dense).
  EXPECT_DOUBLE_EQ(h800.gpu.peak_tflops_bf16, 989.4);
  EXPECT_DOUBLE_EQ(h800.gpu.peak_tflops_fp8, 1978.9);
  EXPECT_DOUBLE_EQ(h800.gpu.peak_tflops_bf16, h100.gpu.peak_tflops_bf16);
  EXPECT_DOUBLE_EQ(h800.gpu.hbm_gib, 80);
  EXPECT_DOUBLE_EQ(h800.gpu.hbm_bandwidth_gbs, 3350);
  // NVLink 400 GB/s both ways (H100: 900); DeepSeek-V3: 8 GPUs a node, 8 x 400G IB NICs.
  EXPECT_DOUBLE_EQ(h800.intra_node.bandwidth_gbs, 400.0 / 2);
  EXPECT_EQ(h800.gpus_per_node, 8);
  EXPECT_EQ(h800.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(h800.inter_node.bandwidth_gbs, 400.0 / 8);
}

// Every number of every cluster preset names its source (traces/presets/README.md).
void expect_sourced(const nlohmann::json& node, const std::string& path, const nlohmann::json& sources,
                    const std::string& preset) {
  for (const auto& [key, value] : node.items()) {
    const std::string at = path.empty() ? key : path + "." + key;
    if (at == "sources") continue;
    if (value.is_object()) {
      expect_sourced(value, at, sources, preset);
    } else if (value.is_number()) {
      EXPECT_TRUE(sources.contains(at)) << preset << ": " << at << " has no source";
    }
  }
}

TEST(BlackwellPresets, EveryNumberOfTheNewPresetsNamesItsSource) {
  for (const char* name : {"dgx-b200", "gb200-nvl72", "h800"}) {
    const std::string path = std::string("clusters/") + name + ".json";
    bool found = false;
    for (const EmbeddedFile& f : embedded_presets()) {
      if (f.path != path) continue;
      found = true;
      const nlohmann::json doc = nlohmann::json::parse(f.text);
      expect_sourced(doc, "", doc.at("sources"), name);
    }
    EXPECT_TRUE(found) << path;
  }
}

TEST(NvlinkDomain, GroupsOfRackScaleTraysPlaceOnTheDomainNotTheNode) {
  const ClusterSpec nvl72 = load_cluster("gb200-nvl72");
  // TP 16 over ranks 0-15: four trays of 4, one NVLink domain.
  const GroupPlacement tp16 = place_in_nvlink_domains(ranks_from(0, 16), nvl72);
  EXPECT_EQ(tp16.nodes, 1);
  EXPECT_EQ(tp16.per_node, 16);
  // A DP ring over 144 GPUs: two racks of 72.
  const GroupPlacement dp144 = place_in_nvlink_domains(ranks_from(0, 144), nvl72);
  EXPECT_EQ(dp144.nodes, 2);
  EXPECT_EQ(dp144.per_node, 72);
  EXPECT_TRUE(nvl72.same_nvlink_domain(3, 4));    // two trays, one rack
  EXPECT_FALSE(nvl72.same_nvlink_domain(71, 72));  // two racks
  const ClusterSpec b200 = load_cluster("dgx-b200");
  EXPECT_EQ(place_in_nvlink_domains(ranks_from(0, 16), b200).nodes, 2);
}

TEST(NvlinkDomain, TensorParallelInsideTheRackIsPricedAtNVLinkBandwidth) {
  const ClusterSpec nvl72 = load_cluster("gb200-nvl72");
  AnalyticParams p;
  p.nvlink_fraction = 1.0;  // the datasheet link, so the hand count below is exact
  p.collective_launch_s = 0;
  const AnalyticCosts costs(nvl72, Precision::BF16, p);
  const double bytes = 64e6;
  for (int tp : {8, 16, 32}) {
    const CollectiveOp op{"tp", CollectiveKind::AllReduce, Phase::Forward, bytes,
                          place_in_nvlink_domains(ranks_from(0, tp), nvl72)};
    // Ring all-reduce over NVLink: 2(n-1) hops of the NVLink latency, 2(n-1)/n of the buffer at
    // 900 GB/s; no network term although the group spans tp/4 trays.
    const double n = tp;
    const double expected = 2 * (n - 1) * 2e-6 + bytes * 2 * (n - 1) / n / 900e9;
    EXPECT_NEAR(costs.collective(op).seconds, expected, 1e-12) << "TP " << tp;
  }
}

ParallelConfig layout(int tp, int pp, int dp, int global_batch) {
  ParallelConfig c;
  c.tp = tp;
  c.pp = pp;
  c.dp = dp;
  c.global_batch = global_batch;
  return c;
}

TEST(NvlinkDomain, TensorParallelInsideTheRackSendsNothingOverTheNetwork) {
  const ModelSpec m = load_model("gpt3-175b");
  const CrossNodeTraffic nvl72 = cross_node_traffic(m, load_cluster("gb200-nvl72"), layout(16, 1, 1, 1));
  EXPECT_FALSE(nvl72.tp_spans_nodes);
  EXPECT_DOUBLE_EQ(bytes_of(nvl72, TrafficKind::TensorParallel), 0.0);
  EXPECT_TRUE(nvl72.links.empty());
  // The same TP 16 on DGX B200 nodes of 8 crosses the network.
  const CrossNodeTraffic b200 = cross_node_traffic(m, load_cluster("dgx-b200"), layout(16, 1, 1, 1));
  EXPECT_TRUE(b200.tp_spans_nodes);
  EXPECT_GT(bytes_of(b200, TrafficKind::TensorParallel), 0.0);
}

TEST(NvlinkDomain, DataParallelRingOver144GpusCrossesBetweenTheTwoRacks) {
  const ModelSpec m = load_model("gpt3-1.3b");
  const ClusterSpec nvl72 = load_cluster("gb200-nvl72");
  const ParallelConfig c = layout(1, 1, 144, 144);
  const CrossNodeTraffic t = cross_node_traffic(m, nvl72, c);
  // A ring 0 -> 1 -> ... -> 143 -> 0: two of its hops (71 -> 72 and 143 -> 0) leave a rack.
  // Each member sends 2(n-1)/n of the fp32 gradients (4 B a parameter) to the next.
  const double grads = 4.0 * static_cast<double>(stage_parameters(m, c, 0));
  const double per_hop = grads * 2 * 143 / 144;
  EXPECT_NEAR(bytes_of(t, TrafficKind::DataParallel), 2 * per_hop, 1e-6 * per_hop);
  // Booked to the trays whose NICs carry them: tray 17 (ranks 68-71) to tray 18, tray 35 to tray 0.
  ASSERT_EQ(t.links.size(), 2u);
  EXPECT_EQ(t.links[0].node_a, 0);
  EXPECT_EQ(t.links[0].node_b, 35);
  EXPECT_EQ(t.links[1].node_a, 17);
  EXPECT_EQ(t.links[1].node_b, 18);
  // One rack's ring (72 GPUs) stays on NVLink.
  EXPECT_TRUE(cross_node_traffic(m, nvl72, layout(1, 1, 72, 72)).links.empty());
}

// gpt3-175b (96 heads, 96 layers) at TP 16 on 144 GPUs: TP 16 x PP 3 x DP 3.
SearchRequest tp16_on_144(const char* cluster) {
  SearchRequest r;
  r.model = load_model("gpt3-175b");
  r.cluster = load_cluster(cluster);
  r.gpus = r.global_batch = 144;
  r.space.tp = {16};
  return r;
}

constexpr const char* kTpSpansDomains = "TP spans NVLink domains (allow with --allow-cross-node-tp)";

TEST(NvlinkDomain, SearchKeepsTp16InsideTheRackButRefusesItAcrossB200Nodes) {
  const SearchOutcome nvl72 = search(tp16_on_144("gb200-nvl72"));
  EXPECT_EQ(nvl72.excluded.count(kTpSpansDomains), 0u);
  EXPECT_FALSE(nvl72.ranked.empty());

  SearchRequest b200 = tp16_on_144("dgx-b200");
  const Refusal refused = refusal_of([&] { (void)search(b200); });
  EXPECT_NE(refused.message.find("no valid layout"), std::string::npos) << refused.message;
  b200.space.allow_cross_node_tp = true;
  const SearchOutcome allowed = search(b200);
  EXPECT_EQ(allowed.excluded.count(kTpSpansDomains), 0u);
  EXPECT_FALSE(allowed.ranked.empty());
}

nlohmann::json nvl72_json() {
  nlohmann::json doc = cluster_to_json(load_cluster("gb200-nvl72"));
  EXPECT_EQ(doc.at("nvlink_domain_gpus"), 72);
  return doc;
}

TEST(NvlinkDomain, ADomainOfPartNodesIsRefusedNamingIt) {
  nlohmann::json doc = nvl72_json();
  doc["nvlink_domain_gpus"] = 6;  // 1.5 trays of 4
  const Refusal r = refusal_of([&] { cluster_from_json(doc, "cluster.json"); });
  EXPECT_EQ(r.field, "nvlink_domain_gpus");
  EXPECT_NE(r.message.find("nvlink_domain_gpus is 6"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("multiple of gpus_per_node (4)"), std::string::npos) << r.message;
}

TEST(NvlinkDomain, AClusterThatDoesNotFillWholeDomainsIsRefusedNamingIt) {
  nlohmann::json doc = nvl72_json();
  doc["max_nodes"] = 20;  // 80 GPUs: one rack and 8 GPUs of another
  const Refusal r = refusal_of([&] { cluster_from_json(doc, "cluster.json"); });
  EXPECT_EQ(r.field, "max_nodes");
  EXPECT_NE(r.message.find("max_nodes is 20"), std::string::npos) << r.message;
  doc["max_nodes"] = 36;  // two racks
  EXPECT_EQ(cluster_from_json(doc, "cluster.json").max_nodes, 36);
}

TEST(NvlinkDomain, ADomainStatedAsTheNodePredictsExactlyAsNoneStated) {
  // Every preset but gb200-nvl72 leaves the domain to the node; stating it changes nothing.
  const ClusterSpec plain = load_cluster("dgx-h100");
  ClusterSpec stated = plain;
  stated.nvlink_domain_gpus = 8;
  EXPECT_EQ(plain.nvlink_domain_gpus, 0);
  EXPECT_FALSE(cluster_to_json(plain).contains("nvlink_domain_gpus"));
  const ModelSpec m = load_model("gpt3-175b");
  const ParallelConfig c = layout(8, 8, 4, 64);
  const AnalyticCosts a(plain, c.precision), b(stated, c.precision);
  EXPECT_EQ(price_iteration(m, plain, c, a).grad_reduce_s, price_iteration(m, stated, c, b).grad_reduce_s);
  EXPECT_EQ(cross_node_traffic(m, plain, c).busiest_node_bytes, cross_node_traffic(m, stated, c).busiest_node_bytes);
}

}  // namespace
}  // namespace cc
