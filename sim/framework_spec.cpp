#include "sim/framework_spec.h"

#include <map>

#include <fmt/ranges.h>

#include "sim/embedded_presets.h"
#include "sim/error.h"
#include "sim/json_fields.h"

namespace cc {

namespace {

FrameworkSpec framework_from_json(const nlohmann::json& doc, const std::string& where) {
  const JsonFields f(doc, where);
  FrameworkSpec s;
  s.name = f.string("name");
  s.description = f.string_or("description", "");
  s.blocking_p2p = f.boolean("blocking_p2p");
  s.interleaved_p2p_overlap = f.boolean("interleaved_p2p_overlap");
  s.layer_partition = f.choice("layer_partition", {"even", "deepspeed-uniform"}) == "even"
                          ? LayerPartition::Even
                          : LayerPartition::DeepSpeedUniform;
  s.overlap_grad_reduce = f.boolean("overlap_grad_reduce");
  s.overlap_param_gather = f.boolean("overlap_param_gather");
  s.flash_attention = f.boolean("flash_attention");
  s.pytorch = f.boolean("pytorch");
  s.transformer_engine = f.boolean("transformer_engine");
  s.cublas_workspace_mib = f.number("cublas_workspace_mib", 0);
  s.deterministic_mode = f.boolean_or("deterministic_mode", false);
  s.gradient_accumulation_fusion = f.boolean_or("gradient_accumulation_fusion", true);
  s.fused_cross_entropy = f.boolean_or("fused_cross_entropy", false);
  return s;
}

// Parsed once: simulate() looks the stack up on every call, the search from many threads.
const std::map<std::string, FrameworkSpec>& table() {
  static const std::map<std::string, FrameworkSpec> frameworks = [] {
    std::map<std::string, FrameworkSpec> t;
    const std::string prefix = "frameworks/";
    for (const auto& file : embedded_presets()) {
      if (file.path.rfind(prefix, 0) != 0) continue;
      const std::string where = fmt::format("framework preset '{}'", file.path);
      FrameworkSpec s = framework_from_json(parse_json(file.text, where), where);
      t.emplace(s.name, std::move(s));
    }
    return t;
  }();
  return frameworks;
}

}  // namespace

std::vector<std::string> framework_preset_names() {
  std::vector<std::string> names;
  for (const auto& [name, spec] : table()) names.push_back(name);
  return names;
}

const FrameworkSpec& load_framework(const std::string& name) {
  const auto& t = table();
  const auto it = t.find(name);
  if (it == t.end())
    fail("--framework '{}' is not known; valid: {}", name, fmt::join(framework_preset_names(), ", "));
  return it->second;
}

const char* to_string(LayerPartition p) { return p == LayerPartition::Even ? "even" : "deepspeed-uniform"; }

}  // namespace cc
