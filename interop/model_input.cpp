#include "interop/model_input.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "interop/hf_config.h"
#include "sim/json_fields.h"
#include "sim/presets.h"

namespace cc {

ModelSpec read_model_input(const std::string& arg, std::optional<int> seq_length, std::vector<std::string>* notes) {
  if (auto preset = model_preset(arg)) return *preset;
  return model_from_text(read_model_file(arg), fmt::format("model file '{}'", arg), seq_length, notes);
}

ModelSpec model_from_text(const std::string& text, const std::string& where, std::optional<int> seq_length,
                          std::vector<std::string>* notes) {
  const auto doc = parse_json(text, where);
  if (is_hf_config(doc)) {
    HfImport hf = model_from_hf_config(doc, where, seq_length);
    if (notes) notes->insert(notes->end(), hf.notes.begin(), hf.notes.end());
    if (notes && !hf.unread_keys.empty())
      notes->push_back(fmt::format("{}: keys not read, so not priced (check that none changes the model): {}", where,
                                   fmt::join(hf.unread_keys, ", ")));
    return hf.model;
  }
  return model_from_json(doc, where);
}

}  // namespace cc
