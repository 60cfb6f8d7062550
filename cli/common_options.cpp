#include "cli/common_options.h"

#include <filesystem>

#include "sim/atomic_file.h"
#include "sim/error.h"

namespace cc::cli {

void check_output_folder(const std::string& path, const char* flag) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent))
    fail("{} {}: folder '{}' does not exist", flag, path, parent.string());
  check_output_target(path, flag);
}

double parse_token_count(const std::string& text, const std::string& flag) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    fail("{} '{}' is not a number; write e.g. 300e9 or 300B", flag, text);
  }
  std::string suffix = text.substr(used);
  double scale = 1;
  if (suffix == "K" || suffix == "k") scale = 1e3;
  else if (suffix == "M") scale = 1e6;
  else if (suffix == "B" || suffix == "G") scale = 1e9;
  else if (suffix == "T") scale = 1e12;
  else if (!suffix.empty()) fail("{} '{}' has an unknown suffix '{}'; use K, M, B or T", flag, text, suffix);
  // 1e16 tokens is a thousand times the largest runs published (about 1.5e13, 2024);
  // beyond it a budget is a typo, and near 1e308 it prints "inf days".
  constexpr double kMaxTokens = 1e16;
  const double tokens = value * scale;
  if (!(tokens > 0 && tokens <= kMaxTokens))
    fail("{} '{}' must be a positive token count of at most 1e16 (10000T)", flag, text);
  return tokens;
}

}  // namespace cc::cli
