#include "sim/json_fields.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/ranges.h>

#include "sim/numbers.h"

namespace cc {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

JsonFields::JsonFields(const nlohmann::json& object, std::string where) : JsonFields(object, std::move(where), "") {}

JsonFields::JsonFields(const nlohmann::json& object, std::string where, std::string key_prefix)
    : object_(object), where_(std::move(where)), key_prefix_(std::move(key_prefix)) {
  if (!object_.is_object())
    fail_at(key_prefix_.empty() ? "" : key_prefix_.substr(0, key_prefix_.size() - 1),
            "{}: expected a JSON object, found {}", where_, object_.type_name());
}

std::string JsonFields::field(const std::string& key) const { return key_prefix_ + key; }

bool JsonFields::has(const std::string& key) const {
  asked_.insert(key);
  return object_.contains(key) && !object_.at(key).is_null();
}

namespace {

// Edits (insert, delete, replace a character) that turn `a` into `b`.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The candidate within three edits of `key` (case aside) that is closest, or "" — beyond three
// edits a guess misleads more than it helps.
template <typename Keys>
std::string nearest_key(const std::string& key, const Keys& candidates) {
  std::string nearest;
  std::size_t best = 4;
  for (const std::string& candidate : candidates)
    if (const std::size_t d = edit_distance(lower(candidate), lower(key)); candidate != key && d < best) {
      best = d;
      nearest = candidate;
    }
  return nearest;
}

}  // namespace

void JsonFields::refuse_unread(const std::vector<std::string>& annotations) const {
  for (const auto& [key, value] : object_.items()) {
    if (asked_.count(key) || std::find(annotations.begin(), annotations.end(), key) != annotations.end()) continue;
    const std::string nearest = nearest_key(key, asked_);
    fail_at(field(key), "{}: '{}' is not a field of this file{}", where_, key,
            nearest.empty() ? fmt::format("; its fields: {}", fmt::join(asked_, ", "))
                            : fmt::format("; did you mean '{}'?", nearest));
  }
}

std::vector<std::string> JsonFields::unread() const {
  std::vector<std::string> keys;
  for (const auto& [key, value] : object_.items())
    if (!asked_.count(key)) keys.push_back(key);
  return keys;
}

const nlohmann::json& JsonFields::raw(const std::string& key) const {
  if (!has(key)) {
    // A misspelt required key shows as this one missing: name the spelling the file has.
    std::vector<std::string> present;
    for (const auto& [other, value] : object_.items()) present.push_back(other);
    const std::string nearest = nearest_key(key, present);
    fail_at(field(key), "{}: field '{}' is missing{}", where_, key,
            nearest.empty() ? std::string() : fmt::format("; the file has '{}' — misspelt?", nearest));
  }
  return object_.at(key);
}

std::string JsonFields::string(const std::string& key) const {
  const auto& v = raw(key);
  if (!v.is_string()) fail_at(field(key), "{}: field '{}' must be a string, found {}", where_, key, v.dump());
  return v.get<std::string>();
}

std::string JsonFields::string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

std::string JsonFields::choice(const std::string& key, const std::vector<std::string>& choices) const {
  const std::string value = lower(string(key));
  for (const auto& c : choices)
    if (lower(c) == value) return c;
  fail_at(field(key), "{}: field '{}' is '{}'; valid values: {}", where_, key, string(key), fmt::join(choices, ", "));
}

std::string JsonFields::choice_or(const std::string& key, const std::vector<std::string>& choices,
                                  const std::string& fallback) const {
  return has(key) ? choice(key, choices) : fallback;
}

long long JsonFields::integer(const std::string& key, long long min_value, long long max_value) const {
  const auto& v = raw(key);
  const std::string range = integer_range_text(min_value, max_value);
  auto out_of_range = [&] {
    fail_at(field(key), "{}: field '{}' is {}; it must be an integer {}", where_, key, v.dump(), range);
  };
  long long value = 0;
  if (v.is_number_unsigned()) {
    const auto u = v.get<std::uint64_t>();
    // 2^63 and up is beyond what a long long holds, so beyond every maximum.
    if (u > static_cast<std::uint64_t>(std::numeric_limits<long long>::max())) out_of_range();
    value = static_cast<long long>(u);
  } else if (v.is_number_integer()) {
    value = v.get<long long>();
  } else if (v.is_number_float() && v.get<double>() == std::floor(v.get<double>())) {
    // A whole float (4.0, -1e30): compared as a double before the conversion, which is undefined
    // outside [-2^63, 2^63) (the UBSan build of tests/fuzz reports it).
    const double d = v.get<double>();
    if (!(d >= -0x1p63 && d < 0x1p63)) out_of_range();
    value = static_cast<long long>(d);
  } else {
    fail_at(field(key), "{}: field '{}' must be an integer {}, found {}", where_, key, range, v.dump());
  }
  if (value < min_value || value > max_value) out_of_range();
  return value;
}

long long JsonFields::integer_or(const std::string& key, long long min_value, long long fallback,
                                 long long max_value) const {
  return has(key) ? integer(key, min_value, max_value) : fallback;
}

double JsonFields::number(const std::string& key, double min_value) const {
  const auto& v = raw(key);
  if (!v.is_number())
    fail_at(field(key), "{}: field '{}' must be a number >= {}, found {}", where_, key, min_value, v.dump());
  const double value = v.get<double>();
  if (!(value >= min_value))
    fail_at(field(key), "{}: field '{}' is {}; it must be >= {}", where_, key, value, min_value);
  return value;
}

double JsonFields::number_or(const std::string& key, double min_value, double fallback) const {
  return has(key) ? number(key, min_value) : fallback;
}

bool JsonFields::boolean(const std::string& key) const {
  const auto& v = raw(key);
  if (!v.is_boolean()) fail_at(field(key), "{}: field '{}' must be true or false, found {}", where_, key, v.dump());
  return v.get<bool>();
}

bool JsonFields::boolean_or(const std::string& key, bool fallback) const {
  return has(key) ? boolean(key) : fallback;
}

JsonFields JsonFields::object(const std::string& key) const {
  const auto& v = raw(key);
  if (!v.is_object()) fail_at(field(key), "{}: field '{}' must be an object, found {}", where_, key, v.type_name());
  return JsonFields(v, where_ + " (" + key + ")", field(key) + ".");
}

namespace {

// Walks a document only to learn where a parse stopped: the path of keys and array
// indices down to the value being read ("layers[3].hidden_size"), and the token there.
class WhereItStopped : public nlohmann::json::json_sax_t {
 public:
  std::string path() const {
    std::string out;
    for (const auto& level : levels_) {
      if (level.in_array) out += fmt::format("[{}]", level.index - 1);
      else if (!level.key.empty()) out += (out.empty() ? "" : ".") + level.key;
    }
    return out;
  }
  const std::string& token() const { return token_; }

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    value();
    levels_.push_back({});
    return true;
  }
  bool key(string_t& k) override {
    levels_.back().key = k;
    return true;
  }
  bool end_object() override { return pop(); }
  bool start_array(std::size_t) override {
    value();
    levels_.push_back({"", true, 0});
    return true;
  }
  bool end_array() override { return pop(); }
  bool parse_error(std::size_t, const std::string& last_token, const nlohmann::json::exception&) override {
    token_ = last_token;
    // The value that failed is the next element of an array being read.
    if (!levels_.empty() && levels_.back().in_array) ++levels_.back().index;
    return false;
  }

