#include "cli/common_options.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "sim/atomic_file.h"
#include "sim/error.h"

namespace cc::cli {

void check_output_folder(const std::string& path, const char* flag) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !std::filesystem::is_directory(parent, ec)) {
    // A name longer than the file system allows, or a folder that cannot be searched, is not
    // "missing": say what the system says.
    if (ec && ec != std::errc::no_such_file_or_directory)
      fail("{} {}: folder '{}' cannot be used: {}", flag, path, parent.string(), ec.message());
    fail("{} {}: folder '{}' does not exist", flag, path, parent.string());
  }
  check_output_target(path, flag);
}

void check_folder_can_be_made(const std::string& path, const char* flag) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path target = fs::absolute(path, ec);
  if (ec) fail("{} {}: {}", flag, path, ec.message());
  // The nearest ancestor that exists; a name too long to look up does not exist either.
  fs::path existing = target;
  std::vector<std::string> to_make;
  while (existing.has_relative_path()) {
    const bool there = fs::exists(existing, ec);
    if (ec && ec != std::errc::filename_too_long && ec != std::errc::no_such_file_or_directory)
      fail("{} {}: '{}' cannot be used: {}", flag, path, existing.string(), ec.message());
    if (there) break;
    to_make.push_back(existing.filename().string());
    existing = existing.parent_path();
  }
  if (!fs::is_directory(existing, ec))
    fail("{} {}: '{}' is not a folder, so no folder can be made in it", flag, path, existing.string());
  if (::access(existing.c_str(), W_OK | X_OK) != 0)
    fail("{} {}: folder '{}' is not writable: {}", flag, path, existing.string(), std::strerror(errno));
  const long name_max = ::pathconf(existing.c_str(), _PC_NAME_MAX);
  for (const std::string& name : to_make)
    if (name_max > 0 && static_cast<long>(name.size()) > name_max)
      fail("{} {}: the folder name '{}...' is {} bytes; this file system allows {}", flag, path, name.substr(0, 32),
           name.size(), name_max);
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
