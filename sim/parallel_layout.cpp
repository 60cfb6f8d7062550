#include "sim/parallel_layout.h"

#include <algorithm>
#include <map>

namespace cc {

ParallelLayout::ParallelLayout(int tp, int dp, int pp)
    : grid_(kDenseGridOrder, {{"tp", tp}, {"dp", dp}, {"pp", pp}}) {}

RankCoords ParallelLayout::coords(int rank) const {
  return {grid_.coord(rank, "tp"), grid_.coord(rank, "dp"), grid_.coord(rank, "pp")};
}

GroupPlacement place_group(const std::vector<int>& ranks, int block_gpus) {
  std::map<int, int> per_block;
  for (int r : ranks) ++per_block[r / block_gpus];
  int most = 0;
  for (const auto& [block, count] : per_block) most = std::max(most, count);
  return {static_cast<int>(ranks.size()), static_cast<int>(per_block.size()), most};
}

GroupPlacement place_in_nvlink_domains(const std::vector<int>& ranks, const ClusterSpec& cluster) {
  return place_group(ranks, cluster.nvlink_domain_size());
}

}  // namespace cc
