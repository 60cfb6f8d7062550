#include "engine/cuda/gpu_context.h"

#include <cuda_bf16.h>

#include <cstdlib>

#include "engine/pipeline_links.h"

namespace cc::cuda {

namespace {

constexpr std::size_t kBlasWorkspaceBytes = 32u << 20;  // cuBLAS's recommendation for Hopper
constexpr std::int64_t kMaxGroupSize = 1 << 16;          // ranks a start-up probe can gather from

engine::OpAnnotation with_bytes(engine::OpAnnotation what, std::size_t bytes, CollectiveKind kind) {
  what.collective = true;
  what.kind = kind;
  what.shape = {static_cast<std::int64_t>(bytes), 0, 0, 0};
  return what;
}

}  // namespace

template <>
ncclDataType_t nccl_type<float>() { return ncclFloat32; }
template <>
ncclDataType_t nccl_type<__nv_bfloat16>() { return ncclBfloat16; }
template <>
ncclDataType_t nccl_type<double>() { return ncclFloat64; }

GpuGroup::GpuGroup(const engine::Group& group) : size_(group.size()), rank_(group.rank()) {
  if (size_ > 1) comm_ = std::make_unique<NcclComm>(group.comm());
}

GpuContext::GpuContext(const engine::ProcessGroups& groups, bool interleaved) : groups_(groups) {
  // cuBLAS runs on the compute stream with a workspace from the stream-ordered pool (its
  // own first-use allocation would be a cudaMalloc in the middle of the first step).
  CC_CUBLAS(cublasSetStream(blas_.get(), compute_.get()));  // resets the workspace: set it after
  blas_workspace_ = Tensor<std::uint8_t>(1, kBlasWorkspaceBytes, compute_.get());
  CC_CUBLAS(cublasSetWorkspace(blas_.get(), blas_workspace_.data(), kBlasWorkspaceBytes));
  // Freed blocks stay in the pool for the next step instead of going back to the driver.
  cudaMemPool_t pool = nullptr;
  int device = 0;
  CC_CUDA(cudaGetDevice(&device));
  CC_CUDA(cudaDeviceGetDefaultMemPool(&pool, device));
  std::uint64_t keep = UINT64_MAX;
  CC_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));

  // NCCL (2.22+) by default connects only the algorithm a collective first picks, so a small
  // start-up probe would leave the large-message paths to connect inside a step; connect
  // them all at init instead (a user's own setting wins).
  setenv("NCCL_RUNTIME_CONNECT", "0", 0);
  // Every rank creates the communicators in the same order (NCCL init is collective).
  tp_ = GpuGroup(groups.tp);
  dp_ = GpuGroup(groups.dp);
  embedding_ = GpuGroup(groups.embedding);
  model_parallel_ = GpuGroup(groups.model_parallel);
  world_ = GpuGroup(groups.world);

  const int p = groups.layout.pp(), s = groups.me.pp;
  links_.resize(static_cast<std::size_t>(2 * p));
  connect_groups();
  // A link joins two stages of one pipeline group: its colour is that group's first rank.
  const int color = groups.layout.grid().group(groups.world_rank, "pp").front();
  for (int l = 0; l < engine::pipeline_links_used(p, interleaved); ++l) {
    const bool member = s == l || s == (l + 1) % p;
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, member ? color : MPI_UNDEFINED, s == l ? 0 : 1, &comm);
    if (!member) continue;
    link_comms_.push_back(comm);
    int me = 0;
    MPI_Comm_rank(comm, &me);
    for (int direction = 0; direction < 2; ++direction) {
      auto link = std::make_unique<PipeLink>();
      link->comm = std::make_unique<NcclComm>(comm);
      link->peer = 1 - me;
      connect_link(*link, engine::sends_on_link(s, l, direction == 0));
      links_[static_cast<std::size_t>(2 * l + direction)] = std::move(link);
    }
  }
}

