// `clustercast simulate` on valid input: the JSON document, the text report, the trace file,
// determinism and the --config round trip. Runs the real binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

using nlohmann::json;

void expect_rel_near(double actual, double expected, double rel, const char* what) {
  EXPECT_LE(std::abs(actual - expected), rel * std::abs(expected))
      << what << ": actual " << actual << " vs expected " << expected;
}

json run_json(const std::vector<std::string>& args) {
  const RunResult r = run_clustercast(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  json doc;
  EXPECT_NO_THROW(doc = json::parse(r.out)) << "stdout is not exactly one JSON document:\n" << r.out;
  return doc;
}

TEST(SimulateCli, JsonHasAllFieldsAndIsConsistent) {
  const json doc = run_json(with(gpt3_175b_args(), {"--json"}));
  ASSERT_TRUE(doc.is_object());
  for (const char* key : {"iteration_time_s", "tflops_per_gpu", "mfu", "hfu", "tokens_per_s", "peak_memory_gib",
                          "bubble_fraction", "training_days"})
    ASSERT_TRUE(doc.contains(key) && doc.at(key).is_number()) << key << " missing or not a number";
  ASSERT_TRUE(doc.contains("fits") && doc.at("fits").is_boolean());

  const double iteration = doc.at("iteration_time_s").get<double>();
  ASSERT_GT(iteration, 0.0);

  // The time breakdown adds up to the iteration time.
  ASSERT_TRUE(doc.contains("time_breakdown_s") && doc.at("time_breakdown_s").is_object());
  double time_sum = 0;
  for (const char* key : {"compute", "recompute", "tp_communication", "pp_communication", "dp_communication",
                          "optimizer", "host", "bubble"}) {
    const json& part = doc.at("time_breakdown_s");
    ASSERT_TRUE(part.contains(key) && part.at(key).is_number()) << "time_breakdown_s." << key;
    EXPECT_GE(part.at(key).get<double>(), 0.0) << "time_breakdown_s." << key;
    time_sum += part.at(key).get<double>();
  }
  expect_rel_near(time_sum, iteration, 1e-6, "sum of time_breakdown_s");
  // Selective recompute and TP 8 with PP 16: every one of these is really spent.
  for (const char* key : {"compute", "recompute", "tp_communication", "pp_communication", "bubble"})
    EXPECT_GT(doc.at("time_breakdown_s").at(key).get<double>(), 0.0) << key;

  // The memory parts add up to the peak, which fits an 80 GB A100.
  ASSERT_TRUE(doc.contains("memory_gib") && doc.at("memory_gib").is_object());
  double memory_sum = 0;
  for (const char* key : {"weights", "gradients", "optimizer", "activations", "workspaces", "other"}) {
    const json& part = doc.at("memory_gib");
    ASSERT_TRUE(part.contains(key) && part.at(key).is_number()) << "memory_gib." << key;
    EXPECT_GT(part.at(key).get<double>(), 0.0) << "memory_gib." << key;
    memory_sum += part.at(key).get<double>();
  }
  const double peak = doc.at("peak_memory_gib").get<double>();
  expect_rel_near(memory_sum, peak, 1e-6, "sum of memory_gib");
  EXPECT_LT(peak, 80.0);
  EXPECT_TRUE(doc.at("fits").get<bool>());

  // Derived quantities: tokens per iteration = 1536 x 2048; A100 bf16 dense peak = 312 TFLOP/s.
  const double tokens_per_iteration = 1536.0 * 2048.0;
  expect_rel_near(doc.at("training_days").get<double>(), 300e9 / tokens_per_iteration * iteration / 86400.0, 1e-9,
                  "training_days");
  expect_rel_near(doc.at("tokens_per_s").get<double>(), tokens_per_iteration / iteration, 1e-9, "tokens_per_s");
  const double mfu = doc.at("mfu").get<double>();
  expect_rel_near(mfu, doc.at("tflops_per_gpu").get<double>() * 1e12 / 312e12, 1e-9, "mfu");
  EXPECT_GT(mfu, 0.0);
  EXPECT_LT(mfu, 1.0);
  EXPECT_GT(doc.at("hfu").get<double>(), mfu) << "selective recompute adds hardware FLOPs";
  const double bubble = doc.at("bubble_fraction").get<double>();
  EXPECT_GT(bubble, 0.0);
  EXPECT_LT(bubble, 1.0);

  // The layout is echoed back with Megatron-LM names.
  ASSERT_TRUE(doc.contains("config") && doc.at("config").is_object());
  const json& config = doc.at("config");
  EXPECT_EQ(config.value("tensor_model_parallel_size", -1), 8);
  EXPECT_EQ(config.value("pipeline_model_parallel_size", -1), 16);
  EXPECT_EQ(config.value("data_parallel_size", -1), 8);
  EXPECT_EQ(config.value("micro_batch_size", -1), 1);
  EXPECT_EQ(config.value("global_batch_size", -1), 1536);
  EXPECT_EQ(config.value("sequence_parallel", false), true);
  EXPECT_EQ(config.value("recompute_granularity", std::string{}), "selective");
}

TEST(SimulateCli, TextReportShowsIterationMfuAndDays) {
  const RunResult r = run_clustercast(gpt3_175b_args());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  for (const char* word : {"iteration", "MFU", "days"})
    EXPECT_NE(r.out.find(word), std::string::npos) << "report lacks '" << word << "':\n" << r.out;
  EXPECT_FALSE(json::accept(r.out)) << "without --json the report is text, not JSON";

  // The report shows the same iteration time as the JSON document (3 decimals).
  const json doc = run_json(with(gpt3_175b_args(), {"--json"}));
  char seconds[64];
  std::snprintf(seconds, sizeof seconds, "%.3f", doc.at("iteration_time_s").get<double>());
  EXPECT_NE(r.out.find(seconds), std::string::npos) << "report lacks iteration time " << seconds << ":\n" << r.out;
}

TEST(SimulateCli, TraceOutWritesChromeTrace) {
  const TempDir dir;
  const std::string trace = dir.file("trace.json");
  const json doc = run_json(with(gpt3_175b_args(), {"--json", "--trace-out", trace}));
  ASSERT_TRUE(doc.contains("iteration_time_s"));
  EXPECT_EQ(dir.entries(), std::set<std::string>{"trace.json"}) << "only the trace, no trace.json.tmp";

  json events;
  ASSERT_NO_THROW(events = json::parse(read_file(trace)));
  ASSERT_TRUE(events.is_object() && events.contains("traceEvents") && events.at("traceEvents").is_array());
  std::size_t complete = 0;
  double last_end_us = 0;
  for (const json& e : events.at("traceEvents")) {
    ASSERT_TRUE(e.is_object() && e.contains("ph"));
    if (e.at("ph") != "X") continue;
    ++complete;
    ASSERT_TRUE(e.contains("ts") && e.at("ts").is_number()) << e.dump();
    ASSERT_TRUE(e.contains("dur") && e.at("dur").is_number()) << e.dump();
    ASSERT_TRUE(e.contains("name") && e.at("name").is_string()) << e.dump();
    EXPECT_GE(e.at("ts").get<double>(), 0.0) << e.dump();
    EXPECT_GE(e.at("dur").get<double>(), 0.0) << e.dump();
    last_end_us = std::max(last_end_us, e.at("ts").get<double>() + e.at("dur").get<double>());
  }
  // 192 microbatches x forward + backward on 16 stages at least.
  EXPECT_GE(complete, 2u * 192u * 16u);
  // Trace timestamps are microseconds; the last event ends with the iteration.
  expect_rel_near(last_end_us, doc.at("iteration_time_s").get<double>() * 1e6, 1e-6, "end of the trace");
}

// A trace larger than the file-size limit (`ulimit -f`, in 1024-byte blocks): the write fails
// with the system's reason, exit 2, and neither the trace nor its temporary is left (SIGXFSZ
// used to end the process with the temporary behind).
TEST(SimulateCli, ATraceBeyondTheFileSizeLimitFailsCleanly) {
  const TempDir dir;
  const std::string trace = dir.file("trace.json");
  // sh runs the program as its $0 with the arguments as $@, under the limit.
  std::vector<std::string> full{"/bin/sh", "-c", "ulimit -f 4; exec \"$0\" \"$@\"", CLUSTERCAST_BINARY};
  for (const std::string& a : with(gpt3_175b_args(), {"--trace-out", trace})) full.push_back(a);
  const RunResult r = run_command(full);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("writing '" + trace + "' failed: File too large"), std::string::npos) << r.err;
  EXPECT_TRUE(dir.entries().empty()) << "left behind: " << dir.entries().size() << " entries";
}

