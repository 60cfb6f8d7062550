#include "sim/parallel_config.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/error.h"
#include "sim/json_fields.h"

namespace cc {

const char* to_string(RecomputeGranularity g) {
  switch (g) {
    case RecomputeGranularity::None: return "none";
    case RecomputeGranularity::Selective: return "selective";
    case RecomputeGranularity::Full: return "full";
  }
  return "?";
}
const char* to_string(RecomputeMethod m) { return m == RecomputeMethod::Uniform ? "uniform" : "block"; }
const char* to_string(AttentionKernel a) { return a == AttentionKernel::Unfused ? "unfused" : "flash"; }
const char* to_string(Fp8Recipe r) { return r == Fp8Recipe::Delayed ? "delayed" : "tensorwise"; }

const char* to_string(CpCommType t) {
  switch (t) {
    case CpCommType::P2P: return "p2p";
    case CpCommType::AllToAll: return "a2a";
    case CpCommType::AllGather: return "allgather";
    case CpCommType::AllToAllP2P: return "a2a+p2p";
  }
  return "?";
}

CpCommType cp_comm_type_from(const std::string& name, const std::string& where) {
  for (CpCommType t : {CpCommType::P2P, CpCommType::AllToAll, CpCommType::AllGather, CpCommType::AllToAllP2P})
    if (name == to_string(t)) return t;
  fail_at("--cp-comm-type", "{}: --cp-comm-type '{}' is not known; valid: p2p, a2a, allgather, a2a+p2p", where, name);
}

const char* to_string(TokenDispatcher d) {
  switch (d) {
    case TokenDispatcher::AllGather: return "allgather";
    case TokenDispatcher::AllToAll: return "alltoall";
    case TokenDispatcher::Flex: return "flex";
  }
  return "?";
}

const char* to_string(FlexBackend b) { return b == FlexBackend::DeepEP ? "deepep" : "hybridep"; }

FlexBackend flex_backend_from(const std::string& name, const std::string& where) {
  for (FlexBackend b : {FlexBackend::DeepEP, FlexBackend::HybridEP})
    if (name == to_string(b)) return b;
  if (name == "ncclep")
    fail_at("--moe-flex-dispatcher-backend",
            "{}: --moe-flex-dispatcher-backend ncclep (NCCL EP through Transformer Engine) is not modelled; valid: "
            "deepep, hybridep",
            where);
  fail_at("--moe-flex-dispatcher-backend",
          "{}: --moe-flex-dispatcher-backend '{}' is not known; valid: deepep, hybridep", where, name);
}

const char* to_string(LoadBalancing b) {
  switch (b) {
    case LoadBalancing::AuxLoss: return "aux_loss";
    case LoadBalancing::SeqAuxLoss: return "seq_aux_loss";
    case LoadBalancing::GlobalAuxLoss: return "global_aux_loss";
    case LoadBalancing::Sinkhorn: return "sinkhorn";
    case LoadBalancing::None: return "none";
  }
  return "?";
}

const char* to_string(TokenDropPolicy p) { return p == TokenDropPolicy::Probs ? "probs" : "position"; }

TokenDispatcher token_dispatcher_from(const std::string& name, const std::string& where) {
  for (TokenDispatcher d : {TokenDispatcher::AllGather, TokenDispatcher::AllToAll, TokenDispatcher::Flex})
    if (name == to_string(d)) return d;
  fail_at("--moe-token-dispatcher-type",
          "{}: --moe-token-dispatcher-type '{}' is not known; valid: alltoall, allgather, flex", where, name);
}

LoadBalancing load_balancing_from(const std::string& name, const std::string& where) {
  for (LoadBalancing b : {LoadBalancing::AuxLoss, LoadBalancing::SeqAuxLoss, LoadBalancing::GlobalAuxLoss,
                          LoadBalancing::Sinkhorn, LoadBalancing::None})
    if (name == to_string(b)) return b;
  fail_at("--moe-router-load-balancing-type",
          "{}: --moe-router-load-balancing-type '{}' is not known; valid: aux_loss, seq_aux_loss, global_aux_loss, "
          "sinkhorn, none",
          where, name);
}

TokenDropPolicy token_drop_policy_from(const std::string& name, const std::string& where) {
  if (name == "probs") return TokenDropPolicy::Probs;
  if (name == "position") return TokenDropPolicy::Position;
  fail_at("--moe-token-drop-policy", "{}: --moe-token-drop-policy '{}' is not known; valid: probs, position", where,
          name);
}

double moe_load_imbalance(const ParallelConfig& c) {
  const MoeRunOptions& o = c.moe;
  if (o.pad_to_capacity && !o.load_imbalance) return 1.0;
  // max/mean over EP ranks is at most EP (every token on one rank): 1 at EP 1, whatever was given.
  const double routed = std::min(o.load_imbalance.value_or(kDroplessLoadImbalance), static_cast<double>(c.ep));
  return o.capacity_factor ? std::min(routed, *o.capacity_factor) : routed;
}

RecomputeGranularity recompute_granularity_from(const std::string& name, const std::string& where) {
  if (name == "none" || name.empty()) return RecomputeGranularity::None;
  if (name == "selective") return RecomputeGranularity::Selective;
  if (name == "full") return RecomputeGranularity::Full;
  fail("{}: recompute granularity '{}' is not known; valid: none, selective, full", where, name);
}

RecomputeMethod recompute_method_from(const std::string& name, const std::string& where) {
  if (name == "uniform") return RecomputeMethod::Uniform;
  if (name == "block") return RecomputeMethod::Block;
  fail("{}: recompute method '{}' is not known; valid: uniform, block", where, name);
}

Precision precision_from(const std::string& name, const std::string& where) {
  if (name == "bf16") return Precision::BF16;
  if (name == "fp16") return Precision::FP16;
  if (name == "fp8") return Precision::FP8;
  if (name == "fp32") return Precision::FP32;
  fail("{}: precision '{}' is not known; valid: bf16, fp16, fp8, fp32", where, name);
}

AttentionKernel attention_from(const std::string& name, const std::string& where) {
  if (name == "unfused") return AttentionKernel::Unfused;
  if (name == "flash") return AttentionKernel::Flash;
  fail("{}: attention kernel '{}' is not known; valid: unfused, flash", where, name);
}

Fp8Recipe fp8_recipe_from(const std::string& name, const std::string& where) {
  if (name == "delayed") return Fp8Recipe::Delayed;
  if (name == "tensorwise") return Fp8Recipe::Tensorwise;
  if (name == "blockwise" || name == "mxfp8" || name == "custom")
    fail_at("--fp8-recipe", "{}: FP8 recipe '{}' is not modelled (block scaling runs other GEMMs than the per-tensor "
            "scaled ones priced); valid: delayed, tensorwise", where, name);
  fail_at("--fp8-recipe", "{}: FP8 recipe '{}' is not one clustercast knows; valid: delayed, tensorwise", where, name);
}

AttentionKernel default_attention(const std::string& framework) {
  return load_framework(framework).flash_attention ? AttentionKernel::Flash : AttentionKernel::Unfused;
}

AttentionKernel default_attention(const std::string& framework, const ModelSpec& model) {
  return model.attention_softcap > 0 ? AttentionKernel::Unfused : default_attention(framework);
}

ParallelGrid ParallelConfig::grid() const {
  return ParallelGrid(kDenseGridOrder, {{"tp", tp}, {"cp", cp}, {"dp", dp}, {"pp", pp}});
}

ParallelGrid ParallelConfig::expert_grid() const {
  return ParallelGrid(kExpertGridOrder, {{"etp", expert_tp()}, {"ep", ep}, {"edp", expert_dp()}, {"pp", pp}});
}

std::string ParallelConfig::summary() const {
  std::string s = fmt::format("tp{}", tp);
  if (cp > 1) s += fmt::format(" cp{} {}", cp, to_string(cp_comm_type));
  s += fmt::format(" pp{} dp{}", pp, dp);
  if (ep > 1 || etp > 0) {
    s += fmt::format(" ep{} etp{} {}", ep, expert_tp(), to_string(moe.dispatcher));
    if (moe.dispatcher == TokenDispatcher::Flex) s += fmt::format("-{}", to_string(moe.flex_backend));
  }
  s += fmt::format("{} mb{} gb{}", sequence_parallel ? " sp" : "", micro_batch, global_batch);
  if (virtual_stages > 1) s += fmt::format(" v{}", virtual_stages);
  // How the layers split when not evenly: the layout string, the lighter end stages, or the
  // embedding and loss counted as layers.
  if (!pipeline_layout.empty()) s += " layout " + pipeline_layout;
  if (first_stage_layers || last_stage_layers) s += fmt::format(" ends{}/{}", first_stage_layers, last_stage_layers);
  if (account_for_embedding || account_for_loss)
    s += fmt::format(" count{}{}", account_for_embedding ? "E" : "", account_for_loss ? "L" : "");
  s += fmt::format(" {}", to_string(recompute));
  if (recompute == RecomputeGranularity::Full)
    s += fmt::format("/{}{}", to_string(recompute_method), recompute_num_layers);
  if (distributed_optimizer) s += " distopt";
  if (distributed_optimizer_instances > 1) s += fmt::format("x{}", distributed_optimizer_instances);
  if (fp8_param_gather) s += " fp8-params";
  return s;
}

bool pipeline_sends_block(const ParallelConfig& c) {
  const FrameworkSpec& stack = load_framework(c.framework);
  return stack.blocking_p2p && !(c.interleaved() && stack.interleaved_p2p_overlap);
}

void apply_framework(ParallelConfig& c, const std::string& framework) {
  const FrameworkSpec& stack = load_framework(framework);
  c.framework = stack.name;
  c.overlap_grad_reduce = c.overlap_grad_reduce || stack.overlap_grad_reduce;
  c.overlap_param_gather = c.overlap_param_gather || (stack.overlap_param_gather && c.distributed_optimizer);
}

const char* flag_refusing_deterministic_mode(const ParallelConfig& c) {
  if (c.cross_entropy_fusion) return "--cross-entropy-loss-fusion";
  if (c.tp_comm_overlap) return "--tp-comm-overlap";
  return nullptr;
}

double ParallelConfig::main_grad_bytes() const {
  if (precision == Precision::FP16) return 2;
  return grad_reduce_in_bf16 && precision != Precision::FP32 ? 2 : 4;
}

nlohmann::json config_to_json(const ParallelConfig& c) {
  nlohmann::json j = {{"sequence_parallel", c.sequence_parallel},
                      {"micro_batch_size", c.micro_batch},
                      {"global_batch_size", c.global_batch},
                      {"virtual_pipeline_stages", c.virtual_stages},
                      {"recompute_granularity", to_string(c.recompute)},
                      {"recompute_method", to_string(c.recompute_method)},
                      {"recompute_num_layers", c.recompute_num_layers},
                      {"use_distributed_optimizer", c.distributed_optimizer},
                      {"overlap_grad_reduce", c.overlap_grad_reduce},
                      {"overlap_param_gather", c.overlap_param_gather},
                      {"tp_comm_overlap", c.tp_comm_overlap},
                      {"precision", to_string(c.precision)},
                      {"attention", to_string(c.attention)},
                      {"framework", c.framework}};
  const ParallelGrid grid = c.grid();
  for (int i = 0; i < grid.dimension_count(); ++i)
    j[std::string(dimension_info(grid.dimension(i).name).json_key)] = grid.dimension(i).size;
  if (c.grad_reduce_in_bf16) j["grad_reduce_in_bf16"] = true;  // written only where set: older files read as before
  if (c.cross_entropy_fusion) j["cross_entropy_loss_fusion"] = true;
  if (!c.rope_fusion) j["apply_rope_fusion"] = false;
  if (c.fp8_param_gather) j["fp8_param_gather"] = true;
  if (c.fp8_recipe != Fp8Recipe::Delayed) j["fp8_recipe"] = to_string(c.fp8_recipe);
  if (c.distributed_optimizer_instances > 1) j["num_distributed_optimizer_instances"] = c.distributed_optimizer_instances;
  if (c.moe != MoeRunOptions{}) {
    // Megatron-LM's argument names; written only where a run set them, so dense exports read as before.
    const MoeRunOptions& o = c.moe;
    j["moe_token_dispatcher_type"] = to_string(o.dispatcher);
    if (o.dispatcher == TokenDispatcher::Flex) j["moe_flex_dispatcher_backend"] = to_string(o.flex_backend);
    j["moe_grouped_gemm"] = o.grouped_gemm;
    if (o.capacity_factor) j["moe_expert_capacity_factor"] = *o.capacity_factor;
    j["moe_pad_expert_input_to_capacity"] = o.pad_to_capacity;
    j["moe_router_load_balancing_type"] = to_string(o.load_balancing);
    j["moe_aux_loss_coeff"] = o.aux_loss_coeff;
    j["moe_token_drop_policy"] = to_string(o.drop_policy);
    j["moe_shared_expert_overlap"] = o.shared_expert_overlap;
    j["overlap_moe_expert_parallel_comm"] = o.overlap_ep_comm;
    if (o.load_imbalance) j["moe_load_imbalance"] = *o.load_imbalance;
  }
  if (c.ep > 1) j[std::string(dimension_info("ep").json_key)] = c.ep;
  if (c.etp > 0) j[std::string(dimension_info("etp").json_key)] = c.etp;
  if (c.cp > 1) j["cp_comm_type"] = to_string(c.cp_comm_type);
  if (c.cp_a2a_size) j["hierarchical_context_parallel_sizes"] = {c.cp_a2a_size, c.cp / c.cp_a2a_size};
  if (!c.pipeline_layout.empty()) j["pipeline_model_parallel_layout"] = c.pipeline_layout;
  if (c.account_for_embedding) j["account_for_embedding_in_pipeline_split"] = true;
  if (c.account_for_loss) j["account_for_loss_in_pipeline_split"] = true;
  if (c.microbatch_group_size) j["microbatch_group_size_per_vp_stage"] = c.microbatch_group_size;
  if (c.first_stage_layers) j["decoder_first_pipeline_num_layers"] = c.first_stage_layers;
  if (c.last_stage_layers) j["decoder_last_pipeline_num_layers"] = c.last_stage_layers;
  return j;
}

ParallelConfig config_from_json(const nlohmann::json& doc, const std::string& where, ParallelConfig c) {
  const JsonFields f(doc, where);
  auto as_int = [&](const char* key, int min, int fallback) {
    return static_cast<int>(f.integer_or(key, min, fallback));
  };
  c.tp = as_int("tensor_model_parallel_size", 1, c.tp);
  c.cp = as_int("context_parallel_size", 1, c.cp);
  c.pp = as_int("pipeline_model_parallel_size", 1, c.pp);
  c.ep = as_int("expert_model_parallel_size", 1, c.ep);
  c.etp = as_int("expert_tensor_parallel_size", 1, c.etp);
  MoeRunOptions& o = c.moe;
  if (f.has("moe_token_dispatcher_type"))
    o.dispatcher = token_dispatcher_from(f.string("moe_token_dispatcher_type"), where);
  if (f.has("moe_flex_dispatcher_backend"))
    o.flex_backend = flex_backend_from(f.string("moe_flex_dispatcher_backend"), where);
  o.grouped_gemm = f.boolean_or("moe_grouped_gemm", o.grouped_gemm);
  // Any number: validate_layout() refuses a factor or an imbalance out of range, naming its flag.
  constexpr double kAny = std::numeric_limits<double>::lowest();
  if (f.has("moe_expert_capacity_factor")) o.capacity_factor = f.number("moe_expert_capacity_factor", kAny);
  o.pad_to_capacity = f.boolean_or("moe_pad_expert_input_to_capacity", o.pad_to_capacity);
  if (f.has("moe_router_load_balancing_type"))
    o.load_balancing = load_balancing_from(f.string("moe_router_load_balancing_type"), where);
  if (f.has("moe_aux_loss_coeff")) o.aux_loss_coeff = f.number("moe_aux_loss_coeff", kAny);
  if (f.has("moe_token_drop_policy")) o.drop_policy = token_drop_policy_from(f.string("moe_token_drop_policy"), where);
  o.shared_expert_overlap = f.boolean_or("moe_shared_expert_overlap", o.shared_expert_overlap);
  o.overlap_ep_comm = f.boolean_or("overlap_moe_expert_parallel_comm", o.overlap_ep_comm);
  if (f.has("moe_load_imbalance")) o.load_imbalance = f.number("moe_load_imbalance", kAny);
  if (f.has("cp_comm_type")) c.cp_comm_type = cp_comm_type_from(f.string("cp_comm_type"), where);
  if (f.has("hierarchical_context_parallel_sizes")) {
    const auto& sizes = doc.at("hierarchical_context_parallel_sizes");
    if (!sizes.is_array() || sizes.size() != 2 || !sizes[0].is_number_integer() || !sizes[1].is_number_integer() ||
        sizes[0].get<long long>() < 1 || sizes[0].get<long long>() > 65536)
      fail_at("--hierarchical-context-parallel-sizes",
              "{}: hierarchical_context_parallel_sizes must be two whole numbers >= 1 [a2a size, p2p size]", where);
    c.cp_a2a_size = sizes[0].get<int>();
  }
  if (f.has("pipeline_model_parallel_layout")) c.pipeline_layout = f.string("pipeline_model_parallel_layout");
  c.account_for_embedding = f.boolean_or("account_for_embedding_in_pipeline_split", c.account_for_embedding);
  c.account_for_loss = f.boolean_or("account_for_loss_in_pipeline_split", c.account_for_loss);
  c.dp = as_int("data_parallel_size", 1, c.dp);
  c.sequence_parallel = f.boolean_or("sequence_parallel", c.sequence_parallel);
  c.micro_batch = as_int("micro_batch_size", 1, c.micro_batch);
  c.global_batch = as_int("global_batch_size", 1, c.global_batch);
  c.virtual_stages = as_int("virtual_pipeline_stages", 1, c.virtual_stages);
  c.microbatch_group_size = as_int("microbatch_group_size_per_vp_stage", 1, c.microbatch_group_size);
  c.first_stage_layers = as_int("decoder_first_pipeline_num_layers", 0, c.first_stage_layers);
  c.last_stage_layers = as_int("decoder_last_pipeline_num_layers", 0, c.last_stage_layers);
  if (f.has("recompute_granularity"))
    c.recompute = recompute_granularity_from(f.string("recompute_granularity"), where);
  if (f.has("recompute_method")) c.recompute_method = recompute_method_from(f.string("recompute_method"), where);
  c.recompute_num_layers = as_int("recompute_num_layers", 1, c.recompute_num_layers);
  c.distributed_optimizer = f.boolean_or("use_distributed_optimizer", c.distributed_optimizer);
  c.overlap_grad_reduce = f.boolean_or("overlap_grad_reduce", c.overlap_grad_reduce);
  c.overlap_param_gather = f.boolean_or("overlap_param_gather", c.overlap_param_gather);
  c.tp_comm_overlap = f.boolean_or("tp_comm_overlap", c.tp_comm_overlap);
  c.grad_reduce_in_bf16 = f.boolean_or("grad_reduce_in_bf16", c.grad_reduce_in_bf16);
  c.cross_entropy_fusion = f.boolean_or("cross_entropy_loss_fusion", c.cross_entropy_fusion);
  c.rope_fusion = f.boolean_or("apply_rope_fusion", c.rope_fusion);
  c.fp8_param_gather = f.boolean_or("fp8_param_gather", c.fp8_param_gather);
  if (f.has("fp8_recipe")) c.fp8_recipe = fp8_recipe_from(f.string("fp8_recipe"), where);
  c.distributed_optimizer_instances = as_int("num_distributed_optimizer_instances", 1, c.distributed_optimizer_instances);
  if (f.has("precision")) c.precision = precision_from(f.string("precision"), where);
  if (f.has("attention")) c.attention = attention_from(f.string("attention"), where);
  if (f.has("framework")) c.framework = load_framework(f.string("framework")).name;
  // A bare config object may carry the layout file's format and version beside its fields.
  f.refuse_unread({"format", "version"});
  return c;
}

}  // namespace cc
