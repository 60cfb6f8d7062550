#include "cli/value_lists.h"

#include <algorithm>
#include <sstream>

#include <fmt/ranges.h>

#include "sim/error.h"

namespace cc::cli {

namespace {

int positive(const std::string& word, const std::string& flag, const std::string& text) {
  std::size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(word, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != word.size() || word.empty() || v < 1)
    fail("{} '{}': '{}' is not a positive integer; write e.g. 8, 4,8,16 or 1..4", flag, text, word);
  return v;
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
    if (hi < lo || hi - lo > 4096) fail("{} '{}': range {}..{} is empty or too long", flag, text, lo, hi);
    for (int v = lo; v <= hi; ++v) values.push_back(v);
  }
  if (values.empty()) fail("{} is empty; write e.g. 8, 4,8,16 or 1..4", flag);
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::vector<std::string> parse_word_list(const std::string& text, const std::string& flag,
                                         const std::vector<std::string>& choices) {
  std::vector<std::string> words;
  for (const std::string& part : split(text)) {
    if (std::find(choices.begin(), choices.end(), part) == choices.end())
      fail("{} '{}': '{}' is not one of {}", flag, text, part, fmt::join(choices, ", "));
    if (std::find(words.begin(), words.end(), part) == words.end()) words.push_back(part);
  }
  if (words.empty()) fail("{} is empty; choose from {}", flag, fmt::join(choices, ", "));
  return words;
}

}  // namespace cc::cli
