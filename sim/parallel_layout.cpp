#include "sim/parallel_layout.h"

#include <algorithm>
#include <map>

namespace cc {

ParallelLayout::ParallelLayout(int tp, int dp, int pp)
    : grid_(kDenseGridOrder, {{"tp", tp}, {"dp", dp}, {"pp", pp}}) {}

RankCoords ParallelLayout::coords(int rank) const {
  return {grid_.coord(rank, "tp"), grid_.coord(rank, "dp"), grid_.coord(rank, "pp")};
}

GroupPlacement place_group(const std::vector<int>& ranks, int gpus_per_node) {
  std::map<int, int> per_node;
  for (int r : ranks) ++per_node[r / gpus_per_node];
  int most = 0;
  for (const auto& [node, count] : per_node) most = std::max(most, count);
  return {static_cast<int>(ranks.size()), static_cast<int>(per_node.size()), most};
}

}  // namespace cc
