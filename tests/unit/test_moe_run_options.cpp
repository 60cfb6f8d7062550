// The run-time switches of MoE layers (Megatron-LM's --moe-* flags that are not the model's
// shape, and clustercast's own --moe-load-imbalance): the load imbalance each setting implies,
// the combinations Megatron-Core refuses, each refused by its flag, and how Megatron argument
// files, NeMo YAML and our JSON carry them.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "interop/layout_files.h"
#include "sim/layout_validation.h"
#include "sim/parallel_config.h"
#include "sim/presets.h"
#include "refusal.h"
#include "test_layout_files_support.h"

namespace cc {
namespace {

// 64 GPUs as TP 1 x PP 1 x DP 64 with EP 8: a layout every MoE preset folds.
ParallelConfig ep8_on_64() {
  ParallelConfig c = layout_test::layout(1, 1, 64, 1, 64);
  c.ep = 8;
  return c;
}

TEST(MoeLoadImbalance, EachSettingImpliesItsOwn) {
  ParallelConfig c = ep8_on_64();
  // Dropless, not given: FEPLB's 18.6% of GPU time lost to the slowest rank, 1 / (1 - 0.186).
  EXPECT_NEAR(moe_load_imbalance(c), 1.0 / (1.0 - 0.186), 0.005);
  c.moe.load_imbalance = 1.5;
  EXPECT_DOUBLE_EQ(moe_load_imbalance(c), 1.5);
  c.moe.capacity_factor = 1.2;  // no expert takes more than 1.2 x its share: the rest drops
  EXPECT_DOUBLE_EQ(moe_load_imbalance(c), 1.2);
  c.moe.load_imbalance.reset();
  c.moe.pad_to_capacity = true;  // every expert runs its full capacity: all ranks alike
  EXPECT_DOUBLE_EQ(moe_load_imbalance(c), 1.0);
  ParallelConfig one = ep8_on_64();
  one.ep = 1;  // one rank holds every expert: max = mean
  one.moe.load_imbalance = 1.5;
  EXPECT_DOUBLE_EQ(moe_load_imbalance(one), 1.0);
}

// The flag a layout is refused for, on `model` with `change` applied to ep8_on_64().
template <typename Change>
std::string refused_flag(const std::string& model, Change&& change) {
  ParallelConfig c = ep8_on_64();
  change(c);
  return refusal_of([&] { validate_layout(c, load_model(model), c.gpus()); }).field;
}

TEST(MoeRunOptions, MegatronCoresRefusalsEachNameTheirFlag) {
  // A dense model has no router: every MoE switch on it is named.
  EXPECT_EQ(refused_flag("llama3-8b", [](ParallelConfig& c) {
    c.ep = 1;
    c.moe.grouped_gemm = true;
  }),
            "--moe-grouped-gemm");
  EXPECT_EQ(refused_flag("llama3-8b", [](ParallelConfig& c) {
    c.ep = 1;
    c.moe.load_imbalance = 1.1;
  }),
            "--moe-load-imbalance");
  EXPECT_EQ(refused_flag("mixtral-8x7b", [](ParallelConfig& c) { c.moe.capacity_factor = 0; }),
            "--moe-expert-capacity-factor");
  EXPECT_EQ(refused_flag("mixtral-8x7b", [](ParallelConfig& c) { c.moe.pad_to_capacity = true; }),
            "--moe-pad-expert-input-to-capacity");
  EXPECT_EQ(refused_flag("mixtral-8x7b",
                         [](ParallelConfig& c) {
                           c.moe.capacity_factor = 1.0;
                           c.moe.load_balancing = LoadBalancing::Sinkhorn;
                         }),
            "--moe-router-load-balancing-type");
  EXPECT_EQ(refused_flag("mixtral-8x7b", [](ParallelConfig& c) { c.moe.load_imbalance = 0.9; }),
            "--moe-load-imbalance");
  // Mixtral has no shared expert; DeepSeek-V3's needs the all-to-all dispatcher to overlap.
  EXPECT_EQ(refused_flag("mixtral-8x7b",
                         [](ParallelConfig& c) {
                           c.moe.shared_expert_overlap = true;
                           c.moe.dispatcher = TokenDispatcher::AllToAll;
                         }),
            "--moe-shared-expert-overlap");
  EXPECT_EQ(refused_flag("deepseek-v3", [](ParallelConfig& c) { c.moe.shared_expert_overlap = true; }),
            "--moe-shared-expert-overlap");
  // The expert-parallel overlap: EP > 1, all-to-all, interleaved stages under PP, no full recompute.
  auto overlap = [](ParallelConfig& c) {
    c.moe.overlap_ep_comm = true;
    c.moe.dispatcher = TokenDispatcher::AllToAll;
  };
  const std::function<void(ParallelConfig&)> breaks_overlap[] = {
      [](ParallelConfig& c) { c.ep = 1; },
      [](ParallelConfig& c) { c.moe.dispatcher = TokenDispatcher::AllGather; },
      [](ParallelConfig& c) {  // PP 2 without interleaving
        c.pp = 2;
        c.dp = 32;
        c.global_batch = 32;
      },
      [](ParallelConfig& c) { c.recompute = RecomputeGranularity::Full; },
  };
  for (const auto& breaks : breaks_overlap)
    EXPECT_EQ(refused_flag("mixtral-8x7b",
                           [&](ParallelConfig& c) {
                             overlap(c);
                             breaks(c);
                           }),
              "--overlap-moe-expert-parallel-comm");
  // Every switch accepted: the layout is valid (MoE layers are priced).
  EXPECT_EQ(refused_flag("mixtral-8x7b",
                         [&](ParallelConfig& c) {
                           overlap(c);
                           c.moe.capacity_factor = 1.25;
                         }),
            "");
}

TEST(MoeRunOptions, NcclEpIsRefusedByNameAndUnknownNamesListTheValid) {
  Refusal r = refusal_of([] { token_dispatcher_from("deepep", "f"); });
  EXPECT_EQ(r.field, "--moe-token-dispatcher-type");
  EXPECT_NE(r.message.find("'deepep' is not known; valid: alltoall, allgather, flex"), std::string::npos) << r.message;
  r = refusal_of([] { flex_backend_from("ncclep", "f"); });
  EXPECT_EQ(r.field, "--moe-flex-dispatcher-backend");
  EXPECT_NE(r.message.find("ncclep (NCCL EP through Transformer Engine) is not modelled; valid: deepep, hybridep"),
            std::string::npos)
      << r.message;
  r = refusal_of([] { load_balancing_from("expert_choice", "f"); });
  EXPECT_NE(r.message.find("valid: aux_loss, seq_aux_loss, global_aux_loss, sinkhorn, none"), std::string::npos);
  EXPECT_EQ(refusal_of([] { token_drop_policy_from("random", "f"); }).field, "--moe-token-drop-policy");
}

// The options every reader below should arrive at.
MoeRunOptions all_set() {
  MoeRunOptions o;
  o.dispatcher = TokenDispatcher::AllToAll;
  o.grouped_gemm = true;
  o.capacity_factor = 1.25;
  o.pad_to_capacity = true;
  o.load_balancing = LoadBalancing::SeqAuxLoss;
  o.aux_loss_coeff = 1e-3;
  o.drop_policy = TokenDropPolicy::Position;
  o.shared_expert_overlap = true;
  o.overlap_ep_comm = true;
  return o;
}

void expect_ep8_etp1_all_set(const ParallelConfig& c) {
  EXPECT_TRUE(c.moe == all_set());
  EXPECT_EQ(c.ep, 8);
  EXPECT_EQ(c.etp, 1);
}

TEST(MoeRunOptions, MegatronArgumentsAndNemoYamlCarryThem) {
  const LayoutFile args = parse_layout_text(
      "--tensor-model-parallel-size 1 --expert-model-parallel-size 8 --expert-tensor-parallel-size 1\n"
      "--moe-token-dispatcher-type alltoall --moe-grouped-gemm --moe-expert-capacity-factor 1.25\n"
      "--moe-pad-expert-input-to-capacity --moe-router-load-balancing-type seq_aux_loss --moe-aux-loss-coeff 1e-3\n"
      "--moe-token-drop-policy position --moe-shared-expert-overlap --overlap-moe-expert-parallel-comm\n",
      "f.args");
  expect_ep8_etp1_all_set(args.config);
  const LayoutFile yaml = parse_layout_text(
      "trainer:\n  devices: 8\nmodel:\n  tensor_model_parallel_size: 1\n  pipeline_model_parallel_size: 1\n"
      "  expert_model_parallel_size: 8\n  expert_tensor_parallel_size: 1\n"
      "  moe_token_dispatcher_type: alltoall\n  moe_grouped_gemm: true\n  moe_expert_capacity_factor: 1.25\n"
      "  moe_pad_expert_input_to_capacity: true\n  moe_router_load_balancing_type: seq_aux_loss\n"
      "  moe_aux_loss_coeff: 0.001\n  moe_token_drop_policy: position\n  moe_shared_expert_overlap: true\n"
      "  overlap_moe_expert_parallel_comm: true\n",
      "f.yaml");
  expect_ep8_etp1_all_set(yaml.config);
  // Several losses at once (Megatron-LM takes lists) are refused by name, not read as the first.
  EXPECT_EQ(refusal_of([] { parse_layout_text("--moe-router-load-balancing-type aux_loss seq_aux_loss\n", "f"); })
                .field,
            "--moe-router-load-balancing-type");
}

TEST(MoeRunOptions, LoadImbalanceIsOursSoNeverInAMegatronArgumentFile) {
  const Refusal r = refusal_of([] { parse_layout_text("--moe-load-imbalance 1.2\n", "f.args"); });
  EXPECT_NE(r.message.find("--moe-load-imbalance (clustercast's own flag, not Megatron-LM's"), std::string::npos)
      << r.message;
}

TEST(MoeRunOptions, OurJsonRoundTripsThemAndADenseConfigWritesNone) {
  ParallelConfig c = ep8_on_64();
  c.moe = all_set();
  c.moe.load_imbalance = 1.1;
  const ParallelConfig back = config_from_json(config_to_json(c), "c.json");
  EXPECT_TRUE(back.moe == c.moe);
  const nlohmann::json dense = config_to_json(ParallelConfig{});
  for (const char* key : {"moe_token_dispatcher_type", "moe_grouped_gemm", "moe_load_imbalance"})
    EXPECT_FALSE(dense.contains(key)) << key;
}

}  // namespace
}  // namespace cc
