// parallel_layout.h — maps a global rank to its (tp, dp, pp) coordinates and back, and
// names each rank's process groups. One grid for the engine and the simulator.
// Order is Megatron-LM's default "tp-dp-pp": TP innermost (peers share a node), then DP,
// then PP outermost, so consecutive pipeline stages usually sit on different nodes.
#pragma once

#include <vector>

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

  int world_size() const { return tp_ * dp_ * pp_; }
  int rank(RankCoords c) const { return (c.pp * dp_ + c.dp) * tp_ + c.tp; }
  RankCoords coords(int rank) const;

  std::vector<int> tp_group(int rank) const;  // ranks sharing this rank's dp and pp
  std::vector<int> dp_group(int rank) const;  // ranks sharing tp and pp
  std::vector<int> pp_group(int rank) const;  // ranks sharing tp and dp, in stage order

  int tp() const { return tp_; }
  int dp() const { return dp_; }
  int pp() const { return pp_; }

 private:
  int tp_, dp_, pp_;
};

// Placement of a group of ranks on nodes of `gpus_per_node` GPUs (rank r on node r / gpus_per_node).
GroupPlacement place_group(const std::vector<int>& ranks, int gpus_per_node);

}  // namespace cc
