// moe_layer_freq.h — Megatron-LM's --moe-layer-freq, read and written as Megatron-LM reads it
// (megatron/training/arguments.py, moe_freq_type and _eval_pattern): an integer N (layer i is an
// MoE layer when i mod N is 0), or a Python list expression such as "([0]*3+[1]*58)" — digits,
// commas, brackets, parentheses, + and * only — evaluated as Python evaluates it. Megatron-Core
// then takes an int or a list of 0/1 entries, one per layer (gpt_layer_specs.py).
#pragma once

#include <string>

#include "sim/moe_spec.h"

namespace cc {

// Sets `moe.layer_freq`, or `moe.layer_pattern` (entries other than 0 and 1 are kept as 2, for
// ModelSpec::validate() to refuse with the layer count at hand). A character Megatron-LM refuses,
// a Python error (a syntax error, a list added to an integer), a tuple or nested list, or a list
// longer than any model's layers is a SpecError whose field is `flag`.
void moe_layer_freq_from(const std::string& text, MoeSpec& moe, const std::string& flag, const std::string& where);

// The value Megatron-LM reads back to the same layers: the integer, or the pattern as runs,
// "([0]*3+[1]*58)".
std::string moe_layer_freq_text(const MoeSpec& moe);

}  // namespace cc
