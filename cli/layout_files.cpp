#include "cli/layout_files.h"

#include "sim/json_fields.h"

namespace cc::cli {

ParallelConfig read_layout_file(const std::string& path) {
  const auto doc = read_json_file(path, "layout file");
  const std::string where = "layout file '" + path + "'";
  if (doc.is_object() && doc.contains("config")) return config_from_json(doc.at("config"), where + " (config)");
  return config_from_json(doc, where);
}

}  // namespace cc::cli
