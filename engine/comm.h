// comm.h — the engine's process groups and collectives over MPI. Every group is carved out
// of the layout's ParallelGrid by the dimensions it spans (sim/parallel_grid.h: TP innermost,
// then DP, then PP — the simulator's grid), and every collective is annotated like a compute
// op so the profiler sees it.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "engine/annotations.h"
#include "sim/parallel_layout.h"

namespace cc::engine {

template <typename T>
MPI_Datatype mpi_type();
template <>
inline MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }
template <>
inline MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }

// One communicator; a group of size 1 makes every collective a copy (or nothing).
class Group {
 public:
  Group() = default;
  Group(MPI_Comm comm, std::string name);

  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }
  const std::string& name() const { return name_; }

  template <typename T>
  void all_reduce_sum(T* data, std::size_t n, const OpAnnotation& what) const;
  template <typename T>
  void all_reduce_max(T* data, std::size_t n, const OpAnnotation& what) const;
  // out holds size() blocks of n, block r from rank r.
  template <typename T>
  void all_gather(const T* in, std::size_t n, T* out, const OpAnnotation& what) const;
  // in holds size() blocks of n; out gets the sum of every rank's block rank().
  template <typename T>
  void reduce_scatter_sum(const T* in, T* out, std::size_t n, const OpAnnotation& what) const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  std::string name_;
  int rank_ = 0;
  int size_ = 1;
};

struct ProcessGroups {
  ParallelLayout layout{1, 1, 1};  // layout.grid() names every dimension
  RankCoords me;
  int world_rank = 0;
  Group world, tp, dp, pp, model_parallel, embedding;  // embedding: first and last stage (tied weights)
};

// The groups cut from the grid, each by the dimensions it spans (Megatron-Core's names): a
// new dimension's group is one more row. The embedding group is not a grid group (two stages
// of the pipeline group) and is cut beside them.
struct GridGroup {
  Group ProcessGroups::*group;
  const char* name;
  const char* dims;
};
inline constexpr GridGroup kGridGroups[] = {
    {&ProcessGroups::tp, "tp", "tp"},
    {&ProcessGroups::dp, "dp", "dp"},
    {&ProcessGroups::pp, "pp", "pp"},
    {&ProcessGroups::model_parallel, "model_parallel", "tp-pp"},
};

// Collective over MPI_COMM_WORLD; the world size must equal tp·dp·pp.
ProcessGroups make_process_groups(int tp, int dp, int pp);

}  // namespace cc::engine
