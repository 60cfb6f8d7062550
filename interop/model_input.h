// model_input.h — what `--model` names: a preset, our model JSON, or a HuggingFace
// config.json, told apart by content. The command line, the GUI and the fuzz target read a
// --model argument through here, so all see the same dispatch.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/model_spec.h"

namespace cc {

// `seq_length` is the user's --seq-length, which a HuggingFace config may need (Falcon's has no
// length); `notes`, when given, receives what a HuggingFace import assumed, for the caller to print.
ModelSpec read_model_input(const std::string& name_or_path, std::optional<int> seq_length = std::nullopt,
                           std::vector<std::string>* notes = nullptr);

// The text of a --model file: our model JSON or a HuggingFace config.json. `where` names the
// document in errors.
ModelSpec model_from_text(const std::string& text, const std::string& where, std::optional<int> seq_length = std::nullopt,
                          std::vector<std::string>* notes = nullptr);

}  // namespace cc
