// The field an input error names (sim/error.h): JSON fields with their 64-bit range checks
// (sim/json_fields.h), and the flag each layout check names (validate_layout).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/error.h"
#include "sim/json_fields.h"
#include "sim/layout_validation.h"
#include "sim/parallel_config.h"
#include "sim/presets.h"

#include "refusal.h"
#include "test_layout_files_support.h"

namespace cc {
namespace {

constexpr long long kInt64Max = std::numeric_limits<long long>::max();

TEST(JsonFieldsRange, IntegersAreCheckedInSixtyFourBitsAndTheRangeIsNamed) {
  const auto doc = nlohmann::json::parse(
      R"({"big": 9223372036854775808, "huge": 18446744073709551615, "edge": 9.2233720368547758e18,
          "neg": -1e30, "ok": 4.0, "word": "four", "gpu": {"sm_count": -3}})");
  const JsonFields f(doc, "file 'x.json'");
  EXPECT_EQ(f.integer("ok", 1), 4);
  const Refusal big = refusal_of([&] { f.integer("big", 1); });
  EXPECT_EQ(big.message,
            "file 'x.json': field 'big' is 9223372036854775808; it must be an integer from 1 to 2147483647");
  EXPECT_EQ(big.field, "big");
  EXPECT_NE(refusal_of([&] { f.integer("huge", 0, kInt64Max); }).message.find("from 0 to 9223372036854775807"),
            std::string::npos);
  // 2^63 as a double: one past every long long, refused before any conversion.
  EXPECT_NE(refusal_of([&] { f.integer("edge", 0, kInt64Max); }).message.find("field 'edge' is 9.223372036854776e+18"),
            std::string::npos);
  EXPECT_EQ(refusal_of([&] { f.integer("neg", 1); }).message,
            "file 'x.json': field 'neg' is -1e+30; it must be an integer from 1 to 2147483647");
  EXPECT_EQ(refusal_of([&] { f.integer("word", 1); }).message,
            "file 'x.json': field 'word' must be an integer from 1 to 2147483647, found \"four\"");
  // Inside an object, the field is the key's path from the top.
  const Refusal nested = refusal_of([&] { f.object("gpu").integer("sm_count", 1); });
  EXPECT_EQ(nested.field, "gpu.sm_count");
  EXPECT_EQ(refusal_of([&] { f.string("missing"); }).field, "missing");
}

// validate_layout names the flag the user should change: each case changes the valid layout of
// GPT-3 175B on 1,024 GPUs (TP 8, PP 16, DP 8; 96 layers and heads) in one way.
struct LayoutCase {
  const char* what;
  void (*change)(ParallelConfig&);
  int gpus;  // 0: no GPU count to check
  const char* field;
};

const LayoutCase kLayoutCases[] = {
    {"the valid layout", [](ParallelConfig&) {}, 1024, ""},
    {"TP 0", [](ParallelConfig& c) { c.tp = 0; }, 1024, "--tensor-model-parallel-size"},
    {"TP 7 does not divide 96 heads", [](ParallelConfig& c) { c.tp = 7; }, 0, "--tensor-model-parallel-size"},
    {"global batch 1537", [](ParallelConfig& c) { c.global_batch = 1537; }, 1024, "--global-batch-size"},
    {"PP 5 does not divide 96 layers", [](ParallelConfig& c) { c.pp = 5; }, 0, "--pipeline-model-parallel-size"},
    {"5 recomputed layers do not divide a stage's 6",
     [](ParallelConfig& c) {
       c.recompute = RecomputeGranularity::Full;
       c.recompute_num_layers = 5;
     },
     1024, "--recompute-num-layers"},
    // Checks about two values name the one to change (the comment beside each check says why).
    {"8 x 16 x 4 is not the 1,024 GPUs: another DP", [](ParallelConfig& c) { c.dp = 4; }, 1024, "--data-parallel-size"},
    {"sequence parallelism at TP 1",
     [](ParallelConfig& c) {
       c.tp = 1;
       c.dp = 64;
       c.sequence_parallel = true;
     },
     1024, "--sequence-parallel"},
    {"parameter-gather overlap without the distributed optimizer",
     [](ParallelConfig& c) { c.overlap_param_gather = true; }, 1024, "--use-distributed-optimizer"},
    {"interleaving at PP 1",
     [](ParallelConfig& c) {
       c.pp = 1;
       c.dp = 128;
       c.virtual_stages = 2;
     },
     1024, "--num-layers-per-virtual-pipeline-stage"},
};

TEST(LayoutErrorField, EachCheckNamesTheFlagToChange) {
  const ModelSpec model = load_model("gpt3-175b");
  for (const LayoutCase& k : kLayoutCases) {
    ParallelConfig c = layout_test::layout(8, 16, 8, 1, 1536);
    k.change(c);
    const Refusal r = refusal_of([&] { validate_layout(c, model, k.gpus); });
    EXPECT_EQ(r.field, k.field) << k.what << ": " << r.message;
    EXPECT_EQ(r.message == "(no error)", std::string(k.field).empty()) << k.what << ": " << r.message;
  }
}

TEST(ModelErrorField, ShapeChecksNameTheMegatronFlag) {
  ModelSpec m = load_model("gpt3-175b");
  m.num_attention_heads = 7;  // does not divide the hidden size 12288
  EXPECT_EQ(refusal_of([&] { m.validate("m"); }).field, "--num-attention-heads");
  m = load_model("gpt3-175b");
  m.hidden_size = 2'000'000;
  const Refusal r = refusal_of([&] { m.validate("m"); });
  EXPECT_EQ(r.message, "m: hidden_size is 2000000; it must be a positive integer up to 1048576");
  EXPECT_EQ(r.field, "--hidden-size");
}

TEST(ErrorField, FailLeavesTheFieldEmpty) {
  EXPECT_EQ(refusal_of([] { fail("no field {}", 1); }).field, "");
  const Refusal r = refusal_of([] { fail_at("--gpus", "--gpus is {}", 0); });
  EXPECT_EQ(r.message, "--gpus is 0");
  EXPECT_EQ(r.field, "--gpus");
}

}  // namespace
}  // namespace cc
