// cross_node_traffic.h — bytes one training iteration sends between nodes, by kind: pipeline
// transfers (activations forward, gradients backward, at every stage boundary that crosses a
// node), data-parallel gradient reduction and parameter gather (as rings over each DP group
// in DP order), tensor-parallel all-reduces / all-gathers / reduce-scatters of TP groups that
// span nodes (as rings in TP order), and the tied-embedding gradient sync between the first
// and last stage; context parallelism's K,V rings, all-gathers and all-to-alls inside each CP
// group (DP rings then run over DP x CP); the MoE layers' dispatch and combine inside each EP
// group of the expert grid (all-to-alls peer to peer, the flex dispatcher's copies once per
// other NVLink domain, the ETP collectives as rings). The message sizes and counts are the ones the simulator prices, not a
// second formula: TP collectives and pipeline peers from the step plan (step_plan.h), the
// DP, p2p and embedding buffers from price_iteration.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "sim/cluster_spec.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"

namespace cc {

enum class TrafficKind { Pipeline, DataParallel, TensorParallel, Embedding, ContextParallel, ExpertParallel };

struct NodeLink {
  int node_a = 0, node_b = 0;  // node_a < node_b; both directions together
  TrafficKind kind = TrafficKind::Pipeline;
  double bytes = 0;            // per iteration
};

struct CrossNodeTraffic {
  std::vector<NodeLink> links;            // one per (node pair, kind) that carries traffic
  std::map<TrafficKind, double> total;    // bytes per iteration over all links
  double busiest_node_bytes = 0;          // sent + received by the node that moves the most
  int busiest_node = 0;
  double busiest_node_seconds = 0;        // that at the node's NIC line rate (all NICs, both ways)
  bool tp_spans_nodes = false;           // TP leaves its NVLink domain: TensorParallel links carry its collectives
};

// Node of global rank r: r / gpus_per_node (ranks fill nodes in order). Only bytes between
// NVLink domains count: inside a domain (the node, or a GB200 NVL72 rack) they ride NVLink.
CrossNodeTraffic cross_node_traffic(const ModelSpec& model, const ClusterSpec& cluster, const ParallelConfig& config);

const char* to_string(TrafficKind k);

}  // namespace cc
