#include "sim/parallel_config.h"

#include <cstdint>

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

AttentionKernel default_attention(const std::string& framework) {
  return load_framework(framework).flash_attention ? AttentionKernel::Flash : AttentionKernel::Unfused;
}

ParallelGrid ParallelConfig::grid() const {
  return ParallelGrid(kDenseGridOrder, {{"tp", tp}, {"cp", cp}, {"dp", dp}, {"pp", pp}});
}

std::string ParallelConfig::summary() const {
  std::string s = fmt::format("tp{}", tp);
  if (cp > 1) s += fmt::format(" cp{} {}", cp, to_string(cp_comm_type));
  s += fmt::format(" pp{} dp{}{} mb{} gb{}", pp, dp, sequence_parallel ? " sp" : "", micro_batch, global_batch);
  if (virtual_stages > 1) s += fmt::format(" v{}", virtual_stages);
  s += fmt::format(" {}", to_string(recompute));
  if (recompute == RecomputeGranularity::Full)
    s += fmt::format("/{}{}", to_string(recompute_method), recompute_num_layers);
  if (distributed_optimizer) s += " distopt";
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
  if (f.has("precision")) c.precision = precision_from(f.string("precision"), where);
  if (f.has("attention")) c.attention = attention_from(f.string("attention"), where);
  if (f.has("framework")) c.framework = load_framework(f.string("framework")).name;
  return c;
}

}  // namespace cc
