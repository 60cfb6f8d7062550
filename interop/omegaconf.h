// omegaconf.h — reading a NeMo / Hydra YAML as OmegaConf would: dotted keys, and the
// interpolations NeMo's configs use, resolved on demand (as OmegaConf does, so a data path
// with ${data_dir} in it does not matter until someone reads it):
//   ${a.b.c}  ${.sibling}  ${..uncle}  ${a.list.0}
//   ${multiply:x,y} and ${sum:x,y}        (NeMo's hydra_runner registers them)
//   ${divide_ceil:x,y} ${divide_floor:x,y} (NeMo-Framework-Launcher's main.py registers them)
// An interpolation that cannot be resolved (a key the file does not hold, a resolver nobody
// registers, a loop) is a SpecError naming it and the key being read.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace cc::interop {

class OmegaConfTree {
 public:
  // Parses `text` (a SpecError naming `where` and the line on malformed YAML).
  OmegaConfTree(const std::string& text, std::string where);

  // The scalar at dotted `key`, interpolations resolved; nullopt when the key is absent or
  // null. A mapping or list there, or "???" (OmegaConf's mandatory-missing), is a SpecError.
  std::optional<std::string> scalar(const std::string& key) const;
  bool has(const std::string& key) const { return scalar(key).has_value(); }
  // The keys directly under the mapping at dotted `parent` that hold a value or a list (not a
  // mapping) and that no scalar() call asked for, themselves or an entry of theirs: what a
  // reader skipped, in the file's order.
  std::vector<std::string> unread_values(const std::string& parent) const;

  const YAML::Node& root() const { return root_; }
  const std::string& where() const { return where_; }

 private:
  std::string resolve(const std::string& value, const std::string& key, int depth) const;
  std::string interpolate(const std::string& body, const std::string& key, int depth) const;
  std::optional<YAML::Node> lookup(const std::string& path) const;

  YAML::Node root_;
  std::string where_;
  mutable int interpolations_ = 0;  // in the current scalar() call
  mutable std::set<std::string> asked_;  // every key scalar() was asked for, present or not
};

}  // namespace cc::interop
