// `clustercast simulate` on bad input: exit code 2, one line on stderr naming the offending
// value, nothing on stdout, and no output file (nor a .tmp) left behind. Runs the real binary.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

struct BadCase {
  std::string name;
  std::vector<std::string> args;  // after "simulate"; "{dir}" stands for the test's temp dir
  std::vector<std::string> names;  // values the message must name, each as a whole token
  std::vector<std::string> words;  // context the message must mention (case-insensitive)
  std::vector<std::pair<std::string, std::string>> files = {};  // input files to write into {dir}
  bool add_trace_out = true;  // also pass --trace-out {dir}/trace.json
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

std::string lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// True when `value` occurs in `text` not glued to further letters, digits or dots
// (so "7" does not match inside "1.7" or "17").
bool names_token(const std::string& text, const std::string& value) {
  auto glued = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '.'; };
  for (auto at = text.find(value); at != std::string::npos; at = text.find(value, at + 1)) {
    const bool left = at > 0 && glued(text[at - 1]);
    const std::size_t end = at + value.size();
    const bool right = end < text.size() && glued(text[end]) && !(text[end] == '.' && end + 1 == text.size());
    if (!left && !right) return true;
  }
  return false;
}

const std::vector<std::string> kLayout = {"--gpus", "1024", "--tp", "8", "--pp", "16", "--micro-batch-size", "1",
                                          "--global-batch-size", "1536"};

std::vector<std::string> gpt3(std::vector<std::string> more) {
  std::vector<std::string> args{"--model", "gpt3-175b", "--cluster", "dgx-a100-80gb"};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::vector<std::string> gpt3_layout(std::vector<std::string> more) { return gpt3(with(kLayout, more)); }

const char* const kModelHead = R"({"num_layers": 4, "num_attention_heads": 8, "seq_length": 128, "vocab_size": 1000)";

std::vector<BadCase> bad_cases() {
  return {
      {"UnknownModelPreset", {"--model", "gpt-9000", "--gpus", "8", "--tp", "8"}, {"gpt-9000", "gpt3-175b"}, {}},
      {"UnknownClusterPreset", {"--model", "gpt3-175b", "--cluster", "dgx-z900", "--gpus", "8", "--tp", "8"},
       {"dgx-z900", "dgx-a100-80gb"}, {}},
      {"TpDoesNotDivideHeads", gpt3({"--tp", "7", "--gpus", "7"}), {"7"}, {"head"}},
      {"GpusNotDivisibleByTpTimesPp", gpt3({"--gpus", "1000", "--tp", "8", "--pp", "16"}), {"1000"}, {}},
      {"GpusNotTpTimesPpTimesDp", gpt3({"--gpus", "1024", "--tp", "8", "--pp", "16", "--dp", "4"}), {"1024"}, {}},
      {"GlobalBatchNotDivisible",
       gpt3({"--gpus", "1024", "--tp", "8", "--pp", "16", "--micro-batch-size", "1", "--global-batch-size", "1537"}),
       {"1537"}, {}},
      {"TpCommOverlapWithTp1", gpt3({"--gpus", "16", "--tp", "1", "--pp", "16", "--sequence-parallel", "--tp-comm-overlap"}),
       {}, {"--tp-comm-overlap"}},
      {"LayersNotDivisibleByPp", gpt3({"--pp", "7", "--gpus", "56", "--tp", "8"}), {"7"}, {"layers"}},
      {"UnknownRecomputeGranularity", gpt3_layout({"--recompute-granularity", "sometimes"}),
       {"sometimes", "selective"}, {}},
      {"MalformedModelJson", {"--model", "{dir}/model.json", "--gpus", "8", "--tp", "8"}, {"{dir}/model.json"}, {},
       {{"model.json", R"({"num_layers": 4,)"}}},
      {"ModelJsonMissingHiddenSize", {"--model", "{dir}/model.json", "--gpus", "8", "--tp", "8"},
       {"{dir}/model.json", "hidden_size"}, {}, {{"model.json", std::string(kModelHead) + "}"}}},
      {"ModelJsonHiddenSizeIsString", {"--model", "{dir}/model.json", "--gpus", "8", "--tp", "8"},
       {"{dir}/model.json", "hidden_size", "big"}, {},
       {{"model.json", std::string(kModelHead) + R"(, "hidden_size": "big"})"}}},
      {"MalformedClusterJson", with({"--model", "gpt3-175b", "--cluster", "{dir}/cluster.json"}, kLayout), {"{dir}/cluster.json"}, {},
       {{"cluster.json", R"({"name": "mine", "gpus_per_node": 8,)"}}},
      {"TrainTokensNotANumber", gpt3_layout({"--train-tokens", "banana"}), {"banana"}, {}},
      {"UnknownFlag", gpt3_layout({"--frobnicate"}), {"--frobnicate"}, {}},
      {"TraceOutIntoMissingDirectory", gpt3_layout({"--trace-out", "{dir}/missing/trace.json"}),
       {"{dir}/missing/trace.json"}, {}, {}, false},
  };
}

class BadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadInput, ExitsTwoWithOneLineAndNoOutput) {
  const BadCase& c = GetParam();
  const TempDir dir;
  const std::string dir_path = dir.path().string();
  std::set<std::string> inputs;
  for (const auto& [name, contents] : c.files) {
    write_file(dir.file(name), contents);
    inputs.insert(name);
  }
  std::vector<std::string> args{"simulate"};
  for (const auto& a : c.args) args.push_back(replace_all(a, "{dir}", dir_path));
  if (c.add_trace_out) args = with(args, {"--trace-out", dir.file("trace.json")});

