// Numbers in layout files go through sim/numbers: a Megatron-LM argument file reads 010 as
// Python's int() does (10); a NeMo YAML, which NeMo loads as YAML 1.1 (010 is octal 8 there),
// refuses the ambiguous spelling instead of simulating another layout. Every refusal names the
// flag or key, in its message and as the error's field.
#include <gtest/gtest.h>

#include <string>

#include "interop/layout_files.h"
#include "sim/error.h"

#include "refusal.h"

namespace cc {
namespace {

const std::string kMegatronModel = "--num-layers 4\n--hidden-size 320\n--num-attention-heads 10\n";

TEST(LayoutNumbers, MegatronArgumentsReadLeadingZerosAsDecimal) {
  const LayoutFile f = parse_layout_text(kMegatronModel + "--tensor-model-parallel-size 010\n--micro-batch-size 02\n",
                                         "layout file 'a.args'");
  EXPECT_EQ(f.config.tp, 10);
  EXPECT_EQ(f.config.micro_batch, 2);
}

TEST(LayoutNumbers, MegatronArgumentsRefuseWhatIsNotABase10Integer) {
  for (const std::string value : {"0x10", "1e3", "+", "\u0663"}) {
    const Refusal r = refusal_of([&] {
      parse_layout_text(kMegatronModel + "--tensor-model-parallel-size " + value + "\n", "layout file 'a.args'");
    });
    EXPECT_EQ(r.message, "layout file 'a.args': --tensor-model-parallel-size '" + value +
                             "' is not an integer; it must be a whole number from 0 to 1000000000");
    EXPECT_EQ(r.field, "--tensor-model-parallel-size");
  }
}

TEST(LayoutNumbers, MegatronRealsAreDecimalsAndNanMeetsTheRangeCheck) {
  const Refusal hex = refusal_of([&] { parse_layout_text(kMegatronModel + "--hidden-dropout 0x1p-3\n", "f"); });
  EXPECT_EQ(hex.message,
            "f: --hidden-dropout '0x1p-3' is not a number; it must be a finite number in decimal or exponent form, "
            "e.g. 0.5 or 300e9");
  EXPECT_EQ(hex.field, "--hidden-dropout");
  // NaN is read, and the dropout's own check refuses it naming the valid range.
  const Refusal nan = refusal_of([&] { parse_layout_text(kMegatronModel + "--hidden-dropout nan\n", "f"); });
  EXPECT_EQ(nan.message, "--hidden-dropout is nan; it must be a probability in [0, 1)");
  EXPECT_EQ(nan.field, "--hidden-dropout");
}

const std::string kNemoModel = "model:\n  num_layers: 4\n  hidden_size: 320\n  num_attention_heads: 10\n";

TEST(LayoutNumbers, NemoYamlReadsPlainIntegers) {
  const LayoutFile f = parse_layout_text(kNemoModel + "  tensor_model_parallel_size: 10\n", "layout file 'n.yaml'");
  EXPECT_EQ(f.config.tp, 10);
}

TEST(LayoutNumbers, NemoYamlRefusesALeadingZeroThatNemoWouldReadAsOctal) {
  const Refusal r = refusal_of(
      [&] { parse_layout_text(kNemoModel + "  tensor_model_parallel_size: 010\n", "layout file 'n.yaml'"); });
  EXPECT_EQ(r.message,
            "layout file 'n.yaml': model.tensor_model_parallel_size is 010; NeMo reads YAML 1.1, where a leading 0 "
            "makes an integer octal (010 is 8): write it without leading zeros");
  EXPECT_EQ(r.field, "model.tensor_model_parallel_size");
  // A lone 0 is no octal spelling: it reaches the range check as before.
  EXPECT_NE(refusal_of([&] {
              parse_layout_text(kNemoModel + "  tensor_model_parallel_size: 0\n", "n");
            }).message.find("model.tensor_model_parallel_size is 0; it must be >= 1"),
            std::string::npos);
}

TEST(LayoutNumbers, NemoYamlRefusesHexAndInfinity) {
  const Refusal hex = refusal_of([&] { parse_layout_text(kNemoModel + "  micro_batch_size: 0x10\n", "n"); });
  EXPECT_EQ(hex.message,
            "n: model.micro_batch_size '0x10' is not an integer; it must be a whole number from 0 to 1000000000");
  EXPECT_EQ(hex.field, "model.micro_batch_size");
  const Refusal inf = refusal_of([&] { parse_layout_text(kNemoModel + "  hidden_dropout: .inf\n", "n"); });
  EXPECT_NE(inf.message.find("model.hidden_dropout '.inf' is not a number"), std::string::npos);
}

TEST(LayoutNumbers, NemoResolversTakeOnlyDecimalNumbers) {
  const Refusal r =
      refusal_of([&] { parse_layout_text(kNemoModel + "  global_batch_size: ${multiply:0x10,2}\n", "n"); });
  EXPECT_NE(r.message.find("argument '0x10' is not one"), std::string::npos);
  EXPECT_EQ(r.field, "model.global_batch_size");
}

}  // namespace
}  // namespace cc
