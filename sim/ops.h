// ops.h — one GPU kernel or one collective as the cost model sees it: a stable name, the
// phase it runs in, its shape, and its FLOPs and HBM bytes. The analytic model prices an
// op from FLOPs and bytes; a measured cost database prices it by (name, phase, shape).
#pragma once

#include <cstdint>
#include <string>

#include "sim/parallel_layout.h"

namespace cc {

enum class Phase { Forward, Backward, Recompute };
enum class OpKind { Gemm, BatchedGemm, Elementwise, FlashAttention, Optimizer };
// SendRecv: every member of the group sends `bytes` to its ring successor and receives as
// much from its predecessor, all at once (a pipeline transfer is the two-member case).
// AllToAll: every member sends 1/n of its `bytes` to each other member.
enum class CollectiveKind { AllReduce, AllGather, ReduceScatter, SendRecv, AllToAll };

// The process group a collective runs on, so that pricing, the traffic map and the timeline
// tell context-parallel traffic from the rest without reading names. A context-parallel
// group is the grid's "cp" group; a2a+p2p splits it into all-to-all groups of consecutive CP
// ranks (--hierarchical-context-parallel-sizes' first size) and rings across them. Expert: an
// MoE layer's token dispatch and combine over its EP, ETP or ETP x EP group (expert grid).
enum class CommGroup { Other, Tensor, Context, ContextAllToAll, ContextRing, Expert };
bool is_context_parallel(CommGroup g);

struct ComputeOp {
  const char* name = "";  // e.g. "qkv", "softmax", "fc2.wgrad"
  OpKind kind = OpKind::Elementwise;
  Phase phase = Phase::Forward;
  // GEMM: C[m×n] = A[m×k]·B[k×n], `batch` independent products. Elementwise: m = elements.
  std::int64_t m = 0, n = 1, k = 1, batch = 1;
  double flops = 0;
  double bytes = 0;  // HBM traffic: inputs read plus outputs written
  // Kernels the host launches for it: 1, or one per expert for a grouped GEMM (Transformer
  // Engine's GroupedLinear splits its input per expert and, on its cuBLAS path, issues one
  // GEMM each), whose host time the op pays once per launch.
  int launches = 1;
};

struct CollectiveOp {
  const char* name = "";
  CollectiveKind kind = CollectiveKind::AllReduce;
  Phase phase = Phase::Forward;
  double bytes = 0;  // nccl-tests "size": the full buffer (all-gather output, reduce-scatter input)
  GroupPlacement group;
  CommGroup runs_on = CommGroup::Other;
  // An AllToAll of the flex dispatcher (DeepEP, HybridEP), whose `bytes` are one copy of a token
  // per EP rank it reaches: the share of them that crosses the network, one copy per other node
  // reached, to the GPU of the sender's own local index there, which forwards that node's copies
  // over NVLink. 0: a plain all-to-all, every copy on its own path (inside one node the two
  // are priced alike: every copy crosses NVLink once).
  double node_relay_share = 0;
};

const char* to_string(Phase p);
const char* to_string(OpKind k);
const char* to_string(CollectiveKind k);

// nccl-tests' vocabulary: algorithm bandwidth is size / time; bus bandwidth scales it by
// the data each rank must move (2(n-1)/n for all-reduce, (n-1)/n for all-gather and
// reduce-scatter and all-to-all, 1 for send/recv), so it is comparable with link speed
// across group sizes.
double bus_bandwidth_factor(CollectiveKind kind, int group_size);

}  // namespace cc
