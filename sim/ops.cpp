#include "sim/ops.h"

namespace cc {

const char* to_string(Phase p) {
  switch (p) {
    case Phase::Forward: return "forward";
    case Phase::Backward: return "backward";
    case Phase::Recompute: return "recompute";
  }
  return "?";
}

const char* to_string(OpKind k) {
  switch (k) {
    case OpKind::Gemm: return "gemm";
    case OpKind::BatchedGemm: return "batched_gemm";
    case OpKind::Elementwise: return "elementwise";
    case OpKind::FlashAttention: return "flash_attention";
    case OpKind::Optimizer: return "optimizer";
  }
  return "?";
}

const char* to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::AllReduce: return "all_reduce";
    case CollectiveKind::AllGather: return "all_gather";
    case CollectiveKind::ReduceScatter: return "reduce_scatter";
    case CollectiveKind::SendRecv: return "send_recv";
    case CollectiveKind::AllToAll: return "all_to_all";
  }
  return "?";
}

bool is_context_parallel(CommGroup g) {
  return g == CommGroup::Context || g == CommGroup::ContextAllToAll || g == CommGroup::ContextRing;
}

double bus_bandwidth_factor(CollectiveKind kind, int n) {
  if (n <= 1) return 0.0;
  const double frac = static_cast<double>(n - 1) / n;
  switch (kind) {
    case CollectiveKind::AllReduce: return 2.0 * frac;
    case CollectiveKind::AllGather:
    case CollectiveKind::ReduceScatter:
    case CollectiveKind::AllToAll: return frac;
    case CollectiveKind::SendRecv: return 1.0;
  }
  return 1.0;
}

}  // namespace cc
