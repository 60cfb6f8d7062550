// presets.h — resolves `--model` and `--cluster` arguments: a preset name from
// traces/presets/, or a path to a JSON file of our format. A HuggingFace config.json is another
// tool's format: interop/model_input.h reads a --model argument that may be one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/cluster_spec.h"
#include "sim/model_spec.h"

namespace cc {

ModelSpec load_model(const std::string& name_or_path);
// The model preset of that name, or none.
std::optional<ModelSpec> model_preset(const std::string& name);
// The text of the --model file `path`; a name that is neither a preset nor an existing file
// is refused, naming the presets.
std::string read_model_file(const std::string& path);
ClusterSpec load_cluster(const std::string& name_or_path);


std::vector<std::string> model_preset_names();
std::vector<std::string> cluster_preset_names();

}  // namespace cc
