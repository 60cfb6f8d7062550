// value_lists.h — parses the list-valued flags of `search`: "8", "4,8,16", "1..4".
#pragma once

#include <string>
#include <vector>

namespace cc::cli {

// Throws SpecError naming `flag` on anything that is not positive integers in those forms.
std::vector<int> parse_int_list(const std::string& text, const std::string& flag);
// Comma-separated words, each one of `choices`.
std::vector<std::string> parse_word_list(const std::string& text, const std::string& flag,
                                         const std::vector<std::string>& choices);

}  // namespace cc::cli
