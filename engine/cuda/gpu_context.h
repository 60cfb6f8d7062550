// gpu_context.h — what every op of the GPU engine runs on: the compute stream (kernels and
// cuBLAS), the communication stream (TP, DP and embedding collectives), one stream per
// pipeline link and direction, NCCL communicators for the process groups engine/comm.h
// carves from the layout's grid (one per MPI group), and annotated collectives.
//
// Ordering without the host: a collective records an event on the compute stream, the
// communication stream waits for it, NCCL runs there, and the compute stream waits for the
// event recorded after it. Nothing inside a step blocks the host.
//
// Pipeline point-to-point: each link between stage s and the next, (s+1) mod p, has two
// 2-rank NCCL communicators, one for activations (s sends, s+1 receives) and one for
// gradients (s+1 sends, s receives), each driven from its own stream. One sender and one
// receiver per communicator, so messages match in issue order; the schedule delivers them
// in the order they are sent (tests/unit/test_pipeline_schedule.cpp checks this for every
// schedule). A send waits on the GPU for its receiver; the compute stream never waits for a
// send, only for receives, which is MPI's non-blocking-send, blocking-receive rule that the
// CPU engine runs deadlock-free.
#pragma once

#include <mpi.h>
#include <nccl.h>

#include <deque>
#include <memory>
#include <vector>

#include "engine/annotations.h"
#include "engine/comm.h"
#include "engine/cuda/device_buffer.h"
#include "engine/cuda/gpu_tensor.h"
#include "engine/cuda/nccl_comm.h"

namespace cc::cuda {

template <typename T>
ncclDataType_t nccl_type();

// One group's communicator; a group of one rank has none, and its collectives are copies.
class GpuGroup {
 public:
  GpuGroup() = default;
  explicit GpuGroup(const engine::Group& group);
  int size() const { return size_; }
  int rank() const { return rank_; }
  ncclComm_t comm() const { return comm_ ? comm_->get() : nullptr; }

 private:
  std::unique_ptr<NcclComm> comm_;
  int size_ = 1, rank_ = 0;
};

// A direction of one pipeline link: its communicator, stream and the rank's role on it.
struct PipeLink {
  std::unique_ptr<NcclComm> comm;
  Stream stream;
  int peer = 0;  // the other rank of the 2-rank communicator
};

class GpuContext {
 public:
  // Collective over MPI_COMM_WORLD (NCCL communicators); the device must be selected first.
  explicit GpuContext(const engine::ProcessGroups& groups, bool interleaved);
  ~GpuContext();
  GpuContext(const GpuContext&) = delete;
  GpuContext& operator=(const GpuContext&) = delete;

  cudaStream_t compute() const { return compute_.get(); }
  cublasHandle_t blas() const { return blas_.get(); }
  const engine::ProcessGroups& groups() const { return groups_; }
  const GpuGroup& tp() const { return tp_; }
  const GpuGroup& dp() const { return dp_; }
  const GpuGroup& embedding() const { return embedding_; }
  const GpuGroup& model_parallel() const { return model_parallel_; }
  const GpuGroup& world() const { return world_; }

  // Annotated collectives, in place where the CPU's are; `what` gets the bytes as its shape.
  template <typename T>
  void all_reduce(const GpuGroup& g, T* data, std::size_t n, ncclRedOp_t op, engine::OpAnnotation what);
  // Sums the [begin, end) ranges of `base` over the group as one grouped NCCL launch (the
  // scattered small tensors of one reduction, e.g. the sequence-parallel partial gradients).
  void all_reduce_ranges(const GpuGroup& g, float* base, const std::vector<std::pair<std::size_t, std::size_t>>& ranges,
                         engine::OpAnnotation what);
  // out holds g.size() blocks of n, block r from rank r.
  template <typename T>
  void all_gather(const GpuGroup& g, const T* in, std::size_t n, T* out, engine::OpAnnotation what);
  // in holds g.size() blocks of n; out gets the sum of every rank's block rank().
  template <typename T>
  void reduce_scatter(const GpuGroup& g, const T* in, T* out, std::size_t n, engine::OpAnnotation what);

  // Pipeline transfers of [rows × hidden] activations or gradients. `forward` picks the
  // activation links (else the gradient links). send() keeps the tensor until finish_sends().
  template <typename T>
  void send(Tensor<T> data, bool forward);
  template <typename T>
  Tensor<T> receive(std::int64_t rows, std::int64_t cols, bool forward);
  // The compute stream waits for every send of this step; their buffers are freed.
  void finish_sends();

 private:
  template <typename Launch>
  void on_comm_stream(Launch&& launch);
  PipeLink& link(bool forward, bool sending);
  // Frees the buffers of sends that have finished (never waits).
  void release_finished_sends();
  // NCCL connects peers at a communicator's first use, blocking the host and allocating
  // while other NCCL kernels may be spinning; one tiny operation on every communicator at
  // start-up (with the host waiting) moves all of that out of the training step.
  void connect_groups();
  void connect_link(PipeLink& link, bool sender);

  const engine::ProcessGroups& groups_;
  Stream compute_, comm_;
  Event ready_, done_;  // compute -> other stream, and back (re-recorded for every transfer)
  Tensor<std::uint8_t> blas_workspace_;  // outlives the handle that uses it
  CublasHandle blas_;
  GpuGroup tp_, dp_, embedding_, model_parallel_, world_;
  std::vector<MPI_Comm> link_comms_;
  // [link][0: activations, 1: gradients]; the rank is on links s-1 and s (mod p) only.
  std::vector<std::unique_ptr<PipeLink>> links_;
  // Sends in flight: the event after the send and the buffer it reads.
  struct PendingSend {
    std::unique_ptr<Event> done;
    Tensor<float> f32;
    Tensor<__nv_bfloat16> bf16;
  };
  std::deque<PendingSend> pending_;
};

}  // namespace cc::cuda
