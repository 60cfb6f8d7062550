// gpu_trainer.h — `clustercast train --backend cuda`: engine::train on GPUs, one per MPI
// rank (NCCL for every collective and pipeline transfer), bf16 (--precision bf16) or fp32
// storage with fp32 master weights, gradients and optimizer state. Same data, seed,
// initialisation, schedule, annotations and report as the CPU backend, so the two runs can
// be compared loss for loss and profiled alike.
#pragma once

#include <ostream>

#include "engine/trainer.h"

namespace cc::cuda {

// What the CUDA backend refuses beyond engine::validate_training (identically on every rank).
void validate_gpu_training(const ModelSpec& model, const ParallelConfig& config, const engine::TrainOptions& options,
                           int world_size);

// Runs on every rank; picks the rank's GPU (one per rank). Bad input throws SpecError on
// every rank; CUDA, cuBLAS and NCCL failures throw CudaError.
engine::TrainReport train_on_gpu(const ModelSpec& model, const ParallelConfig& config,
                                 const engine::TrainOptions& options, std::ostream& log);

}  // namespace cc::cuda
