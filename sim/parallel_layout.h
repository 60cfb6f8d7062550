// parallel_layout.h — three parallel dimensions (TP, DP, PP) as named fields, a thin view of
// the dense ParallelGrid (sim/parallel_grid.h) at CP 1, for the engines' code that reads
// them by field; new code and new dimensions go through the grid by name. Also: where a
// group of ranks sits on the nodes of a cluster.
#pragma once

#include <vector>

#include "sim/parallel_grid.h"

namespace cc {

struct RankCoords {
  int tp = 0;
  int dp = 0;
  int pp = 0;
};

// Where the members of one process group sit: how many nodes they span and how many share
// a node. Collective costs depend on nothing else.
struct GroupPlacement {
  int size = 1;
  int nodes = 1;
  int per_node = 1;  // members on each node (groups here are regular, so it is uniform)
};

class ParallelLayout {
 public:
  ParallelLayout(int tp, int dp, int pp);

  const ParallelGrid& grid() const { return grid_; }
  int world_size() const { return grid_.world_size(); }
  // kDenseGridOrder, at CP coordinate 0: the layouts this view serves (the engines') run CP 1.
  int rank(RankCoords c) const { return grid_.rank({c.tp, 0, c.dp, c.pp}); }
  RankCoords coords(int rank) const;

  std::vector<int> tp_group(int rank) const { return grid_.group(rank, "tp"); }  // sharing dp and pp
  std::vector<int> dp_group(int rank) const { return grid_.group(rank, "dp"); }  // sharing tp and pp
  std::vector<int> pp_group(int rank) const { return grid_.group(rank, "pp"); }  // sharing tp and dp, in stage order

  int tp() const { return grid_.size("tp"); }
  int dp() const { return grid_.size("dp"); }
  int pp() const { return grid_.size("pp"); }

 private:
  ParallelGrid grid_;
};

// Placement of a group of ranks on nodes of `gpus_per_node` GPUs (rank r on node r / gpus_per_node).
GroupPlacement place_group(const std::vector<int>& ranks, int gpus_per_node);

}  // namespace cc
