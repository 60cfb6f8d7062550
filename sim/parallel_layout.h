// parallel_layout.h — three parallel dimensions (TP, DP, PP) as named fields, a thin view of
// the dense ParallelGrid (sim/parallel_grid.h) at CP 1, for the engines' code that reads
// them by field; new code and new dimensions go through the grid by name. Also: where a
// group of ranks sits on the NVLink domains (or the nodes) of a cluster.
#pragma once

#include <vector>

#include "sim/cluster_spec.h"
#include "sim/parallel_grid.h"

namespace cc {

struct RankCoords {
  int tp = 0;
  int dp = 0;
  int pp = 0;
};

// Where the members of one process group sit: how many blocks of GPUs they span and how many
// share a block. Priced, the blocks are NVLink domains (place_in_nvlink_domains): inside one a
// collective rides NVLink, between them the network. The domain is the node on every cluster but
// the rack-scale ones, hence the field names. Collective costs depend on nothing else.
struct GroupPlacement {
  int size = 1;
  int nodes = 1;     // blocks spanned: NVLink domains when priced
  int per_node = 1;  // members in each block (groups here are regular, so it is uniform)
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

// Placement of a group of ranks on consecutive blocks of `block_gpus` GPUs (rank r in block
// r / block_gpus): NVLink domains for pricing, nodes for drawing the nodes of a cluster.
GroupPlacement place_group(const std::vector<int>& ranks, int block_gpus);
// Placement of a group of ranks on the cluster's NVLink domains, as every collective is priced.
GroupPlacement place_in_nvlink_domains(const std::vector<int>& ranks, const ClusterSpec& cluster);

}  // namespace cc
