#include "cli/value_lists.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <sstream>

#include <fmt/ranges.h>

#include "sim/error.h"
#include "sim/numbers.h"

namespace cc::cli {

namespace {

// One value of the list, read as every number is (sim/numbers.h): base-10 digits, so "010" is 10.
int positive(const std::string& word, const std::string& flag, const std::string& text) {
  constexpr std::int64_t kMax = std::numeric_limits<int>::max();
  const auto v = parse_integer(word);
  if (!v || *v < 1 || *v > kMax)
    fail_at(flag, "{} '{}': '{}' is not a whole number {}; write e.g. 8, 4,8,16 or 1..4", flag, text, word,
            integer_range_text(1, kMax));
  return static_cast<int>(*v);
}

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> parts;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  return parts;
}

}  // namespace

std::vector<int> parse_int_list(const std::string& text, const std::string& flag) {
  std::vector<int> values;
  for (const std::string& part : split(text)) {
    const auto dots = part.find("..");
    if (dots == std::string::npos) {
      values.push_back(positive(part, flag, text));
      continue;
    }
    const int lo = positive(part.substr(0, dots), flag, text), hi = positive(part.substr(dots + 2), flag, text);
    if (hi < lo || hi - lo > 4096) fail_at(flag, "{} '{}': range {}..{} is empty or too long", flag, text, lo, hi);
    for (int v = lo; v <= hi; ++v) values.push_back(v);
  }
  if (values.empty()) fail_at(flag, "{} is empty; write e.g. 8, 4,8,16 or 1..4", flag);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::vector<std::string> parse_word_list(const std::string& text, const std::string& flag,
                                         const std::vector<std::string>& choices) {
  std::vector<std::string> words;
  for (const std::string& part : split(text)) {
    if (std::find(choices.begin(), choices.end(), part) == choices.end())
      fail_at(flag, "{} '{}': '{}' is not one of {}", flag, text, part, fmt::join(choices, ", "));
    if (std::find(words.begin(), words.end(), part) == words.end()) words.push_back(part);
  }
  if (words.empty()) fail_at(flag, "{} is empty; choose from {}", flag, fmt::join(choices, ", "));
  return words;
}

}  // namespace cc::cli