void GpuContext::connect_groups() {
  Tensor<float> probe(1, kMaxGroupSize, compute());
  CC_CUDA(cudaMemsetAsync(probe.data(), 0, probe.bytes(), compute()));
  for (const GpuGroup* g : {&tp_, &dp_, &embedding_, &model_parallel_, &world_}) {
    if (g->size() == 1) continue;
    if (g->size() > kMaxGroupSize) throw CudaError("connect_groups: group larger than the probe");
    const cudaStream_t s = compute();
    CC_NCCL(ncclAllReduce(probe.data(), probe.data(), 1, ncclFloat32, ncclSum, g->comm(), s));
    // In place, as NCCL defines it: rank r's block of the full buffer.
    CC_NCCL(ncclAllGather(probe.data() + g->rank(), probe.data(), 1, ncclFloat32, g->comm(), s));
    CC_NCCL(ncclReduceScatter(probe.data(), probe.data() + g->rank(), 1, ncclFloat32, ncclSum, g->comm(), s));
    CC_CUDA(cudaStreamSynchronize(s));
  }
}

void GpuContext::connect_link(PipeLink& link, bool sender) {
  Tensor<float> probe(1, 1, compute());
  CC_CUDA(cudaMemsetAsync(probe.data(), 0, probe.bytes(), compute()));
  CC_CUDA(cudaStreamSynchronize(compute()));
  if (sender)
    CC_NCCL(ncclSend(probe.data(), 1, ncclFloat32, link.peer, link.comm->get(), link.stream.get()));
  else
    CC_NCCL(ncclRecv(probe.data(), 1, ncclFloat32, link.peer, link.comm->get(), link.stream.get()));
  link.stream.synchronize();
}

GpuContext::~GpuContext() {
  cudaDeviceSynchronize();  // nothing pending may outlive its communicator or buffer
  pending_.clear();
  links_.clear();
  for (MPI_Comm& c : link_comms_) MPI_Comm_free(&c);
}

template <typename Launch>
void GpuContext::on_comm_stream(Launch&& launch) {
  // One pair of events serves every call: a wait takes the record current when it is enqueued.
  ready_.record(compute_.get());
  ready_.make_wait(comm_.get());
  launch(comm_.get());
  done_.record(comm_.get());
  done_.make_wait(compute_.get());
}

template <typename T>
void GpuContext::all_reduce(const GpuGroup& g, T* data, std::size_t n, ncclRedOp_t op, engine::OpAnnotation what) {
  if (g.size() == 1 || n == 0) return;
  engine::ScopedOp scope(with_bytes(what, n * sizeof(T), CollectiveKind::AllReduce));
  on_comm_stream([&](cudaStream_t s) { CC_NCCL(ncclAllReduce(data, data, n, nccl_type<T>(), op, g.comm(), s)); });
}

void GpuContext::all_reduce_ranges(const GpuGroup& g, float* base,
                                   const std::vector<std::pair<std::size_t, std::size_t>>& ranges,
                                   engine::OpAnnotation what) {
  std::size_t n = 0;
  for (const auto& [begin, end] : ranges) n += end - begin;
  if (g.size() == 1 || n == 0) return;
  engine::ScopedOp scope(with_bytes(what, n * sizeof(float), CollectiveKind::AllReduce));
  on_comm_stream([&](cudaStream_t s) {
    CC_NCCL(ncclGroupStart());
    for (const auto& [begin, end] : ranges)
      CC_NCCL(ncclAllReduce(base + begin, base + begin, end - begin, ncclFloat32, ncclSum, g.comm(), s));
    CC_NCCL(ncclGroupEnd());
  });
}

template <typename T>
void GpuContext::all_gather(const GpuGroup& g, const T* in, std::size_t n, T* out, engine::OpAnnotation what) {
  if (g.size() == 1) {
    if (n > 0 && in != out) CC_CUDA(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice, compute()));
    return;
  }
  engine::ScopedOp scope(with_bytes(what, n * sizeof(T) * static_cast<std::size_t>(g.size()), CollectiveKind::AllGather));
  on_comm_stream([&](cudaStream_t s) { CC_NCCL(ncclAllGather(in, out, n, nccl_type<T>(), g.comm(), s)); });
}

