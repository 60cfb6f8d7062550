#include "profiler/cuda/nccl_transport.h"

#include <vector>

#include "engine/cuda/cuda_check.h"

namespace cc::profiler {

void NcclTransport::join(MPI_Comm group, std::int64_t max_bytes) {
  comm_ = std::make_unique<cuda::NcclComm>(group);
  stream_ = std::make_unique<cuda::Stream>();
  const auto elements = static_cast<std::size_t>(max_bytes / static_cast<std::int64_t>(sizeof(float)));
  send_ = cuda::DeviceBuffer<float>(elements);
  receive_ = cuda::DeviceBuffer<float>(elements);
  send_.upload(std::vector<float>(elements, 1.0f + static_cast<float>(comm_->rank())));
  CC_CUDA(cudaMemsetAsync(receive_.data(), 0, elements * sizeof(float), stream_->get()));
  stream_->synchronize();
}

void NcclTransport::leave() {
  send_ = {};
  receive_ = {};
  stream_.reset();
  comm_.reset();
}

void NcclTransport::run(CollectiveKind kind, std::int64_t count, int iterations) {
  const int n = comm_->size(), rank = comm_->rank();
  const auto c = static_cast<std::size_t>(count);
  const cudaStream_t s = stream_->get();
  for (int i = 0; i < iterations; ++i) {
    switch (kind) {
      case CollectiveKind::AllReduce:
        CC_NCCL(ncclAllReduce(send_.data(), receive_.data(), c, ncclFloat32, ncclSum, comm_->get(), s));
        break;
      case CollectiveKind::AllGather:  // nccl-tests' size is the gathered output
        CC_NCCL(ncclAllGather(send_.data(), receive_.data(), c / static_cast<std::size_t>(n), ncclFloat32,
                              comm_->get(), s));
        break;
      case CollectiveKind::ReduceScatter:  // and the scattered input
        CC_NCCL(ncclReduceScatter(send_.data(), receive_.data(), c / static_cast<std::size_t>(n), ncclFloat32, ncclSum,
                                  comm_->get(), s));
        break;
      case CollectiveKind::SendRecv:  // a ring, as the MPI transport runs it
        CC_NCCL(ncclGroupStart());
        CC_NCCL(ncclSend(send_.data(), c, ncclFloat32, (rank + 1) % n, comm_->get(), s));
        CC_NCCL(ncclRecv(receive_.data(), c, ncclFloat32, (rank - 1 + n) % n, comm_->get(), s));
        CC_NCCL(ncclGroupEnd());
        break;
      case CollectiveKind::AllToAll: {  // as nccl-tests' alltoall: 1/n of the buffer to every rank
        const std::size_t share = c / static_cast<std::size_t>(n);
        CC_NCCL(ncclGroupStart());
        for (int peer = 0; peer < n; ++peer) {
          const std::size_t offset = static_cast<std::size_t>(peer) * share;
          CC_NCCL(ncclSend(send_.data() + offset, share, ncclFloat32, peer, comm_->get(), s));
          CC_NCCL(ncclRecv(receive_.data() + offset, share, ncclFloat32, peer, comm_->get(), s));
        }
        CC_NCCL(ncclGroupEnd());
        break;
      }
    }
  }
  stream_->synchronize();
}

}  // namespace cc::profiler