  const RunResult r = run_clustercast(args);
  EXPECT_EQ(r.exit_code, 2) << "stderr: " << r.err;
  EXPECT_EQ(r.out, "") << "nothing on stdout for bad input";

  ASSERT_FALSE(r.err.empty());
  EXPECT_EQ(r.err.back(), '\n');
  const std::string line = r.err.substr(0, r.err.size() - 1);
  EXPECT_EQ(line.find('\n'), std::string::npos) << "more than one line on stderr:\n" << r.err;
  EXPECT_GT(line.size(), 20u) << "message too short to be clear: " << line;
  for (const auto& value : c.names) {
    const std::string expected = replace_all(value, "{dir}", dir_path);
    EXPECT_TRUE(names_token(line, expected)) << "message does not name '" << expected << "': " << line;
  }
  for (const auto& word : c.words)
    EXPECT_NE(lower(line).find(word), std::string::npos) << "message does not mention '" << word << "': " << line;

  EXPECT_EQ(dir.entries(), inputs) << "bad input must leave no trace file and no .tmp file";
}

INSTANTIATE_TEST_SUITE_P(Simulate, BadInput, ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

// Known bug (see the test report): sequence lengths near 2^31 overflow into negative times.
// Either such a model is refused (exit 2, one line) or the result stays self-consistent.
TEST(BadInputOverflow, HugeSequenceLengthIsRefusedOrConsistent) {
  const RunResult r = run_clustercast({"simulate", "--model", "gpt3-175b", "--gpus", "8", "--tp", "8",
                                       "--seq-length", "1500000000", "--json"});
  if (r.exit_code == 2) {
    EXPECT_EQ(r.out, "");
    EXPECT_TRUE(names_token(r.err, "1500000000")) << r.err;
    return;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  double sum = 0;
  for (const auto& [key, value] : doc.at("time_breakdown_s").items()) {
    EXPECT_GE(value.get<double>(), 0.0) << key;
    sum += value.get<double>();
  }
  const double iteration = doc.at("iteration_time_s").get<double>();
  EXPECT_LE(std::abs(sum - iteration), 1e-6 * iteration);
  EXPECT_LT(doc.at("mfu").get<double>(), 1.0);
}

TEST(BadInputOverflow, HugeBatchIsRefusedNotRunOutOfMemory) {
  const RunResult r = run_clustercast({"simulate", "--model", "tiny", "--gpus", "8", "--tp", "1",
                                       "--global-batch-size", "2000000000", "--json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("250000000 microbatches"), std::string::npos) << r.err;
}

TEST(BadInputOverflow, ModelJsonIntegerBeyondRangeIsNamedAsWritten) {
  TempDir dir;
  write_file(dir.file("m.json"),
             R"({"num_layers":4,"hidden_size":99999999999,"num_attention_heads":8,"seq_length":128,"vocab_size":1000})");
  const RunResult r = run_clustercast({"simulate", "--model", dir.file("m.json"), "--json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("99999999999"), std::string::npos) << r.err;
}

TEST(BadInputOverflow, EmptyLayoutFileIsRefused) {
  TempDir dir;
  write_file(dir.file("layout.json"), "{}");
  const RunResult r = run_clustercast({"simulate", "--model", "gpt3-175b", "--config", dir.file("layout.json")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tensor_model_parallel_size"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace cc::cli_test
