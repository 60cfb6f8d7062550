// Every number on a command line read through sim/numbers (interop/strict_numbers.h), checked on
// a small CLI11 app with the kinds of options clustercast's commands have.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "interop/strict_numbers.h"
#include "sim/error.h"

namespace cc {
namespace {

struct Options {
  std::optional<int> tp;
  int steps = 3;
  std::int64_t bytes = 1024;
  std::uint64_t seed = 1234;
  std::uint32_t small = 0;
  std::optional<double> headroom;
  std::vector<int> sizes;
  std::string name;
  bool json = false;
};

// An app as the commands build one: a subcommand, Megatron-LM's name with our short form.
struct App {
  CLI::App app{"test"};
  Options o;
  App() {
    CLI::App* sub = app.add_subcommand("simulate");
    sub->add_option("--tensor-model-parallel-size,--tp", o.tp);
    sub->add_option("--steps", o.steps);
    sub->add_option("--sweep-max-bytes", o.bytes);
    sub->add_option("--seed", o.seed);
    sub->add_option("--small", o.small);
    sub->add_option("--memory-headroom", o.headroom);
    sub->add_option("--sizes", o.sizes)->delimiter(',');
    sub->add_option("--name", o.name);
    sub->add_flag("--json", o.json);
    interop::read_numbers_strictly(app);
  }
  // "" when the parse succeeds, else the message; `field` gets the SpecError's field.
  std::string parse(std::vector<std::string> args, std::string* field = nullptr) {
    args.insert(args.begin(), "simulate");
    std::reverse(args.begin(), args.end());  // CLI11 takes a vector in reverse order
    try {
      app.parse(args);
    } catch (const SpecError& e) {
      if (field) *field = e.field();
      return e.what();
    } catch (const CLI::ParseError& e) {
      return std::string("CLI11: ") + e.what();
    }
    return "";
  }
};

TEST(StrictNumbers, LeadingZerosAreDecimal) {
  App a;
  EXPECT_EQ(a.parse({"--tp", "010", "--steps", "0010", "--sweep-max-bytes", "08"}), "");
  EXPECT_EQ(a.o.tp, 10);  // CLI11 alone reads 010 as octal 8
  EXPECT_EQ(a.o.steps, 10);
  EXPECT_EQ(a.o.bytes, 8);  // CLI11 alone refuses "08" as bad octal
}

TEST(StrictNumbers, AnEmptyValueIsRefusedNamingTheFlagAndTheRange) {
  App a;
  std::string field;
  EXPECT_EQ(a.parse({"--tp", ""}, &field),
            "--tensor-model-parallel-size '' is not an integer; it must be a whole number from -2147483648 to "
            "2147483647");
  EXPECT_EQ(field, "--tensor-model-parallel-size");
  App b;
  EXPECT_NE(b.parse({"--memory-headroom", ""}).find("--memory-headroom '' is not a number"), std::string::npos);
  // "--tp=" is refused by CLI11 itself, before any conversion, as a missing value.
  App c;
  EXPECT_EQ(c.parse({"--tp="}), "CLI11: --tensor-model-parallel-size: 1 required INT missing");
}

TEST(StrictNumbers, ValuesBeyondTheVariableNameWhatItHolds) {
  // CLI11 would say "Could not convert: --tp = 2147483648", naming no range.
  App a;
  std::string field;
  EXPECT_EQ(a.parse({"--tp", "2147483648"}, &field),
            "--tensor-model-parallel-size is 2147483648; it must be a whole number from -2147483648 to 2147483647");
  EXPECT_EQ(field, "--tensor-model-parallel-size");
  App b;
  EXPECT_EQ(b.parse({"--sweep-max-bytes", "2147483648"}), "");
  EXPECT_EQ(b.o.bytes, 2147483648);
  App c;
  EXPECT_EQ(c.parse({"--sweep-max-bytes", "9223372036854775808"}),
            "--sweep-max-bytes is 9223372036854775808; it must be a whole number from -9223372036854775808 to "
            "9223372036854775807");
  App d;
  EXPECT_EQ(d.parse({"--small", "4294967296"}),
            "--small is 4294967296; it must be a whole number from 0 to 4294967295");
  App e;
  EXPECT_EQ(e.parse({"--seed", "18446744073709551615"}), "");
  EXPECT_EQ(e.o.seed, UINT64_MAX);
  App f;
  // strtoull alone would wrap -1 to 2^64 - 1.
  EXPECT_EQ(f.parse({"--seed", "-1"}), "--seed is -1; it must be a whole number from 0 to 18446744073709551615");
}

TEST(StrictNumbers, HexExponentsAndOtherScriptsAreRefused) {
  for (const std::string text : {"0x10", "1e3", " 5", "\u0663", "5.0", "+"}) {
    App a;
    EXPECT_NE(a.parse({"--tp", text}).find("is not an integer"), std::string::npos) << text;
  }
}

TEST(StrictNumbers, RealsAreDecimals) {
  App a;
  EXPECT_EQ(a.parse({"--memory-headroom", "0.1"}), "");
  EXPECT_EQ(a.o.headroom, 0.1);  // read back to the same double, not rounded twice
  for (const std::string text : {"0x1p3", "1e400", "1,5", "0.5x"}) {
    App b;
    EXPECT_NE(b.parse({"--memory-headroom", text}).find("--memory-headroom"), std::string::npos) << text;
    EXPECT_FALSE(b.o.headroom.has_value()) << text;
  }
  App c;
  EXPECT_EQ(c.parse({"--memory-headroom", "3e-5"}), "");
  EXPECT_EQ(c.o.headroom, 3e-5);
}

TEST(StrictNumbers, NanAndInfinityReachTheOptionsOwnRangeCheck) {
  App a;
  EXPECT_EQ(a.parse({"--memory-headroom", "nan"}), "");
  ASSERT_TRUE(a.o.headroom.has_value());
  EXPECT_TRUE(std::isnan(*a.o.headroom));
  App b;
  EXPECT_EQ(b.parse({"--memory-headroom", "-Infinity"}), "");
  EXPECT_EQ(b.o.headroom, -std::numeric_limits<double>::infinity());
}

TEST(StrictNumbers, VectorsAreReadElementByElement) {
  App a;
  EXPECT_EQ(a.parse({"--sizes", "1,010,+3"}), "");
  EXPECT_EQ(a.o.sizes, (std::vector<int>{1, 10, 3}));
  App b;
  EXPECT_NE(b.parse({"--sizes", "1,x"}).find("--sizes 'x' is not an integer"), std::string::npos);
}

TEST(StrictNumbers, TextFlagsAndHelpAreLeftAlone) {
  App a;
  EXPECT_EQ(a.parse({"--name", "010", "--json"}), "");
  EXPECT_EQ(a.o.name, "010");
  EXPECT_TRUE(a.o.json);
  // --help shows the type as before, without the transform.
  EXPECT_EQ(a.app.get_subcommand("simulate")->get_option("--tp")->get_type_name(), "INT");
}

TEST(StrictNumbers, CallingItTwiceChangesNothing) {
  App a;
  interop::read_numbers_strictly(a.app);
  EXPECT_EQ(a.parse({"--tp", "010"}), "");
  EXPECT_EQ(a.o.tp, 10);
}

}  // namespace
}  // namespace cc
