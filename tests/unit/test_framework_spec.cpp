#include <gtest/gtest.h>

#include "sim/calibration.h"
#include "sim/error.h"
#include "sim/framework_spec.h"
#include "sim/layout_validation.h"
#include "sim/parallel_config.h"
#include "sim/presets.h"
#include "sim/step_plan.h"

namespace cc {
namespace {

TEST(FrameworkSpec, PresetsNameTheStacks) {
  EXPECT_EQ(framework_preset_names(),
            (std::vector<std::string>{"clustercast-engine", "megatron-2021", "megatron-2022", "megatron-core", "megatron-core-ci",
                                      "megatron-deepspeed", "nemo"}));
  EXPECT_TRUE(load_framework("megatron-core").blocking_p2p);
  // Our engine posts its pipeline sends without waiting (engine/pipeline_runner_impl.h).
  EXPECT_FALSE(load_framework("clustercast-engine").blocking_p2p);
  // Megatron-Core's --attention-backend auto keeps no s x s scores; the papers' runs did.
  EXPECT_TRUE(load_framework("megatron-core").flash_attention);
  EXPECT_FALSE(load_framework("megatron-2021").flash_attention);
  EXPECT_FALSE(load_framework("clustercast-engine").flash_attention);
  EXPECT_EQ(load_framework("megatron-deepspeed").layer_partition, LayerPartition::DeepSpeedUniform);
  // NeMo 2's MegatronStrategy default DDP config overlaps both; Megatron-LM's flags are off.
  EXPECT_TRUE(load_framework("nemo").overlap_grad_reduce);
  EXPECT_FALSE(load_framework("megatron-core").overlap_grad_reduce);
}

TEST(FrameworkSpec, UnknownStackIsRefusedByName) {
  try {
    load_framework("deepspeed-zero");
    FAIL() << "no error";
  } catch (const SpecError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("'deepspeed-zero'"), std::string::npos) << m;
    EXPECT_NE(m.find("megatron-core"), std::string::npos) << m;
  }
}

TEST(FrameworkSpec, DeepSpeedSpreadsSeventyLayersOverTwelveStages) {
  // BLOOM-176B's layout: 70 layers on 12 stages. DeepSpeed's partition_uniform gives the
  // first 70 mod 12 = 10 stages ceil(70/12) = 6 layers and the last two floor = 5.
  ModelSpec m = load_model("gpt3-175b");
  m.num_layers = 70;
  ParallelConfig c;
  c.tp = 4;
  c.pp = 12;
  c.dp = 8;
  c.global_batch = 2048;
  c.framework = "megatron-deepspeed";
  validate(c, m, load_cluster("dgx-a100-80gb"), 384);
  std::vector<int> expected(12, 6);
  expected[10] = expected[11] = 5;
  std::vector<int> layers;
  for (int s = 0; s < c.pp; ++s) layers.push_back(stage_layer_count(m, c, s));
  EXPECT_EQ(layers, expected);
  // Megatron-LM refuses the same split.
  c.framework = "megatron-core";
  EXPECT_THROW(validate(c, m, load_cluster("dgx-a100-80gb"), 384), SpecError);
}

TEST(Calibration, GenerationsFollowTheGpuName) {
  EXPECT_EQ(gpu_generation(load_cluster("dgx-a100-80gb").gpu), "ampere");
  EXPECT_EQ(gpu_generation(load_cluster("dgx-h100").gpu), "hopper");
  EXPECT_EQ(gpu_generation(load_cluster("h200").gpu), "hopper");
}

TEST(Calibration, OverridesApplyDefaultsThenGenerationThenStack) {
  Calibration c;
  c.defaults.gemm_peak_fraction = 0.8;
  c.defaults.host_launch_s = 1e-6;
  c.generations["hopper"]["gemm_peak_fraction"] = 0.7;
  c.frameworks["nemo"]["host_launch_s"] = 2e-6;
  const GpuSpec h100 = load_cluster("dgx-h100").gpu, a100 = load_cluster("dgx-a100-80gb").gpu;
  EXPECT_DOUBLE_EQ(c.params_for(a100, "nemo").gemm_peak_fraction, 0.8);
  EXPECT_DOUBLE_EQ(c.params_for(h100, "nemo").gemm_peak_fraction, 0.7);
  EXPECT_DOUBLE_EQ(c.params_for(h100, "nemo").host_launch_s, 2e-6);
  EXPECT_DOUBLE_EQ(c.params_for(h100, "megatron-core").host_launch_s, 1e-6);
  // The file form round-trips.
  const Calibration back = calibration_from_json(calibration_to_json(c), "test");
  EXPECT_DOUBLE_EQ(back.params_for(h100, "nemo").gemm_peak_fraction, 0.7);
  EXPECT_DOUBLE_EQ(back.params_for(h100, "nemo").host_launch_s, 2e-6);
}

TEST(Calibration, WrongVersionOrUnknownParameterIsRefused) {
  nlohmann::json j = calibration_to_json(Calibration{});
  j["version"] = 99;
  EXPECT_THROW(calibration_from_json(j, "test"), SpecError);
  j = calibration_to_json(Calibration{});
  j["generations"]["hopper"]["gemm_speed"] = 1.0;
  EXPECT_THROW(calibration_from_json(j, "test"), SpecError);
}

}  // namespace
}  // namespace cc
