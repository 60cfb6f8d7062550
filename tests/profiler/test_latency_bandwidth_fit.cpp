// test_latency_bandwidth_fit.cpp — the collective sweep's latency/bandwidth fit on synthetic
// curves whose answer is known: exact, noisy, degenerate, and one whose best unconstrained
// latency is negative; and the nccl-tests-style table it prints.
#include "profiler/latency_bandwidth_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "sim/error.h"

namespace cc::profiler {
namespace {

// All-reduce on 4 ranks at 1 KiB, 4 KiB, ..., 256 MiB taking latency + bytes·F/bandwidth,
// each time scaled by the matching `scale` entry (1 when absent).
CollectiveCurve synthetic_all_reduce(double latency_s, double bus_gbs, double first_bytes = 1024,
                                     const std::vector<double>& scale = {}) {
  CollectiveCurve curve;
  curve.kind = CollectiveKind::AllReduce;
  curve.group_size = 4;
  const double factor = bus_bandwidth_factor(curve.kind, curve.group_size);  // 1.5
  std::size_t i = 0;
  for (double bytes = first_bytes; bytes <= 256.0 * (1 << 20); bytes *= 4, ++i) {
    CollectivePoint p;
    p.bytes = bytes;
    p.count = static_cast<std::int64_t>(bytes / 4);
    p.time_s = (latency_s + bytes * factor / (bus_gbs * 1e9)) * (i < scale.size() ? scale[i] : 1.0);
    p.algbw_gbs = bytes / p.time_s / 1e9;
    p.busbw_gbs = p.algbw_gbs * factor;
    curve.points.push_back(p);
  }
  return curve;
}

TEST(LatencyBandwidthFit, RecoversAnExactCurve) {
  CollectiveCurve curve = synthetic_all_reduce(20e-6, 5.0);
  ASSERT_EQ(curve.points.size(), 10u);
  fit_latency_bandwidth(curve);
  EXPECT_NEAR(curve.latency_s / 20e-6, 1.0, 1e-6);
  EXPECT_NEAR(curve.bus_bandwidth_gbs / 5.0, 1.0, 1e-6);
  EXPECT_LT(curve.max_residual, 1e-6);
  const double bytes = 1e6;
  EXPECT_NEAR(fitted_time(curve, bytes) / (20e-6 + bytes * 1.5 / 5e9), 1.0, 1e-6);
}

TEST(LatencyBandwidthFit, NoisyPointsStayWithinTheirNoise) {
  // Deterministic ±5% perturbations in an irregular order, so no line fits them exactly.
  const std::vector<double> scale = {1.05, 0.95, 0.95, 1.05, 1.05, 0.95, 1.05, 0.95, 0.95, 1.05};
  CollectiveCurve curve = synthetic_all_reduce(20e-6, 5.0, 1024, scale);
  fit_latency_bandwidth(curve);
  EXPECT_NEAR(curve.max_residual, 0.05, 0.015);
  EXPECT_NEAR(curve.latency_s / 20e-6, 1.0, 0.10);
  EXPECT_NEAR(curve.bus_bandwidth_gbs / 5.0, 1.0, 0.10);
}

TEST(LatencyBandwidthFit, OneMessageSizeIsNotEnough) {
  CollectiveCurve curve = synthetic_all_reduce(20e-6, 5.0);
  curve.points.resize(1);
  curve.points.push_back(curve.points.front());  // a repeat is not a second size
  try {
    fit_latency_bandwidth(curve);
    FAIL() << "expected SpecError";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("all_reduce on 4 ranks needs at least two message sizes, got 1"),
              std::string::npos)
        << e.what();
  }
}

// A noisy, latency-bound sweep (a loaded machine) is a measurement, not an error: the
// smallest message's time is the latency, the largest message's bus bandwidth a lower bound.
TEST(LatencyBandwidthFit, TimesThatDoNotGrowWithSizeGiveALatencyBoundFit) {
  CollectiveCurve curve = synthetic_all_reduce(20e-6, 5.0);
  for (CollectivePoint& p : curve.points) p.time_s = 1e-3;
  curve.points.back().time_s = 0.9e-3;
  fit_latency_bandwidth(curve);
  EXPECT_DOUBLE_EQ(curve.latency_s, 1e-3);
  const double factor = bus_bandwidth_factor(curve.kind, curve.group_size);
  EXPECT_NEAR(curve.bus_bandwidth_gbs, curve.points.back().bytes * factor / 0.9e-3 / 1e9, 1e-9);
  EXPECT_GT(curve.max_residual, 0.5);  // and the residual says it is a poor line
}

TEST(LatencyBandwidthFit, NegativeInterceptIsClampedToZeroLatency) {
  // A line with a -2 us intercept, from 64 KiB up so every time stays positive.
  CollectiveCurve curve = synthetic_all_reduce(-2e-6, 5.0, 64 * 1024);
  fit_latency_bandwidth(curve);
  EXPECT_EQ(curve.latency_s, 0.0);
  EXPECT_GT(curve.bus_bandwidth_gbs, 4.5);
  EXPECT_LT(curve.bus_bandwidth_gbs, 5.5);
  EXPECT_GT(curve.max_residual, 0.0);  // the origin line cannot match the smallest point exactly
  EXPECT_NEAR(fitted_time(curve, 0), 0.0, 1e-15);
}

TEST(SweepTable, HasHeaderColumnsARowPerPointAndTheFit) {
  CollectiveCurve curve = synthetic_all_reduce(20e-6, 5.0);
  fit_latency_bandwidth(curve);
  const std::string table = format_sweep_table(curve, "MPI");
  EXPECT_EQ(table.find("# all_reduce on 4 ranks (MPI)\n"), 0u) << table;
  for (const char* column : {"size(B)", "count(elements)", "type", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "fit(us)",
                             "resid(%)"})
    EXPECT_NE(table.find(column), std::string::npos) << column;
  // 1 KiB all-reduce: 256 floats, 20 + 1024·1.5/5e9 s = 20.31 us.
  EXPECT_NE(table.find("1024             256  float      20.31"), std::string::npos) << table;
  EXPECT_NE(table.find("268435456"), std::string::npos) << table;
  EXPECT_NE(table.find("# fit: latency 20.00 us, bus bandwidth 5.00 GB/s, max residual 0.0%\n"), std::string::npos)
      << table;
  std::size_t lines = 0;
  for (char c : table) lines += c == '\n';
  EXPECT_EQ(lines, 2 + curve.points.size() + 1);  // header, columns, rows, fit
}

}  // namespace
}  // namespace cc::profiler
