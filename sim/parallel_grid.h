// parallel_grid.h — the ranks of a job as a grid of named, ordered parallel dimensions, as
// Megatron-Core's RankGenerator lays them out. An order string names the dimensions
// innermost first ("tp-cp-ep-dp-pp" is Megatron-Core's default): consecutive ranks differ
// in the first one, so TP peers share a node, and the last one (PP) is outermost. A rank's
// coordinates, the rank at given coordinates and every process group derive from that one
// order, so a new dimension is a new name here, not new fields in every consumer.
//
// A group is named by the dimensions it spans ("tp", "tp-pp"): the ranks that share every
// other coordinate, in rank order — Megatron-Core's generate_masked_orthogonal_rank_groups.
//
// Experts fold their own grid over the same ranks (Megatron-Core's "etp-ep-edp" with PP
// outermost, the same world size): expert layers take their groups from it, dense layers
// from the dense grid. That is a second ParallelGrid over the same world, not new fields
// here; groups from both are lists of the same global ranks.
#pragma once

#include <array>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cc {

// Every dimension a grid may hold, in Megatron-Core's terms (tensor, context, expert,
// expert-tensor, expert-data, data and pipeline parallelism), with how its size is spelled
// on a launch line and in clustercast's JSON (an interface: these keys never change).
// Expert data parallelism has neither: Megatron derives it from the others.
struct GridDimensionInfo {
  std::string_view name, flag, json_key;
};
inline constexpr std::array<GridDimensionInfo, 7> kGridDimensions = {{
    {"tp", "--tensor-model-parallel-size", "tensor_model_parallel_size"},
    {"cp", "--context-parallel-size", "context_parallel_size"},
    {"ep", "--expert-model-parallel-size", "expert_model_parallel_size"},
    {"etp", "--expert-tensor-parallel-size", "expert_tensor_parallel_size"},
    {"edp", "", ""},
    {"dp", "--data-parallel-size", "data_parallel_size"},
    {"pp", "--pipeline-model-parallel-size", "pipeline_model_parallel_size"},
}};
// The entry of kGridDimensions for `name` (SpecError naming the valid names for any other).
const GridDimensionInfo& dimension_info(std::string_view name);

// The dense grid: TP innermost, then CP, DP and PP — Megatron-Core's "tp-cp-ep-dp-pp" with EP
// of size 1, so rank = ((pp·DP + dp)·CP + cp)·TP + tp. At CP 1 that is (pp·DP + dp)·TP + tp,
// the numbering checkpoints, profiles and tests rely on. EP joins it as "tp-cp-ep-dp-pp": at
// size 1 it leaves every rank where it is.
inline constexpr std::string_view kDenseGridOrder = "tp-cp-dp-pp";

// The expert layers' grid (ParallelConfig::expert_grid): Megatron-Core's expert RankGenerator
// runs the same order "tp-cp-ep-dp-pp" with ETP in TP's place, CP 1 and EDP in DP's place.
inline constexpr std::string_view kExpertGridOrder = "etp-ep-edp-pp";

struct GridDimension {
  std::string_view name;  // one of kGridDimensions (the grid keeps its own static copy)
  int size = 1;
};

class ParallelGrid {
 public:
  static constexpr int kMaxDimensions = static_cast<int>(kGridDimensions.size());

  // `order`: dimension names innermost first, joined by '-'. `sizes`: each named dimension's
  // size; a name of the order without one has size 1, and a name outside the order may only
  // be given size 1. Throws SpecError naming the value and what is valid for an empty or
  // unknown name, a repeated name, a size below 1, or more than 2^31-1 ranks.
  ParallelGrid(std::string_view order, std::span<const GridDimension> sizes);
  ParallelGrid(std::string_view order, std::initializer_list<GridDimension> sizes)
      : ParallelGrid(order, std::span<const GridDimension>(sizes.begin(), sizes.size())) {}

  std::string order() const;  // e.g. "tp-dp-pp"
  int world_size() const { return world_size_; }
  int dimension_count() const { return count_; }
  // Dimension `i`, innermost first.
  GridDimension dimension(int i) const;
  // The size of `name`; 1 for a known name the grid does not hold (SpecError if unknown).
  int size(std::string_view name) const;
  // The number of ranks in each group spanning `dims` (e.g. "cp-dp"): the product of their
  // sizes, without listing a group (which costs memory in the group's size).
  int group_size(std::string_view dims) const;

  // Coordinates are listed innermost first, one per dimension of the order.
  std::vector<int> coords(int rank) const;
  int coord(int rank, std::string_view name) const;
  int rank(std::span<const int> coords) const;
  int rank(std::initializer_list<int> coords) const {
    return rank(std::span<const int>(coords.begin(), coords.size()));
  }

  // The ranks sharing every coordinate of `rank` outside `dims` ("tp", "tp-dp": names joined
  // by '-', in any order; a known name the grid does not hold spans nothing), in rank order.
  std::vector<int> group(int rank, std::string_view dims) const;
  // Every group spanning `dims`, ordered by their first rank; together they cover the world once.
  std::vector<std::vector<int>> groups(std::string_view dims) const;

  bool operator==(const ParallelGrid& other) const;

 private:
  struct Dimension {
    std::string_view name;
    int size = 1;
    int stride = 1;  // rank distance between neighbours along this dimension
  };
  int position(std::string_view name) const;  // index in the order, -1 when absent
  // The same, refusing a name that is no parallel dimension at all (SpecError).
  int held_position(std::string_view name) const;
  unsigned span_mask(std::string_view dims) const;  // bit i: dimension i is spanned

  std::array<Dimension, kMaxDimensions> dims_{};
  int count_ = 0;
  int world_size_ = 1;
};

}  // namespace cc
