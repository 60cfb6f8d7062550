#include "engine/comm.h"

#include "sim/error.h"

namespace cc::engine {

namespace {

OpAnnotation with_bytes(OpAnnotation what, std::size_t bytes, CollectiveKind kind) {
  what.collective = true;
  what.kind = kind;
  what.shape = {static_cast<std::int64_t>(bytes), 0, 0, 0};
  return what;
}

int check(int code, const char* call) {
  if (code != MPI_SUCCESS) fail("MPI call {} failed with error code {}", call, code);
  return code;
}

}  // namespace

Group::Group(MPI_Comm comm, std::string name) : comm_(comm), name_(std::move(name)) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

template <typename T>
void Group::all_reduce_sum(T* data, std::size_t n, const OpAnnotation& what) const {
  if (size_ == 1 || n == 0) return;
  ScopedOp scope(with_bytes(what, n * sizeof(T), CollectiveKind::AllReduce));
  check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), mpi_type<T>(), MPI_SUM, comm_), "MPI_Allreduce");
}

template <typename T>
void Group::all_reduce_max(T* data, std::size_t n, const OpAnnotation& what) const {
  if (size_ == 1 || n == 0) return;
  ScopedOp scope(with_bytes(what, n * sizeof(T), CollectiveKind::AllReduce));
  check(MPI_Allreduce(MPI_IN_PLACE, data, static_cast<int>(n), mpi_type<T>(), MPI_MAX, comm_), "MPI_Allreduce");
}

template <typename T>
void Group::all_gather(const T* in, std::size_t n, T* out, const OpAnnotation& what) const {
  if (size_ == 1) {
    std::copy(in, in + n, out);
    return;
  }
  ScopedOp scope(with_bytes(what, n * sizeof(T) * static_cast<std::size_t>(size_), CollectiveKind::AllGather));
  check(MPI_Allgather(in, static_cast<int>(n), mpi_type<T>(), out, static_cast<int>(n), mpi_type<T>(), comm_),
        "MPI_Allgather");
}

template <typename T>
void Group::reduce_scatter_sum(const T* in, T* out, std::size_t n, const OpAnnotation& what) const {
  if (size_ == 1) {
    std::copy(in, in + n, out);
    return;
  }
  ScopedOp scope(with_bytes(what, n * sizeof(T) * static_cast<std::size_t>(size_), CollectiveKind::ReduceScatter));
  check(MPI_Reduce_scatter_block(in, out, static_cast<int>(n), mpi_type<T>(), MPI_SUM, comm_),
        "MPI_Reduce_scatter_block");
}

template void Group::all_reduce_sum<float>(float*, std::size_t, const OpAnnotation&) const;
template void Group::all_reduce_sum<double>(double*, std::size_t, const OpAnnotation&) const;
template void Group::all_reduce_max<float>(float*, std::size_t, const OpAnnotation&) const;
template void Group::all_reduce_max<double>(double*, std::size_t, const OpAnnotation&) const;
template void Group::all_gather<float>(const float*, std::size_t, float*, const OpAnnotation&) const;
template void Group::all_gather<double>(const double*, std::size_t, double*, const OpAnnotation&) const;
template void Group::reduce_scatter_sum<float>(const float*, float*, std::size_t, const OpAnnotation&) const;
template void Group::reduce_scatter_sum<double>(const double*, double*, std::size_t, const OpAnnotation&) const;

ProcessGroups make_process_groups(int tp, int dp, int pp) {
  ProcessGroups g;
  g.layout = ParallelLayout(tp, dp, pp);
  const ParallelGrid& grid = g.layout.grid();
  int world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g.world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size != grid.world_size())
    fail("{} MPI ranks do not match TP {} x DP {} x PP {} = {}; start {} ranks with mpirun -np, or change the layout",
         world_size, tp, dp, pp, grid.world_size(), grid.world_size());
  g.me = g.layout.coords(g.world_rank);
  // A group's colour is its first rank (unique per group); ordering by world rank keeps the
  // grid's order inside it. Every rank splits in the same order (MPI_Comm_split is collective).
  auto split = [&](int color, const char* name) {
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, color, g.world_rank, &comm);
    return Group(comm, name);
  };
  g.world = Group(MPI_COMM_WORLD, "world");
  for (const GridGroup& named : kGridGroups)
    g.*named.group = split(grid.group(g.world_rank, named.dims).front(), named.name);
  // The first and last stage of each pipeline group share the tied embedding; every other
  // rank is a group of one (a colour no first rank can take).
  const std::vector<int> stages = grid.group(g.world_rank, "pp");
  const bool end_stage = g.world_rank == stages.front() || g.world_rank == stages.back();
  g.embedding = split(end_stage ? stages.front() : grid.world_size() + g.world_rank, "embedding");
  return g;
}

}  // namespace cc::engine
