// Megatron-LM's own argument lists read as argument files: every GPT functional test case
// (tests/reference/megatron/functional/, one file per test case's MODEL_ARGS) and GPT-family
// launch scripts of examples/ (tests/reference/megatron/examples/), both written by
// extract_functional_args.py (see README.md there). Each is read, or refused naming a flag that
// changes time or memory and why (interop/megatron_flag_classes.cpp keeps the rules); a file that starts
// or stops being read, or is refused for another flag, fails here. docs/megatron-flags.md gives the figure.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "interop/input_flags.h"
#include "interop/layout_files.h"
#include "interop/resolver.h"
#include "sim/error.h"
#include "sim/presets.h"
#include "sim/simulator.h"
#include "test_layout_files_support.h"

namespace cc {
namespace {

using layout_test::error_of;
using layout_test::reference;

// Read: the files clustercast reads whole (every flag modelled or left aside; the harness's
// --deterministic-mode and --no-gradient-accumulation-fusion are read, and priced only under the
// stack whose runs made those choices, megatron-core-ci: resolve_run).
const char* const kRead[] = {
    "functional/gpt3_weekly_mcore_tp4_cp2_current_scaling_native_fp8_tp_sp_cp_tp_overlap",
    "functional/gpt3_mcore_reruns_disable",
    "functional/gpt3_mcore_tp2_pp2_resume_torch_dist_uninstall_te",
    "functional/gpt3_mcore_tp2_pp2_uninstall_te",
    "functional/gpt3_mcore_tp2_pp2_uninstall_te_1node",
    "functional/gpt3_mcore_te_tp2_pp2_mla",
    "functional/gpt3_mcore_te_tp2_pp2_mla_1node",
    "functional/gpt3_15b_8t_release",
    "functional/gpt3_15b_8t_release_gb200",
    "functional/gpt3_15b_8t_release_sm",
    "functional/gpt3_15b_8t_release_sm_gb200",
    "functional/gpt3_mcore_reruns_enable",
    "functional/gpt3_mcore_reruns_persistent_2",
    "functional/gpt3_mcore_reruns_reshard",
    "functional/gpt3_mcore_reruns_resume",
    "functional/gpt3_mcore_reruns_resume_check_grads",
    "functional/gpt3_mcore_te_tp1_pp1_dist_optimizer_fim_dataset",
    "functional/gpt3_mcore_te_tp1_pp1_dist_optimizer_fim_dataset_1node",
    "functional/gpt3_mcore_te_tp1_pp1_dist_optimizer_no_mmap_bin_files",
    "functional/gpt3_mcore_te_tp1_pp1_dist_optimizer_no_mmap_bin_files_1node",
    "functional/gpt3_mcore_te_tp1_pp1_frozen_resume_torch_dist_dist_optimizer",
    "functional/gpt3_mcore_te_tp1_pp1_resume_torch_dist_dist_optimizer",
    "functional/gpt3_mcore_te_tp1_pp1_resume_torch_dist_dist_optimizer_1node",
    "functional/gpt3_mcore_te_tp1_pp1_resume_torch_dist_dist_optimizer_no_mmap_bin_files",
    "functional/gpt3_mcore_te_tp1_pp1_resume_torch_dist_uniform_full_recompute",
    "functional/gpt3_mcore_te_tp1_pp1_resume_torch_dist_uniform_full_recompute_1node",
    "functional/gpt3_mcore_te_tp1_pp1_uniform_full_recompute",
    "functional/gpt3_mcore_te_tp1_pp2_cp4_a2a_p2p_nondeterministic",
    "functional/gpt3_mcore_te_tp1_pp2_resume_torch_dist_cp4_a2a_p2p_nondeterministic",
    "functional/gpt3_mcore_te_tp1_pp2_resume_torch_dist_rope_embeddings",
    "functional/gpt3_mcore_te_tp1_pp2_resume_torch_dist_rope_embeddings_1node",
    "functional/gpt3_mcore_te_tp1_pp2_resume_torch_dist_rope_embeddings_interleaved_no_fusion",
    "functional/gpt3_mcore_te_tp1_pp2_resume_torch_dist_rope_embeddings_interleaved_no_fusion_1node",
    "functional/gpt3_mcore_te_tp1_pp2_rope_embeddings",
    "functional/gpt3_mcore_te_tp1_pp2_rope_embeddings_interleaved_no_fusion",
    "functional/gpt3_mcore_te_tp1_pp4_disable_bias_linear",
    "functional/gpt3_mcore_te_tp1_pp4_frozen_resume_torch_dist_swiglu",
    "functional/gpt3_mcore_te_tp1_pp4_persistent_ckpt_disable_bias_linear",
    "functional/gpt3_mcore_te_tp1_pp4_resume_torch_dist_disable_bias_linear",
    "functional/gpt3_mcore_te_tp1_pp4_resume_torch_dist_disable_bias_linear_1node",
    "functional/gpt3_mcore_te_tp1_pp4_resume_torch_dist_persistent_disable_bias_linear",
    "functional/gpt3_mcore_te_tp1_pp4_resume_torch_dist_persistent_disable_bias_linear_1node",
    "functional/gpt3_mcore_te_tp1_pp4_resume_torch_dist_sequence_parallel",
    "functional/gpt3_mcore_te_tp1_pp4_resume_torch_dist_swiglu",
    "functional/gpt3_mcore_te_tp1_pp4_resume_torch_dist_swiglu_1node",
    "functional/gpt3_mcore_te_tp1_pp4_resume_torch_dist_untie_embeddings_and_outputs",
    "functional/gpt3_mcore_te_tp1_pp4_resume_torch_dist_untie_embeddings_and_outputs_1node",
    "functional/gpt3_mcore_te_tp1_pp4_sequence_parallel",
    "functional/gpt3_mcore_te_tp1_pp4_swiglu",
    "functional/gpt3_mcore_te_tp1_pp4_untie_embeddings_and_outputs",
    "functional/gpt3_mcore_te_tp1_pp4_vp1",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_1node",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_calculate_per_token_loss",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_decoupled_lr",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_dist_optimizer_overlap_grad_reduce",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_dist_optimizer_overlap_grad_reduce_param_gather",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_dist_optimizer_overlap_grad_reduce_param_gather_overlap_optimizer",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_dist_optimizer_overlap_grad_reduce_param_gather_overlap_optimizer_1node",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_dist_optimizer_overlap_grad_reduce_untied",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_resume_torch_decoupled_lr",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_resume_torch_decoupled_lr_1node",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_resume_torch_dist",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_resume_torch_dist_calculate_per_token_loss",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_resume_torch_dist_calculate_per_token_loss_1node",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_resume_torch_dist_dist_optimizer_overlap_grad_reduce",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_resume_torch_dist_dist_optimizer_overlap_grad_reduce_1node",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_resume_torch_dist_dist_optimizer_overlap_grad_reduce_param_gather",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_resume_torch_dist_dist_optimizer_overlap_grad_reduce_untied",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_resume_torch_dist_tunable_overlap",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_tunable_overlap",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_tunable_overlap_1node",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_uneven_pipeline",
    "functional/gpt3_mcore_te_tp1_pp4_vp1_uneven_pipeline_1node",
    "functional/gpt3_mcore_te_tp1_pp4_vp2_account_for_embedding_loss_in_pipeline_split",
    "functional/gpt3_mcore_te_tp1_pp4_vp2_account_for_embedding_loss_in_pipeline_split_1node",
    "functional/gpt3_mcore_te_tp2_pp1_cp2_nondeterministic",
    "functional/gpt3_mcore_te_tp2_pp1_frozen_resume_torch_dist_cp2_nondeterministic",
    "functional/gpt3_mcore_te_tp2_pp1_multi_dist_optimizer_instances",
    "functional/gpt3_mcore_te_tp2_pp1_resume_torch_dist_cp2_nondeterministic",
    "functional/gpt3_mcore_te_tp2_pp1_resume_torch_dist_cp2_nondeterministic_1node",
    "functional/gpt3_mcore_te_tp2_pp1_resume_torch_dist_multi_dist_optimizer_instances",
    "functional/gpt3_mcore_te_tp2_pp1_resume_torch_dist_multi_dist_optimizer_instances_1node",
    "functional/gpt3_mcore_te_tp2_pp2",
    "functional/gpt3_mcore_te_tp2_pp2_cp2",
    "functional/gpt3_mcore_te_tp2_pp2_cp2_1node",
    "functional/gpt3_mcore_te_tp2_pp2_cp2_calculate_per_token_loss",
    "functional/gpt3_mcore_te_tp2_pp2_cp2_calculate_per_token_loss_1node",
    "functional/gpt3_mcore_te_tp2_pp2_cp2_calculate_per_token_loss_nondeterministic",
    "functional/gpt3_mcore_te_tp2_pp2_cp2_calculate_per_token_loss_nondeterministic_1node",
    "functional/gpt3_mcore_te_tp2_pp2_cp2_etp4_calculate_per_token_loss_dp_last",
    "functional/gpt3_mcore_te_tp2_pp2_cp2_etp4_calculate_per_token_loss_dp_last_1node",
    "functional/gpt3_mcore_te_tp2_pp2_cp2_etp4_calculate_per_token_loss_nondeterministic_dp_last",
    "functional/gpt3_mcore_te_tp2_pp2_cp2_etp4_calculate_per_token_loss_nondeterministic_dp_last_1node",
    "functional/gpt3_mcore_te_tp2_pp2_cp2_etp4_dp_last",
    "functional/gpt3_mcore_te_tp2_pp2_cp2_etp4_dp_last_1node",
    "functional/gpt3_mcore_te_tp2_pp2_cp2_etp4_nondeterministic_dp_last",
    "functional/gpt3_mcore_te_tp2_pp2_cp2_etp4_nondeterministic_dp_last_1node",
    "functional/gpt3_mcore_te_tp2_pp2_cp2_nondeterministic",
    "functional/gpt3_mcore_te_tp2_pp2_cp2_nondeterministic_1node",
    "functional/gpt3_mcore_te_tp2_pp2_cross_entropy_loss_fusion",
    "functional/gpt3_mcore_te_tp2_pp2_cross_entropy_loss_fusion_1node",
    "functional/gpt3_mcore_te_tp2_pp2_ddp_average_in_collective",
    "functional/gpt3_mcore_te_tp2_pp2_no_create_attention_mask_in_dataloader",
    "functional/gpt3_mcore_te_tp2_pp2_no_mmap_bin_files",
    "functional/gpt3_mcore_te_tp2_pp2_resume_torch_dist",
    "functional/gpt3_mcore_te_tp2_pp2_resume_torch_dist_1node",
    "functional/gpt3_mcore_te_tp2_pp2_resume_torch_dist_cp2_nondeterministic",
    "functional/gpt3_mcore_te_tp2_pp2_resume_torch_dist_cp2_nondeterministic_1node",
    "functional/gpt3_mcore_te_tp2_pp2_resume_torch_dist_cross_entropy_loss_fusion",
    "functional/gpt3_mcore_te_tp2_pp2_resume_torch_dist_cross_entropy_loss_fusion_1node",
    "functional/gpt3_mcore_te_tp2_pp2_resume_torch_dist_ddp_average_in_collective",
    "functional/gpt3_mcore_te_tp2_pp2_resume_torch_dist_ddp_average_in_collective_1node",
    "functional/gpt3_mcore_te_tp2_pp2_resume_torch_dist_no_create_attention_mask_in_dataloader",
    "functional/gpt3_mcore_te_tp2_pp2_resume_torch_dist_no_mmap_bin_files",
    "functional/gpt3_mcore_te_tp2_pp2_resume_torch_dist_reshard_1x4xNone",
    "functional/gpt3_mcore_te_tp2_pp2_resume_torch_dist_reshard_1x4xNone_1node",
    "functional/gpt3_mcore_te_tp4_pp1_dist_optimizer_overlap_grad_reduce",
    "functional/gpt3_mcore_te_tp4_pp1_dist_optimizer_overlap_grad_reduce_param_gather",
    "functional/gpt3_mcore_te_tp4_pp1_dist_optimizer_overlap_grad_reduce_param_gather_1node",
    "functional/gpt3_mcore_te_tp4_pp1_resume_torch_dist_dist_optimizer_overlap_grad_reduce",
    "functional/gpt3_mcore_te_tp4_pp1_resume_torch_dist_dist_optimizer_overlap_grad_reduce_1node",
    "functional/gpt3_mcore_te_tp4_pp1_resume_torch_dist_dist_optimizer_overlap_grad_reduce_param_gather",
    "functional/gpt3_mcore_te_tp4_pp1_resume_torch_dist_dist_optimizer_overlap_grad_reduce_param_gather_1node",
    "functional/gpt3_mcore_te_tp4_pp2_frozen_resume_torch_dist_reshard_8x1xNone",
    "functional/gpt3_mcore_te_tp4_pp2_resume_torch_dist_reshard_8x1xNone",
    "functional/gpt3_mcore_te_tp4_pp2_resume_torch_dist_reshard_8x1xNone_1node",
    "functional/gpt3_mcore_tp1_pp1_dist_optimizer_overlap_grad_reduce_param_gather",
    "functional/gpt3_mcore_tp1_pp1_resume_torch_dist_dist_optimizer_overlap_grad_reduce_param_gather",
    "functional/gpt3_mcore_tp1_pp2",
    "functional/gpt3_mcore_tp1_pp2_fp16",
    "functional/gpt3_mcore_tp1_pp2_resume_torch_dist",
    "functional/gpt3_mcore_tp1_pp4",
    "functional/gpt3_mcore_tp1_pp4_resume_torch_dist",
    "functional/gpt3_mcore_tp4_pp1",
    "functional/gpt3_mcore_tp4_pp1_resume_torch",
    "functional/gpt3_mcore_tp4_pp1_resume_torch_dist",
    "examples/train_mixtral_8x7b_distributed",
};

// Refused: each file under the first flag (in the file's order) that refuses it, with the reason
// the message gives. The flags were picked from the files against Megatron-LM's documentation of
// each (the fusion switches change the kernels that run; --transformer-impl local builds
// Megatron-Core's own layers);
// flags of inference and RL runs are no training flags and fall to the general reason.
struct Refusal {
  const char* flag;  // "": the file is refused before any flag is read
  const char* reason;
  std::vector<std::string> files;
};
const Refusal kRefused[] = {
    {"--empty-unused-memory-level", "empties PyTorch's cached memory during the iteration",
     {
      "examples/train_llama3_8b_fsdp_h100_fp8",
      "examples/train_llama3_8b_h100_fp8",
     }},
    {"--error-injection-rate", "not a flag clustercast models or knows to leave time and memory unchanged",
     {
      "functional/gpt3_mcore_reruns_persistent_1",
      "functional/gpt3_mcore_reruns_persistent_1_1node",
      "functional/gpt3_mcore_reruns_transient",
     }},
    {"--mup-base-hidden-size", "sets muP's width multiplier",
     {
      "functional/gpt3_mcore_te_tp1_pp1_mup",
     }},
    {"--use-torch-fsdp2", "not a flag clustercast models or knows to leave time and memory unchanged",
     {
      "functional/gpt3_mcore_te_tp2_pp1_fsdp2_resume_torch_dist",
      "functional/gpt3_mcore_tp1_pp1_fsdp2_resume_torch_dist_te",
     }},
    {"--export-te-mcore-model", "not a flag clustercast models or knows to leave time and memory unchanged",
     {
      "functional/gpt3_mcore_te_tp2_pp1_modelopt_distill_resume",
      "functional/gpt3_mcore_te_tp2_pp1_modelopt_distill_resume_1node",
     }},
    {"--defer-embedding-wgrad-compute", "not a flag clustercast models or knows to leave time and memory unchanged",
     {
      "functional/gpt3_mcore_te_tp2_pp2_defer_embedding_wgrad_compute",
      "functional/gpt3_mcore_te_tp2_pp2_resume_torch_dist_defer_embedding_wgrad_compute",
      "functional/gpt3_mcore_te_tp2_pp2_resume_torch_dist_defer_embedding_wgrad_compute_1node",
     }},
    {"--experimental-attention-variant", "not a flag clustercast models or knows to leave time and memory unchanged",
     {
      "functional/gpt3_mcore_te_tp2_pp1_gdn",
      "functional/gpt3_mcore_te_tp2_pp1_gdn_1node",
      "functional/gpt3_mcore_te_tp2_pp1_gdn_no_nvrx_async",
      "functional/gpt3_mcore_te_tp2_pp1_gdn_no_nvrx_async_mcore",
      "functional/gpt3_mcore_te_tp2_pp1_gdn_no_nvrx_sync",
      "functional/gpt3_mcore_te_tp2_pp2_dsa",
     }},
    {"--use-megatron-fsdp", "not a flag clustercast models or knows to leave time and memory unchanged",
     {
      "functional/gpt3_mcore_te_tp2_zp_z3_resume_fsdp_dtensor",
      "functional/gpt3_mcore_te_tp2_zp_z3_resume_fsdp_dtensor_1node",
     }},
    {"--test-mode", "runs Megatron-Core's real-time tests",
     {
      "functional/gpt3_mcore_te_tp4_pp1_qk_layernorm_test_mode",
      "functional/gpt3_mcore_te_tp4_pp1_resume_torch_dist_qk_layernorm_test_mode",
      "functional/gpt3_mcore_te_tp4_pp1_resume_torch_dist_qk_layernorm_test_mode_1node",
     }},
    {"--tp-comm-overlap-cfg", "not a flag clustercast models or knows to leave time and memory unchanged",
     {
      "functional/gpt3_weekly_mcore_tp2_pp2_current_scaling_native_fp8_tp_pp_sp_tp_overlap",
     }},
    {"--max-tokens-to-oom", "not a flag clustercast models or knows to leave time and memory unchanged",
     {
      "functional/gpt_dynamic_inference_tp1_pp1_583m_async_sched",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_chunked_prefill",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_chunked_prefill_cuda_graphs",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_cuda_graphs_fp8_logitsmatch",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_cuda_graphs_logitsmatch_decode_graphs_only",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_flashinfer",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_logitsmatch",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_prefix_caching",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_prefix_caching_chunked_prefill",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_prefix_caching_chunked_prefill_cuda_graphs",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_prefix_caching_chunked_prefill_flashinfer",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_prefix_caching_cuda_graphs",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_prefix_caching_lru",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_stop_words",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_top_n_logprobs",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_top_p_sampling",
      "functional/gpt_dynamic_inference_tp1_pp1_583m_uvm_level1",
      "functional/gpt_dynamic_inference_tp1_pp1_dp8_583m_logitsmatch_zmq",
      "functional/gpt_dynamic_inference_tp1_pp1_dp8_583m_prefix_caching_load_balanced_zmq",
      "functional/gpt_dynamic_inference_tp1_pp1_dp8_583m_prefix_caching_longest_prefix_zmq",
      "functional/gpt_dynamic_inference_tp1_pp8_583m_prefix_caching",
      "functional/gpt_dynamic_inference_tp1_pp8_dp1_583m_logitsmatch_zmq",
      "functional/gpt_dynamic_inference_tp2_pp2_583m_chunked_prefill",
      "functional/gpt_dynamic_inference_tp2_pp2_583m_cuda_graphs",
      "functional/gpt_dynamic_inference_tp2_pp2_583m_prefix_caching",
      "functional/gpt_dynamic_inference_tp2_pp2_583m_prefix_caching_cuda_graphs",
      "functional/gpt_dynamic_inference_tp2_pp2_dp2_583m_logitsmatch_zmq",
      "functional/gpt_dynamic_inference_tp4_pp1_583m_flashinfer",
      "functional/gpt_dynamic_inference_tp8_pp1_583m_logitsmatch",
      "functional/gpt_dynamic_inference_tp8_pp1_583m_prefix_caching",
      "functional/gpt_dynamic_inference_tp8_pp1_dp1_583m_logitsmatch_zmq",
      "functional/gpt_grpo_tp1tp2_pp1_dp8_583m_throughputtest",
      "functional/gpt_grpo_tp1tp2_pp1_dp8_583m_throughputtest_github",
      "functional/gpt_offline_inference_async_tp1_pp1_dp8_583m_logitsmatch_zmq",
      "functional/gpt_offline_inference_sync_tp1_pp1_583m_logitsmatch",
      "functional/gpt_offline_inference_sync_tp1_pp1_dp8_583m_logitsmatch_zmq",
      "functional/gpt_static_inference_tp1_pp1_583m_cudagraphs",
      "functional/gpt_static_inference_tp1_pp1_583m_fp8_cudagraphs",
      "functional/gpt_static_inference_tp1_pp1_583m_logitsmatch",
     }},
    {"--rl-inference-tensor-model-parallel-size", "not a flag clustercast models or knows to leave time and memory unchanged",
     {
      "functional/gpt_grpo_basic_function",
     }},
    {"--inference-dynamic-batching-num-cuda-graphs", "not a flag clustercast models or knows to leave time and memory unchanged",
     {
      "functional/gpt_grpo_tp4_pp1_dp2_8b_cudagraphs_throughput",
      "functional/gpt_grpo_tp4_pp1_dp2_8b_throughput",
      "functional/gpt_grpo_tp4_pp1_dp2_8b_throughput_github",
     }},
    {"--inference-max-requests", "not a flag clustercast models or knows to leave time and memory unchanged",
     {
      "functional/gpt_static_inference_tp1_pp1_16b_multiprompt_tokensmatch",
     }},
    {"", "is empty", {"functional/gpt_dynamic_inference_tp1_pp1_583m_cuda_graphs_validation"}},
    // The script passes its arrays unquoted (torchrun ${TRAINING_ARGS[@]}), so bash splits
    // --step-batch-size-schedule "0:16 2.4B:320 ..." into six words; Megatron-LM's parse_args refuses
    // the five after the first too ("unrecognized arguments"). Pasted from the arrays it is read
    // (tests/cli/test_layout_interop.cpp).
    {"", "'2.4B:320' is not a flag", {"examples/train_gpt3_175b_distributed"}},
};

std::set<std::string> fixtures(const std::string& folder) {
  std::set<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(reference("megatron/" + folder)))
    if (e.path().extension() == ".args") out.insert(folder + "/" + e.path().stem().string());
  return out;
}

TEST(MegatronFunctionalArgs, EveryFixtureIsReadOrRefusedForItsListedFlag) {
  std::set<std::string> all = fixtures("functional");
  ASSERT_EQ(all.size(), 204u) << "the GPT functional test cases at the pinned commit, gpt3_7b_* left out";
  all.merge(fixtures("examples"));
  std::set<std::string> listed;
  for (const char* name : kRead) {
    EXPECT_TRUE(listed.insert(name).second) << name << " is listed twice";
    EXPECT_NO_THROW(read_layout_file(reference("megatron/" + std::string(name) + ".args"))) << name;
  }
  for (const auto& r : kRefused)
    for (const auto& name : r.files) {
      EXPECT_TRUE(listed.insert(name).second) << name << " is listed twice";
      const std::string expected = *r.flag ? std::string(r.flag) + " (" + r.reason : r.reason;
      const std::string error = error_of([&] { read_layout_file(reference("megatron/" + name + ".args")); });
      EXPECT_NE(error.find(expected), std::string::npos) << name << ": expected '" << expected << "' in: " << error;
    }
  EXPECT_EQ(listed, all) << "every fixture is listed once, and every listed file is a fixture";
}

// Megatron-LM's MLA functional test runs without --qk-layernorm: latents without norms, and with
// --add-bias-linear's default a bias on the output projection only (MLASelfAttention builds its
// latent projections with bias=False).
TEST(MegatronFunctionalArgs, LatentAttentionWithoutQkLayernormHasNoLatentNorms) {
  const LayoutFile f = read_layout_file(reference("megatron/functional/gpt3_mcore_te_tp2_pp2_mla.args"));
  ASSERT_TRUE(f.model);
  EXPECT_TRUE(f.model->mla.enabled);
  EXPECT_FALSE(f.model->mla.latent_norms);
  EXPECT_FALSE(f.model->qkv_bias);
  EXPECT_TRUE(f.model->projection_bias);
  EXPECT_EQ(f.model->mla.q_lora_rank, 192);
  // With --qk-layernorm the same flags give the norms.
  const std::string flags = "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 --vocab-size 128 "
                            "--multi-latent-attention --disable-bias-linear";
  EXPECT_FALSE(parse_layout_text(flags + "\n", "f").model->mla.latent_norms);
  EXPECT_TRUE(parse_layout_text(flags + " --qk-layernorm\n", "f").model->mla.latent_norms);
  // The export says what was simulated: no --qk-layernorm, so no norms when read back.
  ParallelConfig c = layout_test::layout(2, 2, 2, 4, 32);
  c.sequence_parallel = true;
  c.attention = AttentionKernel::Flash;
  const std::string args = megatron_arguments(layout_test::simulated(*f.model, c, "dgx-h100"), {});
  EXPECT_EQ(args.find("--qk-layernorm"), std::string::npos);
  EXPECT_FALSE(parse_layout_text(args, "best.args").model->mla.latent_norms);
}

// Megatron-LM's calculator takes the schedule's last step as the run's global batch
// (StepBatchsizeNumMicroBatchesCalculator), the full batch the iteration simulated runs.
TEST(MegatronFunctionalArgs, AStepBatchScheduleRunsItsLastStepsBatch) {
  const std::string model = "--num-layers 2 --hidden-size 64 --num-attention-heads 4 --seq-length 128 "
                            "--vocab-size 128 --micro-batch-size 4 ";
  const LayoutFile f = parse_layout_text(model + "--step-batch-size-schedule 0:384_200B:768_400B:1152\n", "f");
  EXPECT_EQ(f.config.global_batch, 1152);
  EXPECT_TRUE(f.global_batch_named);
  // Sorted by threshold, as Megatron-LM sorts; commas separate entries too.
  EXPECT_EQ(parse_layout_text(model + "--step-batch-size-schedule 2K:64,0:16\n", "f").config.global_batch, 64);
  // Megatron-LM refuses both; a pair that names one batch (its GPT-3 175B example's) is that batch.
  EXPECT_NE(error_of([&] {
              parse_layout_text(model + "--global-batch-size 8 --step-batch-size-schedule 0:16\n", "f");
            }).find("ends at a global batch of 16 and --global-batch-size says 8"),
            std::string::npos);
  EXPECT_EQ(
      parse_layout_text(model + "--global-batch-size 16 --step-batch-size-schedule 0:8,1K:16\n", "f").config.global_batch,
      16);
  EXPECT_NE(error_of([&] { parse_layout_text(model + "--step-batch-size-schedule 0:many\n", "f"); })
                .find("entry '0:many' is not THRESHOLD:BATCH"),
            std::string::npos);
}

// Megatron-LM's defaults written out are left aside and named; any other value is refused with
// it (defaults: TransformerConfig.transformer_impl, the distributed config's distributed_backend,
// the resilience config's rerun_mode, at the pinned commit).
TEST(MegatronFunctionalArgs, FlagsAtMegatronsDefaultAreLeftAsideOthersRefusedWithTheValue) {
  const LayoutFile f = parse_layout_text(
      "--distributed-backend nccl\n--rerun-mode validate_results\n", "f.args");
  EXPECT_EQ(f.ignored, (std::vector<std::string>{"--distributed-backend", "--rerun-mode"}));
  // disabled runs the same checks as validate_results and reruns nothing either
  EXPECT_EQ(parse_layout_text("--rerun-mode disabled\n", "f.args").ignored, (std::vector<std::string>{"--rerun-mode"}));
  const std::pair<const char*, const char*> refused[] = {
      {"--distributed-backend gloo\n", "--distributed-backend gloo (gloo carries the collectives through the CPUs"},
      {"--rerun-mode report_stats\n",
       "--rerun-mode report_stats (report_stats reruns every iteration to measure its variability, which is not "
       "modelled; only validate_results or disabled are left aside)"},
      {"--distributed-backend\n--bf16\n", "--distributed-backend without a value"}};
  for (const auto& [text, expected] : refused) {
    const std::string error = error_of([&] { parse_layout_text(text, "f.args"); });
    EXPECT_NE(error.find(expected), std::string::npos) << text << ": " << error;
    EXPECT_NE(error.find("only "), std::string::npos) << "names the value left aside: " << error;
  }
}

// --transformer-impl local builds Megatron-Core's own layers (get_gpt_layer_local_spec), whose
// attention is DotProductAttention whatever --attention-backend auto says: the unfused kernels.
// What those layers cannot run is refused by name.
TEST(MegatronFunctionalArgs, LocalLayersRunTheUnfusedAttentionAndRefuseWhatNeedsTransformerEngine) {
  const std::string shape = "--num-layers 2 --hidden-size 256 --num-attention-heads 8 --seq-length 512 "
                            "--max-position-embeddings 512 --micro-batch-size 1 --bf16\n";
  EXPECT_EQ(parse_layout_text(shape, "f.args").config.attention, AttentionKernel::Flash);  // --attention-backend auto
  for (const char* local : {"--transformer-impl local\n", "--transformer-impl local --attention-backend auto\n",
                            "--transformer-impl local --attention-backend unfused\n"})
    EXPECT_EQ(parse_layout_text(shape + local, "f.args").config.attention, AttentionKernel::Unfused) << local;
  EXPECT_EQ(parse_layout_text(shape + "--transformer-impl transformer_engine\n", "f.args").config.attention,
            AttentionKernel::Flash);
  const std::pair<const char*, const char*> refused[] = {
      {"--transformer-impl inference_optimized\n", "--transformer-impl inference_optimized is not modelled"},
      {"--transformer-impl local --attention-backend flash\n",
       "has no flash or fused kernel (--attention-backend flash)"},
      {"--transformer-impl local --use-flash-attn\n", "has no flash or fused kernel (--use-flash-attn)"},
      {"--transformer-impl local --fp8-format hybrid\n", "--fp8-format needs Transformer Engine's layers"},
      {"--transformer-impl local --tensor-model-parallel-size 2 --sequence-parallel --tp-comm-overlap\n",
       "--tp-comm-overlap pipelines Transformer Engine's userbuffers"}};
  for (const auto& [text, expected] : refused) {
    const std::string error = error_of([&] { parse_layout_text(shape + text, "f.args"); });
    EXPECT_NE(error.find(expected), std::string::npos) << text << ": " << error;
  }
}

// The figures docs/megatron-flags.md gives: how many functional test cases are read, and how
// many of those simulate as Megatron-LM's CI runs them — one 8-GPU H100 node, under the stack
// fitted to its runs; the rest are refused for their layout or model, by name.
TEST(MegatronFunctionalArgs, ShareOfFunctionalTestsReadAndSimulated) {
  int read = 0, simulated = 0, total = 0;
  for (const auto& name : fixtures("functional")) {
    ++total;
    LayoutFile file;
    try {
      file = read_layout_file(reference("megatron/" + name + ".args"));
      ++read;
      // Each read file's vocabulary is its tokenizer's (GPT-2's BPE, Nemotron-4's SentencePiece model or a
      // stated --vocab-size).
      EXPECT_TRUE(file.vocabulary_unknown.empty()) << name << ": " << file.vocabulary_unknown;
    } catch (const SpecError&) {
      continue;
    }
    LayoutFlags flags;
    flags.framework = "megatron-core-ci";
    RunRequest request;
    request.model = file.model.value_or(ModelSpec{});
    request.cluster = load_cluster("dgx-h100");
    request.gpus = 8;
    request.layout = flags.request(request.model, &file);
    try {
      const ResolvedRun run = resolve_run(request);
      EXPECT_GT(simulate(run.model, run.cluster, run.config, *run.cost_source()).iteration_time_s, 0) << name;
      ++simulated;
    } catch (const SpecError& e) {
      const std::string why = e.what();
      EXPECT_EQ(why.find("--deterministic-mode"), std::string::npos) << name << ": " << why;
      EXPECT_EQ(why.find("--no-gradient-accumulation-fusion"), std::string::npos) << name << ": " << why;
    }
  }
  RecordProperty("functional_tests_read", read);
  RecordProperty("functional_tests_simulated", simulated);
  EXPECT_EQ(total, 204);
  EXPECT_EQ(read, 136) << read << " of " << total << " read";
  EXPECT_EQ(simulated, 132) << simulated << " of " << total << " simulated";
}

}  // namespace
}  // namespace cc
