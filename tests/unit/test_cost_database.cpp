// The cost database file: a written database reads back to the same text byte for byte,
// and every kind of bad file is refused with a message naming the file and the field.
#include <gtest/gtest.h>

#include <functional>

#include <nlohmann/json.hpp>

#include "sim/cost_database.h"
#include "sim/error.h"

namespace cc {
namespace {

CostDatabase sample_database() {
  CostDatabase db;
  db.created = "2026-12-01";
  db.command = "clustercast profile --model tiny --out x.json";
  db.machine.backend = "cpu";
  db.machine.cpu_model = "Test CPU @ 2.0GHz";
  db.machine.cpu_cores = 2;
  db.machine.memory_gib = 23.4;
  db.machine.mpi_version = "Open MPI v4.1.4";
  db.dtype = "fp32";
  db.fused_ops = {"main_grad_accumulate"};
  db.runs.push_back({R"({"name":"tiny","num_layers":4})", 2, 4, 16, "selective", true, 5, 0.1461, 0.1456, 0.1424, 0.1519});
  db.ops.push_back({"fc1", Phase::Forward, {256, 512, 128, 1}, "fp32", 1, 40, 7.5e-4, 7.439e-4, 7.0e-4, 8.057e-4});
  db.ops.push_back({"softmax", Phase::Recompute, {131072, 1, 1, 1}, "fp32", 2, 20, 0.35, 1.0 / 3.0, 0.1, 0.7});
  CollectiveCurve c;
  c.kind = CollectiveKind::ReduceScatter;
  c.group_size = 2;
  c.points = {{1024, 256, 2.1e-6, 0.49, 0.24}, {4096, 1024, 3.3e-6, 1.24, 0.62}};
  c.latency_s = 1.7e-6;
  c.bus_bandwidth_gbs = 3.123456789012345;
  c.max_residual = 0.0412;
  db.collectives.push_back(c);
  db.in_step_collectives.push_back({CollectiveKind::AllGather, 2, 262144, 270, 5.1740692592593265e-05});
  return db;
}

std::string text_with(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json doc = nlohmann::json::parse(cost_database_to_text(sample_database()));
  edit(doc);
  return doc.dump();
}

std::string error_of(const std::string& text) {
  try {
    cost_database_from_text(text, "cost database 'x.json'");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

TEST(CostDatabase, WriteReadWriteIsByteIdentical) {
  const std::string first = cost_database_to_text(sample_database());
  const CostDatabase back = cost_database_from_text(first, "first");
  EXPECT_EQ(cost_database_to_text(back), first);
  EXPECT_EQ(back.ops[1].median_s, 1.0 / 3.0);  // shortest round-trip numbers lose nothing
  EXPECT_EQ(back.ops[1].phase, Phase::Recompute);
  EXPECT_EQ(back.collectives[0].kind, CollectiveKind::ReduceScatter);
  EXPECT_EQ(back.runs[0].model, R"({"name":"tiny","num_layers":4})");
  ASSERT_EQ(back.in_step_collectives.size(), 1u);
  EXPECT_EQ(back.in_step_collectives[0].kind, CollectiveKind::AllGather);
  EXPECT_EQ(back.in_step_collectives[0].calls, 270);
}

TEST(CostDatabase, ADatabaseWithoutInStepCollectivesReadsAsNone) {
  // Written before the field existed: its collectives are priced by the sweep alone.
  const std::string text = text_with([](nlohmann::json& doc) { doc.erase("in_step_collectives"); });
  EXPECT_TRUE(cost_database_from_text(text, "old").in_step_collectives.empty());
}

TEST(CostDatabase, FileRoundTripThroughDisk) {
  const std::string path = ::testing::TempDir() + "/roundtrip-costs.json";
  write_cost_database(path, sample_database());
  const CostDatabase once = read_cost_database(path);
  write_cost_database(path, once);
  EXPECT_EQ(cost_database_to_text(read_cost_database(path)), cost_database_to_text(sample_database()));
}

TEST(CostDatabase, WrongVersionIsRefusedWithTheVersionWeRead) {
  const std::string e = error_of(text_with([](nlohmann::json& d) { d["version"] = 99; }));
  EXPECT_NE(e.find("x.json"), std::string::npos) << e;
  EXPECT_NE(e.find("'version' is 99"), std::string::npos) << e;
  EXPECT_NE(e.find("version 1"), std::string::npos) << e;
}

TEST(CostDatabase, MissingFieldNamesTheRecordAndField) {
  const std::string e = error_of(text_with([](nlohmann::json& d) { d["ops"][1].erase("median_s"); }));
  EXPECT_NE(e.find("ops[1]"), std::string::npos) << e;
  EXPECT_NE(e.find("'median_s' is missing"), std::string::npos) << e;
}

TEST(CostDatabase, BadValuesAreRefused) {
  EXPECT_NE(error_of(text_with([](nlohmann::json& d) { d["ops"][0]["shape"] = {256, 0, 128, 1}; })).find("4 positive"),
            std::string::npos);
  EXPECT_NE(error_of(text_with([](nlohmann::json& d) { d["ops"][0]["phase"] = "sideways"; })).find("valid values"),
            std::string::npos);
  EXPECT_NE(error_of(text_with([](nlohmann::json& d) { d["ops"][0]["dtype"] = "bf16"; })).find("database's dtype"),
            std::string::npos);
  EXPECT_NE(error_of(text_with([](nlohmann::json& d) { d["collectives"][0]["points"][1]["bytes"] = 512; }))
                .find("larger than the previous"),
            std::string::npos);
  EXPECT_NE(error_of(text_with([](nlohmann::json& d) { d["schema"] = "something-else"; })).find("'schema'"),
            std::string::npos);
}

TEST(CostDatabase, CorruptTextAndMissingFileAreRefused) {
  std::string text = cost_database_to_text(sample_database());
  text.resize(text.size() / 2);  // a truncated download
  EXPECT_NE(error_of(text).find("x.json"), std::string::npos);
  try {
    read_cost_database("/nonexistent/costs.json");
    FAIL() << "no error for a missing file";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/costs.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace cc
