// presets.h — resolves `--model` and `--cluster` arguments: a preset name from
// traces/presets/, or a path to a JSON file (our format, or a HuggingFace config.json).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/cluster_spec.h"
#include "sim/model_spec.h"

namespace cc {

// `seq_length` is the user's --seq-length, which a HuggingFace config may need (Falcon's has no
// length); `notes`, when given, receives what a HuggingFace import assumed, for the caller to print.
ModelSpec load_model(const std::string& name_or_path, std::optional<int> seq_length = std::nullopt,
                     std::vector<std::string>* notes = nullptr);
ClusterSpec load_cluster(const std::string& name_or_path);

// The text of a --model file: our model JSON or a HuggingFace config.json, told apart by
// content. `where` names the document in errors. load_model reads a file through it, and the
// fuzz target (tests/fuzz) calls it directly, so both see the same dispatch.
ModelSpec model_from_text(const std::string& text, const std::string& where, std::optional<int> seq_length = std::nullopt,
                          std::vector<std::string>* notes = nullptr);

std::vector<std::string> model_preset_names();
std::vector<std::string> cluster_preset_names();

}  // namespace cc
