#include "sim/json_fields.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/ranges.h>

namespace cc {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

JsonFields::JsonFields(const nlohmann::json& object, std::string where)
    : object_(object), where_(std::move(where)) {
  if (!object_.is_object()) fail("{}: expected a JSON object, found {}", where_, object_.type_name());
}

bool JsonFields::has(const std::string& key) const {
  return object_.contains(key) && !object_.at(key).is_null();
}

const nlohmann::json& JsonFields::raw(const std::string& key) const {
  if (!has(key)) fail("{}: field '{}' is missing", where_, key);
  return object_.at(key);
}

std::string JsonFields::string(const std::string& key) const {
  const auto& v = raw(key);
  if (!v.is_string()) fail("{}: field '{}' must be a string, found {}", where_, key, v.dump());
  return v.get<std::string>();
}

std::string JsonFields::string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

std::string JsonFields::choice(const std::string& key, const std::vector<std::string>& choices) const {
  const std::string value = lower(string(key));
  for (const auto& c : choices)
    if (lower(c) == value) return c;
  fail("{}: field '{}' is '{}'; valid values: {}", where_, key, string(key), fmt::join(choices, ", "));
}

std::string JsonFields::choice_or(const std::string& key, const std::vector<std::string>& choices,
                                  const std::string& fallback) const {
  return has(key) ? choice(key, choices) : fallback;
}

long long JsonFields::integer(const std::string& key, long long min_value, long long max_value) const {
  const auto& v = raw(key);
  const bool whole = v.is_number_integer() || (v.is_number_float() && v.get<double>() == std::floor(v.get<double>()));
  if (!whole) fail("{}: field '{}' must be an integer >= {}, found {}", where_, key, min_value, v.dump());
  const double as_double = v.get<double>();
  if (as_double > static_cast<double>(max_value) || (v.is_number_unsigned() && v.get<unsigned long long>() > 9e18))
    fail("{}: field '{}' is {}; it must be at most {}", where_, key, v.dump(), max_value);
  const auto value = v.is_number_integer() ? v.get<long long>() : static_cast<long long>(as_double);
  if (value < min_value) fail("{}: field '{}' is {}; it must be >= {}", where_, key, value, min_value);
  return value;
}

long long JsonFields::integer_or(const std::string& key, long long min_value, long long fallback,
                                 long long max_value) const {
  return has(key) ? integer(key, min_value, max_value) : fallback;
}

double JsonFields::number(const std::string& key, double min_value) const {
  const auto& v = raw(key);
  if (!v.is_number()) fail("{}: field '{}' must be a number >= {}, found {}", where_, key, min_value, v.dump());
  const double value = v.get<double>();
  if (!(value >= min_value)) fail("{}: field '{}' is {}; it must be >= {}", where_, key, value, min_value);
  return value;
}

double JsonFields::number_or(const std::string& key, double min_value, double fallback) const {
  return has(key) ? number(key, min_value) : fallback;
}

bool JsonFields::boolean(const std::string& key) const {
  const auto& v = raw(key);
  if (!v.is_boolean()) fail("{}: field '{}' must be true or false, found {}", where_, key, v.dump());
  return v.get<bool>();
}

bool JsonFields::boolean_or(const std::string& key, bool fallback) const {
  return has(key) ? boolean(key) : fallback;
}

JsonFields JsonFields::object(const std::string& key) const {
  const auto& v = raw(key);
  if (!v.is_object()) fail("{}: field '{}' must be an object, found {}", where_, key, v.type_name());
  return JsonFields(v, where_ + " (" + key + ")");
}

nlohmann::json parse_json(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail("{}: not valid JSON (byte {}): {}", where, e.byte, e.what());
  }
}

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{} '{}' cannot be opened (no such file or not readable)", what, path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_json(text.str(), fmt::format("{} '{}'", what, path));
}

}  // namespace cc
