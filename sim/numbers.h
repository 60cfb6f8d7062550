// numbers.h — the one reader of numbers written as text: command-line values, Megatron-LM
// argument files, NeMo YAML scalars, `search` lists. Every reader goes through here, so `010`
// means the same everywhere and every refusal names the field, the text and the valid range.
//
// Integers: an optional sign and base-10 ASCII digits, nothing else. `010` is 10 (as Python's
// int(), which Megatron-LM's argparse calls, reads it; C's base-0 conversion would say 8);
// `-0` is 0. Refused: an empty value, spaces, hex or octal prefixes, exponents (`1e3`), digits
// of other scripts (`٣`), and anything beyond the field's range (checked in 64 bits, so no
// value ever wraps).
// Reals: finite, in decimal or exponent form (`0.5`, `.5`, `300e9`, `-1.5E-3`). Refused: NaN,
// infinities, hex floats (`0x1p3`), and magnitudes a double cannot hold (`1e400`, `1e-400`).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cc {

// The grammar alone, for readers that word their own refusal (nullopt: not such a number;
// an integer beyond 64 bits is nullopt too).
std::optional<std::int64_t> parse_integer(std::string_view text);
std::optional<std::uint64_t> parse_unsigned(std::string_view text);  // "-0" is 0; other negatives nullopt
std::optional<double> parse_real(std::string_view text);
// NaN or an infinity spelt out as C and Python spell them: nan, inf or infinity, in any case,
// with a sign. The one exception to "finite only", for readers whose every real field checks
// its own range: handed on as NaN or infinity, it fails that check, whose message names the
// range ("--lr is inf; it must be in (0, 1]"), which read_real's cannot. Nullopt otherwise.
std::optional<double> parse_non_finite(std::string_view text);

// "from 1 to 2147483647": the range as every refusal states it.
std::string integer_range_text(std::int64_t min, std::int64_t max);

// The readers. `field` names the value in the message and is the SpecError's field (sim/error.h):
// the canonical flag ("--tensor-model-parallel-size") or the file's key. `where`, when not
// empty, prefixes the message ("layout file 'a.args': ").
std::int64_t read_integer(std::string_view text, const std::string& field, std::int64_t min, std::int64_t max,
                          const std::string& where = "");
// For unsigned 64-bit fields (seeds): 0 to `max`; "-0" is 0, any other negative is refused.
std::uint64_t read_unsigned(std::string_view text, const std::string& field, std::uint64_t max,
                            const std::string& where = "");
double read_real(std::string_view text, const std::string& field, const std::string& where = "");

}  // namespace cc
