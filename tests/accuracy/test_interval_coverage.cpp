// The nested interval coverage and the widening rule (metrics.h), on rows whose errors are
// chosen here so the answer can be worked out by hand.
#include <cmath>

#include <gtest/gtest.h>

#include "accuracy/metrics.h"

namespace cc::accuracy {
namespace {

// One row of `source` on 8 GPUs (DP 8) measured at `ratio` times its prediction of 1 s.
void add_row(std::vector<CorpusRow>& rows, std::vector<double>& predicted, const std::string& source, double ratio) {
  CorpusRow r;
  r.source = source;
  r.config.dp = 8;
  r.measured_s = ratio;
  rows.push_back(r);
  predicted.push_back(1.0);
}

// Ten sources of ten rows each, source k measured at 1 + k/100 (k = 0..9) on every row, and an
// eleventh measured at three times its prediction.
struct Spread {
  std::vector<CorpusRow> rows;
  std::vector<double> predicted;
  Spread() {
    for (int k = 0; k < 10; ++k)
      for (int i = 0; i < 10; ++i) add_row(rows, predicted, "s" + std::to_string(k), 1.0 + k / 100.0);
    for (int i = 0; i < 10; ++i) add_row(rows, predicted, "outlier", 3.0);
  }
};

TEST(NestedCoverage, EachSourceIsJudgedByAnIntervalBuiltWithoutIt) {
  const Spread s;
  // Every error of the other sources: s0 is the lowest, so the others' range starts above it;
  // s1..s9 fall inside (the outlier lies above s9); the outlier is above every other source.
  const IntervalCoverage all = nested_coverage(s.rows, s.predicted, 1, 64, 0.0);
  EXPECT_DOUBLE_EQ(all.by_source.at("s0"), 0.0);
  EXPECT_DOUBLE_EQ(all.by_source.at("s5"), 1.0);
  EXPECT_DOUBLE_EQ(all.by_source.at("s9"), 1.0);  // the outlier, above it, is in its interval
  EXPECT_DOUBLE_EQ(all.by_source.at("outlier"), 0.0);
  EXPECT_NEAR(all.sources_alike, 9.0 / 11.0, 1e-12);
  EXPECT_NEAR(all.rows, 90.0 / 110.0, 1e-12);
  // Rows outside the regime are not counted.
  EXPECT_TRUE(nested_coverage(s.rows, s.predicted, 64, 0, 0.0).by_source.empty());
}

TEST(NestedCoverage, TheStatedIntervalWidensUntilEightyPercentAreInside) {
  const Spread s;
  // The central 80% of the ten other sources alike runs from the lowest to the second highest of
  // them: s0 (lowest of all), s9 (the highest but the outlier) and the outlier fall out, 8 of 11.
  EXPECT_NEAR(nested_coverage(s.rows, s.predicted, 1, 64, 0.10).sources_alike, 8.0 / 11.0, 1e-12);
  // The central 82% reaches the highest other source, so s9 falls in: 9 of 11, and there the
  // widening stops (the first tail, from 10% down, whose coverage reaches 80%).
  const double tail = interval_tail(s.rows, s.predicted, 1, 64);
  EXPECT_NEAR(tail, 0.09, 1e-12);
  EXPECT_NEAR(nested_coverage(s.rows, s.predicted, 1, 64, tail).sources_alike, 9.0 / 11.0, 1e-12);
  EXPECT_GE(nested_coverage(s.rows, s.predicted, 1, 64, tail).sources_alike, kNominalCoverage);
  const long percent = std::lround(100 * tail);
  if (percent < 10) {
    EXPECT_LT(nested_coverage(s.rows, s.predicted, 1, 64, (percent + 1) / 100.0).sources_alike, kNominalCoverage);
  }
  // The band shipped leaves at most a tenth of the eleven sources' weight out on each side: from
  // at most s1's error to at least s9's.
  const ErrorBand b = error_bands(s.rows, s.predicted, "test")[0];
  EXPECT_LE(b.low, 1.01);
  EXPECT_GE(b.high, 1.09);
}

}  // namespace
}  // namespace cc::accuracy
