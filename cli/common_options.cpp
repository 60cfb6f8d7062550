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

void check_outputs_apart(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    const NamedPath& out = outputs[i];
    if (out.path.empty()) continue;
    for (std::size_t j = 0; j < i; ++j)
      if (!outputs[j].path.empty() && same_file(outputs[j].path, out.path))
        fail("{} '{}' and {} '{}' name the same file; give each output its own path", outputs[j].flag, outputs[j].path,
             out.flag, out.path);
    for (const NamedPath& in : inputs) {
      std::error_code ec;
      if (in.path.empty() || !std::filesystem::is_regular_file(in.path, ec)) continue;
      if (same_file(in.path, out.path))
        fail("{} '{}' would overwrite {} '{}', which this command reads; give the output another path", out.flag,
             out.path, in.flag, in.path);
    }
  }
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
