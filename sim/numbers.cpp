#include "sim/numbers.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <system_error>

#include <fmt/format.h>

#include "sim/error.h"

namespace cc {

namespace {

// An integer's text split into sign and magnitude. `beyond_64_bits`: the digits are valid but
// their value exceeds what 64 bits hold (the text is still an integer, only out of range).
struct Whole {
  bool negative = false;
  std::uint64_t magnitude = 0;
  bool beyond_64_bits = false;
};

// Sign and ASCII digits only: checking bytes against '0'..'9' keeps other scripts' digits,
// spaces and prefixes out, whatever the locale.
std::optional<Whole> scan_whole(std::string_view text) {
  Whole w;
  std::size_t i = 0;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    w.negative = text[0] == '-';
    i = 1;
  }
  if (i == text.size()) return std::nullopt;  // "" or a lone sign
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return std::nullopt;
    if (w.beyond_64_bits) continue;  // keep checking the grammar of the rest
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (w.magnitude > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) w.beyond_64_bits = true;
    else w.magnitude = w.magnitude * 10 + digit;
  }
  return w;
}

std::optional<std::int64_t> as_int64(const Whole& w) {
  constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  if (w.beyond_64_bits) return std::nullopt;
  if (!w.negative)
    return w.magnitude <= kMax ? std::optional<std::int64_t>(static_cast<std::int64_t>(w.magnitude)) : std::nullopt;
  if (w.magnitude <= kMax) return -static_cast<std::int64_t>(w.magnitude);
  if (w.magnitude == kMax + 1) return std::numeric_limits<std::int64_t>::min();
  return std::nullopt;
}

// Decimal or exponent form: [sign] digits [. digits] [e [sign] digits], with at least one
// digit in the mantissa ("5.", ".5" and "5" all count). This is the grammar alone: no "nan",
// "inf" or "0x" can pass it, which is why the conversion below may use a general parser.
bool is_decimal_real(std::string_view text) {
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t from = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
    return i - from;
  };
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  std::size_t mantissa = digits();
  if (i < text.size() && text[i] == '.') {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0) return false;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == text.size();
}

enum class RealOutcome { Ok, NotANumber, BeyondDouble };

RealOutcome convert_real(std::string_view text, double& out) {
  if (!is_decimal_real(text)) return RealOutcome::NotANumber;
  // from_chars takes no leading '+'.
  const std::string_view digits = text[0] == '+' ? text.substr(1) : text;
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), out);
  // Out of range: beyond ±1.8e308, or so small it would round to zero (1e-400).
  if (error == std::errc::result_out_of_range) return RealOutcome::BeyondDouble;
  if (error != std::errc{} || end != digits.data() + digits.size()) return RealOutcome::NotANumber;
  return RealOutcome::Ok;
}

// "where: " before a message about a file, nothing on a command line.
std::string where_prefix(const std::string& where) { return where.empty() ? "" : where + ": "; }

}  // namespace

std::optional<std::int64_t> parse_integer(std::string_view text) {
  const auto w = scan_whole(text);
  return w ? as_int64(*w) : std::nullopt;
}

std::optional<std::uint64_t> parse_unsigned(std::string_view text) {
  const auto w = scan_whole(text);
  if (!w || w->beyond_64_bits || (w->negative && w->magnitude > 0)) return std::nullopt;
  return w->magnitude;
}

std::optional<double> parse_real(std::string_view text) {
  double value = 0;
  return convert_real(text, value) == RealOutcome::Ok ? std::optional<double>(value) : std::nullopt;
}

std::optional<double> parse_non_finite(std::string_view text) {
  const bool negative = !text.empty() && text[0] == '-';
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) text.remove_prefix(1);
  std::string word(text);
  for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (word == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (word == "inf" || word == "infinity")
    return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  return std::nullopt;
}

std::string integer_range_text(std::int64_t min, std::int64_t max) { return fmt::format("from {} to {}", min, max); }

std::int64_t read_integer(std::string_view text, const std::string& field, std::int64_t min, std::int64_t max,
                          const std::string& where) {
  const auto w = scan_whole(text);
  if (!w)
    fail_at(field, "{}{} '{}' is not an integer; it must be a whole number {}", where_prefix(where), field, text,
            integer_range_text(min, max));
  const auto value = as_int64(*w);
  if (!value || *value < min || *value > max)
    fail_at(field, "{}{} is {}; it must be a whole number {}", where_prefix(where), field, text,
            integer_range_text(min, max));
  return *value;
}

std::uint64_t read_unsigned(std::string_view text, const std::string& field, std::uint64_t max,
                            const std::string& where) {
  if (!scan_whole(text))
    fail_at(field, "{}{} '{}' is not an integer; it must be a whole number from 0 to {}", where_prefix(where), field,
            text, max);
  const auto value = parse_unsigned(text);
  if (!value || *value > max)
    fail_at(field, "{}{} is {}; it must be a whole number from 0 to {}", where_prefix(where), field, text, max);
  return *value;
}

double read_real(std::string_view text, const std::string& field, const std::string& where) {
  double value = 0;
  switch (convert_real(text, value)) {
    case RealOutcome::Ok: return value;
    case RealOutcome::BeyondDouble:
      fail_at(field, "{}{} is {}, beyond what a double holds (magnitudes from about 4.9e-324 to 1.8e308, or 0)",
              where_prefix(where), field, text);
    case RealOutcome::NotANumber: break;
  }
  fail_at(field, "{}{} '{}' is not a number; it must be a finite number in decimal or exponent form, e.g. 0.5 or 300e9",
          where_prefix(where), field, text);
}

}  // namespace cc