 private:
  struct Level {
    std::string key;
    bool in_array = false;
    int index = 0;  // elements of the array seen so far
  };
  bool value() {
    if (!levels_.empty() && levels_.back().in_array) ++levels_.back().index;
    return true;
  }
  bool pop() {
    levels_.pop_back();
    return true;
  }
  std::vector<Level> levels_;
  std::string token_;
};

}  // namespace

nlohmann::json parse_json(const std::string& text, const std::string& where) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    fail("{}: not valid JSON (byte {}): {}", where, e.byte, e.what());
  } catch (const nlohmann::json::out_of_range&) {
    // nlohmann refuses a number that overflows a double (406) without saying where.
    WhereItStopped stopped;
    nlohmann::json::sax_parse(text, &stopped);
    const std::string field = stopped.path().empty() ? "the top-level value" : "field '" + stopped.path() + "'";
    fail_at(stopped.path(), "{}: {} is {}, beyond the range of a double (about 1.8e308)", where, field,
            stopped.token());
  }
}

namespace {

// Opens `path` for reading if it is a regular file; refuses anything else by name.
int open_regular_file(const std::string& path, const std::string& what) {
  // O_NONBLOCK so that opening a FIFO with no writer returns at once instead of hanging.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail("{} '{}' cannot be opened: {}", what, path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    fail("{} '{}' cannot be read: {}", what, path, std::strerror(error));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    const char* kind = S_ISDIR(st.st_mode)    ? "a directory"
                       : S_ISFIFO(st.st_mode) ? "a FIFO (named pipe)"
                       : S_ISCHR(st.st_mode)  ? "a character device"
                       : S_ISBLK(st.st_mode)  ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket"
                                              : "not a regular file";
    fail("{} '{}' is {}; give the path of a regular file", what, path, kind);
  }
  return fd;
}

}  // namespace

void check_regular_file(const std::string& path, const std::string& what) { ::close(open_regular_file(path, what)); }

std::string read_regular_file(const std::string& path, const std::string& what) {
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{open_regular_file(path, what)};
  const int fd = closer.fd;
  // A regular file never blocks: reading it back with O_NONBLOCK set is the same as without.
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fd, buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      fail("{} '{}' cannot be read: {}", what, path, std::strerror(errno));
    }
    text.append(buffer, static_cast<std::size_t>(got));
  }
  return text;
}

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  return parse_json(read_regular_file(path, what), fmt::format("{} '{}'", what, path));
}

}  // namespace cc
