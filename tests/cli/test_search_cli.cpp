// `clustercast search` through the real binary: the ranked table, JSON, the three export
// formats and their round trip through `simulate --config`, and refusals.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

std::vector<std::string> search_args() {
  return {"search", "--model", "gpt3-175b", "--cluster", "dgx-a100-80gb", "--gpus", "1024",
          "--global-batch-size", "1536", "--train-tokens", "300e9", "--top", "5"};
}

TEST(SearchCli, TableRanksAndCountsExclusions) {
  const RunResult r = run_clustercast(search_args());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("layouts enumerated"), std::string::npos);
  EXPECT_NE(r.out.find("   1="), std::string::npos) << "the best is tied with itself";
  EXPECT_NE(r.out.find("does not fit in memory"), std::string::npos);
  EXPECT_TRUE(r.err.empty()) << "no progress bar when stderr is not a terminal: " << r.err;
}

TEST(SearchCli, ExportsRoundTripThroughSimulateExactly) {
  TempDir dir;
  const RunResult r = run_clustercast(with(search_args(), {"--json", "--export", dir.file("best.json"),
                                                           "--export-megatron", dir.file("best.args"),
                                                           "--export-nemo", dir.file("best.yaml")}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& best = doc.at("results").at(0);
  EXPECT_EQ(best.at("rank"), 1);
  // best.args.sh: the runnable launch script beside the pasteable argument file.
  EXPECT_EQ(dir.entries(), (std::set<std::string>{"best.json", "best.args", "best.args.sh", "best.yaml"}));

  const std::string args = read_file(dir.file("best.args"));
  EXPECT_NE(args.find("--tensor-model-parallel-size " + std::to_string(best["config"]["tensor_model_parallel_size"].get<int>())),
            std::string::npos);
  EXPECT_NE(args.find("--global-batch-size 1536"), std::string::npos);
  const std::string yaml = read_file(dir.file("best.yaml"));
  EXPECT_NE(yaml.find("pipeline_model_parallel_size: " + std::to_string(best["config"]["pipeline_model_parallel_size"].get<int>())),
            std::string::npos);
  EXPECT_NE(yaml.find("num_nodes: 128"), std::string::npos);

  for (const char* file : {"best.json", "best.args", "best.yaml"}) {
    const RunResult sim = run_clustercast({"simulate", "--config", dir.file(file), "--json"});
    ASSERT_EQ(sim.exit_code, 0) << file << ": " << sim.err;
    const auto again = nlohmann::json::parse(sim.out);
    EXPECT_EQ(again.at("iteration_time_s"), best.at("iteration_time_s")) << file;
    EXPECT_EQ(again.at("peak_memory_gib"), best.at("peak_memory_gib")) << file;
    EXPECT_EQ(again.at("config"), best.at("config")) << file;
  }
}

// Model flags without --vocab-size train their tokenizer's words, which Megatron-LM pads to a
// multiple of 128 x TP: each layout searched is priced with its own TP's padding (Llama 3's 128,256
// words are a multiple of 256, not of 512), and its export reads back to it.
TEST(SearchCli, EachLayoutTrainsTheTokenizersWordsPaddedAtItsOwnTp) {
  TempDir dir;
  const std::vector<std::string> line = {
      "search", "--num-layers", "4", "--hidden-size", "1024", "--num-attention-heads", "16", "--seq-length", "1024",
      "--max-position-embeddings", "1024", "--tokenizer-type", "HuggingFaceTokenizer", "--tokenizer-model",
      "meta-llama/Meta-Llama-3-8B", "--cluster", "dgx-h100", "--gpus", "8", "--global-batch-size", "32", "--pp", "1",
      "--top", "100", "--json"};
  const RunResult r = run_clustercast(with(line, {"--tp", "4", "--export-megatron", dir.file("tp4.args")}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);  // the loop reads into it: it must outlive the loop
  for (const auto& layout : doc.at("results"))
    EXPECT_EQ(layout.at("model").at("vocab_size"), 128512) << "128,256 padded to 512 x 251";
  EXPECT_NE(read_file(dir.file("tp4.args")).find("--vocab-size 128512"), std::string::npos);
  const auto tp1 = nlohmann::json::parse(run_clustercast(with(line, {"--tp", "1"})).out).at("results");
  ASSERT_FALSE(tp1.empty());
  for (const auto& layout : tp1) EXPECT_EQ(layout.at("model").at("vocab_size"), 128256);
  EXPECT_NE(r.err.find("each layout trains it padded to a multiple of 128 x its TP"), std::string::npos) << r.err;
}

// Under another stack (NeMo's overlaps the distributed optimizer's parameter gather by default)
// every export carries the stack and reads back to the search's own prediction: simulate applies
// the stack's defaults as the search does.
TEST(SearchCli, ExportsUnderAnotherStackReadBackWithIt) {
  TempDir dir;
  const RunResult r = run_clustercast({"search", "--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "64",
                                       "--global-batch-size", "512", "--framework", "nemo", "--top", "1", "--json",
                                       "--export", dir.file("best.json"), "--export-megatron", dir.file("best.args"),
                                       "--export-nemo", dir.file("best.yaml")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto best = nlohmann::json::parse(r.out).at("results").at(0);
  ASSERT_EQ(best.at("config").at("framework"), "nemo");
  for (const char* file : {"best.json", "best.args", "best.yaml"}) {
    const RunResult sim = run_clustercast({"simulate", "--config", dir.file(file), "--json"});
    ASSERT_EQ(sim.exit_code, 0) << file << ": " << sim.err;
    const auto again = nlohmann::json::parse(sim.out);
    EXPECT_EQ(again.at("iteration_time_s"), best.at("iteration_time_s")) << file;
    EXPECT_EQ(again.at("config"), best.at("config")) << file;
  }
}

// Splits one line of search_csv's output (its only quoted field is the layout, without quotes).
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) cells.push_back(std::exchange(cell, ""));
    else cell += c;
  }
  cells.push_back(cell);
  return cells;
}

TEST(SearchCli, CsvHasTheRankedLayoutsAsTheJsonHasThem) {
  TempDir dir;
  // A small search (under the sanitizers GPT-3's 1,024-GPU space takes a minute): the same writer.
  const RunResult r = run_clustercast({"search", "--model", "llama3-8b", "--cluster", "dgx-a100-80gb", "--gpus", "64",
                                       "--global-batch-size", "512", "--train-tokens", "300e9", "--top", "5", "--json",
                                       "--num-distributed-optimizer-instances", "2", "--csv", dir.file("ranked.csv")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto results = nlohmann::json::parse(r.out).at("results");
  std::istringstream in(read_file(dir.file("ranked.csv")));
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const std::vector<std::string> header = csv_cells(line);
  auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    EXPECT_NE(it, header.end()) << name << " in " << line;
    return static_cast<std::size_t>(it - header.begin());
  };
  std::size_t rows = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> cells = csv_cells(line);
    ASSERT_EQ(cells.size(), header.size()) << line;
    ASSERT_LT(rows, results.size());
    const auto& expected = results.at(rows);
    EXPECT_EQ(cells[column("rank")], std::to_string(rows + 1));
    EXPECT_EQ(cells[column("tp")], std::to_string(expected["config"]["tensor_model_parallel_size"].get<int>()));
    EXPECT_EQ(cells[column("pp")], std::to_string(expected["config"]["pipeline_model_parallel_size"].get<int>()));
    EXPECT_EQ(cells[column("dp")], std::to_string(expected["config"]["data_parallel_size"].get<int>()));
    EXPECT_EQ(std::stod(cells[column("iteration_time_s")]), expected["iteration_time_s"].get<double>());
    EXPECT_EQ(std::stod(cells[column("training_days")]), expected["training_days"].get<double>());  // 300e9 tokens
    // The partial distributed optimizer's instances, on distributed-optimizer layouts only.
    const bool distopt = expected["config"]["use_distributed_optimizer"].get<bool>();
    EXPECT_EQ(cells[column("num_distributed_optimizer_instances")], distopt ? "2" : "");
    if (distopt) {
      EXPECT_EQ(expected["config"]["num_distributed_optimizer_instances"], 2);
    }
    ++rows;
  }
  EXPECT_EQ(rows, results.size());
  EXPECT_EQ(rows, 5u);  // --top 5
}

TEST(SearchCli, ImpossibleRequestExitsTwoAndWritesNothing) {
  TempDir dir;
  const RunResult r = run_clustercast({"search", "--model", "gpt3-175b", "--cluster", "dgx-a100-40gb", "--gpus", "16",
                                       "--global-batch-size", "64", "--export", dir.file("best.json"),
                                       "--export-megatron", dir.file("best.args")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("no layout of gpt3-175b fits"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("GiB more"), std::string::npos) << r.err;
  EXPECT_TRUE(dir.entries().empty());
}

TEST(SearchCli, PinnedValueThatDoesNotDivideIsRefused) {
  // 1008 GPUs split into TP 7, but 7 does not divide GPT-3's 96 heads.
  const RunResult r = run_clustercast({"search", "--model", "gpt3-175b", "--gpus", "1008", "--global-batch-size", "1008",
                                       "--tp", "7"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no valid layout"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TP does not divide"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("TP in {7}"), std::string::npos) << r.err;
}

TEST(SearchCli, MalformedListsAreRefused) {
  for (const auto& bad : std::vector<std::vector<std::string>>{{"--pp", "4,x"}, {"--micro-batch-size", "4..1"},
                                                               {"--recompute-granularity", "sometimes"}}) {
    const RunResult r = run_clustercast(with(search_args(), bad));
    EXPECT_EQ(r.exit_code, 2) << bad[0];
    EXPECT_NE(r.err.find("'" + bad[1] + "'"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
}

TEST(SearchCli, ExportIntoAMissingFolderFailsCleanly) {
  TempDir dir;
  const RunResult r = run_clustercast(with(search_args(), {"--export", dir.file("nope/best.json"),
                                                           "--export-nemo", dir.file("best.yaml")}));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nope/best.json"), std::string::npos) << r.err;
  EXPECT_TRUE(dir.entries().empty() || dir.entries() == std::set<std::string>{"best.yaml"});
}

}  // namespace
}  // namespace cc::cli_test

namespace cc::cli_test {
namespace {

TEST(SearchCli, RefusalRaisedOnAWorkerThreadExitsTwoWithTheMessage) {
  // FP8 on the default A100 cluster is refused while the search's worker threads price the
  // layouts; it used to escape the thread and abort ("terminate called without an active
  // exception", exit 134).
  const RunResult r = run_clustercast({"search", "--model", "gpt3-13b", "--gpus", "64", "--global-batch-size", "512",
                                       "--precision", "fp8"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(r.out.empty());
  EXPECT_NE(r.err.find("precision fp8 is not supported"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace cc::cli_test
