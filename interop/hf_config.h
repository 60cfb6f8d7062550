// hf_config.h — reads a HuggingFace transformers config.json into a ModelSpec.
//
// The architecture is decided by `model_type` (or `architectures` when it is missing), never
// guessed from which keys happen to be present: Llama 2 files carry no rope_theta and still use
// RoPE, Falcon files carry no max_position_embeddings. Mixture-of-experts classes (Mixtral,
// Qwen2/Qwen3-MoE, DeepSeek-V2/V3 with multi-latent attention and MTP, OLMoE, gpt-oss) are read
// with their experts, biases, norms and routers; expert keys in a dense family are refused (a
// dense spec would count one expert's MLP instead of all of them). What the spec cannot
// represent is refused by name, and what it represents only approximately is said in a note.
//
// It lives in interop/ with the other tools' formats: sim reads only its own model JSON, and
// interop/model_input.h tells a HuggingFace file from ours when a --model argument is a path.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/model_spec.h"

namespace cc {

struct HfImport {
  ModelSpec model;
  // What the import assumed or approximated (which architectural detail is simulated
  // differently), for the caller to show the user.
  std::vector<std::string> notes;
  // The file's keys the import did not read (token ids, initialisation, generation settings,
  // and any key it does not know — a misspelt one too), for the caller to name.
  std::vector<std::string> unread_keys;
};

// `seq_length` is the length the user asked for (--seq-length); without it the import is
// refused, naming the file's position limit (the longest the model supports, not a training
// length). `where` names the document in errors.
HfImport model_from_hf_config(const nlohmann::json& doc, const std::string& where, std::optional<int> seq_length);

// The longest sequence the model supports (max_position_embeddings, GPT-2's n_positions), if
// the file gives it: an upper bound for --seq-length, never a default for it.
std::optional<long long> hf_position_limit(const nlohmann::json& doc, const std::string& where);

// True when `doc` is a HuggingFace config rather than our model JSON (which names num_layers).
bool is_hf_config(const nlohmann::json& doc);

// The model_type values the reader accepts, for messages and --help.
const std::vector<std::string>& hf_model_types();

}  // namespace cc
