// The reduced validation CI runs: profile `tiny` once on two MPI ranks, predict four layouts
// that profile never ran (pipeline 1F1B and interleaved, TP with SP and selective recompute,
// DP with the distributed optimizer and full recompute) from that database alone, train each
// for real, and hold the predictions to a bound. The full validation (ten layouts of `small`,
// bound 10% per layout and 5% mean) is traces/validation-cpu.md.
//
// The bound here: 25% per layout and 15% mean for iteration time, 5% for activation memory.
// Looser in time than the report's because it is what this machine repeats to: a tiny step
// lasts 0.1 s, and three validations of the same pp=2,mbs=2 layout on the 2-core machine
// (2026-12-01) measured 0.104, 0.101 and 0.123 s and predicted from their own profiles
// 0.105, 0.105 and 0.106 s, errors from +4% to -14% for one unchanged model; CI shares the
// machine with nothing (RUN_SERIAL) but not with the host's other guests. The memory bound
// is the report's: the engine's accounting does not depend on load.
#include <cmath>
#include <sstream>

#include <gtest/gtest.h>

#include "cli/cli_runner.h"

namespace cc::cli_test {
namespace {

struct Row {
  std::string layout, held_out;
  double time_error = 0, memory_error = 0;
};

// The per-layout table of the Markdown report: | `layout` (summary) | held-out | predicted |
// measured | error | predicted activations | measured | error | miss |
std::vector<Row> report_rows(const std::string& markdown) {
  std::vector<Row> rows;
  std::istringstream in(markdown);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `", 0) != 0 || line.find("predicted") != std::string::npos ||
        line.find("measured") != std::string::npos)
      continue;
    std::vector<std::string> cells;
    std::istringstream cols(line.substr(1));
    for (std::string cell; std::getline(cols, cell, '|');) cells.push_back(cell);
    if (cells.size() < 9) continue;
    Row r;
    r.layout = cells[0];
    r.held_out = cells[1];
    r.time_error = std::stod(cells[4]) / 100;   // "+3.1%"
    r.memory_error = std::stod(cells[7]) / 100;
    rows.push_back(r);
  }
  return rows;
}

TEST(ValidationAccuracy, TinyOnTwoRanksPredictsLayoutsItsProfileNeverRan) {
  const TempDir dir;
  const std::string report = dir.file("validation.md");
  const RunResult r = run_clustercast({"validate", "--model", "tiny", "--ranks", "2", "--layouts",
                                       "pp=2,mbs=2; pp=2,vpp=2,mbs=1; tp=2,sp,recompute=selective,mbs=2; "
                                       "dp=2,distopt,recompute=full",
                                       "--steps", "12", "--warmup-steps", "3", "--tolerance", "0.25", "--report",
                                       report});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 3) << r.out << r.err;
  const std::vector<Row> rows = report_rows(read_file(report));
  ASSERT_EQ(rows.size(), 4u) << read_file(report);
  double sum = 0;
  for (const Row& row : rows) {
    EXPECT_NE(row.held_out.find("yes"), std::string::npos) << row.layout << " was one of the profiled runs";
    EXPECT_LE(std::abs(row.time_error), 0.25) << row.layout << "\n" << r.out;
    EXPECT_LE(std::abs(row.memory_error), 0.05) << row.layout << "\n" << r.out;
    sum += std::abs(row.time_error);
  }
  EXPECT_LE(sum / static_cast<double>(rows.size()), 0.15) << r.out;
  EXPECT_EQ(r.exit_code, 0) << "validate's own verdict disagrees with the report:\n" << r.out;
}

}  // namespace
}  // namespace cc::cli_test
