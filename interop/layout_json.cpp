// layout_json.cpp — our own layout format: the config, model, cluster and prediction as JSON
// (format "clustercast-layout", version 1).
#include <limits>

#include "interop/layout_common.h"
#include "sim/error.h"
#include "sim/json_fields.h"
#include "sim/result_json.h"

namespace cc {

namespace interop {

LayoutFile read_json_layout(const std::string& text, const std::string& where) {
  const auto doc = parse_json(text, where);
  LayoutFile out;
  const JsonFields f(doc, where);
  // Either an exported layout with a "config" object, or a bare config object.
  // layout_json() writes format "clustercast-layout", version 1: refuse what we did not write
  // rather than read a future or foreign file as if it were ours.
  if (f.has("format") && f.string("format") != "clustercast-layout")
    fail("{}: format is '{}'; the only layout format read is 'clustercast-layout'", where, f.string("format"));
  if (f.has("version") && f.integer("version", 0) != 1)
    fail("{}: version is {}; this clustercast reads layout version 1", where, f.raw("version").dump());
  const nlohmann::json& config_doc = f.has("config") ? f.raw("config") : doc;
  const JsonFields config(config_doc, where);
  for (const char* key : {"tensor_model_parallel_size", "pipeline_model_parallel_size"})
    if (!config.has(key)) fail("{}: config field '{}' is missing (not a clustercast layout?)", where, key);
  out.config = config_from_json(config_doc, where);
  out.global_batch_named = config.has("global_batch_size");
  if (!f.has("config")) return out;
  if (f.has("model") && f.raw("model").is_object()) out.model = model_from_json(f.raw("model"), where + " (model)");
  if (f.has("cluster_spec")) out.cluster = cluster_from_json(f.raw("cluster_spec"), where + " (cluster_spec)");
  if (f.has("gpus")) out.gpus = static_cast<int>(f.integer("gpus", 1));
  if (f.has("memory_reserve")) {
    const JsonFields m = f.object("memory_reserve");
    // Any number here: the range checks are the flags' own (cli ClusterFlags::reserve), one
    // path for values from flags and from files.
    constexpr double kAny = std::numeric_limits<double>::lowest();
    out.reserve = MemoryReserve{m.number("cuda_context_gib", kAny), m.number("comm_buffers_gib", kAny),
                                m.number("fragmentation_fraction", kAny), m.number("headroom_fraction", kAny)};
  }
  return out;
}

}  // namespace interop

std::string layout_json(const SimResult& r, const MemoryReserve& m) {
  nlohmann::json doc = result_to_json(r);
  doc["format"] = "clustercast-layout";
  doc["version"] = 1;
  doc["cluster_spec"] = cluster_to_json(r.cluster);
  doc["memory_reserve"] = {{"cuda_context_gib", m.cuda_context_gib},
                           {"comm_buffers_gib", m.comm_buffers_gib},
                           {"fragmentation_fraction", m.fragmentation_fraction},
                           {"headroom_fraction", m.headroom_fraction}};
  return doc.dump(2) + "\n";
}

}  // namespace cc
