// json_fields.h — reads fields of a JSON object with errors that name the file and field; each
// refusal's SpecError::field() is the key's path from the top of the document ("gpu.hbm_gib").
// Every spec reader (model, cluster, config, cost database) goes through this, so a
// missing or mistyped field always produces the same kind of message.
#pragma once

#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/error.h"

namespace cc {

class JsonFields {
 public:
  // `where` names the document in messages, e.g. "model file llama.json".
  JsonFields(const nlohmann::json& object, std::string where);

  bool has(const std::string& key) const;
  const nlohmann::json& raw(const std::string& key) const;

  std::string string(const std::string& key) const;
  std::string string_or(const std::string& key, const std::string& fallback) const;
  // One of `choices`, compared case-insensitively; returns the choice as written there.
  std::string choice(const std::string& key, const std::vector<std::string>& choices) const;
  std::string choice_or(const std::string& key, const std::vector<std::string>& choices,
                        const std::string& fallback) const;
  // Integers are bounded above by `max_value` (default: what an int holds) so a value
  // never silently wraps when stored; checked in 64 bits, and a refusal names the range.
  // A whole float (4.0) counts as an integer.
  long long integer(const std::string& key, long long min_value, long long max_value = 2147483647) const;
  long long integer_or(const std::string& key, long long min_value, long long fallback,
                       long long max_value = 2147483647) const;
  double number(const std::string& key, double min_value) const;
  double number_or(const std::string& key, double min_value, double fallback) const;
  bool boolean(const std::string& key) const;
  bool boolean_or(const std::string& key, bool fallback) const;
  JsonFields object(const std::string& key) const;
  // Refuses a key of the object that no read above asked for — a misspelt field would otherwise
  // leave the file describing another model — naming the nearest field that was asked for.
  // Call once every field is read. `annotations`: keys that document the file ("source").
  void refuse_unread(const std::vector<std::string>& annotations = {}) const;
  // The keys of the object that no read above asked for, in the file's order (for files whose
  // unread keys are named rather than refused: HuggingFace configs carry many clustercast
  // has no use for).
  std::vector<std::string> unread() const;

  const std::string& where() const { return where_; }

 private:
  JsonFields(const nlohmann::json& object, std::string where, std::string key_prefix);
  // The SpecError field (sim/error.h) of `key`: its path from the document's top ("gpu.hbm_gib").
  std::string field(const std::string& key) const;

  const nlohmann::json& object_;
  std::string where_;
  std::string key_prefix_;  // "gpu." inside object("gpu"); empty at the top
  mutable std::set<std::string> asked_;  // every key a read asked for, present or not
};

// Parses text as JSON; a syntax error becomes a SpecError naming `where` and the position,
// and a number beyond a double (1e400) one naming the field that holds it.
nlohmann::json parse_json(const std::string& text, const std::string& where);
// The whole text of the regular file at `path`. Anything else is refused by name before a
// byte is read: a FIFO would block forever, a directory reads as empty, a device never ends.
// `what` names the file's role in messages ("model file", "cost database", ...). Every
// reader of a user-named input goes through this.
std::string read_regular_file(const std::string& path, const std::string& what);
// The same refusals without reading: for a command to check its inputs before it starts.
void check_regular_file(const std::string& path, const std::string& what);
// Reads and parses a file; a missing or non-regular file is a SpecError naming it.
nlohmann::json read_json_file(const std::string& path, const std::string& what);

}  // namespace cc
