// nccl_transport.h — the collective sweep (profiler/collective_sweep.h) on NCCL: device
// buffers, one stream, and the host waits for the batch to finish, as nccl-tests times it.
#pragma once

#include <memory>

#include "engine/cuda/device_buffer.h"
#include "engine/cuda/nccl_comm.h"
#include "profiler/collective_sweep.h"

namespace cc::profiler {

class NcclTransport final : public CollectiveTransport {
 public:
  const char* name() const override { return "NCCL"; }
  void join(MPI_Comm group, std::int64_t max_bytes) override;
  void leave() override;
  void run(CollectiveKind kind, std::int64_t count, int iterations) override;

 private:
  std::unique_ptr<cuda::NcclComm> comm_;
  std::unique_ptr<cuda::Stream> stream_;
  cuda::DeviceBuffer<float> send_, receive_;
};

}  // namespace cc::profiler
