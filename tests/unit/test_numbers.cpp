// The one reader of numbers written as text (sim/numbers.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "sim/error.h"
#include "sim/numbers.h"

#include "refusal.h"

namespace cc {
namespace {

constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kInt64Min = std::numeric_limits<std::int64_t>::min();

std::int64_t tp_from(const std::string& text) { return read_integer(text, "--tensor-model-parallel-size", 1, kIntMax); }

TEST(Numbers, IntegersAreBaseTenWhateverTheirLeadingZeros) {
  EXPECT_EQ(tp_from("010"), 10);  // Python's int("010"), which Megatron-LM's argparse calls; C's base 0 says 8
  EXPECT_EQ(tp_from("0008"), 8);  // not an octal error either
  EXPECT_EQ(tp_from("+5"), 5);
  EXPECT_EQ(read_integer("-0", "x", -1, 1), 0);
  EXPECT_EQ(read_integer("-12", "x", -100, 100), -12);
  EXPECT_EQ(parse_integer("007"), 7);
}

TEST(Numbers, AnythingButSignAndAsciiDigitsIsNotAnInteger) {
  for (const std::string text : {"", "+", "-", " 5", "5 ", "1e3", "0x10", "1_000", "5.0", "2,", "\u0663", "\uff15"})
    EXPECT_FALSE(parse_integer(text).has_value()) << "'" << text << "'";
}

TEST(Numbers, AnEmptyValueIsRefusedNamingTheFieldAndTheRange) {
  const Refusal r = refusal_of([] { tp_from(""); });
  EXPECT_EQ(r.message,
            "--tensor-model-parallel-size '' is not an integer; it must be a whole number from 1 to 2147483647");
  EXPECT_EQ(r.field, "--tensor-model-parallel-size");
}

TEST(Numbers, OtherScriptsDigitsAndSpacesAreRefused) {
  // U+0663 ARABIC-INDIC DIGIT THREE: Python's int() reads it as 3; a C++ reader must not guess.
  EXPECT_EQ(refusal_of([] { tp_from("\u0663"); }).message,
            "--tensor-model-parallel-size '\u0663' is not an integer; it must be a whole number from 1 to 2147483647");
  EXPECT_EQ(refusal_of([] { tp_from(" 5"); }).message,
            "--tensor-model-parallel-size ' 5' is not an integer; it must be a whole number from 1 to 2147483647");
  EXPECT_NE(refusal_of([] { tp_from("1e3"); }).message.find("'1e3' is not an integer"), std::string::npos);
}

TEST(Numbers, ValuesBeyondTheFieldAreRefusedWithTheRange) {
  // 2^31 is one past what an int field holds.
  const Refusal r = refusal_of([] { tp_from("2147483648"); });
  EXPECT_EQ(r.message, "--tensor-model-parallel-size is 2147483648; it must be a whole number from 1 to 2147483647");
  EXPECT_EQ(r.field, "--tensor-model-parallel-size");
  EXPECT_EQ(tp_from("2147483647"), kIntMax);
  EXPECT_NE(refusal_of([] { tp_from("0"); }).message.find("is 0; it must be a whole number from 1"), std::string::npos);
}

TEST(Numbers, SixtyFourBitsHoldTheirBoundsAndNothingBeyond) {
  EXPECT_EQ(read_integer("9223372036854775807", "x", kInt64Min, kInt64Max), kInt64Max);
  EXPECT_EQ(read_integer("-9223372036854775808", "x", kInt64Min, kInt64Max), kInt64Min);
  // 2^63 and 2^64 + 1 would wrap in a careless reader (to the minimum, and to 1).
  EXPECT_EQ(refusal_of([] { read_integer("9223372036854775808", "x", kInt64Min, kInt64Max); }).message,
            "x is 9223372036854775808; it must be a whole number from -9223372036854775808 to 9223372036854775807");
  EXPECT_NE(refusal_of([] {
              read_integer("18446744073709551617", "x", 0, kInt64Max);
            }).message.find("is 18446744073709551617"),
            std::string::npos);
  EXPECT_FALSE(parse_integer("9223372036854775808").has_value());
  EXPECT_EQ(read_unsigned("18446744073709551615", "--seed", std::numeric_limits<std::uint64_t>::max()),
            std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(read_unsigned("-0", "--seed", 10), 0u);
  EXPECT_EQ(refusal_of([] { read_unsigned("-1", "--seed", 10); }).message,
            "--seed is -1; it must be a whole number from 0 to 10");
}

TEST(Numbers, TheFileIsNamedBeforeTheField) {
  EXPECT_EQ(refusal_of([] { read_integer("two", "--micro-batch-size", 0, 8, "layout file 'a.args'"); }).message,
            "layout file 'a.args': --micro-batch-size 'two' is not an integer; it must be a whole number from 0 to 8");
}

TEST(Numbers, RealsAreFiniteDecimalOrExponentForms) {
  EXPECT_EQ(read_real("300e9", "--train-tokens"), 300e9);
  EXPECT_EQ(read_real("0.5", "x"), 0.5);
  EXPECT_EQ(read_real(".5", "x"), 0.5);
  EXPECT_EQ(read_real("5.", "x"), 5.0);
  EXPECT_EQ(read_real("+1.5E-3", "x"), 1.5e-3);
  EXPECT_EQ(read_real("010", "x"), 10.0);
  EXPECT_EQ(read_real("-2", "x"), -2.0);
}

TEST(Numbers, NanInfinityHexAndOverflowAreNotReals) {
  for (const std::string text : {"nan", "NaN", "inf", "-inf", "infinity", "0x1p3", "0x10", "", ".", "e5", "1e", "1e+",
                                 " 1", "1 ", "1,5", "\u0663"})
    EXPECT_FALSE(parse_real(text).has_value()) << "'" << text << "'";
  EXPECT_EQ(refusal_of([] { read_real("nan", "--memory-headroom"); }).message,
            "--memory-headroom 'nan' is not a number; it must be a finite number in decimal or exponent form, e.g. "
            "0.5 or 300e9");
  EXPECT_EQ(refusal_of([] { read_real("nan", "--memory-headroom"); }).field, "--memory-headroom");
  // A double holds neither: 1e400 would be infinite, 1e-400 would silently be 0.
  EXPECT_NE(refusal_of([] { read_real("1e400", "x"); }).message.find("x is 1e400, beyond what a double holds"),
            std::string::npos);
  EXPECT_NE(refusal_of([] { read_real("1e-400", "x"); }).message.find("x is 1e-400, beyond what a double holds"),
            std::string::npos);
}

TEST(Numbers, NanAndInfinitySpeltOutAreKnownForReadersWithRangeChecks) {
  EXPECT_TRUE(std::isnan(*parse_non_finite("NaN")));
  EXPECT_EQ(parse_non_finite("inf"), std::numeric_limits<double>::infinity());
  EXPECT_EQ(parse_non_finite("-Infinity"), -std::numeric_limits<double>::infinity());
  for (const std::string text : {"", "1", ".inf", "nan(1)", "0x1p3", "infin"})
    EXPECT_FALSE(parse_non_finite(text).has_value()) << "'" << text << "'";
}

}  // namespace
}  // namespace cc
