// The presets of systems users name (BLOOM, MT-NLG, Turing-NLG, Azure NDv2): each loads, and
// each model's parameter count is the figure its authors published (sources in the preset files
// and traces/presets/README.md).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "sim/analytic_costs.h"
#include "sim/error.h"
#include "sim/layout_validation.h"
#include "sim/parallel_config.h"
#include "sim/presets.h"
#include "sim/simulator.h"

namespace cc {
namespace {

TEST(Presets, Bloom176bHasItsPublishedSize) {
  const ModelSpec m = load_model("bloom-176b");
  EXPECT_EQ(m.position_embedding, PositionEmbedding::Alibi);
  EXPECT_EQ(m.vocab_size, 250880);
  EXPECT_EQ(m.num_layers, 70);
  // bigscience/bloom model card: 176,247,271,424 parameters. The spec leaves out only the
  // embedding LayerNorm (2 x 14336), so the count is within a few parts in 10^7.
  EXPECT_NEAR(static_cast<double>(m.total_parameters()) / 176'247'271'424.0, 1.0, 1e-6);
}

TEST(Presets, MtNlg530bIsGpt530bUnderItsPublishedName) {
  const ModelSpec named = load_model("mt-nlg-530b");
  const ModelSpec shape = load_model("gpt-530b");
  EXPECT_EQ(named.name, "mt-nlg-530b");
  EXPECT_EQ(named.total_parameters(), shape.total_parameters());
  EXPECT_EQ(named.num_layers, 105);
  // Smith et al. 2022 publish "530B": the count rounds to it at that precision (±0.5B).
  EXPECT_LT(std::abs(static_cast<double>(named.total_parameters()) - 530e9), 0.5e9) << named.total_parameters();
}

TEST(Presets, TuringNlg17bHasItsPublishedSize) {
  const ModelSpec m = load_model("turing-nlg-17b");
  EXPECT_EQ(m.num_layers, 78);
  EXPECT_EQ(m.hidden_size, 4256);
  // Microsoft's announcement says "17 billion": rounds to it at that precision (±0.5B).
  EXPECT_LT(std::abs(static_cast<double>(m.total_parameters()) - 17e9), 0.5e9) << m.total_parameters();
}

TEST(Presets, MixturesOfExpertsHaveTheirPublishedSizes) {
  // Mixtral 8x7B: the issue's exact figures (tests/reference/hf-configs/README.md).
  const ModelSpec mixtral = load_model("mixtral-8x7b");
  EXPECT_EQ(mixtral.total_parameters(), 46'702'792'704);
  EXPECT_EQ(mixtral.active_parameters(), 12'879'925'248);
  // DeepSeek-V3 (arXiv 2412.19437): 671B total and 37B activated without its MTP layer.
  ModelSpec v3 = load_model("deepseek-v3");
  EXPECT_EQ(v3.moe_layer_count(), 58);
  EXPECT_EQ(v3.mtp_num_layers, 1);
  v3.mtp_num_layers = 0;
  EXPECT_NEAR(static_cast<double>(v3.total_parameters()) / 671e9, 1.0, 0.001);
  EXPECT_NEAR(static_cast<double>(v3.active_parameters()) / 37e9, 1.0, 0.02);
  // Qwen3 model cards: 30.5B / 3.3B and 235B / 22B.
  EXPECT_NEAR(static_cast<double>(load_model("qwen3-30b-a3b").total_parameters()) / 30.5e9, 1.0, 0.005);
  EXPECT_NEAR(static_cast<double>(load_model("qwen3-30b-a3b").active_parameters()) / 3.3e9, 1.0, 0.02);
  EXPECT_NEAR(static_cast<double>(load_model("qwen3-235b-a22b").total_parameters()) / 235e9, 1.0, 0.005);
  EXPECT_NEAR(static_cast<double>(load_model("qwen3-235b-a22b").active_parameters()) / 22e9, 1.0, 0.01);
}

TEST(Presets, AzureNdv2RefusesBf16AndRunsFp16) {
  const ClusterSpec cluster = load_cluster("azure-ndv2");
  EXPECT_EQ(cluster.gpu.name, "V100-SXM2-32GB");
  EXPECT_EQ(cluster.gpu.peak_flops(Precision::BF16), 0.0);
  EXPECT_DOUBLE_EQ(cluster.gpu.peak_flops(Precision::FP16), 125e12);
  EXPECT_EQ(cluster.nics_per_node, 1);
  const ModelSpec m = load_model("gpt3-1.3b");
  ParallelConfig c;
  c.tp = 8;
  c.global_batch = 8;
  c.precision = Precision::BF16;
  try {
    validate(c, m, cluster, 8);
    ADD_FAILURE() << "bf16 on V100 was accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("precision bf16 is not supported by V100-SXM2-32GB"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("--precision fp16 or fp32"), std::string::npos) << e.what();
  }
  c.precision = Precision::FP16;
  const AnalyticCosts costs(cluster, Precision::FP16);
  const SimResult r = simulate(m, cluster, c, costs);
  EXPECT_GT(r.iteration_time_s, 0);
  EXPECT_GT(r.tflops_per_gpu, 0);
  EXPECT_LT(r.tflops_per_gpu, 125);  // never above the fp16 Tensor Core peak
}

TEST(Presets, AClusterNeedsOneSixteenBitFormat) {
  nlohmann::json doc = nlohmann::json::parse(R"({"name": "x", "gpu": {"name": "G", "peak_tflops": {"bf16": 0,
    "fp16": 0}, "hbm_gib": 16, "hbm_bandwidth_gbs": 900, "sm_count": 80}, "gpus_per_node": 8,
    "intra_node": {"bandwidth_gbs": 150}, "inter_node": {"nics_per_node": 1, "nic_bandwidth_gbs": 12.5}})");
  EXPECT_THROW(cluster_from_json(doc, "x"), SpecError);
  doc["gpu"]["peak_tflops"]["fp16"] = 125;
  EXPECT_NO_THROW(cluster_from_json(doc, "x"));
}

}  // namespace
}  // namespace cc
