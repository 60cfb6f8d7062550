// A cost database measured on one H200 (tests/reference/gpu-h200/) predicts five layouts its
// profile never ran — two micro batches, selective and full recompute, twice the depth — within
// 6% of what the same GPU measured. The database holds device times only, so this also checks
// that a database without host times is read and priced device-only.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace cc::cli_test {
namespace {

const std::string kFolder = std::string(CLUSTERCAST_SOURCE_DIR) + "/tests/reference/gpu-h200/";

struct Layout {
  std::string name;
  std::vector<std::string> flags;
  double measured_s = 0;
};

// measured-1.3b-shape.csv: layout,num_layers,micro_batch,global_batch,recompute_granularity,
// recompute_method,recompute_num_layers,measured_s
std::vector<Layout> measured_layouts() {
  std::ifstream in(kFolder + "measured-1.3b-shape.csv");
  std::string line;
  std::getline(in, line);  // header
  std::vector<Layout> out;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream row(line);
    for (std::string cell; std::getline(row, cell, ',');) f.push_back(cell);
    if (f.size() == 7) f.emplace_back();  // a trailing empty cell
    if (f.size() != 8) ADD_FAILURE() << "bad row: " << line;
    if (f.size() != 8) continue;
    Layout l{f[0],
             {"--num-layers", f[1], "--micro-batch-size", f[2], "--global-batch-size", f[3],
              "--recompute-granularity", f[4]},
             std::stod(f[7])};
    if (!f[5].empty()) l.flags.insert(l.flags.end(), {"--recompute-method", f[5], "--recompute-num-layers", f[6]});
    out.push_back(l);
  }
  return out;
}

TEST(GpuH200Database, PredictsFiveUnprofiledLayoutsWithinSixPercent) {
  const std::vector<Layout> layouts = measured_layouts();
  ASSERT_EQ(layouts.size(), 5u);
  for (const Layout& l : layouts) {
    std::vector<std::string> args = {"simulate", "--costs", kFolder + "costs-1.3b-shape.json", "--cluster", "h200",
                                     "--precision", "bf16", "--gpus", "1", "--model", "gpt3-1.3b", "--vocab-size",
                                     "256", "--json"};
    args.insert(args.end(), l.flags.begin(), l.flags.end());
    const RunResult r = run_clustercast(args);
    ASSERT_EQ(r.exit_code, 0) << l.name << ": " << r.err;
    const double predicted = nlohmann::json::parse(r.out)["iteration_time_s"].get<double>();
    EXPECT_LE(std::abs(predicted / l.measured_s - 1), 0.06)
        << l.name << ": predicted " << predicted << " s, measured " << l.measured_s << " s";
  }
}

}  // namespace
}  // namespace cc::cli_test
