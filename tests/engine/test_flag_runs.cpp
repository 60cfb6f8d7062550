// flag_runs.h over a real rank's flat parameter layout (optimizer.h's FlatLayout): the runs
// tile the range exactly, each run holds one flag, neighbours differ, and the padding of a
// distributed-optimizer shard reads as unflagged — what the CUDA optimizer relies on when
// it updates, clips and reduces by ranges instead of elements.
#include <gtest/gtest.h>

#include "engine/flag_runs.h"
#include "engine/optimizer.h"
#include "micro_model.h"

namespace cc::engine {
namespace {

void expect_tiling(const std::vector<std::uint8_t>& flags, std::size_t begin, std::size_t end) {
  const std::vector<FlagRun> runs = flag_runs(flags, begin, end);
  std::size_t at = begin;
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const FlagRun& r = runs[k];
    ASSERT_EQ(r.begin, at);
    ASSERT_LT(r.begin, r.end);
    for (std::size_t i = r.begin; i < r.end; ++i) ASSERT_EQ(i < flags.size() && flags[i] != 0, r.flag) << i;
    if (k > 0) {
      EXPECT_NE(runs[k - 1].flag, r.flag);
    }
    at = r.end;
  }
  EXPECT_EQ(at, end);
  std::size_t flagged = 0, in_ranges = 0;
  for (std::size_t i = begin; i < end; ++i) flagged += i < flags.size() && flags[i] != 0;
  for (const auto& [b, e] : flagged_ranges(flags, begin, end)) in_ranges += e - b;
  EXPECT_EQ(in_ranges, flagged);
}

TEST(FlagRuns, TileEveryFlagOfARanksLayoutAndEveryShard) {
  const ModelSpec spec = micro_model(2);
  ParallelConfig tp2;
  tp2.tp = 2;
  for (int tp_rank : {0, 1}) {
    const RankModel m = make_rank_model(spec, tp2, tp_rank, 0);
    ModelWeights<float> w = allocate_weights<float>(m);
    const FlatLayout layout = flat_layout(w, m);
    ASSERT_GT(layout.size, 0u);
    for (const auto* flags : {&layout.decay, &layout.counted, &layout.sp_partial, &layout.tied}) {
      expect_tiling(*flags, 0, layout.size);
      // Distributed optimizer over 3 replicas: shards of the size padded to a multiple of 3.
      const std::size_t shard = (layout.size + 2) / 3;
      for (std::size_t d = 0; d < 3; ++d) expect_tiling(*flags, d * shard, (d + 1) * shard);
    }
    // Both kinds occur: matrices decay, norms and biases do not.
    const auto runs = flag_runs(layout.decay, 0, layout.size);
    EXPECT_GT(runs.size(), 2u);
  }
}

TEST(FlagRuns, EmptyRangeHasNoRuns) {
  EXPECT_TRUE(flag_runs({1, 0, 1}, 2, 2).empty());
  EXPECT_EQ(flag_runs({1, 1, 0}, 0, 5), (std::vector<FlagRun>{{0, 2, true}, {2, 5, false}}));
}

}  // namespace
}  // namespace cc::engine