TEST(SimulateCli, SameInputGivesByteIdenticalOutput) {
  const RunResult first = run_clustercast(with(gpt3_175b_args(), {"--json"}));
  const RunResult second = run_clustercast(with(gpt3_175b_args(), {"--json"}));
  ASSERT_TRUE(first.exit_code == 0 && second.exit_code == 0) << first.err << second.err;
  ASSERT_GT(first.out.size(), 100u);
  EXPECT_EQ(first.out, second.out);
}

TEST(SimulateCli, ConfigFileReproducesTheLayout) {
  const json original = run_json(with(gpt3_175b_args(), {"--json"}));
  ASSERT_TRUE(original.contains("config"));
  const TempDir dir;
  const std::string layout = dir.file("layout.json");
  write_file(layout, original.at("config").dump(2));

  const json again = run_json({"simulate", "--model", "gpt3-175b", "--cluster", "dgx-a100-80gb", "--config", layout,
                               "--json"});
  ASSERT_TRUE(again.contains("iteration_time_s"));
  EXPECT_EQ(again.at("iteration_time_s").get<double>(), original.at("iteration_time_s").get<double>());
  EXPECT_EQ(again.at("config"), original.at("config"));
  EXPECT_EQ(again.value("gpus", 0), 1024);
}

}  // namespace
}  // namespace cc::cli_test

namespace cc::cli_test {
namespace {

// Megatron-LM turns --sequence-parallel off at TP 1 (arguments.py) and trains on; so does
// simulate, with a warning, and the run is the run without it.
TEST(SimulateCli, SequenceParallelAtTp1IsOffAsInMegatron) {
  const std::vector<std::string> plain = {"simulate", "--model", "gpt3-1.3b", "--gpus", "8", "--tp", "1", "--pp", "2",
                                          "--global-batch-size", "64", "--json"};
  const RunResult without = run_clustercast(plain);
  const RunResult with_sp = run_clustercast(with(plain, {"--sequence-parallel"}));
  ASSERT_EQ(without.exit_code, 0) << without.err;
  ASSERT_EQ(with_sp.exit_code, 0) << with_sp.err;
  EXPECT_NE(with_sp.err.find("warning: --sequence-parallel is off at --tensor-model-parallel-size 1"),
            std::string::npos)
      << with_sp.err;
  EXPECT_EQ(nlohmann::json::parse(with_sp.out)["iteration_time_s"], nlohmann::json::parse(without.out)["iteration_time_s"]);
  EXPECT_EQ(nlohmann::json::parse(with_sp.out)["config"]["sequence_parallel"], false);
}

}  // namespace
}  // namespace cc::cli_test
