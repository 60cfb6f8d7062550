// nccl_comm.h — NCCL communicators for the CUDA backend, one per MPI communicator: the
// engine's TP, DP and PP groups are split over MPI exactly as on the CPU (engine/comm.cpp),
// and each becomes an NCCL communicator whose unique id rank 0 broadcasts over MPI.
#pragma once

#include <mpi.h>
#include <nccl.h>

namespace cc::cuda {

class NcclComm {
 public:
  // Collective over `group`: every member calls it (after choosing its device).
  explicit NcclComm(MPI_Comm group);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  ncclComm_t get() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  ncclComm_t comm_ = nullptr;
  int rank_ = 0, size_ = 1;
};

// One GPU per rank: the rank's index among the ranks on its node, modulo the node's GPUs.
// Returns the device chosen (and makes it current).
int select_device_for_rank(MPI_Comm world);

}  // namespace cc::cuda
