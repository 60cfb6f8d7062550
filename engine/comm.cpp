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
  int world_size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g.world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size != tp * dp * pp)
    fail("{} MPI ranks do not match TP {} x DP {} x PP {} = {}; start {} ranks with mpirun -np, or change the layout",
         world_size, tp, dp, pp, tp * dp * pp, tp * dp * pp);
  g.me = g.layout.coords(g.world_rank);
  auto split = [&](int color, const char* name) {
    MPI_Comm comm;
    MPI_Comm_split(MPI_COMM_WORLD, color, g.world_rank, &comm);
    return Group(comm, name);
  };
  const RankCoords c = g.me;
  g.world = Group(MPI_COMM_WORLD, "world");
  g.tp = split(c.pp * dp + c.dp, "tp");
  g.dp = split(c.pp * tp + c.tp, "dp");
  g.pp = split(c.dp * tp + c.tp, "pp");
  g.model_parallel = split(c.dp, "model_parallel");
  const bool end_stage = c.pp == 0 || c.pp == pp - 1;
  g.embedding = split(end_stage ? c.dp * tp + c.tp : tp * dp + g.world_rank, "embedding");
  return g;
}

}  // namespace cc::engine
