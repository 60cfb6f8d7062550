#include "interop/omegaconf.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "interop/layout_common.h"
#include "sim/error.h"
#include "sim/numbers.h"

namespace cc::interop {

namespace {

// yaml-cpp 0.7 parses recursively: a few thousand nested '[' or '{' exhaust the stack. No
// training config nests beyond a handful of levels; anything past this is not one.
constexpr int kMaxNesting = 64;
constexpr int kMaxInterpolationDepth = 32;
// Each key may expand into two others, so 32 levels could ask 2^32 lookups of one value; a real
// config resolves any key in a few dozen.
constexpr int kMaxInterpolations = 10'000;

void check_nesting(const std::string& text, const std::string& where) {
  int depth = 0, line = 1;
  for (const char ch : text) {
    if (ch == '\n') ++line;
    if (ch == '[' || ch == '{') ++depth;
    if (ch == ']' || ch == '}') depth = std::max(0, depth - 1);
    if (depth > kMaxNesting)
      fail("{}: line {} nests brackets more than {} deep; not a training config", where, line, kMaxNesting);
  }
}

// YAML::Load reads the first document of a stream and drops the rest, so a file of several
// documents is refused before it is parsed. A document marker ('---' or '...' at column 0,
// then a space or the line's end) cannot occur inside any scalar, so a line scan finds them;
// yaml-cpp's LoadAll, which would count them, can grow without end on malformed input. A '---'
// before any content only opens the first document.
void refuse_second_document(const std::string& text, const std::string& where) {
  bool content = false;  // a line of the first document that holds something
  int line = 0, marker_line = 0;
  std::string_view marker;  // the marker that ended the first document, once one has
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find('\n', begin);
    if (end == std::string::npos) end = text.size();
    std::string_view row(text.data() + begin, end - begin);
    begin = end + 1;
    ++line;
    const bool is_marker = (row.starts_with("---") || row.starts_with("...")) &&
                           (row.size() == 3 || row[3] == ' ' || row[3] == '\t' || row[3] == '\r');
    if (is_marker && content && marker.empty()) {
      marker = row.substr(0, 3);
      marker_line = line;
    }
    if (is_marker) row.remove_prefix(3);  // '--- value' holds a value
    if (!is_marker && row.starts_with('%')) continue;  // a directive
    const std::size_t first = row.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || row[first] == '#') continue;
    if (!marker.empty())
      fail("{}: a second YAML document begins after the '{}' at line {}; a NeMo config is one document, so give each "
           "its own file",
           where, marker, marker_line);
    content = true;
  }
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> parts;
  std::string part;
  for (const char ch : path) {
    if (ch == '.') {
      parts.push_back(part);
      part.clear();
    } else if (ch == '[' || ch == ']') {
      if (!part.empty()) parts.push_back(part);  // a.b[0] → a, b, 0
      part.clear();
    } else {
      part += ch;
    }
  }
  if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// Resolver arguments split at top-level commas (commas inside ${...} belong to it).
std::vector<std::string> split_arguments(const std::string& text) {
  std::vector<std::string> args;
  std::string current;
  int depth = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "${") == 0) ++depth;
    if (text[i] == '}' && depth > 0) --depth;
    if (text[i] == ',' && depth == 0) {
      args.push_back(trim(current));
      current.clear();
    } else {
      current += text[i];
    }
  }
  args.push_back(trim(current));
  return args;
}

// The end of the ${...} that opens at `open` (the index of '$'), or npos.
std::size_t closing_brace(const std::string& text, std::size_t open) {
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    if (text.compare(i, 2, "${") == 0) {
      ++depth;
      ++i;
    } else if (text[i] == '}' && --depth == 0) {
      return i;
    }
  }
  return std::string::npos;
}

// A resolver's result as OmegaConf would print it; beyond 2^53 a double no longer holds every
// whole number (and casting one above 2^63 is undefined), far past any training config.
std::optional<std::string> format_number(double v, bool integral) {
  if (!std::isfinite(v) || std::fabs(v) > 9.0e15) return std::nullopt;
  if (integral) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}

