#include "interop/strict_numbers.h"

#include <charconv>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include <CLI/CLI.hpp>

#include "sim/error.h"
#include "sim/numbers.h"

namespace cc::interop {

namespace {

constexpr const char* kValidatorName = "clustercast strict number";

enum class NumberKind { Signed, Unsigned, Real };

std::optional<NumberKind> kind_of(const CLI::Option& option) {
  if (option.get_items_expected_max() == 0) return std::nullopt;  // a flag takes no value
  std::string type = option.get_type_name();
  type = type.substr(0, type.find(':'));  // without the descriptions of validators already attached
  if (type == "INT") return NumberKind::Signed;
  if (type == "UINT") return NumberKind::Unsigned;
  if (type == "FLOAT") return NumberKind::Real;
  return std::nullopt;
}

// The name errors carry: the first long name, which our options give as the canonical
// Megatron-LM spelling ("--tensor-model-parallel-size,--tp").
std::string field_name(const CLI::Option& option) {
  if (!option.get_lnames().empty()) return "--" + option.get_lnames().front();
  if (!option.get_snames().empty()) return "-" + option.get_snames().front();
  return option.get_name(/*positional=*/true);
}

// CLI11 binds an option to a variable whose width it does not report (int and int64_t are both
// "INT"). Its own conversion is the one place that knows, so a refusal asks it, widest first,
// which bounds it takes. These tries write the option's variable; harmless, as they run only
// while that option's value is being refused and the parse stops.
std::pair<std::int64_t, std::int64_t> signed_range_held(const CLI::callback_t& convert) {
  for (const int bits : {64, 32, 16, 8}) {
    const std::int64_t max = static_cast<std::int64_t>((std::uint64_t{1} << (bits - 1)) - 1), min = -max - 1;
    if (convert({std::to_string(max)}) && convert({std::to_string(min)})) return {min, max};
  }
  return {0, 0};
}

std::uint64_t unsigned_max_held(const CLI::callback_t& convert) {
  for (const int bits : {64, 32, 16, 8}) {
    const std::uint64_t max = bits == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
    if (convert({std::to_string(max)})) return max;
  }
  return 0;
}

// The exact decimal value of `value` with no decimal point ("5e-1", "3e11"). CLI11 reads reals
// with strtold, which takes the decimal point from the locale (a GUI under a German locale
// would stop at "0.5"'s '.') and would round a shortest-form decimal twice (to long double,
// then to double). Exact digits with only an exponent are read back to the same double in
// every locale.
std::string exact_decimal(double value) {
  // A double's exact decimal expansion has at most 767 significant digits.
  char buffer[1024];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific, 766);
  if (error != std::errc{}) fail("internal: cannot print {}", value);
  const std::string text(buffer, end);  // "-1.2340000...e+02"
  const std::size_t e = text.find('e');
  const std::size_t point = text.find('.');
  std::string fraction = text.substr(point + 1, e - point - 1);
  fraction.erase(fraction.find_last_not_of('0') + 1);
  const std::int64_t exponent = *parse_integer(text.substr(e + 1)) - static_cast<std::int64_t>(fraction.size());
  return text.substr(0, point) + fraction + "e" + std::to_string(exponent);
}

// `text` as sim/numbers reads it, in the form CLI11's conversion `convert` reads back exactly;
// a refusal names `field` and the range. An integer is first tried with `convert`, which
// writes the option's variable with the value it receives next anyway.
std::string canonical(NumberKind kind, const std::string& text, const std::string& field,
                      const CLI::callback_t& convert) {
  switch (kind) {
    case NumberKind::Signed: {
      if (const auto value = parse_integer(text)) {
        const std::string decimal = std::to_string(*value);
        if (convert({decimal})) return decimal;
      }
      const auto [min, max] = signed_range_held(convert);
      read_integer(text, field, min, max);  // refuses it: not an integer, or beyond what the variable holds
      break;
    }
    case NumberKind::Unsigned: {
      if (const auto value = parse_unsigned(text)) {
        const std::string decimal = std::to_string(*value);
        if (convert({decimal})) return decimal;
      }
      read_unsigned(text, field, unsigned_max_held(convert));  // refuses it, as above
      break;
    }
    case NumberKind::Real:
      // NaN and infinity go on to the option's own range check, which names its range; every
      // real option of the commands has one (sim/numbers.h, parse_non_finite).
      if (parse_non_finite(text)) return text;
      return exact_decimal(read_real(text, field));
  }
  fail_at(field, "{} is {}, which this option cannot hold", field, text);
}

void make_strict(CLI::Option& option) {
  const auto kind = kind_of(option);
  if (!kind) return;
  try {
    option.get_validator(kValidatorName);
    return;  // already strict
  } catch (const CLI::OptionNotFound&) {
  }
  const std::string field = field_name(option);
  const CLI::callback_t convert = option.get_callback();
  // A transform runs on every value given, before the option's conversion, and sees an empty
  // value too (CLI11 would otherwise convert "" to the default). Its description is empty, so
  // --help shows the type as before.
  option.transform(CLI::Validator(
      [kind = *kind, field, convert](std::string& text) {
        text = canonical(kind, text, field, convert);
        return std::string();
      },
      "", kValidatorName));
}

}  // namespace

void read_numbers_strictly(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) make_strict(*option);
  for (CLI::App* sub : app.get_subcommands({})) read_numbers_strictly(*sub);
}

}  // namespace cc::interop