template <typename T>
void GpuContext::reduce_scatter(const GpuGroup& g, const T* in, T* out, std::size_t n, engine::OpAnnotation what) {
  if (g.size() == 1) {
    if (n > 0 && in != out) CC_CUDA(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice, compute()));
    return;
  }
  engine::ScopedOp scope(with_bytes(what, n * sizeof(T) * static_cast<std::size_t>(g.size()), CollectiveKind::ReduceScatter));
  on_comm_stream(
      [&](cudaStream_t s) { CC_NCCL(ncclReduceScatter(in, out, n, nccl_type<T>(), ncclSum, g.comm(), s)); });
}

PipeLink& GpuContext::link(bool forward, bool sending) {
  const int l = engine::pipeline_link(groups_.me.pp, groups_.layout.pp(), forward, sending);
  PipeLink* found = links_[static_cast<std::size_t>(2 * l + (forward ? 0 : 1))].get();
  if (!found) throw CudaError("pipeline transfer on a link this rank does not have (a schedule bug)");
  return *found;
}

template <typename T>
void GpuContext::send(Tensor<T> data, bool forward) {
  release_finished_sends();
  PipeLink& l = link(forward, true);
  engine::ScopedOp scope(with_bytes({"p2p.send", Phase::Forward, -1, -1, {}, true}, data.bytes(), CollectiveKind::SendRecv));
  ready_.record(compute());
  ready_.make_wait(l.stream.get());
  CC_NCCL(ncclSend(data.data(), static_cast<std::size_t>(data.size()), nccl_type<T>(), l.peer, l.comm->get(),
                   l.stream.get()));
  PendingSend pending{std::make_unique<Event>(), {}, {}};
  pending.done->record(l.stream.get());
  if constexpr (std::is_same_v<T, float>)
    pending.f32 = std::move(data);
  else
    pending.bf16 = std::move(data);
  pending_.push_back(std::move(pending));
}

void GpuContext::release_finished_sends() {
  // Any finished send, not only the oldest (a gradient send waiting for a slow receiver must
  // not hold back the activation sends behind it). Freed on the compute stream, which must
  // not reuse the memory before the send read it: the event has completed, so the wait costs
  // nothing but orders the free after it.
  std::erase_if(pending_, [&](const PendingSend& p) {
    if (!p.done->done()) return false;
    p.done->make_wait(compute());
    return true;
  });
}

template <typename T>
Tensor<T> GpuContext::receive(std::int64_t rows, std::int64_t cols, bool forward) {
  PipeLink& l = link(forward, false);
  Tensor<T> data(rows, cols, compute());
  engine::ScopedOp scope(with_bytes({"p2p.recv", Phase::Forward, -1, -1, {}, true}, data.bytes(), CollectiveKind::SendRecv));
  ready_.record(compute());  // after the allocation
  ready_.make_wait(l.stream.get());
  CC_NCCL(ncclRecv(data.data(), static_cast<std::size_t>(data.size()), nccl_type<T>(), l.peer, l.comm->get(),
                   l.stream.get()));
  done_.record(l.stream.get());
  done_.make_wait(compute());
  return data;
}

void GpuContext::finish_sends() {
  for (const PendingSend& p : pending_) p.done->make_wait(compute());
  pending_.clear();  // freed on the compute stream, after the waits above
}

#define CC_GPU_CONTEXT_INSTANTIATE(T)                                                                          \
  template void GpuContext::all_reduce<T>(const GpuGroup&, T*, std::size_t, ncclRedOp_t, engine::OpAnnotation); \
  template void GpuContext::all_gather<T>(const GpuGroup&, const T*, std::size_t, T*, engine::OpAnnotation);   \
  template void GpuContext::reduce_scatter<T>(const GpuGroup&, const T*, T*, std::size_t, engine::OpAnnotation);
CC_GPU_CONTEXT_INSTANTIATE(float)
CC_GPU_CONTEXT_INSTANTIATE(double)
CC_GPU_CONTEXT_INSTANTIATE(__nv_bfloat16)
#undef CC_GPU_CONTEXT_INSTANTIATE
template void GpuContext::send<float>(Tensor<float>, bool);
template void GpuContext::send<__nv_bfloat16>(Tensor<__nv_bfloat16>, bool);
template Tensor<float> GpuContext::receive<float>(std::int64_t, std::int64_t, bool);
template Tensor<__nv_bfloat16> GpuContext::receive<__nv_bfloat16>(std::int64_t, std::int64_t, bool);

}  // namespace cc::cuda