// yaml-cpp keeps a key written twice in one mapping and answers lookups with one of them, and it
// reads a merge key ("<<: *anchor") as an ordinary key named "<<". OmegaConf refuses the first
// and merges the second; either way a value would silently differ from what the user wrote.
void refuse_duplicate_and_merge_keys(const YAML::Node& node, const std::string& path, const std::string& where) {
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i)
      refuse_duplicate_and_merge_keys(node[i], fmt::format("{}[{}]", path, i), where);
    return;
  }
  if (!node.IsMap()) return;
  std::map<std::string, int> seen;  // key -> line
  for (const auto& item : node) {
    const std::string key = item.first.IsScalar() ? item.first.Scalar() : std::string("?");
    const int line = item.first.Mark().line + 1;
    const std::string at = path.empty() ? key : path + "." + key;
    if (key == "<<")
      fail("{}: '{}' at line {} is a YAML merge key, which clustercast does not expand; write the merged keys "
           "out under '{}'",
           where, at, line, path.empty() ? "the top level" : path);
    if (const auto [it, fresh] = seen.emplace(key, line); !fresh)
      fail("{}: '{}' is written twice (lines {} and {}); a YAML mapping holds each key once, so keep the one "
           "you mean",
           where, at, it->second, line);
    refuse_duplicate_and_merge_keys(item.second, at, where);
  }
}

}  // namespace

OmegaConfTree::OmegaConfTree(const std::string& text, std::string where) : where_(std::move(where)) {
  check_nesting(text, where_);
  refuse_second_document(text, where_);
  try {
    root_ = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    fail("{}: not valid YAML at line {}: {}", where_, e.mark.line + 1, e.msg);
  }
  if (!root_.IsMap()) fail("{}: a NeMo config is a YAML mapping of keys; this document is not one", where_);
  refuse_duplicate_and_merge_keys(root_, "", where_);
}

std::optional<YAML::Node> OmegaConfTree::lookup(const std::string& path) const {
  // reset() rebinds a Node; operator= would overwrite the node it refers to (yaml-cpp's way).
  YAML::Node node;
  node.reset(root_);
  for (const auto& part : split_path(path)) {
    const YAML::Node& current = node;
    if (current.IsMap()) {
      const YAML::Node child = current[part];
      if (!child) return std::nullopt;
      node.reset(child);
    } else if (const auto index = parse_integer(part); current.IsSequence() && index) {
      if (*index < 0 || static_cast<std::uint64_t>(*index) >= current.size()) return std::nullopt;
      node.reset(current[static_cast<std::size_t>(*index)]);
    } else {
      return std::nullopt;
    }
  }
  return node;
}

std::optional<std::string> OmegaConfTree::scalar(const std::string& key) const {
  asked_.insert(key);
  const auto node = lookup(key);
  if (!node || node->IsNull()) return std::nullopt;
  if (!node->IsScalar()) fail("{}: {} is a {}, not a single value", where_, key, node->IsMap() ? "mapping" : "list");
  const std::string raw = node->Scalar();
  interpolations_ = 0;
  // YAML's own spellings of null (yaml-cpp reports the plain scalar "null" as Null already).
  if (raw == "~" || raw == "null" || raw == "Null" || raw == "NULL") return std::nullopt;
  const std::string value = resolve(raw, key, 0);
  if (value == "???") fail("{}: {} is ??? (a value the config leaves for the user to give)", where_, key);
  if (value == "null" || value == "None") return std::nullopt;
  return value;
}

std::string OmegaConfTree::resolve(const std::string& value, const std::string& key, int depth) const {
  if (depth > kMaxInterpolationDepth)
    fail("{}: {}: interpolations nest deeper than {} (a loop?)", where_, key, kMaxInterpolationDepth);
  std::string out;
  for (std::size_t i = 0; i < value.size();) {
    if (value.compare(i, 2, "${") != 0) {
      out += value[i++];
      continue;
    }
    const std::size_t close = closing_brace(value, i);
    if (close == std::string::npos) fail("{}: {} has an unclosed interpolation '{}'", where_, key, value.substr(i));
    out += interpolate(value.substr(i + 2, close - i - 2), key, depth + 1);
    i = close + 1;
  }
  return out;
}

