#include "gui/project.h"

#include <fstream>
#include <sstream>

#include "sim/atomic_file.h"
#include "sim/error.h"
#include "sim/framework_spec.h"
#include "sim/presets.h"

namespace cc::gui {

RunRequest Project::request() const {
  RunRequest r;
  r.model = model;
  r.cluster = cluster;
  r.gpus = gpus;
  r.costs_file = costs_file;
  r.reserve = reserve;
  LayoutRequest& l = r.layout;
  l.config = config;
  l.config.framework = kDefaultFramework;  // the stack is `framework`, or the database's
  l.from_file = true;  // every value the setup shows stands as the user left it...
  if (!auto_dp) l.dp = config.dp;  // ...but DP, which follows the GPU count unless given
  // The optimizer's instances, a field greyed out without the distributed optimizer, apply with it.
  if (!config.distributed_optimizer) l.config.distributed_optimizer_instances = 1;
  l.global_batch_named = true;
  l.attention_named = true;
  l.framework = framework;
  l.switches = switches;
  return r;
}

ParallelConfig Project::resolved_config() const { return resolve_run(request()).config; }

bool Project::operator==(const Project& o) const { return project_to_json(*this) == project_to_json(o); }

Project project_from_presets(const std::string& model, const std::string& cluster, int gpus) {
  Project p;
  p.model_preset = model;
  p.model = load_model(model);
  p.cluster_preset = cluster;
  p.cluster = load_cluster(cluster);
  p.gpus = gpus;
  p.config.global_batch = gpus;
  p.config.attention = default_attention(p, p.model);  // as `clustercast simulate` does
  return p;
}

AttentionKernel default_attention(const Project& p, const ModelSpec& model) {
  // The stack as the resolver settles it: the one named, else the cost database's, else Megatron-Core.
  std::shared_ptr<const CostDatabase> measured;
  try {
    measured = read_measured_costs(p.costs_file);
  } catch (const SpecError&) {  // the run refuses the file beside its field; the default is the named stack's
  }
  return cc::default_attention(resolved_stack(p.framework, measured.get()), model);
}

void replace_model(Project& p, ModelSpec model) {
  const bool attention_was_default = p.config.attention == default_attention(p, p.model);
  p.model = std::move(model);
  if (attention_was_default) p.config.attention = default_attention(p, p.model);
}

namespace {

// MegatronSwitches in a project file, by Megatron-LM's flag names without the dashes.
constexpr std::pair<const char*, bool MegatronSwitches::*> kSwitchKeys[] = {
    {"no_masked_softmax_fusion", &MegatronSwitches::no_masked_softmax_fusion},
    {"deterministic_mode", &MegatronSwitches::deterministic_mode},
    {"no_gradient_accumulation_fusion", &MegatronSwitches::no_gradient_accumulation_fusion},
    {"use_tp_pp_dp_mapping", &MegatronSwitches::tp_pp_dp_rank_order},
    {"overlap_p2p_communication_warmup_flush", &MegatronSwitches::overlap_p2p_warmup_flush},
    {"overlap_param_gather_with_optimizer_step", &MegatronSwitches::param_gather_with_optimizer_step},
    {"transformer_impl_local", &MegatronSwitches::local_layers}};

}  // namespace

nlohmann::json project_to_json(const Project& p) {
  nlohmann::json config = config_to_json(p.config);
  // The layout file format names the CP type only where CP > 1; a project keeps what the user
  // chose at CP 1 as well, so raising CP later runs the type they picked.
  config["cp_comm_type"] = to_string(p.config.cp_comm_type);
  return {
      {"format", "clustercast-project"},
      {"version", kProjectVersion},
      {"model_preset", p.model_preset},
      {"model", model_to_json(p.model)},
      {"cluster_preset", p.cluster_preset},
      {"cluster", cluster_to_json(p.cluster)},
      {"gpus", p.gpus},
      {"auto_dp", p.auto_dp},
      {"costs_file", p.costs_file},
      {"framework", p.framework ? nlohmann::json(*p.framework) : nlohmann::json(nullptr)},
      {"config", config},
      {"train_tokens", p.train_tokens},
      {"every_rank", p.every_rank},
      {"reserve",
       {{"cuda_context_gib", p.reserve.cuda_context_gib},
        {"comm_buffers_gib", p.reserve.comm_buffers_gib},
        {"fragmentation_fraction", p.reserve.fragmentation_fraction},
        {"headroom_fraction", p.reserve.headroom_fraction}}},
      {"megatron_switches",
       [&] {
         nlohmann::json on = nlohmann::json::object();
         for (const auto& [key, member] : kSwitchKeys) on[key] = p.switches.*member;
         if (p.switches.ckpt_format) on["ckpt_format"] = *p.switches.ckpt_format;
         if (p.switches.cross_entropy_fusion_impl) on["cross_entropy_fusion_impl"] = *p.switches.cross_entropy_fusion_impl;
         return on;
       }()},
  };
}

Project project_from_json(const nlohmann::json& doc, const std::string& where) {
  if (!doc.is_object() || doc.value("format", "") != "clustercast-project")
    fail("{} is not a clustercast project file (no \"format\": \"clustercast-project\")", where);
  const int version = doc.value("version", 0);
  if (version < 1 || version > kProjectVersion)
    fail("{}: project version {} is not supported; this build reads versions 1 to {}", where, version,
         kProjectVersion);
  try {
    Project p;
    p.model_preset = doc.at("model_preset").get<std::string>();
    p.model = model_from_json(doc.at("model"), where + " model");
    p.cluster_preset = doc.at("cluster_preset").get<std::string>();
    p.cluster = cluster_from_json(doc.at("cluster"), where + " cluster");
    p.gpus = doc.at("gpus").get<int>();
    p.auto_dp = doc.at("auto_dp").get<bool>();
    p.costs_file = doc.at("costs_file").get<std::string>();
    p.config = config_from_json(doc.at("config"), where + " config");
    if (version >= 2) {
      if (!doc.at("framework").is_null()) p.framework = load_framework(doc.at("framework").get<std::string>()).name;
    } else if (p.config.framework != kDefaultFramework) {
      // Version 1 kept only the config's stack, and its default meant "none named": any other
      // stack was the user's choice.
      p.framework = p.config.framework;
    }
    p.train_tokens = doc.at("train_tokens").get<double>();
    p.every_rank = doc.at("every_rank").get<bool>();
    const auto& r = doc.at("reserve");
    p.reserve.cuda_context_gib = r.at("cuda_context_gib").get<double>();
    p.reserve.comm_buffers_gib = r.at("comm_buffers_gib").get<double>();
    p.reserve.fragmentation_fraction = r.at("fragmentation_fraction").get<double>();
    p.reserve.headroom_fraction = r.at("headroom_fraction").get<double>();
    // A switch added since the file was saved is off in it (Megatron-LM's default).
    if (version >= 5)
      for (const auto& [key, member] : kSwitchKeys)
        p.switches.*member = doc.at("megatron_switches").value(key, false);
    if (doc.contains("megatron_switches")) {
      const auto& switches = doc.at("megatron_switches");
      if (switches.contains("ckpt_format")) p.switches.ckpt_format = switches.at("ckpt_format").get<std::string>();
      if (switches.contains("cross_entropy_fusion_impl"))
        p.switches.cross_entropy_fusion_impl = switches.at("cross_entropy_fusion_impl").get<std::string>();
    }
    return p;
  } catch (const nlohmann::json::exception& e) {
    fail("{}: {}", where, e.what());
  }
}

void save_project(const std::string& path, const Project& p) {
  write_file_atomically(path, project_to_json(p).dump(2) + "\n");
}

Project load_project(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("project file '{}' cannot be opened", path);
  std::ostringstream text;
  text << in.rdbuf();
  const nlohmann::json doc = nlohmann::json::parse(text.str(), nullptr, false);
  if (doc.is_discarded()) fail("project file '{}' is not valid JSON", path);
  return project_from_json(doc, "project file '" + path + "'");
}

}  // namespace cc::gui
