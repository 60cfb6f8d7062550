// MoE layers priced: the ops of an MoE layer (router, dispatch and combine on the expert
// groups, the local experts' GEMMs, shared experts), their overlap only where Megatron overlaps
// them, expert parameters sharded by EP x ETP with their optimizer state over EDP, and each
// activation term of an MoE block equal to a hand count (issue 31, acceptance 2).
#include <gtest/gtest.h>

#include <string>

#include "sim/analytic_costs.h"
#include "sim/iteration_costs.h"
#include "sim/layer_program.h"
#include "sim/layout_validation.h"
#include "sim/memory_model.h"
#include "sim/presets.h"
#include "sim/step_plan.h"
#include "refusal.h"
#include "program_steps.h"
#include "small_models.h"

namespace cc {
namespace {

// A small MoE model whose every count is easy by hand (small_models.h; tied vocabulary): 8
// experts of FFN 32, top-2, one shared expert of 16.
ModelSpec small_moe() {
  ModelSpec m = test::small_base("small-moe");
  m.moe.num_experts = 8;
  m.moe.router_topk = 2;
  m.moe.ffn_hidden_size = 32;
  m.moe.shared_expert_ffn_hidden_size = 16;
  return m;
}

// TP 1, PP 1, DP 2, EP 2 (so EDP 1), micro batch 1, tokens evenly routed (imbalance 1).
ParallelConfig ep2() {
  ParallelConfig c;
  c.dp = 2;
  c.ep = 2;
  c.micro_batch = 1;
  c.global_batch = 2;
  c.moe.load_imbalance = 1.0;
  return c;
}

using test::find_step;

TEST(MoePricing, ExpertParametersAreShardedByEpAndEtp) {
  const ModelSpec m = small_moe();
  const ParallelConfig c = ep2();
  // One expert: SwiGLU's three 64 x 32 matrices = 6,144; 2 MoE layers x 8/2 local experts.
  EXPECT_EQ(stage_expert_parameters(m, c, 0), 2 * 4 * 6144);
  // A layer's other parameters: Q,K,V 64 x 192 + projection 64 x 64 = 16,384, two RMSNorms 128,
  // the router 64 x 8 = 512, the shared expert 3 x 64 x 16 = 3,072: 20,096. Plus the tied
  // embedding 128 x 64 and the final norm 64.
  EXPECT_EQ(stage_parameters(m, c, 0), 2 * (20096 + 4 * 6144) + 8192 + 64);
  ParallelConfig etp2 = c;
  etp2.dp = 4;
  etp2.global_batch = 4;
  etp2.etp = 2;  // each expert's FFN halved over two ranks
  EXPECT_EQ(stage_expert_parameters(m, etp2, 0), 2 * 4 * 6144 / 2);
}

TEST(MoePricing, ExpertOptimizerStateIsShardedOverExpertDataParallel) {
  const ModelSpec m = small_moe();
  ParallelConfig c = ep2();
  c.distributed_optimizer = true;
  // DP 2 shards the dense part; EDP = TP x CP x DP / (EP x ETP) = 2 / 2 = 1 leaves experts whole.
  const double dense = 2 * 20096 + 8192 + 64, experts = 2 * 4 * 6144;
  EXPECT_DOUBLE_EQ(memory_model(m, c).stages[0].bytes.optimizer, 12.0 * (dense / 2 + experts / 1));
}

TEST(MoePricing, TheRoutedExpertsShareOfTheStateIsReportedApart) {
  const ModelSpec m = small_moe();
  ParallelConfig c = ep2();
  c.dp = 4;
  c.global_batch = 4;
  c.distributed_optimizer = true;
  // EDP = 4 / 2 = 2: each rank keeps its 2 x 4 x 6,144 expert parameters' bf16 weights (2 B) and
  // fp32 gradients (4 B), and half their optimizer state (12 B).
  const double experts = 2 * 4 * 6144;
  const MemoryBreakdown b = memory_model(m, c).stages[0].bytes;
  EXPECT_DOUBLE_EQ(b.experts, experts * (2 + 4) + experts / 2 * 12);
  EXPECT_LT(b.experts, b.weights + b.gradients + b.optimizer);
  // A dense model has none.
  EXPECT_EQ(memory_model(test::small_base("dense"), ParallelConfig{}).stages[0].bytes.experts, 0.0);
}

TEST(MoePricing, EachActivationTermOfAnMoeBlockEqualsItsHandCount) {
  const ModelSpec m = small_moe();
  const ParallelConfig c = ep2();
  // R = 16 region tokens, e = 2 bytes, E = 8, top-2, rows X = 16 x 2 = 32, expert FFN f' = 32:
  //   router  16 x (2 x 64 + 5 x 8)            = 2,688
  //   routed  32 x 2 x (64 + 3 x 32)           = 10,240
  //   combine 16 x 2 x 2 x 64                  = 4,096
  //   shared  16 x 2 x 3 x 16                  = 1,536
  EXPECT_DOUBLE_EQ(moe_block_activation_bytes(m, c), 2688 + 10240 + 4096 + 1536);
  ParallelConfig busy = c;
  busy.moe.load_imbalance = 1.5;  // the busiest rank holds 48 rows: routed 48 x 320 = 15,360
  EXPECT_DOUBLE_EQ(moe_block_activation_bytes(m, busy), 2688 + 15360 + 4096 + 1536);
}

TEST(MoePricing, AllToAllDispatchSendsTopkCopiesOverTheEpGroup) {
  ParallelConfig c = ep2();
  c.moe.dispatcher = TokenDispatcher::AllToAll;
  c.moe.grouped_gemm = true;
  const StepPlan plan = step_plan(small_moe(), c);
  const OpProgram& f = plan.ops.moe_forward;
  const ProgramStep* dispatch = find_step(f, "moe.dispatch_all_to_all");
  ASSERT_NE(dispatch, nullptr);
  EXPECT_EQ(dispatch->comm.kind, CollectiveKind::AllToAll);
  EXPECT_EQ(dispatch->comm.runs_on, CommGroup::Expert);
  EXPECT_EQ(dispatch->comm.group.size, 2);
  EXPECT_DOUBLE_EQ(dispatch->comm.bytes, 2.0 * 16 * 2 * 64);  // e x tokens x top-k x h
  EXPECT_EQ(dispatch->hides_behind, -1);                      // blocking without an overlap flag
  ASSERT_NE(find_step(f, "moe.combine_all_to_all"), nullptr);
  EXPECT_EQ(find_step(f, "moe.dispatch_etp_all_gather"), nullptr);  // ETP 1: nothing to gather
  // The grouped GEMM: 4 local experts of 32 / 4 = 8 rows, FC1 64 -> 2 x 32 (SwiGLU).
  const ProgramStep* fc1 = find_step(f, "expert_fc1");
  ASSERT_NE(fc1, nullptr);
  EXPECT_EQ(fc1->op.kind, OpKind::BatchedGemm);
  EXPECT_EQ(fc1->op.batch, 4);
  EXPECT_EQ(fc1->op.m, 8);
  EXPECT_EQ(fc1->op.n, 64);
  EXPECT_EQ(fc1->op.k, 64);
  // Transformer Engine's GroupedLinear launches one GEMM per local expert, so the host pays
  // four launches for it, and one for a plain GEMM.
  EXPECT_EQ(fc1->op.launches, 4);
  const AnalyticCosts costs(load_cluster("dgx-h100"), Precision::BF16, [] {
    AnalyticParams p;
    p.host_launch_s = 1e-5;
    return p;
  }());
  EXPECT_DOUBLE_EQ(costs.compute(fc1->op).host_s, 4e-5);
  EXPECT_DOUBLE_EQ(costs.compute(find_step(f, "router")->op).host_s, 1e-5);
  // The dense program is untouched by the MoE fields.
  EXPECT_EQ(find_step(plan.ops.forward, "router"), nullptr);
  ASSERT_NE(find_step(plan.ops.forward, "fc1"), nullptr);
}

TEST(MoePricing, AllGatherDispatchGathersEveryTokenOverEtpTimesEp) {
  const StepPlan plan = step_plan(small_moe(), ep2());  // allgather: Megatron-LM's default
  const ProgramStep* gather = find_step(plan.ops.moe_forward, "moe.dispatch_all_gather");
  ASSERT_NE(gather, nullptr);
  EXPECT_EQ(gather->comm.group.size, 2);
  EXPECT_DOUBLE_EQ(gather->comm.bytes, 2.0 * 16 * 64 * 2);  // e x tokens x h x (EP x ETP)
  ASSERT_NE(find_step(plan.ops.moe_forward, "moe.combine_reduce_scatter"), nullptr);
  // Without --moe-grouped-gemm each local expert runs its own GEMM (SequentialMLP).
  int fc1s = 0;
  for (const ProgramStep& s : plan.ops.moe_forward) fc1s += !s.is_collective && std::string(s.op.name) == "expert_fc1";
  EXPECT_EQ(fc1s, 4);
}

TEST(MoePricing, ExpertGemmFlopsFollowTheRoutedTokens) {
  ParallelConfig c = ep2();
  c.moe.grouped_gemm = true;
  const StepPlan plan = step_plan(small_moe(), c);
  double expert_flops = 0;
  for (const ProgramStep& s : plan.ops.moe_forward)
    if (!s.is_collective && std::string(s.op.name).rfind("expert_fc", 0) == 0) expert_flops += s.op.flops;
  // 32 routed rows x 2 x h x (2f + f) for FC1 and FC2: 2 x 32 x 64 x 96.
  EXPECT_DOUBLE_EQ(expert_flops, 2.0 * 32 * 64 * 96);
}

TEST(MoePricing, DispatchOverlapsOnlyUnderItsFlags) {
  ParallelConfig c = ep2();
  c.moe.dispatcher = TokenDispatcher::AllToAll;
  c.moe.shared_expert_overlap = true;
  const OpProgram f = step_plan(small_moe(), c).ops.moe_forward;
  const ProgramStep* dispatch = find_step(f, "moe.dispatch_all_to_all");
  ASSERT_NE(dispatch, nullptr);
  ASSERT_GE(dispatch->hides_behind, 0);
  EXPECT_EQ(std::string(f[static_cast<std::size_t>(dispatch->hides_behind)].op.name), "shared_fc1");
}

// Megatron-Core's combined 1F1B (model_chunk_schedule_plan.py): dispatches beside the expert
// MLPs, combines beside the attention blocks; each pass's own steps stand in for its partner's.
TEST(MoePricing, EpOverlapHidesDispatchBehindTheExpertMlpAndCombineBehindAttention) {
  ParallelConfig c = ep2();
  c.moe.dispatcher = TokenDispatcher::AllToAll;
  c.moe.overlap_ep_comm = true;
  const StepPlan plan = step_plan(small_moe(), c);
  auto span = [](const OpProgram& p, const std::string& name) {
    const ProgramStep* s = find_step(p, name);
    EXPECT_NE(s, nullptr) << name;
    if (!s) return std::pair<std::string, std::string>{};
    return std::pair<std::string, std::string>{p[static_cast<std::size_t>(s->hides_behind)].op.name,
                                               p[static_cast<std::size_t>(s->hides_through)].op.name};
  };
  using Names = std::pair<std::string, std::string>;
  const OpProgram& f = plan.ops.moe_forward;
  EXPECT_EQ(span(f, "moe.dispatch_all_to_all"), (Names{"expert_fc1", "expert_fc2"}));
  EXPECT_EQ(span(f, "moe.combine_all_to_all"), (Names{"input_norm", "post_attention_norm"}));
  const OpProgram& b = plan.ops.moe_backward;
  EXPECT_EQ(span(b, "moe.dispatch_grad_all_to_all"), (Names{"expert_fc2.dgrad", "expert_fc1.wgrad"}));
  EXPECT_EQ(span(b, "moe.combine_grad_all_to_all"), (Names{"bias_dropout_add.backward", "input_norm.backward"}));
}

// A collective over a span is hidden by the span's kernels together: 10 ms behind 3 + 4 ms
// leaves 3 ms exposed.
TEST(MoePricing, ACollectiveOverASpanIsHiddenByAllOfIt) {
  struct Fixed : CostSource {
    OpCost compute(const ComputeOp& op) const override { return {op.flops * 1e-3, false}; }
    OpCost collective(const CollectiveOp&) const override { return {10e-3, false}; }
    std::string describe() const override { return "fixed"; }
  };
  OpProgram p(3);
  p[0].op.flops = 3;
  p[1].op.flops = 4;
  p[2].is_collective = true;
  p[2].comm.runs_on = CommGroup::Expert;
  p[2].hides_behind = 0;
  p[2].hides_through = 1;
  EXPECT_NEAR(cost_of(p, Fixed{}).ep_comm_exposed_s, 3e-3, 1e-15);
  p[2].hides_through = -1;  // the first kernel alone
  EXPECT_NEAR(cost_of(p, Fixed{}).ep_comm_exposed_s, 7e-3, 1e-15);
}

TEST(MoePricing, EpCommunicationIsItsOwnExposedTerm) {
  const ModelSpec m = small_moe();
  ParallelConfig c = ep2();
  c.moe.dispatcher = TokenDispatcher::AllToAll;
  const ClusterSpec cluster = load_cluster("dgx-h100");
  const AnalyticCosts costs(cluster, c.precision);
  const LayerCosts l = price_layers(m, cluster, c, costs);
  EXPECT_GT(l.moe_forward.ep_comm_exposed_s, 0);
  EXPECT_EQ(l.forward.ep_comm_exposed_s, 0);  // a dense layer sends nothing to experts
  ParallelConfig one = c;
  one.ep = 1;
  one.dp = 2;
  EXPECT_EQ(price_layers(m, cluster, one, costs).moe_forward.ep_comm_exposed_s, 0);  // EP 1: experts all local
}

TEST(MoePricing, MixturesPassValidationAndWhatIsNotPricedIsRefusedByName) {
  ParallelConfig c = ep2();
  EXPECT_EQ(refusal_of([&] { validate_layout(c, small_moe(), 2); }).message, "(no error)");
  ModelSpec mtp = small_moe();
  mtp.mtp_num_layers = 1;  // priced on the last stage (tests/unit/test_mla_mtp_pricing.cpp)
  EXPECT_EQ(refusal_of([&] { validate_layout(c, mtp, 2); }).message, "(no error)");
  // Megatron-Core trains MoE layers under TP only with sequence parallelism.
  ParallelConfig tp2;
  tp2.tp = 2;
  tp2.micro_batch = 1;
  tp2.global_batch = 1;
  EXPECT_EQ(refusal_of([&] { validate_layout(tp2, small_moe(), 2); }).field, "--sequence-parallel");
}

}  // namespace
}  // namespace cc
