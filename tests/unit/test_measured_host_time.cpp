// Host time in a measured cost database (issue 32): a GPU profile records each op's host time
// beside its device time, and the simulator prices every pass as the flow shop of launches and
// device work. A database whose host times exceed its device times predicts the host-bound step;
// one whose device times dominate predicts what it did without host times; a database without
// them reads and prices device-only; host times survive the JSON round trip.
#include <gtest/gtest.h>

#include <string>

#include "sim/cost_database.h"
#include "sim/measured_costs.h"
#include "sim/presets.h"
#include "sim/simulator.h"

namespace cc {
namespace {

// One H200's profile of GPT-3 1.3B's layer (tests/reference/gpu-h200/): device times only.
CostDatabase h200_database() {
  return read_cost_database(std::string(CLUSTERCAST_REFERENCE_DIR) + "/gpu-h200/costs-1.3b-shape.json");
}

CostDatabase with_host_times(CostDatabase db, double host_over_device) {
  for (OpRecord& r : db.ops) r.host_mean_s = host_over_device * r.mean_s;
  return db;
}

double step_seconds(const CostDatabase& db) {
  ModelSpec m = load_model("gpt3-1.3b");
  m.num_layers = 4;
  m.vocab_size = 256;
  const ClusterSpec cluster = load_cluster("h200");
  ParallelConfig c;
  c.micro_batch = 2;
  c.global_batch = 8;
  c.precision = Precision::BF16;
  c.attention = AttentionKernel::Unfused;  // the engine's attention, as profiled
  const MeasuredCosts costs(db, "db.json", cluster, Precision::BF16);
  const SimResult r = simulate(m, cluster, c, costs);
  // Every op of the step is in the database, so nothing is priced by the analytic model,
  // whose own host times would blur the comparison.
  EXPECT_TRUE(costs.pricing_counts().analytic.empty()) << costs.coverage();
  return r.iteration_time_s;
}

TEST(MeasuredHostTime, ADatabaseWithoutHostTimesPricesDeviceOnly) {
  const CostDatabase db = h200_database();
  for (const OpRecord& r : db.ops) EXPECT_EQ(r.host_mean_s, 0.0) << r.name;
  // Recording a host time of zero changes nothing.
  EXPECT_EQ(step_seconds(db), step_seconds(with_host_times(db, 0.0)));
}

TEST(MeasuredHostTime, HostTimesAboveDeviceTimesSetTheStep) {
  const CostDatabase db = h200_database();
  const double device_bound = step_seconds(db);
  // Every op takes 3x its device time to launch: without a pipeline the host runs ahead of
  // nothing, so each pass costs its host time, 3x the device's.
  const double host_bound = step_seconds(with_host_times(db, 3.0));
  // (The event engine keeps whole nanoseconds, so each of the step's tasks rounds by < 1 ns.)
  EXPECT_NEAR(host_bound, 3 * device_bound, 1e-7);
}

TEST(MeasuredHostTime, DeviceTimesAboveHostTimesLeaveTheStepUnchanged) {
  const CostDatabase db = h200_database();
  // Launches take a third of each op's device time: the host keeps ahead and the step is the
  // device's, as without host times.
  EXPECT_NEAR(step_seconds(with_host_times(db, 1.0 / 3)), step_seconds(db), 1e-12);
}

TEST(MeasuredHostTime, HostTimesRoundTripThroughTheDatabaseFile) {
  CostDatabase db = with_host_times(h200_database(), 0.5);
  const CostDatabase back = cost_database_from_text(cost_database_to_text(db), "round trip");
  ASSERT_EQ(back.ops.size(), db.ops.size());
  for (std::size_t i = 0; i < db.ops.size(); ++i) EXPECT_DOUBLE_EQ(back.ops[i].host_mean_s, db.ops[i].host_mean_s);
}

}  // namespace
}  // namespace cc
