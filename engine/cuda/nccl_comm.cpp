#include "engine/cuda/nccl_comm.h"

#include <cuda_runtime.h>

#include "engine/cuda/cuda_check.h"

namespace cc::cuda {

NcclComm::NcclComm(MPI_Comm group) {
  MPI_Comm_rank(group, &rank_);
  MPI_Comm_size(group, &size_);
  ncclUniqueId id;
  if (rank_ == 0) CC_NCCL(ncclGetUniqueId(&id));
  MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, group);
  CC_NCCL(ncclCommInitRank(&comm_, size_, id, rank_));
}

NcclComm::~NcclComm() {
  if (comm_) ncclCommDestroy(comm_);
}

int select_device_for_rank(MPI_Comm world) {
  MPI_Comm node;
  MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int local_rank = 0, local_size = 1;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_size);
  MPI_Comm_free(&node);
  int devices = 0;
  CC_CUDA(cudaGetDeviceCount(&devices));
  // Two ranks on one GPU would make NCCL fail later with "Duplicate GPU detected".
  if (local_size > devices)
    throw CudaError(std::to_string(local_size) + " ranks on this node but " + std::to_string(devices) +
                    " GPUs: start at most one rank per GPU");
  const int device = local_rank;
  CC_CUDA(cudaSetDevice(device));
  return device;
}

}  // namespace cc::cuda
