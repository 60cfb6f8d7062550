// analytic_params.h — the analytic cost model's tunable constants, each with where it comes
// from. Their own header, so the calibration file that sets them (calibration.h) and the model
// that reads them (analytic_costs.h) depend on it and not on each other.
#pragma once

#include <vector>

namespace cc {

// Every tunable number of the analytic model, with where it comes from. The defaults were
// set once against Korthikanti et al. 2022 Table 4 (one 22B layer, measured per op class)
// and are checked against Table 5 end to end; see sim/README.md for the derivation.
struct AnalyticParams {
  // Large, well-shaped bf16 GEMMs reach this fraction of the dense Tensor Core peak
  // (cuBLAS on A100 sustains 250-280 of 312 TFLOP/s at 8192^3).
  double gemm_peak_fraction = 0.86;
  // A GEMM's reduction depth below about this many elements starves the Tensor Core
  // pipeline (operand loads are not amortised); efficiency scales as k / (k + k_half).
  double gemm_k_half = 40.0;
  // Elementwise and normalisation kernels move data at this fraction of HBM bandwidth
  // (STREAM-like copies on A100 reach 85-90%; fused Megatron kernels less).
  double memory_fraction = 0.65;
  // Fixed cost per kernel: launch and tail, visible on small ops.
  double kernel_overhead_s = 3e-6;
  // Flash attention's FLOP efficiency relative to the GEMM peak (FlashAttention-2 paper:
  // 50-73% of A100 peak forward, less backward).
  double flash_forward_fraction = 0.62;
  double flash_backward_fraction = 0.50;
  // FP8 GEMMs (Transformer Engine) reach a smaller share of their doubled peak than bf16
  // GEMMs of theirs: scaling, casts and amax bookkeeping ride on each one. H100 FP8 GEMMs
  // run about 1.6x bf16, not 2x (NVIDIA Transformer Engine benchmarks), hence 0.8.
  double fp8_gemm_fraction = 0.8;
  // Fraction of link bandwidth NCCL delivers as bus bandwidth (nccl-tests on DGX A100:
  // ~230 GB/s all-reduce busbw over 300 GB/s NVLink3; ~23 GB/s per 25 GB/s HDR NIC).
  double nvlink_fraction = 0.78;
  double network_fraction = 0.92;
  // A collective overlapped with a GEMM is not free: NCCL's kernels occupy 10-30% of the
  // SMs and share HBM bandwidth, so the GEMM slows by about this fraction of the overlap.
  double overlap_interference = 0.25;
  // NCCL's tree algorithm trades some bandwidth for log-depth latency across nodes.
  double tree_bandwidth_fraction = 0.85;
  // Host side of the software stack. A kernel cannot run before the host has issued it:
  // PyTorch eager spends ~5-15 us of Python and dispatch per kernel. The host runs ahead of
  // the GPU, so a pass costs the larger of its device time and its host time (cost_of()).
  double host_launch_s = 0.0;
  // Per collective call: the framework's dispatch (c10d, stream waits) and NCCL's kernel
  // launch, host time paid once per call whatever its size.
  double collective_launch_s = 0.0;
  // Per forward or backward pass of one model chunk: the schedule's Python, p2p setup,
  // autograd bookkeeping (visible when a step runs many microbatches of a small model).
  double pass_overhead_s = 0.0;
  // Per iteration: optimizer and gradient-norm launches, loss reduction, logging, the data
  // loader — what a step costs beyond its passes and collectives.
  double iteration_overhead_s = 0.0;
  // How much longer the host side takes on this GPU generation's servers than on the
  // reference: every host cost above is multiplied by it (a DGX H100's Xeon issues work
  // faster than a DGX A100's EPYC Rome).
  double host_time_factor = 1.0;
  // How much longer this software stack's kernels run than the reference build's on the
  // same GPU: every op's device time is multiplied by it. The same layout measures at
  // different speeds under different releases (cuBLAS, fused kernels, deterministic
  // algorithms): Korthikanti et al. 2022's 1T layout ran in 94.4 s where Narayanan et al.
  // 2021's identical pipeline took 102.6 s on the same Selene nodes. Set per stack.
  double compute_time_factor = 1.0;
};

// Every AnalyticParams field by name, so the calibration file and the fit name them alike.
struct AnalyticParamField {
  const char* name;
  double AnalyticParams::*member;
};
const std::vector<AnalyticParamField>& analytic_param_fields();

}  // namespace cc
