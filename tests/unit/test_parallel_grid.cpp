// The grid of named, ordered parallel dimensions: rank <-> coordinates, groups spanning
// named dimensions (Megatron-Core's generate_masked_orthogonal_rank_groups), the errors of
// an order string, and the dense grid's numbering, which checkpoints and profiles rely on.
#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "sim/error.h"
#include "sim/parallel_config.h"
#include "sim/parallel_grid.h"
#include "sim/parallel_layout.h"

namespace cc {
namespace {

using Groups = std::vector<std::vector<int>>;

// The message of the SpecError `make` throws ("" if it throws none).
template <typename Make>
std::string error_of(Make&& make) {
  try {
    make();
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

TEST(ParallelGrid, RankAndCoordinatesRoundTripInEveryOrder) {
  for (const char* order : {"tp-dp-pp", "tp-pp-dp", "pp-tp-dp", "tp-cp-ep-dp-pp"}) {
    const ParallelGrid grid(order, {{"tp", 2}, {"dp", 3}, {"pp", 4}, {"cp", 1}});
    ASSERT_EQ(grid.world_size(), 24) << order;
    for (int r = 0; r < grid.world_size(); ++r) EXPECT_EQ(grid.rank(grid.coords(r)), r) << order << " rank " << r;
  }
}

TEST(ParallelGrid, TheFirstNameOfTheOrderIsInnermost) {
  // "pp-tp-dp" with pp 2, tp 3, dp 2: rank = (dp·3 + tp)·2 + pp, so rank 9 = (1·3 + 1)·2 + 1.
  const ParallelGrid grid("pp-tp-dp", {{"pp", 2}, {"tp", 3}, {"dp", 2}});
  EXPECT_EQ(grid.coords(9), (std::vector<int>{1, 1, 1}));
  EXPECT_EQ(grid.coord(9, "pp"), 1);
  EXPECT_EQ(grid.coord(10, "tp"), 2);  // 10 = (1·3 + 2)·2 + 0
  EXPECT_EQ(grid.coord(10, "dp"), 1);
  EXPECT_EQ(grid.rank({0, 2, 1}), 10);
  EXPECT_EQ(grid.order(), "pp-tp-dp");
  EXPECT_EQ(grid.group(9, "pp"), (std::vector<int>{8, 9}));
  EXPECT_EQ(grid.group(9, "tp"), (std::vector<int>{7, 9, 11}));
}

TEST(ParallelGrid, GroupsOfATwoByTwoByTwoGridWrittenOutByHand) {
  // rank = (pp·2 + dp)·2 + tp:
  //   rank  0 1 2 3 4 5 6 7
  //   tp    0 1 0 1 0 1 0 1
  //   dp    0 0 1 1 0 0 1 1
  //   pp    0 0 0 0 1 1 1 1
  const ParallelGrid grid("tp-dp-pp", {{"tp", 2}, {"dp", 2}, {"pp", 2}});
  EXPECT_EQ(grid.groups("tp"), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(grid.groups("dp"), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(grid.groups("pp"), (Groups{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(grid.groups("tp-dp"), (Groups{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(grid.groups("tp-pp"), (Groups{{0, 1, 4, 5}, {2, 3, 6, 7}}));
  EXPECT_EQ(grid.groups("dp-pp"), (Groups{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(grid.groups("tp-dp-pp"), (Groups{{0, 1, 2, 3, 4, 5, 6, 7}}));
  // The names of a group may come in any order; a known name the grid lacks spans nothing.
  EXPECT_EQ(grid.group(6, "pp-tp"), (std::vector<int>{2, 3, 6, 7}));
  EXPECT_EQ(grid.group(6, "tp-cp"), (std::vector<int>{6, 7}));
  EXPECT_EQ(grid.group(6, "cp"), (std::vector<int>{6}));
  EXPECT_EQ(grid.size("cp"), 1);
  // A group's size without listing it: 2 x 2 for tp-dp, 2 for cp-dp (CP spans nothing here).
  EXPECT_EQ(grid.group_size("tp-dp"), 4);
  EXPECT_EQ(grid.group_size("cp-dp"), 2);
  EXPECT_EQ(grid.group_size("tp-dp-pp"), 8);
  EXPECT_EQ(grid.coord(6, "ep"), 0);
}

TEST(ParallelGrid, MegatronCoreDocumentedExampleOfSixteenGpus) {
  // Megatron-Core's initialize_model_parallel docstring: 16 GPUs, tensor parallel 2,
  // pipeline parallel 4 (so data parallel 2), default order tp-cp-ep-dp-pp (CP, EP = 1).
  // rank = (pp·2 + dp)·2 + tp, strides tp 1, dp 2, pp 4. Its groups, as the docstring lists:
  //   8 tensor groups:   [g0, g1], [g2, g3], ..., [g14, g15]
  //   8 data groups:     [g0, g2], [g1, g3], [g4, g6], [g5, g7], [g8, g10], [g9, g11], [g12, g14], [g13, g15]
  //   4 pipeline groups: [g0, g4, g8, g12], [g1, g5, g9, g13], [g2, g6, g10, g14], [g3, g7, g11, g15]
  const ParallelGrid grid("tp-cp-ep-dp-pp", {{"tp", 2}, {"pp", 4}, {"dp", 2}});
  ASSERT_EQ(grid.world_size(), 16);
  EXPECT_EQ(grid.groups("tp"), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}}));
  EXPECT_EQ(grid.groups("dp"), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}}));
  EXPECT_EQ(grid.groups("pp"), (Groups{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}}));
  // Model-parallel groups (tp-pp): the ranks sharing dp 0, then those sharing dp 1.
  EXPECT_EQ(grid.groups("tp-pp"), (Groups{{0, 1, 4, 5, 8, 9, 12, 13}, {2, 3, 6, 7, 10, 11, 14, 15}}));
}

TEST(ParallelGrid, DenseGridNumbersRanksAsTheLayoutAlwaysHas) {
  // The numbering every checkpoint and profile was written with: rank = (pp·DP + dp)·TP + tp,
  // and a group holds the ranks equal in every other coordinate.
  const std::vector<std::tuple<int, int, int>> shapes = {{1, 1, 1}, {8, 4, 2}, {2, 3, 5}, {4, 1, 8}, {1, 6, 1}};
  for (const auto& [tp, dp, pp] : shapes) {
    ParallelConfig config;
    config.tp = tp;
    config.dp = dp;
    config.pp = pp;
    const ParallelGrid grid = config.grid();
    const ParallelLayout layout(tp, dp, pp);
    ASSERT_EQ(grid.world_size(), tp * dp * pp);
    for (int p = 0; p < pp; ++p)
      for (int d = 0; d < dp; ++d)
        for (int t = 0; t < tp; ++t) {
          const int r = (p * dp + d) * tp + t;
          EXPECT_EQ(grid.rank({t, 0, d, p}), r);  // CP coordinate 0 at CP 1
          EXPECT_EQ(layout.rank({t, d, p}), r);
          const RankCoords c = layout.coords(r);
          EXPECT_EQ(c.tp, t);
          EXPECT_EQ(c.dp, d);
          EXPECT_EQ(c.pp, p);
          std::vector<int> tp_group, dp_group, pp_group;
          for (int k = 0; k < tp; ++k) tp_group.push_back((p * dp + d) * tp + k);
          for (int k = 0; k < dp; ++k) dp_group.push_back((p * dp + k) * tp + t);
          for (int k = 0; k < pp; ++k) pp_group.push_back((k * dp + d) * tp + t);
          EXPECT_EQ(grid.group(r, "tp"), tp_group);
          EXPECT_EQ(layout.tp_group(r), tp_group);
          EXPECT_EQ(layout.dp_group(r), dp_group);
          EXPECT_EQ(layout.pp_group(r), pp_group);
        }
    EXPECT_EQ(layout.grid(), grid);
    EXPECT_EQ(layout.tp(), tp);
    EXPECT_EQ(layout.dp(), dp);
    EXPECT_EQ(layout.pp(), pp);
  }
}

TEST(ParallelGrid, GroupsOfOneNameCoverTheWorldOnce) {
  const ParallelGrid grid("tp-cp-dp-pp", {{"tp", 4}, {"cp", 2}, {"dp", 3}, {"pp", 2}});
  for (const char* dims : {"tp", "cp", "dp", "pp", "tp-cp", "cp-dp", "tp-dp-pp"}) {
    std::vector<int> seen(static_cast<std::size_t>(grid.world_size()), 0);
    for (const std::vector<int>& g : grid.groups(dims)) {
      for (int r : g) {
        ++seen[static_cast<std::size_t>(r)];
        EXPECT_EQ(grid.group(r, dims), g) << dims << " rank " << r;
      }
    }
    EXPECT_EQ(seen, std::vector<int>(static_cast<std::size_t>(grid.world_size()), 1)) << dims;
  }
}

TEST(ParallelGrid, OrderErrorsNameTheValueAndWhatIsValid) {
  const std::string unknown = error_of([] { ParallelGrid("tp-xp-pp", {{"tp", 2}}); });
  EXPECT_NE(unknown.find("'xp' is not a parallel dimension"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("tp, cp, ep, etp, edp, dp, pp"), std::string::npos) << unknown;

  const std::string twice = error_of([] { ParallelGrid("tp-dp-tp", {}); });
  EXPECT_NE(twice.find("'tp-dp-tp': 'tp' appears twice"), std::string::npos) << twice;

  const std::string empty = error_of([] { ParallelGrid("tp--pp", {}); });
  EXPECT_NE(empty.find("'tp--pp': an empty name"), std::string::npos) << empty;
  EXPECT_NE(error_of([] { ParallelGrid("", {}); }).find("an empty name"), std::string::npos);

  const std::string zero = error_of([] { ParallelGrid("tp-dp-pp", {{"tp", 2}, {"dp", 0}}); });
  EXPECT_NE(zero.find("dp size is 0; it must be >= 1"), std::string::npos) << zero;

  const std::string outside = error_of([] { ParallelGrid("tp-pp", {{"dp", 4}}); });
  EXPECT_NE(outside.find("dp has size 4, but the order does not name it"), std::string::npos) << outside;
  EXPECT_EQ(error_of([] { ParallelGrid("tp-pp", {{"dp", 1}}); }), "");

  const std::string huge = error_of([] { ParallelGrid("tp-dp-pp", {{"tp", 65536}, {"dp", 65536}}); });
  EXPECT_NE(huge.find("4294967296 ranks"), std::string::npos) << huge;

  const ParallelGrid grid("tp-dp", {{"tp", 2}});
  const std::string group = error_of([&] { grid.group(0, "tp-mp"); });
  EXPECT_NE(group.find("parallel group 'tp-mp': 'mp' is not a parallel dimension; valid names are"), std::string::npos)
      << group;
  EXPECT_NE(error_of([&] { grid.group(0, "dp-dp"); }).find("'dp' appears twice"), std::string::npos);
  EXPECT_NE(error_of([&] { grid.size("xp"); }).find("'xp' is not a parallel dimension"), std::string::npos);
}

TEST(ParallelGrid, EveryNameHasItsFlagAndJsonKey) {
  EXPECT_EQ(dimension_info("tp").flag, "--tensor-model-parallel-size");
  EXPECT_EQ(dimension_info("pp").json_key, "pipeline_model_parallel_size");
  EXPECT_EQ(dimension_info("dp").json_key, "data_parallel_size");
  for (const GridDimensionInfo& d : kGridDimensions) EXPECT_EQ(&dimension_info(d.name), &d);
  EXPECT_NE(error_of([] { dimension_info("mp"); }).find("'mp' is not a parallel dimension"), std::string::npos);
}

}  // namespace
}  // namespace cc
