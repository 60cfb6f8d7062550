#include "sim/parallel_layout.h"

#include <algorithm>
#include <map>

namespace cc {

ParallelLayout::ParallelLayout(int tp, int dp, int pp) : tp_(tp), dp_(dp), pp_(pp) {}

RankCoords ParallelLayout::coords(int rank) const {
  return {rank % tp_, (rank / tp_) % dp_, rank / (tp_ * dp_)};
}

std::vector<int> ParallelLayout::tp_group(int r) const {
  RankCoords c = coords(r);
  std::vector<int> g;
  for (c.tp = 0; c.tp < tp_; ++c.tp) g.push_back(rank(c));
  return g;
}

std::vector<int> ParallelLayout::dp_group(int r) const {
  RankCoords c = coords(r);
  std::vector<int> g;
  for (c.dp = 0; c.dp < dp_; ++c.dp) g.push_back(rank(c));
  return g;
}

std::vector<int> ParallelLayout::pp_group(int r) const {
  RankCoords c = coords(r);
  std::vector<int> g;
  for (c.pp = 0; c.pp < pp_; ++c.pp) g.push_back(rank(c));
  return g;
}

GroupPlacement place_group(const std::vector<int>& ranks, int gpus_per_node) {
  std::map<int, int> per_node;
  for (int r : ranks) ++per_node[r / gpus_per_node];
  int most = 0;
  for (const auto& [node, count] : per_node) most = std::max(most, count);
  return {static_cast<int>(ranks.size()), static_cast<int>(per_node.size()), most};
}

}  // namespace cc
