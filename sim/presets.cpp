#include "sim/presets.h"

#include <filesystem>

#include <fmt/ranges.h>

#include "sim/embedded_presets.h"
#include "sim/error.h"
#include "sim/json_fields.h"

namespace cc {

namespace {

std::vector<std::string> names_in(const std::string& folder) {
  std::vector<std::string> names;
  const std::string prefix = folder + "/";
  for (const auto& f : embedded_presets())
    if (f.path.rfind(prefix, 0) == 0) names.push_back(f.path.substr(prefix.size(), f.path.size() - prefix.size() - 5));
  return names;
}

const EmbeddedFile* find_preset(const std::string& folder, const std::string& name) {
  for (const auto& f : embedded_presets())
    if (f.path == folder + "/" + name + ".json") return &f;
  return nullptr;
}

// Without throwing: std::filesystem::exists throws for a name the system cannot look up (one
// longer than NAME_MAX, "File name too long"), which made such a --model exit 1 "internal
// error" (found by tests/fuzz through a layout file's --cluster). Such a name is no file.
bool file_exists(const std::string& s) {
  std::error_code ec;
  return std::filesystem::exists(s, ec);
}

bool looks_like_path(const std::string& s) {
  return s.find('/') != std::string::npos || s.find('.') != std::string::npos || file_exists(s);
}

}  // namespace

std::vector<std::string> model_preset_names() { return names_in("models"); }
std::vector<std::string> cluster_preset_names() { return names_in("clusters"); }

std::optional<ModelSpec> model_preset(const std::string& name) {
  const EmbeddedFile* f = find_preset("models", name);
  if (!f) return std::nullopt;
  const std::string where = fmt::format("model preset '{}'", name);
  const auto doc = parse_json(f->text, where);
  // A preset that names another ("same_as") is that model under the name users know it by
  // (mt-nlg-530b is Korthikanti's gpt-530b): the shape lives in one file only.
  if (doc.is_object() && doc.contains("same_as")) {
    const std::string target = JsonFields(doc, where).string("same_as");
    const EmbeddedFile* t = find_preset("models", target);
    const std::string target_where = fmt::format("model preset '{}'", target);
    const auto shape = t ? parse_json(t->text, target_where) : nlohmann::json();
    if (!shape.is_object() || shape.contains("same_as"))
      fail("{}: same_as '{}' is not a model preset with a shape of its own", where, target);
    ModelSpec m = model_from_json(shape, target_where);
    m.name = name;
    return m;
  }
  return model_from_json(doc, where);
}

std::string read_model_file(const std::string& path) {
  if (!looks_like_path(path) || !file_exists(path))
    fail("--model '{}' is neither a preset nor an existing file; presets: {}", path,
         fmt::join(model_preset_names(), ", "));
  return read_regular_file(path, "model file");
}

ModelSpec load_model(const std::string& arg) {
  if (auto preset = model_preset(arg)) return *preset;
  const std::string where = fmt::format("model file '{}'", arg);
  return model_from_json(parse_json(read_model_file(arg), where), where);
}

ClusterSpec load_cluster(const std::string& arg) {
  if (const EmbeddedFile* f = find_preset("clusters", arg)) {
    const std::string where = fmt::format("cluster preset '{}'", arg);
    return cluster_from_json(parse_json(f->text, where), where);
  }
  if (!looks_like_path(arg) || !file_exists(arg))
    fail("--cluster '{}' is neither a preset nor an existing file; presets: {}", arg,
         fmt::join(cluster_preset_names(), ", "));
  return cluster_from_json(read_json_file(arg, "cluster file"), fmt::format("cluster file '{}'", arg));
}

}  // namespace cc
