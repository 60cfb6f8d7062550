// layer_shape.cpp — one layer's dimensions on one rank (LayerShape) and where its process groups
// sit (LayerGroups): what the kernels of layer_program.cpp are sized and placed by.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "sim/expert_routing.h"
#include "sim/layer_program.h"

namespace cc {

int cp_all_to_all_size(const ParallelConfig& c) {
  switch (c.cp_comm_type) {
    case CpCommType::AllToAll: return c.cp;
    case CpCommType::AllToAllP2P: return c.cp > 1 ? c.cp_a2a_size : 1;  // validate() checks that it divides CP
    case CpCommType::P2P:
    case CpCommType::AllGather: break;
  }
  return 1;
}

std::vector<std::vector<int>> context_parallel_subgroups(const std::vector<int>& group, CommGroup runs_on,
                                                         int all_to_all) {
  if (runs_on != CommGroup::ContextAllToAll && runs_on != CommGroup::ContextRing) return {group};
  const auto n = static_cast<int>(group.size());
  if (all_to_all < 1 || n % all_to_all != 0)  // validate_context_parallel() refuses such a layout first
    throw std::logic_error(fmt::format("an all-to-all of {} ranks does not divide a CP group of {}", all_to_all, n));
  std::vector<std::vector<int>> out;
  if (runs_on == CommGroup::ContextAllToAll) {
    for (int first = 0; first < n; first += all_to_all)
      out.emplace_back(group.begin() + first, group.begin() + first + all_to_all);
  } else {
    for (int offset = 0; offset < all_to_all; ++offset) {
      out.emplace_back();
      for (int i = offset; i < n; i += all_to_all) out.back().push_back(group[static_cast<std::size_t>(i)]);
    }
  }
  return out;
}

LayerGroups place_layer_groups(const ParallelConfig& c, int nvlink_domain_gpus) {
  // Every group of a dimension sits alike on the nodes: rank 0's stands for all (listing every
  // group costs time in the world size, and the memory model asks once per stage).
  const ParallelGrid grid = c.grid();
  const std::vector<int> cp = grid.group(0, "cp");
  const int a2a = cp_all_to_all_size(c);
  auto place_first = [&](CommGroup runs_on) {
    return place_group(context_parallel_subgroups(cp, runs_on, a2a).front(), nvlink_domain_gpus);
  };
  LayerGroups groups{place_group(grid.group(0, "tp"), nvlink_domain_gpus), place_group(cp, nvlink_domain_gpus),
                     place_first(CommGroup::ContextAllToAll), place_first(CommGroup::ContextRing), {}, {}, {}};
  if (c.ep > 1 || c.expert_tp() > 1) {
    const ParallelGrid experts = c.expert_grid();
    groups.ep = place_group(experts.group(0, "ep"), nvlink_domain_gpus);
    groups.etp = place_group(experts.group(0, "etp"), nvlink_domain_gpus);
    groups.ep_etp = place_group(experts.group(0, "etp-ep"), nvlink_domain_gpus);
  }
  return groups;
}

namespace {

MoeShape make_moe_shape(const ModelSpec& m, const ParallelConfig& c, const LayerGroups& groups,
                        std::int64_t region_tokens) {
  MoeShape x;
  if (!m.moe.enabled()) return x;
  const int etp = c.expert_tp();
  x.experts = m.moe.num_experts;
  x.local_experts = m.moe.num_experts / c.ep;
  x.topk = m.moe.router_topk;
  x.expert_ffn = m.moe.ffn_hidden_size / etp;
  x.shared_ffn = m.moe.shared_expert_ffn_hidden_size / c.tp;
  x.imbalance = moe_load_imbalance(c);
  x.routed_tokens = static_cast<std::int64_t>(
      std::ceil(static_cast<double>(region_tokens * x.topk * etp) * x.imbalance - 1e-9));
  x.ep = c.ep;
  x.etp = etp;
  x.dispatcher = c.moe.dispatcher;
  if (x.dispatcher == TokenDispatcher::Flex) {
    const int nodes = groups.ep.nodes;
    x.flex_ranks_per_token = expected_holders_reached(m.moe, c.ep);
    const double other_nodes = expected_holders_reached(m.moe, nodes) * (nodes - 1) / nodes;
    x.flex_network_share = other_nodes / x.flex_ranks_per_token;
  }
  x.grouped_gemm = c.moe.grouped_gemm;
  x.shared_expert_overlap = c.moe.shared_expert_overlap;
  x.overlap_ep_comm = c.moe.overlap_ep_comm;
  x.ep_group = groups.ep;
  x.etp_group = groups.etp;
  x.ep_etp_group = groups.ep_etp;
  return x;
}

}  // namespace

double priced_main_grad_bytes(const ParallelConfig& c) {
  return c.precision == Precision::FP16 ? 4 : c.main_grad_bytes();
}

LayerShape make_layer_shape(const ModelSpec& m, const ParallelConfig& c, const LayerGroups& groups) {
  LayerShape x;
  x.b = c.micro_batch;
  x.s = m.seq_length;
  x.h = m.hidden_size;
  x.tokens = x.b * x.s / c.cp;
  x.region_tokens = c.sequence_parallel ? x.tokens / c.tp : x.tokens;
  x.heads = m.num_attention_heads / c.tp;
  x.head_dim = m.head_dim();
  x.qkv_out = (m.query_width() + 2LL * m.kv_channels()) / c.tp;
  x.kv_width = m.kv_channels() / c.tp;
  x.ffn = m.ffn_hidden_size / c.tp;
  x.vocab = (m.vocab_size + c.tp - 1) / c.tp;
  x.elem = c.precision == Precision::FP32 ? 4.0 : 2.0;
  x.main_grad_elem = priced_main_grad_bytes(c);
  x.sequence_parallel = c.sequence_parallel;
  x.tp_overlap = c.tp_comm_overlap && c.sequence_parallel;
  x.dropout = m.dropout;
  x.activation = m.activation;
  x.rope = m.position_embedding == PositionEmbedding::Rope;
  // Megatron-LM turns RoPE fusion off for any position type but rope (arguments.py), which
  // multi-latent attention still rotates its RoPE parts under.
  x.rope_fusion = c.rope_fusion && m.position_embedding == PositionEmbedding::Rope;
  x.cross_entropy_fusion = c.cross_entropy_fusion;
  x.flash = c.attention == AttentionKernel::Flash;
  x.attention_softcap = m.attention_softcap > 0;
  x.logit_softcap = m.final_logit_softcap > 0;
  x.tp = c.tp;
  x.tp_group = groups.tp;
  x.cp = c.cp;
  x.cp_comm = c.cp_comm_type;
  x.cp_all_to_all = cp_all_to_all_size(c);
  x.cp_group = groups.cp;
  x.cp_all_to_all_group = groups.cp_all_to_all;
  x.cp_ring_group = groups.cp_ring;
  x.moe = make_moe_shape(m, c, groups, x.region_tokens);
  if (m.mla.enabled) {
    const MlaSpec& a = m.mla;
    x.mla = {true, a.q_lora_rank, a.kv_lora_rank, a.qk_head_dim, a.qk_pos_emb_head_dim, a.v_head_dim, a.latent_norms};
    x.head_dim = a.qk_head_dim + a.qk_pos_emb_head_dim;  // the flash kernel's query/key width
    x.qkv_out = x.heads * (2 * x.head_dim + a.v_head_dim);
    x.kv_width = x.heads * x.head_dim;
  }
  x.mtp_layers = m.mtp_num_layers;
  x.mtp_moe = m.moe.enabled() && m.is_moe_layer(m.num_layers - 1);
  return x;
}

LayerShape moe_layer_shape(LayerShape shape) {
  shape.moe.layer = true;
  return shape;
}

LayerShape make_layer_shape(const ModelSpec& m, const ParallelConfig& c, GroupPlacement tp_group) {
  // TP x CP ranks fill one NVLink domain (and an expert layer's ETP x EP ranks, when more).
  LayerGroups groups = place_layer_groups(c, std::max(c.tp * c.cp, c.ep * c.expert_tp()));
  groups.tp = tp_group;
  return make_layer_shape(m, c, groups);
}

double context_parallel_buffer_bytes(const LayerShape& x) {
  if (x.cp <= 1) return 0;
  const double kv = x.kv_bytes();
  const double q = x.elem * static_cast<double>(x.tokens * x.heads * x.head_dim);
  if (x.cp_comm == CpCommType::AllGather) return 2.0 * x.cp * kv;  // backward: gathered K,V and dK,dV
  // The all-to-all's received Q,K,V and output beside the ones it sent.
  const double all_to_all = x.cp_all_to_all > 1 ? x.elem * static_cast<double>(x.tokens * x.qkv_out) + q : 0.0;
  const int ring = x.cp_ring();
  if (ring <= 1) return all_to_all;
  // Forward: the ring-1 received chunks; backward: two (K,V, dK,dV) buffers and dQ.
  return all_to_all + std::max((ring - 1) * kv, 4.0 * kv + q);
}

}  // namespace cc
