#include "sim/analytic_costs.h"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "sim/calibration.h"
#include "sim/units.h"

namespace cc {

AnalyticCosts::AnalyticCosts(const ClusterSpec& cluster, Precision precision, const std::string& framework)
    : cluster_(cluster),
      precision_(precision),
      params_(embedded_calibration().params_for(cluster.gpu, load_framework(framework).name)) {
  calibrated_ = true;
}

std::optional<ErrorBand> AnalyticCosts::error_band(int gpus) const {
  return calibrated_ ? embedded_calibration().band_for(gpus) : std::nullopt;
}

AnalyticCosts::AnalyticCosts(const ClusterSpec& cluster, Precision precision, AnalyticParams params)
    : cluster_(cluster), precision_(precision), params_(params) {}

std::string AnalyticCosts::describe() const {
  return fmt::format("analytic model ({}, {})", cluster_.gpu.name, to_string(precision_));
}

double AnalyticCosts::gemm_efficiency(std::int64_t m, std::int64_t n, std::int64_t k) const {
  // Wave quantisation: the GEMM is cut into output tiles spread over the SMs; the last,
  // partial wave leaves SMs idle. cuBLAS picks among tile shapes, so take the best of a few
  // common ones, each with its own intrinsic efficiency (bigger tiles reuse operands more).
  struct Tile {
    int m, n;
    double efficiency;
  };
  constexpr std::array<Tile, 4> tiles{{{256, 128, 1.0}, {128, 256, 1.0}, {128, 128, 0.93}, {64, 128, 0.80}}};
  const double sms = std::max(1, cluster_.gpu.sm_count);
  double best = 0;
  for (const auto& t : tiles) {
    const double count = std::ceil(static_cast<double>(m) / t.m) * std::ceil(static_cast<double>(n) / t.n);
    const double waves = std::ceil(count / sms);
    const double useful = (static_cast<double>(m) * n) / (waves * sms * t.m * t.n);
    best = std::max(best, t.efficiency * std::min(1.0, useful));
  }
  const double depth = static_cast<double>(k) / (static_cast<double>(k) + params_.gemm_k_half);
  return params_.gemm_peak_fraction * best * depth;
}

OpCost AnalyticCosts::compute(const ComputeOp& op) const {
  const double peak = cluster_.gpu.peak_flops(precision_);
  // Attention (and everything but FP8's linear layers) runs at the 16-bit peak.
  const double half_peak = precision_ == Precision::FP8 ? cluster_.gpu.peak_flops(Precision::BF16) : peak;
  const double bandwidth = cluster_.gpu.hbm_bandwidth_gbs * kGB * params_.memory_fraction;
  double math = 0;
  switch (op.kind) {
    case OpKind::Gemm:
    case OpKind::BatchedGemm: {
      // A batched GEMM fills the GPU with its batch: count its tiles across the batch.
      const std::int64_t rows = op.kind == OpKind::BatchedGemm ? op.m * op.batch : op.m;
      // FP8 covers the linear layers only; unfused attention products stay in bf16.
      const bool fp8 = precision_ == Precision::FP8 && op.kind == OpKind::Gemm;
      const double gemm_peak = fp8 ? peak * params_.fp8_gemm_fraction : half_peak;
      math = op.flops / (gemm_peak * gemm_efficiency(rows, op.n, op.k));
      break;
    }
    case OpKind::FlashAttention: {
      // Transformer Engine keeps attention in bf16 unless FP8 attention is asked for. With the
      // HBM term below this is flash attention's roofline over the sequence: a causal pass does
      // 2·s²·d FLOPs per head against 4·s·d elements moved, s/(2·e) FLOPs per byte, so short
      // sequences (and short context-parallel chunks) are bandwidth-bound and from about
      // s = 2·e·peak/bandwidth (≈1.2K tokens on H100) on compute-bound at the fitted fraction,
      // flat beyond as FlashAttention-2 measures it (Dao 2023, Fig. 4: 4K-16K alike). Nothing
      // it keeps grows as s²; the sequence only lengthens the work.
      const double fraction =
          op.phase == Phase::Backward ? params_.flash_backward_fraction : params_.flash_forward_fraction;
      math = op.flops / (half_peak * fraction);
      break;
    }
    case OpKind::Elementwise:
    case OpKind::Optimizer:
      math = op.flops / (cluster_.gpu.peak_tflops_fp32 * kTera);
      break;
  }
  const double memory = op.bytes / bandwidth;
  return {(std::max(math, memory) + params_.kernel_overhead_s) * params_.compute_time_factor, false,
          params_.host_launch_s * params_.host_time_factor * op.launches};
}

double AnalyticCosts::bus_bandwidth(const GroupPlacement& g) const {
  const double nvlink = cluster_.intra_node.bandwidth_gbs * kGB * params_.nvlink_fraction;
  if (g.nodes <= 1) return nvlink;
  // Across NVLink domains, NCCL runs one ring (channel) per NIC; all the data leaving a domain
  // shares the NICs its members sit next to. Inside the domain the ring still rides NVLink.
  const double network = cluster_.network_injection_gbs(g.per_node) * kGB * params_.network_fraction;
  return g.per_node > 1 ? std::min(nvlink, network) : network;
}

OpCost AnalyticCosts::collective(const CollectiveOp& op) const {
  const GroupPlacement& g = op.group;
  if (g.size <= 1 || op.bytes <= 0) return {0.0, false, 0.0};
  const double alpha_intra = cluster_.intra_node.latency_us * 1e-6;
  const double alpha_inter = cluster_.inter_node.latency_us * 1e-6;
  const double hop_latency = g.nodes > 1 ? alpha_inter : alpha_intra;
  const double bus = bus_bandwidth(g);
  const double nvlink = cluster_.intra_node.bandwidth_gbs * kGB * params_.nvlink_fraction;
  auto network = [&](int gpus_sending) {
    return cluster_.network_injection_gbs(gpus_sending) * kGB * params_.network_fraction;
  };
  const double moved = op.bytes * bus_bandwidth_factor(op.kind, g.size);

  const double launch = params_.collective_launch_s * params_.host_time_factor;  // host side: issuing the call
  if (op.kind == CollectiveKind::SendRecv) {
    // Every member sends to its successor at once; the slowest hop paces the step. A hop
    // between nodes leaves through the sending GPU's own NIC (NCCL picks the NIC nearest the
    // GPU), whatever else the group does inside the node.
    if (g.nodes <= 1) return {hop_latency + op.bytes / bus, false, launch};
    return {hop_latency + op.bytes / (g.per_node > 1 ? std::min(nvlink, network(1)) : network(1)), false, launch};
  }
  if (op.kind == CollectiveKind::AllToAll && op.node_relay_share > 0) {
    // Relayed through one GPU per node: every copy but those bound for the relay itself crosses
    // NVLink once (sent inside the sender's node, or forwarded in the receiver's), and the
    // network carries the relayed share; the two are pipelined, so the slower paces it.
    const double inside = op.bytes * (g.per_node - 1) / g.per_node / nvlink;
    const double leaving = g.nodes > 1 ? g.per_node * op.bytes * op.node_relay_share / network(g.per_node) : 0.0;
    return {hop_latency + std::max(inside, leaving), false, launch};
  }
  if (op.kind == CollectiveKind::AllToAll) {
    // Every member sends 1/n of its buffer to each other member, all at once: the shares for
    // peers on the same node cross NVLink, the rest leave through the NICs beside the node's
    // members, and the slower of the two paces the exchange.
    const double share = op.bytes / g.size;
    const double inside = (g.per_node - 1) * share / nvlink;
    const double leaving = g.nodes > 1 ? g.per_node * (g.size - g.per_node) * share / network(g.per_node) : 0.0;
    return {hop_latency + std::max(inside, leaving), false, launch};
  }

  // Ring: n-1 steps per phase (two phases for all-reduce), each paced by the slowest hop.
  const int phases = op.kind == CollectiveKind::AllReduce ? 2 : 1;
  const double ring = phases * (g.size - 1) * hop_latency + moved / bus;
  if (g.nodes <= 1 || op.kind != CollectiveKind::AllReduce) return {ring, false, launch};
  // Tree (all-reduce across nodes only, as in NCCL): latency grows with log2(nodes).
  const double depth = std::ceil(std::log2(static_cast<double>(g.nodes)));
  const double tree = 2.0 * (depth * alpha_inter + (g.per_node - 1) * alpha_intra) +
                      moved / (bus * params_.tree_bandwidth_fraction);
  return {std::min(ring, tree), false, launch};
}

}  // namespace cc
