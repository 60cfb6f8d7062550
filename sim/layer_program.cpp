#include "sim/layer_program.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sim/expert_routing.h"
#include "sim/program_builder.h"

namespace cc {

namespace {

using program::Builder;
using program::dropout_bytes;


// Context-parallel attention, as Transformer Engine runs it (context_parallel.py). With an
// all-to-all group of A ranks (a2a, a2a+p2p), Q, K and V are exchanged so that each rank holds
// A times the tokens for 1/A of the heads, and the output goes back after attention. The
// remaining CP/A ranks pass K,V chunks round a ring: each of its R steps attends the local
// queries to the chunk at hand while the next chunk travels (AttnFuncWithCPAndKVP2P). Under
// causal load balancing every step costs the same: the causal attention of the step's chunk
// length, so the R steps make 1/CP of the whole sequence's causal work. Forward sends R-1
// K,V chunks, each beside one step; backward sends K,V first, then K,V with the dK,dV
// gathered so far, and last the dK,dV alone, again each beside one step.
void context_parallel_attention(Builder& b, const LayerShape& x, bool backward) {
  const int a2a = x.cp_all_to_all, ring = x.cp_ring();
  const std::int64_t chunk = x.local_seq() * a2a, heads = x.heads / a2a;
  const double out_bytes = x.elem * static_cast<double>(x.tokens * x.heads * x.head_dim);
  const double qkv_bytes = x.elem * static_cast<double>(x.tokens * x.qkv_out);
  const double step_forward = 2.0 * x.b * heads * static_cast<double>(chunk) * chunk * x.head_dim;
  const double step_io = x.elem * 4.0 * x.b * static_cast<double>(chunk) * heads * x.head_dim;
  if (a2a > 1)
    b.cp_collective(backward ? "cp.output_grad_all_to_all" : "cp.qkv_all_to_all", CollectiveKind::AllToAll,
                    backward ? out_bytes : qkv_bytes, CommGroup::ContextAllToAll, x.cp_all_to_all_group);
  for (int step = 0; step < ring; ++step) {
    const int attention = backward ? b.flash("flash_attention.backward", 2.5 * step_forward, 2.0 * step_io, chunk,
                                             chunk, heads)
                                   : b.flash("flash_attention", step_forward, step_io, chunk, chunk, heads);
    if (ring > 1) {
      // Each step's partial output (backward: its dQ) merges into an fp32 accumulator.
      b.elementwise(backward ? "cp.grad_accumulate" : "cp.output_correction", x.tokens * x.heads * x.head_dim,
                    x.elem + 8, 4);
    }
    const double kv = x.kv_bytes();
    if (!backward && step < ring - 1)
      b.cp_collective("cp.kv_send_recv", CollectiveKind::SendRecv, kv, CommGroup::ContextRing, x.cp_ring_group,
                      attention);
    if (backward && ring > 1)
      b.cp_collective("cp.kv_send_recv", CollectiveKind::SendRecv, step == 0 || step == ring - 1 ? kv : 2 * kv,
                      CommGroup::ContextRing, x.cp_ring_group, attention);
  }
  if (a2a > 1)
    b.cp_collective(backward ? "cp.qkv_grad_all_to_all" : "cp.output_all_to_all", CollectiveKind::AllToAll,
                    backward ? qkv_bytes : out_bytes, CommGroup::ContextAllToAll, x.cp_all_to_all_group);
}

// allgather (AttnFuncWithCPAndKVAllGather): K and V of the whole sequence are gathered before
// attention (again in backward, which keeps only the local ones), the local queries attend to
// them, and backward reduce-scatters dK,dV to their owners. Nothing hides the collectives.
void context_parallel_attention_all_gather(Builder& b, const LayerShape& x, bool backward) {
  const double gathered = x.cp * x.kv_bytes();
  const double forward_flops = 2.0 * x.b * x.heads * static_cast<double>(x.local_seq()) * x.s * x.head_dim;
  const double io = x.elem * 2.0 * x.b * static_cast<double>(x.local_seq() + x.s) * x.heads * x.head_dim;
  b.cp_collective("cp.kv_all_gather", CollectiveKind::AllGather, gathered, CommGroup::Context, x.cp_group);
  if (backward) {
    b.flash("flash_attention.backward", 2.5 * forward_flops, 2.0 * io, x.local_seq(), x.s, x.heads);
    b.cp_collective("cp.kv_grad_reduce_scatter", CollectiveKind::ReduceScatter, gathered, CommGroup::Context,
                    x.cp_group);
  } else {
    b.flash("flash_attention", forward_flops, io, x.local_seq(), x.s, x.heads);
  }
}

void flash_attention(Builder& b, const LayerShape& x, bool backward) {
  if (x.cp > 1) {
    if (x.cp_comm == CpCommType::AllGather) context_parallel_attention_all_gather(b, x, backward);
    else context_parallel_attention(b, x, backward);
    return;
  }
  const std::int64_t batch = x.b * x.heads;
  // Causal flash attention computes only the lower triangle: half of QK^T (over the query/key
  // width) and of PV (over the value width); it reads Q, K, V and writes the output.
  const double forward_flops = static_cast<double>(batch) * x.s * x.s * (x.qk_width() + x.v_width());
  const double forward_io = x.elem * 2.0 * x.tokens * x.heads * (x.qk_width() + x.v_width());
  if (backward) {
    // FlashAttention-2 backward: five matmuls against two forward, with its own recompute.
    b.flash("flash_attention.backward", 2.5 * forward_flops, 2.0 * forward_io, x.s, x.s, x.heads);
  } else {
    b.flash("flash_attention", forward_flops, forward_io, x.s, x.s, x.heads);
  }
}

void attention_core(Builder& b, const LayerShape& x) {
  if (x.flash) {
    flash_attention(b, x, false);
    return;
  }
  const std::int64_t batch = x.b * x.heads;
  const std::int64_t scores = batch * x.s * x.s;
  b.batched("attention_scores", batch, x.s, x.s, x.head_dim);
  // cap * tanh(scores / cap): one more pass over the scores, read and written.
  if (x.attention_softcap) b.elementwise("attention_softcap", scores, 2 * x.elem, 3);
  b.elementwise("softmax", scores, 2 * x.elem, 4);  // fused scale, causal mask, softmax
  if (x.dropout) b.elementwise("attention_dropout", scores, dropout_bytes(x));
  b.batched("attention_context", batch, x.s, x.v_width(), x.s);  // probabilities x V
}

}  // namespace

OpProgram attention_core_forward(const LayerShape& x, Phase phase) {
  Builder b(x, phase);
  attention_core(b, x);
  return b.take();
}

namespace {

std::int64_t fc1_width(const LayerShape& x, std::int64_t ffn) { return ffn * (is_gated(x.activation) ? 2 : 1); }
// Weights of one MLP of FFN width `ffn` on this rank: FC1 (two matrices when gated) and FC2.
std::int64_t mlp_weights(const LayerShape& x, std::int64_t ffn) { return x.h * fc1_width(x, ffn) + ffn * x.h; }

// Which MLP an activation kernel belongs to: the dense layer's, the shared experts' or the routed ones'.
enum class MlpPart { Dense, Shared, Expert };

// The MLP activation's one fused kernel each way, per output element: its op name, the elements
// it reads and writes, its FLOPs. Gated (SwiGLU, GeGLU; both named swiglu in the op tables):
// reads both FC1 halves, writes one, and backward reads the gradient and both halves, writes
// two. GeLU (Megatron's bias_gelu) and squared ReLU (activations.py, compiled by jit_fuser):
// read one, write one; backward reads the gradient and the input, writes one (squared ReLU's
// FLOPs: max and square forward, 2x times the gradient backward).
void activation(Builder& b, const LayerShape& x, MlpPart part, Phase phase, std::int64_t elements) {
  struct Kernel {
    const char* name[3][2];  // by MlpPart, forward / backward
    double elements[2], flops[2];
  };
  static const Kernel kGelu{{{"gelu", "gelu.backward"},
                             {"shared_gelu", "shared_gelu.backward"},
                             {"expert_gelu", "expert_gelu.backward"}},
                            {2, 3},
                            {8, 12}};
  static const Kernel kGated{{{"swiglu", "swiglu.backward"},
                              {"shared_swiglu", "shared_swiglu.backward"},
                              {"expert_swiglu", "expert_swiglu.backward"}},
                             {3, 5},
                             {8, 12}};
  static const Kernel kSquaredRelu{{{"squared_relu", "squared_relu.backward"},
                                    {"shared_squared_relu", "shared_squared_relu.backward"},
                                    {"expert_squared_relu", "expert_squared_relu.backward"}},
                                   {2, 3},
                                   {2, 3}};
  const Kernel& k = is_gated(x.activation)                       ? kGated
                    : x.activation == Activation::SquaredReLU ? kSquaredRelu
                                                                 : kGelu;
  const int way = phase == Phase::Backward ? 1 : 0;
  b.elementwise(k.name[static_cast<int>(part)][way], elements, k.elements[way] * x.elem, k.flops[way]);
}

// A TP-split MLP of width `ffn` (the dense layer's, or the shared experts'), after its norm.
void mlp_forward(Builder& b, const LayerShape& x, std::int64_t ffn, MlpPart part, const char* fc1, const char* fc2) {
  b.gathered_gemm("sp_all_gather", fc1, x.tokens, fc1_width(x, ffn), x.h);
  activation(b, x, part, Phase::Forward, x.tokens * ffn);
  b.reduce_after("tp_reduce", b.gemm(fc2, x.tokens, x.h, ffn));
}

void mlp_backward(Builder& b, const LayerShape& x, std::int64_t ffn, MlpPart part, const char* fc2_dgrad,
                  const char* fc2_wgrad, const char* fc1_dgrad, const char* fc1_wgrad) {
  b.gathered_gemm("sp_all_gather", fc2_dgrad, x.tokens, ffn, x.h);  // backward of the forward reduce-scatter
  b.gemm(fc2_wgrad, ffn, x.h, x.tokens);
  activation(b, x, part, Phase::Backward, x.tokens * ffn);
  const int dgrad = b.gemm(fc1_dgrad, x.tokens, x.h, fc1_width(x, ffn));
  b.sp_gather("sp_all_gather.wgrad_input", dgrad);  // SP saved only 1/t of the input
  const int wgrad = b.gemm(fc1_wgrad, x.h, fc1_width(x, ffn), x.tokens);
  b.tp_reduce("tp_reduce.input_grad", wgrad);
}

// The local experts' GEMM over their routed rows: one grouped GEMM (--moe-grouped-gemm, priced
// by the GEMM model at the per-expert shape with its tiles counted over the group), else one
// GEMM per local expert in turn (Megatron-Core's SequentialMLP). Returns the last kernel's index.
int expert_gemm(Builder& b, const MoeShape& e, const char* name, std::int64_t m, std::int64_t n, std::int64_t k,
                bool rows_are_m) {
  // Rows per expert: the busiest rank's rows spread evenly over its experts.
  auto per_expert = [&](std::int64_t rows) { return (rows + e.local_experts - 1) / e.local_experts; };
  const std::int64_t em = rows_are_m ? per_expert(m) : m, ek = rows_are_m ? k : per_expert(k);
  if (e.grouped_gemm) return b.batched(name, e.local_experts, em, n, ek, static_cast<int>(e.local_experts));
  int last = -1;
  for (std::int64_t i = 0; i < e.local_experts; ++i) last = b.gemm(name, em, n, ek);
  return last;
}

// Bytes of the dispatch (and the combine) for the rank's tokens. alltoall: top-k copies of
// each region token go to the EP ranks of their experts; the busiest rank receives the
// imbalance times the mean, which paces the exchange. allgather: every rank's region tokens
// are gathered over ETP x EP (the routing is applied locally after it).
double alltoall_bytes(const LayerShape& x) {
  return x.elem * static_cast<double>(x.region_tokens * x.moe.topk * x.h) * x.moe.imbalance;
}
// flex: one copy of each region token per EP rank it reaches, paced by the busiest rank.
double flex_bytes(const LayerShape& x) {
  return x.elem * static_cast<double>(x.region_tokens * x.h) * x.moe.flex_ranks_per_token * x.moe.imbalance;
}
double allgather_bytes(const LayerShape& x) {
  return x.elem * static_cast<double>(x.region_tokens * x.h) * x.moe.ep * x.moe.etp;
}

// The names of one exchange between the tokens' ranks and the experts' ranks: its all-to-all
// over EP, its ETP collective, and the allgather dispatcher's collective over ETP x EP.
struct ExpertExchange {
  const char* all_to_all;
  const char* etp;
  const char* whole;
};

// The steps of one exchange (its all-to-all and ETP collective, or its one collective), which
// overlap compute steps [first, through] (first -1: blocking).
struct Exchange {
  std::vector<int> steps;
  void hide(Builder& b, int first, int through) const {
    for (const int s : steps) b.hide(s, first, through);
  }
};

// Rows travelling to the experts' ranks (the forward dispatch; backward, the combine's
// gradient): an all-to-all over EP then an all-gather over ETP, or an all-gather over ETP x EP.
Exchange to_experts(Builder& b, const LayerShape& x, const ExpertExchange& names) {
  const MoeShape& e = x.moe;
  if (e.dispatcher == TokenDispatcher::Flex)  // ETP 1 (validate_layout)
    return {{b.ep_collective(names.all_to_all, CollectiveKind::AllToAll, flex_bytes(x), e.ep_group, -1,
                             e.flex_network_share)}};
  if (e.dispatcher == TokenDispatcher::AllToAll)
    return {{b.ep_collective(names.all_to_all, CollectiveKind::AllToAll, alltoall_bytes(x), e.ep_group),
             b.ep_collective(names.etp, CollectiveKind::AllGather, e.etp * alltoall_bytes(x), e.etp_group)}};
  return {{b.ep_collective(names.whole, CollectiveKind::AllGather, allgather_bytes(x), e.ep_etp_group)}};
}

// Rows travelling back from the experts (the forward combine; backward, the dispatch's
// gradient): a reduce-scatter over ETP then an all-to-all over EP, or a reduce-scatter over ETP x EP.
Exchange from_experts(Builder& b, const LayerShape& x, const ExpertExchange& names) {
  const MoeShape& e = x.moe;
  if (e.dispatcher == TokenDispatcher::Flex)
    return {{b.ep_collective(names.all_to_all, CollectiveKind::AllToAll, flex_bytes(x), e.ep_group, -1,
                             e.flex_network_share)}};
  if (e.dispatcher == TokenDispatcher::AllToAll)
    return {{b.ep_collective(names.etp, CollectiveKind::ReduceScatter, e.etp * alltoall_bytes(x), e.etp_group),
             b.ep_collective(names.all_to_all, CollectiveKind::AllToAll, alltoall_bytes(x), e.ep_group)}};
  return {{b.ep_collective(names.whole, CollectiveKind::ReduceScatter, allgather_bytes(x), e.ep_etp_group)}};
}

// Megatron-Core's MoELayer forward after the post-attention norm: the router (a replicated
// h x E linear, scores and top-k in fp32), the permutation of the routed copies, dispatch, the
// local experts, combine and unpermutation, and the shared experts as a TP-split MLP.
// --moe-shared-expert-overlap runs the shared experts' FC1 and FC2 beside dispatch and combine.
// --overlap-moe-expert-parallel-comm pairs one microbatch's forward with another's backward,
// layer by layer (Megatron-Core's combined 1F1B, model_chunk_schedule_plan.py): both dispatches
// run beside both expert MLPs, the backward's combine beside the forward's attention block and
// the forward's combine beside the backward's. Priced per pass with this layer's own compute
// standing in for the paired pass's (the same shapes), which hides as much in sum: the dispatch
// behind the expert MLP of its own pass, the combine behind its pass's attention block
// (`attention`: its steps [first, through]). Warm-up and cool-down passes have no partner in
// Megatron-Core; this prices them as paired.
void moe_forward(Builder& b, const LayerShape& x, std::pair<int, int> attention) {
  const MoeShape& e = x.moe;
  const std::int64_t rows = x.region_tokens, routed = e.routed_tokens;
  b.gemm("router", rows, e.experts, x.h);
  b.elementwise("router.topk", rows * e.experts, x.elem + 4, 8);
  // flex permutes as alltoall does: top-k copies before dispatch, back after combine.
  const bool all_to_all = e.dispatcher != TokenDispatcher::AllGather;
  const bool shared = e.shared_ffn > 0;
  int shared_fc1 = -1, shared_fc2 = -1;
  if (all_to_all) b.elementwise("moe.permute", rows * e.topk * x.h, 2 * x.elem);
  if (shared && e.shared_expert_overlap) {
    shared_fc1 = b.gathered_gemm("sp_all_gather", "shared_fc1", x.tokens, fc1_width(x, e.shared_ffn), x.h);
    activation(b, x, MlpPart::Shared, Phase::Forward, x.tokens * e.shared_ffn);
  }
  // Dispatch: hidden behind the shared FC1 (shared-expert overlap) or the expert MLP (EP overlap).
  const ExpertExchange dispatch_names{"moe.dispatch_all_to_all", "moe.dispatch_etp_all_gather",
                                      "moe.dispatch_all_gather"};
  if (!e.overlap_ep_comm) to_experts(b, x, dispatch_names).hide(b, shared_fc1, shared_fc1);
  if (!all_to_all) b.elementwise("moe.permute", routed * x.h, 2 * x.elem);
  const int mlp_first = b.last() + 1;
  expert_gemm(b, e, "expert_fc1", routed, fc1_width(x, e.expert_ffn), x.h, true);
  const Exchange dispatch = e.overlap_ep_comm ? to_experts(b, x, dispatch_names) : Exchange{};
  activation(b, x, MlpPart::Expert, Phase::Forward, routed * e.expert_ffn);
  const int fc2 = expert_gemm(b, e, "expert_fc2", routed, x.h, e.expert_ffn, true);
  dispatch.hide(b, mlp_first, fc2);
  if (shared && e.shared_expert_overlap) shared_fc2 = b.gemm("shared_fc2", x.tokens, x.h, e.shared_ffn);
  // allgather unpermutes before its reduce-scatter, alltoall after its all-to-all.
  if (!all_to_all) b.elementwise("moe.unpermute", routed * x.h, 2 * x.elem, 2);
  const Exchange combine =
      from_experts(b, x, {"moe.combine_all_to_all", "moe.combine_etp_reduce_scatter", "moe.combine_reduce_scatter"});
  if (e.overlap_ep_comm) combine.hide(b, attention.first, attention.second);
  else combine.hide(b, shared_fc2, shared_fc2);
  if (all_to_all) b.elementwise("moe.unpermute", rows * e.topk * x.h, 2 * x.elem, 2);
  if (shared && e.shared_expert_overlap) b.reduce_after("tp_reduce", shared_fc2);
  if (shared && !e.shared_expert_overlap)
    mlp_forward(b, x, e.shared_ffn, MlpPart::Shared, "shared_fc1", "shared_fc2");
}

// Returns the combine gradient's exchange, which under --overlap-moe-expert-parallel-comm the
// caller hides behind the attention block's backward (moe_forward).
Exchange moe_backward(Builder& b, const LayerShape& x) {
  const MoeShape& e = x.moe;
  const std::int64_t rows = x.region_tokens, routed = e.routed_tokens;
  // flex permutes as alltoall does: top-k copies before dispatch, back after combine.
  const bool all_to_all = e.dispatcher != TokenDispatcher::AllGather;
  const bool shared = e.shared_ffn > 0;
  int shared_fc2 = -1, shared_fc1 = -1;
  if (shared && e.shared_expert_overlap) {
    b.gathered_gemm("sp_all_gather", "shared_fc2.dgrad", x.tokens, e.shared_ffn, x.h);
    shared_fc2 = b.gemm("shared_fc2.wgrad", e.shared_ffn, x.h, x.tokens);
  } else if (shared) {
    mlp_backward(b, x, e.shared_ffn, MlpPart::Shared, "shared_fc2.dgrad", "shared_fc2.wgrad", "shared_fc1.dgrad",
                 "shared_fc1.wgrad");
  }
  // The combine's gradient travels back as a dispatch, and the dispatch's as a combine.
  const ExpertExchange combine_grad{"moe.combine_grad_all_to_all", "moe.combine_grad_etp_all_gather",
                                    "moe.combine_grad_all_gather"};
  b.elementwise("moe.unpermute.backward", (all_to_all ? rows * e.topk : routed) * x.h, 3 * x.elem, 2);
  const Exchange combine = to_experts(b, x, combine_grad);
  if (!e.overlap_ep_comm) combine.hide(b, shared_fc2, shared_fc2);
  const int mlp_first = b.last() + 1;
  expert_gemm(b, e, "expert_fc2.dgrad", routed, e.expert_ffn, x.h, true);
  expert_gemm(b, e, "expert_fc2.wgrad", e.expert_ffn, x.h, routed, false);
  activation(b, x, MlpPart::Expert, Phase::Backward, routed * e.expert_ffn);
  expert_gemm(b, e, "expert_fc1.dgrad", routed, x.h, fc1_width(x, e.expert_ffn), true);
  const int fc1_wgrad = expert_gemm(b, e, "expert_fc1.wgrad", x.h, fc1_width(x, e.expert_ffn), routed, false);
  if (shared && e.shared_expert_overlap) {
    const int dgrad = b.gemm("shared_fc1.dgrad", x.tokens, x.h, fc1_width(x, e.shared_ffn));
    b.sp_gather("sp_all_gather.wgrad_input", dgrad);
    shared_fc1 = b.gemm("shared_fc1.wgrad", x.h, fc1_width(x, e.shared_ffn), x.tokens);
  }
  // allgather scatters the gradient rows back before its reduce-scatter, alltoall after its all-to-all.
  if (!all_to_all) b.elementwise("moe.permute.backward", routed * x.h, 2 * x.elem);
  const Exchange dispatch = from_experts(
      b, x, {"moe.dispatch_grad_all_to_all", "moe.dispatch_grad_etp_reduce_scatter", "moe.dispatch_grad_reduce_scatter"});
  if (e.overlap_ep_comm) dispatch.hide(b, mlp_first, fc1_wgrad);
  else dispatch.hide(b, shared_fc1, shared_fc1);
  if (all_to_all) b.elementwise("moe.permute.backward", rows * e.topk * x.h, 2 * x.elem);
  if (shared && e.shared_expert_overlap) b.tp_reduce("tp_reduce.input_grad", shared_fc1);
  b.elementwise("router.topk.backward", rows * e.experts, x.elem + 8, 8);
  b.gemm("router.dgrad", rows, x.h, e.experts);
  b.gemm("router.wgrad", x.h, e.experts, rows);
  return e.overlap_ep_comm ? combine : Exchange{};
}

// Weights of one layer's MLP or MoE block on this rank: the dense MLP, or the router, the
// local experts and the shared experts.
std::int64_t block_weights(const LayerShape& x) {
  if (!x.moe.layer) return mlp_weights(x, x.ffn);
  const MoeShape& e = x.moe;
  return x.h * e.experts + e.local_experts * mlp_weights(x, e.expert_ffn) + mlp_weights(x, e.shared_ffn);
}

// RoPE's HBM traffic per rotated element (Q and K). Transformer Engine's fused kernel reads and
// writes each element once. Megatron-Core's unfused path (rope_utils.py's
// _apply_rotary_pos_emb_bshd) passes over the elements 12 times forward: t·cos (2), the negated
// half (1) and its concatenation with the other (2), ·sin (2), the sum (3), the concatenation
// with the unrotated part (2); and about 14 backward: the two products' gradients (4), the
// negation (1), the halves reassembled (2), the two gradients of t summed (3), the slice's zero
// fill and sum (4).
double rope_bytes(const LayerShape& x, bool backward) {
  if (x.rope_fusion) return 2 * x.elem;
  return (backward ? 14 : 12) * x.elem;
}

// Multi-latent attention's projections up to the core attention (Megatron-Core's
// MLASelfAttention.get_query_key_value_tensors with Transformer Engine's spec): the replicated
// down-projections over the rank's region rows (no TP collective: each rank holds the whole
// weight), the latents' norms there (when the model has them), each latent (the key/value one with the RoPE key part)
// gathered over SP into its column-parallel up-projection; then RoPE on the queries' and the
// shared key's RoPE parts, and the keys assembled with that part copied to every head.
void mla_projections_forward(Builder& b, const LayerShape& x) {
  const MlaShape& a = x.mla;
  const std::int64_t rows = x.region_tokens;
  const std::int64_t query = x.heads * (a.qk + a.rope), key_value = x.heads * (a.qk + a.v);
  if (a.q_rank > 0) {
    b.gemm("q_down_proj", rows, a.q_rank, x.h);
    if (a.norms) b.elementwise("q_norm", rows * a.q_rank, 2 * x.elem, 8);
    b.gathered_gemm("sp_all_gather.q_latent", "q_up_proj", x.tokens, query, a.q_rank);
  } else {
    b.gathered_gemm("sp_all_gather", "q_proj", x.tokens, query, x.h);
  }
  b.gemm("kv_down_proj", rows, a.kv_rank + a.rope, x.h);
  if (a.norms) b.elementwise("kv_norm", rows * a.kv_rank, 2 * x.elem, 8);
  b.sp_gather_bytes("sp_all_gather.kv_latent", x.elem * static_cast<double>(x.tokens * (a.kv_rank + a.rope)));
  b.gemm("kv_up_proj", x.tokens, key_value, a.kv_rank);
  b.elementwise("rope", x.tokens * (x.heads * a.rope + a.rope), rope_bytes(x, false), 6);
  b.elementwise("mla.key_assemble", x.tokens * x.heads * (a.qk + a.rope), 2 * x.elem, 0);
}

// Its backward, last op first: the keys' RoPE part summed over the heads, RoPE, then each
// up-projection's data and weight gradients (the latent re-gathered over SP for the weight
// gradient, the latent's gradient reduced over TP behind it), the norms and the replicated
// down-projections over the region rows.
void mla_projections_backward(Builder& b, const LayerShape& x) {
  const MlaShape& a = x.mla;
  const std::int64_t rows = x.region_tokens;
  const std::int64_t query = x.heads * (a.qk + a.rope), key_value = x.heads * (a.qk + a.v);
  b.elementwise("mla.key_assemble.backward", x.tokens * x.heads * (a.qk + a.rope), 2 * x.elem, 1);
  b.elementwise("rope.backward", x.tokens * (x.heads * a.rope + a.rope), rope_bytes(x, true), 6);
  const double kv_latent = x.elem * static_cast<double>(x.tokens * (a.kv_rank + a.rope));
  const int kv_dgrad = b.gemm("kv_up_proj.dgrad", x.tokens, a.kv_rank, key_value);
  b.sp_gather_bytes("sp_all_gather.wgrad_input", kv_latent, kv_dgrad);
  b.tp_reduce_bytes("tp_reduce.kv_latent_grad", kv_latent, b.gemm("kv_up_proj.wgrad", a.kv_rank, key_value, x.tokens));
  if (a.norms) b.elementwise("kv_norm.backward", rows * a.kv_rank, 4 * x.elem, 12);
  b.gemm("kv_down_proj.dgrad", rows, x.h, a.kv_rank + a.rope);
  b.gemm("kv_down_proj.wgrad", x.h, a.kv_rank + a.rope, rows);
  if (a.q_rank > 0) {
    const double q_latent = x.elem * static_cast<double>(x.tokens * a.q_rank);
    const int q_dgrad = b.gemm("q_up_proj.dgrad", x.tokens, a.q_rank, query);
    b.sp_gather_bytes("sp_all_gather.wgrad_input", q_latent, q_dgrad);
    b.tp_reduce_bytes("tp_reduce.q_latent_grad", q_latent, b.gemm("q_up_proj.wgrad", a.q_rank, query, x.tokens));
    if (a.norms) b.elementwise("q_norm.backward", rows * a.q_rank, 4 * x.elem, 12);
    b.gemm("q_down_proj.dgrad", rows, x.h, a.q_rank);
    b.gemm("q_down_proj.wgrad", x.h, a.q_rank, rows);
  } else {
    const int dgrad = b.gemm("q_proj.dgrad", x.tokens, x.h, query);
    b.sp_gather("sp_all_gather.wgrad_input", dgrad);
    b.tp_reduce("tp_reduce.input_grad", b.gemm("q_proj.wgrad", x.h, query, x.tokens));
  }
}

// Weights of one layer's attention on this rank: QKV and the output projection split over TP,
// or MLA's replicated down-projections beside its split up- and output projections.
std::int64_t attention_weights(const LayerShape& x) {
  const std::int64_t out = x.heads * x.v_width() * x.h;
  if (!x.mla.on) return x.h * x.qkv_out + out;
  const MlaShape& a = x.mla;
  const std::int64_t query = a.q_rank > 0 ? x.h * a.q_rank + a.q_rank * x.heads * (a.qk + a.rope)
                                          : x.h * x.heads * (a.qk + a.rope);
  return query + x.h * (a.kv_rank + a.rope) + a.kv_rank * x.heads * (a.qk + a.v) + out;
}

}  // namespace

OpProgram layer_forward(const LayerShape& x, Phase phase) {
  Builder b(x, phase);
  const std::int64_t region = x.region_tokens * x.h;
  b.elementwise("input_norm", region, 2 * x.elem, 8);
  if (x.mla.on) {
    mla_projections_forward(b, x);
  } else {
    b.gathered_gemm("sp_all_gather", "qkv", x.tokens, x.qkv_out, x.h);
    if (x.rope) b.elementwise("rope", x.tokens * (x.qkv_out - x.kv_width), rope_bytes(x, false), 6);  // rotates Q and K
  }
  attention_core(b, x);
  b.reduce_after("tp_reduce", b.gemm("attention_proj", x.tokens, x.h, x.heads * x.v_width()));
  b.elementwise("bias_dropout_add", region, 3 * x.elem + (x.dropout ? 1 : 0));
  b.elementwise("post_attention_norm", region, 2 * x.elem, 8);
  if (x.moe.layer) moe_forward(b, x, {0, b.last()});
  else mlp_forward(b, x, x.ffn, MlpPart::Dense, "fc1", "fc2");
  b.elementwise("bias_dropout_add", region, 3 * x.elem + (x.dropout ? 1 : 0));
  return b.take();
}

OpProgram layer_backward(const LayerShape& x) {
  Builder b(x, Phase::Backward);
  const std::int64_t region = x.region_tokens * x.h;
  const std::int64_t attn_width = x.heads * x.v_width();
  // MLP (or MoE) block, last op first.
  b.elementwise("bias_dropout_add.backward", region, 2 * x.elem + (x.dropout ? 1 : 0));
  Exchange combine_grad;  // hidden behind the attention block's backward (moe_forward)
  if (x.moe.layer)
    combine_grad = moe_backward(b, x);
  else
    mlp_backward(b, x, x.ffn, MlpPart::Dense, "fc2.dgrad", "fc2.wgrad", "fc1.dgrad", "fc1.wgrad");
  b.elementwise("post_attention_norm.backward", region, 4 * x.elem, 12);
  const int attention_first = b.last() + 1;
  // Attention block.
  b.elementwise("bias_dropout_add.backward", region, 2 * x.elem + (x.dropout ? 1 : 0));
  b.gathered_gemm("sp_all_gather", "attention_proj.dgrad", x.tokens, attn_width, x.h);
  b.gemm("attention_proj.wgrad", attn_width, x.h, x.tokens);
  const std::int64_t batch = x.b * x.heads;
  if (x.flash) {
    flash_attention(b, x, true);
  } else {
    const std::int64_t scores = batch * x.s * x.s;
    b.batched("attention_context.dgrad_probs", batch, x.s, x.s, x.v_width());
    b.batched("attention_context.dgrad_values", batch, x.s, x.v_width(), x.s);
    if (x.dropout) b.elementwise("attention_dropout.backward", scores, dropout_bytes(x));
    b.elementwise("softmax.backward", scores, 3 * x.elem, 4);
    if (x.attention_softcap) b.elementwise("attention_softcap.backward", scores, 3 * x.elem, 3);  // dy·(1 - t²)
    b.batched("attention_scores.dgrad_query", batch, x.s, x.head_dim, x.s);
    b.batched("attention_scores.dgrad_key", batch, x.s, x.head_dim, x.s);
  }
  if (x.mla.on) {
    mla_projections_backward(b, x);
  } else {
    if (x.rope) b.elementwise("rope.backward", x.tokens * (x.qkv_out - x.kv_width), rope_bytes(x, true), 6);
    const int dgrad = b.gemm("qkv.dgrad", x.tokens, x.h, x.qkv_out);
    b.sp_gather("sp_all_gather.wgrad_input", dgrad);
    const int wgrad = b.gemm("qkv.wgrad", x.h, x.qkv_out, x.tokens);
    b.tp_reduce("tp_reduce.input_grad", wgrad);
  }
  b.elementwise("input_norm.backward", region, 4 * x.elem, 12);
  combine_grad.hide(b, attention_first, b.last());
  // Weight gradients accumulate into the main_grad buffers (Megatron-LM's gradient accumulation
  // fusion: the wgrad GEMM epilogue reads and writes one main-gradient element per parameter).
  const std::int64_t layer_weights = attention_weights(x) + block_weights(x);
  b.elementwise("main_grad_accumulate", layer_weights, 2 * x.main_grad_elem, 1);
  return b.take();
}

}  // namespace cc