std::string OmegaConfTree::interpolate(const std::string& body, const std::string& key, int depth) const {
  const std::string shown = "${" + body + "}";
  if (++interpolations_ > kMaxInterpolations)
    fail("{}: {}: more than {} interpolations to resolve one value (it doubles at each level?)", where_, key,
         kMaxInterpolations);
  const auto colon = body.find(':');
  const bool is_resolver = colon != std::string::npos && body.find("${") > colon;
  if (!is_resolver) {
    // A reference: absolute from the root, or relative with leading dots (one dot: the mapping
    // that holds `key`; each further dot one level up).
    std::string path = trim(body);
    if (path.empty()) fail("{}: {}: empty interpolation '{}'", where_, key, shown);
    if (path[0] == '.') {
      std::vector<std::string> base = split_path(key);
      base.pop_back();
      std::size_t dots = 0;
      while (dots < path.size() && path[dots] == '.') ++dots;
      for (std::size_t up = 1; up < dots; ++up) {
        if (base.empty()) fail("{}: {}: '{}' climbs above the top of the file", where_, key, shown);
        base.pop_back();
      }
      std::string joined;
      for (const auto& b : base) joined += b + ".";
      path = joined + path.substr(dots);
    }
    auto target = lookup(path);
    // NeMo-Framework-Launcher mounts conf/training/*.yaml at `training`, and its files refer to
    // their own keys as ${training.model...}: read by itself, the file is that subtree.
    if (!target && path.rfind("training.", 0) == 0 && !lookup("training")) {
      path = path.substr(9);
      target = lookup(path);
    }
    if (!target || target->IsNull())
      fail("{}: {} refers to '{}', which names no value in this file; give the value itself", where_, key, shown);
    if (!target->IsScalar()) fail("{}: {} refers to '{}', a mapping or list, not a value", where_, key, shown);
    return resolve(target->Scalar(), path, depth);
  }
  const std::string name = trim(body.substr(0, colon));
  std::vector<std::string> args = split_arguments(body.substr(colon + 1));
  std::vector<double> numbers;
  bool integral = true;
  for (auto& arg : args) {
    arg = resolve(arg, key, depth);
    const auto v = parse_real(arg);
    if (!v) fail_at(key, "{}: {}: '{}' needs numbers; argument '{}' is not one", where_, key, shown, arg);
    integral = integral && parse_integer(arg).has_value();
    numbers.push_back(*v);
  }
  if (numbers.size() != 2)
    fail("{}: {}: '{}' takes two arguments, not {}", where_, key, shown, numbers.size());
  const double x = numbers[0], y = numbers[1];
  std::optional<std::string> result;
  if (name == "multiply") {
    result = format_number(x * y, integral);
  } else if (name == "sum") {
    result = format_number(x + y, integral);
  } else if (name == "divide_ceil" || name == "divide_floor") {
    if (y == 0) fail("{}: {}: '{}' divides by zero", where_, key, shown);
    result = format_number(name == "divide_ceil" ? std::ceil(x / y) : std::floor(x / y), true);
  } else {
    fail("{}: {}: resolver '{}' in '{}' is not one NeMo or its launcher registers; known: multiply, sum, "
         "divide_ceil, divide_floor",
         where_, key, name, shown);
  }
  if (!result) fail("{}: {}: '{}' is beyond the whole numbers a config can hold", where_, key, shown);
  return *result;
}

std::vector<std::string> OmegaConfTree::unread_values(const std::string& parent) const {
  std::vector<std::string> unread;
  const auto node = lookup(parent);
  if (!node || !node->IsMap()) return unread;
  for (const auto& entry : *node) {
    if (entry.second.IsMap() || !entry.first.IsScalar()) continue;
    const std::string key = parent + "." + entry.first.Scalar();
    // Read itself, or an entry of it (model.moe_layer_freq.0): the first asked key from "key."
    // on starts with it when any does.
    const auto entry_read = asked_.lower_bound(key + ".");
    const bool read = asked_.count(key) || (entry_read != asked_.end() && entry_read->rfind(key + ".", 0) == 0);
    if (!read) unread.push_back(entry.first.Scalar());
  }
  return unread;
}

}  // namespace cc::interop
