#include "sim/calibration.h"

#include "sim/embedded_presets.h"
#include "sim/error.h"
#include "sim/json_fields.h"

namespace cc {

namespace {

constexpr const char* kFormat = "clustercast-calibration";
constexpr const char* kPath = "calibration/analytic-params.json";

void apply(AnalyticParams& p, const std::map<std::string, double>& overrides) {
  for (const auto& field : analytic_param_fields()) {
    const auto it = overrides.find(field.name);
    if (it != overrides.end()) p.*field.member = it->second;
  }
}

std::map<std::string, std::map<std::string, double>> read_groups(const nlohmann::json& doc, const char* key,
                                                                 const std::string& where) {
  std::map<std::string, std::map<std::string, double>> groups;
  if (!doc.contains(key)) return groups;
  if (!doc[key].is_object()) fail("{}: '{}' must be an object of named parameter sets", where, key);
  for (const auto& [group, values] : doc[key].items()) {
    const std::string w = fmt::format("{} {}.{}", where, key, group);
    if (!values.is_object()) fail("{}: must be an object of parameter values", w);
    const JsonFields f(values, w);
    for (const auto& [name, value] : values.items()) {
      bool known = false;
      for (const auto& field : analytic_param_fields()) known = known || name == field.name;
      if (!known) fail("{}: '{}' is not a parameter of the analytic model", w, name);
      groups[group][name] = f.number(name, 0.0);
    }
  }
  return groups;
}

}  // namespace

std::string gpu_generation(const GpuSpec& gpu) {
  const std::string& n = gpu.name;
  auto has = [&](const char* s) { return n.find(s) != std::string::npos; };
  if (has("A100") || has("A800") || has("A30")) return "ampere";
  if (has("H100") || has("H200") || has("H800") || has("GH200")) return "hopper";
  if (has("V100")) return "volta";
  if (has("B100") || has("B200") || has("GB200")) return "blackwell";
  return "other";
}

AnalyticParams Calibration::params_for(const GpuSpec& gpu, const std::string& framework) const {
  AnalyticParams p = defaults;
  if (const auto g = generations.find(gpu_generation(gpu)); g != generations.end()) apply(p, g->second);
  if (const auto f = frameworks.find(framework); f != frameworks.end()) apply(p, f->second);
  return p;
}

std::optional<ErrorBand> Calibration::band_for(int gpus) const {
  std::optional<ErrorBand> band;
  for (const ErrorBand& b : held_out)
    if (b.min_gpus <= gpus) band = b;
  return band;
}

Calibration calibration_from_json(const nlohmann::json& doc, const std::string& where) {
  const JsonFields f(doc, where);
  if (f.string("format") != kFormat) fail("{}: format '{}' is not '{}'", where, f.string("format"), kFormat);
  const long long version = f.integer("version", 1);
  if (version != Calibration::kVersion)
    fail("{}: version {} is not supported; this clustercast reads version {}", where, version, Calibration::kVersion);
  Calibration c;
  const JsonFields d = f.object("defaults");
  // A constant the file does not name keeps the model's built-in value (a file written before
  // the constant existed).
  for (const auto& field : analytic_param_fields())
    if (d.has(field.name)) c.defaults.*field.member = d.number(field.name, 0.0);
  c.generations = read_groups(doc, "generations", where);
  c.frameworks = read_groups(doc, "frameworks", where);
  if (f.has("held_out_error")) {
    const nlohmann::json& bands = f.raw("held_out_error");
    if (!bands.is_array()) fail("{}: held_out_error must be a list of error bands", where);
    for (std::size_t i = 0; i < bands.size(); ++i) {
      const JsonFields e(bands[i], fmt::format("{} held_out_error[{}]", where, i));
      ErrorBand b;
      b.min_gpus = static_cast<int>(e.integer("min_gpus", 1));
      b.low = e.number("low_ratio", 0.0);
      b.high = e.number("high_ratio", b.low);
      b.mean_abs = e.number("mean_abs", 0.0);
      b.within_job_mean_abs = e.number("within_job_mean_abs", 0.0);
      b.basis = e.string_or("basis", "");
      if (!c.held_out.empty() && b.min_gpus <= c.held_out.back().min_gpus)
        fail("{}: held_out_error bands must be in ascending min_gpus", where);
      c.held_out.push_back(b);
    }
  }
  if (f.has("provenance")) c.provenance = f.raw("provenance");
  return c;
}

nlohmann::json calibration_to_json(const Calibration& c) {
  nlohmann::json j;
  j["format"] = kFormat;
  j["version"] = Calibration::kVersion;
  j["provenance"] = c.provenance;
  for (const auto& field : analytic_param_fields()) j["defaults"][field.name] = c.defaults.*field.member;
  j["generations"] = c.generations;
  j["frameworks"] = c.frameworks;
  j["held_out_error"] = nlohmann::json::array();
  for (const ErrorBand& b : c.held_out)
    j["held_out_error"].push_back({{"min_gpus", b.min_gpus},
                                   {"low_ratio", b.low},
                                   {"high_ratio", b.high},
                                   {"mean_abs", b.mean_abs},
                                   {"within_job_mean_abs", b.within_job_mean_abs},
                                   {"basis", b.basis}});
  return j;
}

const Calibration& embedded_calibration() {
  static const Calibration calibration = [] {
    for (const auto& file : embedded_presets())
      if (file.path == kPath) {
        const std::string where = fmt::format("calibration file 'traces/presets/{}'", kPath);
        return calibration_from_json(parse_json(file.text, where), where);
      }
    return Calibration{};  // a build without the file runs on the hand-derived defaults
  }();
  return calibration;
}

}  // namespace cc
