#include "sim/memory_model.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "sim/library_workspaces.h"
#include "sim/layer_program.h"
#include "sim/mla_mtp_memory.h"
#include "sim/pipeline_schedule.h"
#include "sim/step_plan.h"
#include "sim/units.h"

namespace cc {

namespace {

struct Widths {  // bytes per token of each class of stored activation
  double region;       // norm/dropout regions: split by t only under SP
  double tp_split;     // inside the TP region: always split by t
  double per_score;    // bytes per attention score element (s^2 terms), already / t via heads
};

// Bytes of one stored activation element: the training precision's width (16-bit runs keep
// 16-bit activations, fp32 runs such as the CPU engine keep fp32 ones; fp8 recipes keep their
// activations in bf16). Dropout masks are one byte whatever the precision.
double activation_element_bytes(Precision p) { return p == Precision::FP32 ? 4 : 2; }

// Activation classes of one layer (Korthikanti Sec. 4.1), per token, with e the element
// width (2 in the paper's 16-bit formulas: 34sbh + 5as²b):
//   region (10h for GPT): two norm inputs 2eh, QKV input eh, FC1 input eh, two dropout masks 2h
//   TP-split (24h for GPT): Q, K, V e(q+2kv), projection input eq (q = heads x head width,
//   h unless the model sets its own head width), FC1 output and FC2 input
//   scores (5as/h for GPT): softmax output e, dropout mask 1, dropout output e per element,
//   and with Gemma 2's soft cap its tanh output e
Widths layer_widths(const ModelSpec& m, Precision p) {
  const double e = activation_element_bytes(p);
  const double h = m.hidden_size, q = m.query_width(), kv = m.kv_channels(), f = m.ffn_hidden_size;
  const double masks = m.dropout ? 2 * h : 0;
  // Multi-latent attention keeps its own (mla_attention_activation_bytes()) in place of the
  // QKV input and Q, K, V and the projection input.
  const double attention_region = m.mla.enabled ? 0 : e * h;
  const double attention_tp = m.mla.enabled ? 0 : e * (q + 2 * kv) + e * q;
  const double region = 2 * e * h + attention_region + e * h + masks;
  const double mlp = m.gated_mlp() ? e * (2 * f) + e * f : e * f + e * f;
  const double tp_split = attention_tp + mlp;
  // Gemma 2's attention soft cap keeps its tanh output, one more element per score.
  const double per_score = (m.dropout ? 2 * e + 1 : e) + (m.attention_softcap > 0 ? e : 0);
  return {region, tp_split, per_score};
}

// Tokens of one microbatch a rank holds: s·b, or s·b/CP under context parallelism (every
// Korthikanti term is per token, so each shrinks by CP; the score term's other s is the key
// length, which CP does not cut, but CP runs only with flash attention, which keeps no scores).
double local_tokens(const ModelSpec& m, const ParallelConfig& c) {
  return static_cast<double>(m.seq_length) * c.micro_batch / c.cp;
}

// What an MoE block keeps per microbatch for backward on one rank, in bytes (moe_block_activation_bytes()). Megatron-Core runs
// MoE under TP with sequence parallelism only, so the router sees the rank's R = b·s/(CP·TP)
// region tokens; with ETP the dispatched rows are gathered over ETP, and the busiest EP rank
// holds the load imbalance times the mean (moe_load_imbalance()). Per term:
//   router:   its input (the post-attention norm output) e·h and the fp32 scores 4·E it
//             differentiates top-k through, plus the routing map, one byte per expert: R·(eh + 5E)
//   routed:   for each of the X = R·top-k·ETP·imbalance rows the rank's experts take, the
//             permuted FC1 input e·h, the FC1 output e·f' (2f' when gated), the activation's
//             output (FC2 input) e·f', f' = expert FFN / ETP: X·e·(h + 3f' or h + 2f')
//   combine:  the expert outputs the unpermutation weights by their router probabilities,
//             R·top-k rows of e·h after the ETP reduce-scatter: R·top-k·e·h
//   shared:   the shared experts' FC1 output and FC2 input as in a dense MLP of width f_s / TP
//             over the b·s/CP tokens (their input is the router's, kept above)
double moe_block_bytes(const ModelSpec& m, const ParallelConfig& c) {
  const double e = activation_element_bytes(c.precision);
  const double h = m.hidden_size, experts = m.moe.num_experts, topk = m.moe.router_topk;
  const double etp = c.expert_tp();
  const double tokens = static_cast<double>(m.seq_length) * c.micro_batch / c.cp;
  const double region = tokens / (c.sequence_parallel ? c.tp : 1);
  const double rows = std::ceil(region * topk * etp * moe_load_imbalance(c) - 1e-9);
  const double f = m.moe.ffn_hidden_size / etp;
  const double router = region * (e * h + 5 * experts);
  const double routed = rows * e * (h + (m.gated_mlp() ? 3 : 2) * f);
  const double combine = region * topk * e * h;
  const double fs = static_cast<double>(m.moe.shared_expert_ffn_hidden_size) / c.tp;
  const double shared = tokens * e * (m.gated_mlp() ? 3 : 2) * fs;
  return router + routed + combine + shared;
}

double layer_bytes(const ModelSpec& m, const ParallelConfig& c, RecomputeGranularity recompute) {
  const double t = c.tp;
  const double e = activation_element_bytes(c.precision);
  const double sb = local_tokens(m, c);
  const double region_split = c.sequence_parallel ? t : 1.0;
  if (recompute == RecomputeGranularity::Full) return e * sb * m.hidden_size / region_split;
  const Widths w = layer_widths(m, c.precision);
  double bytes = sb * (w.region / region_split + w.tp_split / t);
  if (m.mla.enabled) {
    ParallelConfig kept = c;
    kept.recompute = recompute;
    bytes += mla_attention_activation_bytes(m, kept, e);  // with flash attention's log-sum-exp
  }
  if (recompute == RecomputeGranularity::None) {
    const double heads = static_cast<double>(m.num_attention_heads) / t;
    if (c.attention == AttentionKernel::Unfused)
      bytes += w.per_score * heads * m.seq_length * sb;
    else if (!m.mla.enabled)
      bytes += 4.0 * heads * sb;  // flash attention keeps only the fp32 log-sum-exp per row
  }
  return bytes;
}

// An MoE layer's bytes: the dense layer's without its MLP (the FC1 input in the region, the FC1
// output and FC2 input inside the TP region), with the MoE block's in their place. Full
// recomputation keeps only the layer input, as for a dense layer.
double moe_layer_bytes(const ModelSpec& m, const ParallelConfig& c, RecomputeGranularity recompute) {
  const double dense = layer_bytes(m, c, recompute);
  if (recompute == RecomputeGranularity::Full) return dense;
  const double e = activation_element_bytes(c.precision), f = m.ffn_hidden_size;
  const double mlp_region = e * m.hidden_size / (c.sequence_parallel ? c.tp : 1.0);
  const double mlp_tp = (m.gated_mlp() ? 3 * e * f : 2 * e * f) / c.tp;
  return dense - local_tokens(m, c) * (mlp_region + mlp_tp) + moe_block_bytes(m, c);
}

double weight_bytes_per_param(Precision p) { return p == Precision::FP32 ? 4 : 2; }
// Adam: fp32 master weights and two moments, and an fp32 copy of the gradients where the main
// gradients are 16-bit (fp16, or bf16 under --grad-reduce-in-bf16: the optimizer steps on fp32
// grads); fp32 training needs no master copy — Megatron-LM distributed-optimizer docs, bytes per param.
double optimizer_bytes_per_param(const ParallelConfig& c) {
  if (c.precision == Precision::FP32) return 8;
  return c.main_grad_bytes() == 2 ? 16 : 12;
}

}  // namespace

double layer_activation_bytes(const ModelSpec& m, const ParallelConfig& c) { return layer_bytes(m, c, c.recompute); }

double moe_block_activation_bytes(const ModelSpec& m, const ParallelConfig& c) { return moe_block_bytes(m, c); }

double layer_activation_bytes_without_recompute(const ModelSpec& m, const ParallelConfig& c) {
  return layer_bytes(m, c, RecomputeGranularity::None);
}

int gradient_group_size(const ParallelConfig& c) { return c.grid().group_size(kGradientGroup); }

int optimizer_shard_size(const ParallelConfig& c) {
  return c.distributed_optimizer ? gradient_group_size(c) / std::max(1, c.distributed_optimizer_instances) : 1;
}

int stage_moe_layer_count(const ModelSpec& m, const ParallelConfig& c, int stage) {
  if (!m.moe.enabled()) return 0;
  int n = mtp_moe_layers_on_stage(m, c, stage);
  for (int k = 0; k < c.virtual_stages; ++k) {
    const LayerRange r = chunk_layers(m, c, stage, k);
    for (int i = r.first; i < r.end(); ++i) n += m.is_moe_layer(i) ? 1 : 0;
  }
  return n;
}

std::int64_t stage_expert_parameters(const ModelSpec& m, const ParallelConfig& c, int stage) {
  if (!m.moe.enabled()) return 0;
  return stage_moe_layer_count(m, c, stage) * (m.moe.num_experts / c.ep) * (m.expert_parameters() / c.expert_tp());
}

std::int64_t stage_parameters(const ModelSpec& m, const ParallelConfig& c, int stage) {
  const std::int64_t h = m.hidden_size, q = m.query_width(), f = m.ffn_hidden_size, kv = m.kv_channels(), t = c.tp;
  const bool gated = m.gated_mlp();
  const std::int64_t norm = m.normalization == Normalization::LayerNorm ? 2 * h : h;
  // Column-parallel QKV and FC1 (weights and biases split), row-parallel projection and FC2
  // (weights split, biases replicated), norms replicated.
  const std::int64_t split = h * (q + 2 * kv) + (q + 2 * kv) + q * h + (gated ? 3 * h * f : 2 * h * f + f);
  const std::int64_t replicated = h + (gated ? 0 : h) + 2 * norm;
  const std::int64_t attention_on_rank =
      m.mla.enabled ? mla_attention_parameters_on_rank(m, c.tp) : m.attention_parameters() / t;
  const std::int64_t per_layer =
      m.mla.enabled ? attention_on_rank + (gated ? 3 * h * f : 2 * h * f + f) / t + (gated ? 0 : h) + 2 * norm
                    : split / t + replicated;
  const int moe_layers = stage_moe_layer_count(m, c, stage);
  const int layers = stage_layer_count(m, c, stage) + mtp_layers_on_stage(m, c, stage);
  std::int64_t params = per_layer * (layers - moe_layers) + mtp_extra_parameters(m, c, stage);
  if (moe_layers > 0) {
    // An MoE layer: its attention split over TP (the few biases and q/k norm weights among
    // them too, an overcount of thousands), two norms, the replicated router, the shared
    // experts split over TP, and the local experts (stage_expert_parameters()).
    const std::int64_t dense_part = attention_on_rank + 2 * norm + m.router_parameters() +
                                    m.shared_expert_parameters() / t;
    params += moe_layers * dense_part + stage_expert_parameters(m, c, stage);
  }
  if (stage == c.pp - 1) params += norm;
  return params + stage_embedding_parameters(m, c, stage);
}

std::int64_t stage_embedding_parameters(const ModelSpec& m, const ParallelConfig& c, int stage) {
  const std::int64_t h = m.hidden_size, t = c.tp;
  const std::int64_t vocab_slice = (std::int64_t{m.vocab_size} + t - 1) / t * h;
  std::int64_t params = 0;
  if (stage == 0) {
    params += vocab_slice;
    if (m.position_embedding == PositionEmbedding::Learned) params += std::int64_t{m.seq_length} * h;
  }
  if (stage == c.pp - 1 && (!m.tied_embeddings || c.pp > 1)) params += vocab_slice;
  return params;
}

double weight_bytes(const ParallelConfig& c, double params, double fp8_params) {
  return params * weight_bytes_per_param(c.precision) - fp8_params * (weight_bytes_per_param(c.precision) - 1.0);
}

std::int64_t fp8_weight_parameters(const ModelSpec& m, const ParallelConfig& c, int stage) {
  if (!c.fp8_param_gather) return 0;
  const std::int64_t routers = std::int64_t{stage_moe_layer_count(m, c, stage)} * m.router_parameters();
  return stage_parameters(m, c, stage) - stage_embedding_parameters(m, c, stage) - routers;
}

StageActivations stage_activations(const ModelSpec& m, const ParallelConfig& c, int s) {
  const double t = c.tp;
  const double sb = local_tokens(m, c);
  const double h = m.hidden_size;
  const double region_split = c.sequence_parallel ? t : 1.0;
  const double e = activation_element_bytes(c.precision);
  const double kept = layer_activation_bytes(m, c);
  const double full = layer_activation_bytes_without_recompute(m, c);
  const double moe_kept = m.moe.enabled() ? moe_layer_bytes(m, c, c.recompute) : kept;
  const double moe_full = m.moe.enabled() ? moe_layer_bytes(m, c, RecomputeGranularity::None) : full;

  // One (microbatch, chunk) of stored activations, priced at the stage's largest chunk: a
  // stage's chunks are alike unless the split makes them differ (the embedding or loss counted
  // as a layer, a layout string), and then the largest bounds each.
  ChunkPlan chunk = chunk_plan(m, c, s, 0);
  for (int k = 1; k < c.virtual_stages; ++k)
    if (ChunkPlan other = chunk_plan(m, c, s, k); other.layers.count > chunk.layers.count) chunk = std::move(other);
  const int chunk_layers = chunk.layers.count;
  auto is_moe = [&](int i) { return m.is_moe_layer(chunk.layers.first + i); };
  int moe_layers = 0;
  for (int i = 0; i < chunk_layers; ++i) moe_layers += is_moe(i) ? 1 : 0;
  StageActivations a;
  a.per_in_flight = (chunk_layers - moe_layers) * kept + moe_layers * moe_kept;
  if (chunk.recompute == RecomputeScope::WholeLayer) {
    // Each recompute group keeps only its input; layers outside every group keep everything.
    const auto groups = static_cast<int>(chunk.recompute_groups.size());
    const int recomputed = chunk.recomputed_layers();
    int moe_kept_whole = 0;
    for (int i = 0; i < chunk_layers; ++i) moe_kept_whole += is_moe(i) && chunk.keeps_all(i) ? 1 : 0;
    a.per_in_flight = groups * e * sb * h / region_split + (chunk_layers - recomputed - moe_kept_whole) * full +
                      moe_kept_whole * moe_full;
    // A group's rerun holds all of its layers at once. Backward runs last layer first,
    // freeing each kept layer as it goes: by the time the block method's first layers rerun,
    // the chunk's kept layers are gone, so a rerun adds to the peak only when every layer
    // of the chunk recomputes.
    int largest = 0;
    for (const LayerRange& g : chunk.recompute_groups) largest = std::max(largest, g.count);
    // A group's layers rerun together; with MoE layers among them, each at the larger kind's
    // working set (an upper bound by the dense layers' difference).
    a.working = recomputed == chunk_layers ? largest * (moe_layers > 0 ? std::max(full, moe_full) : full) : 0.0;
  }
  a.context_parallel_buffers = context_parallel_buffer_bytes(make_layer_shape(m, c, GroupPlacement{c.tp, 1, c.tp}));
  // Korthikanti Sec. 4.3: the embedding dropout mask on the first stage per microbatch
  // in flight; the final norm, output-layer input and fp32 logits on the last stage.
  if (s == 0 && m.dropout) a.per_in_flight += sb * h / region_split / c.virtual_stages;
  if (s == c.pp - 1) {
    a.fixed = e * sb * h / region_split + e * sb * h / t + 4.0 * sb * m.vocab_size / t;
    // The loss's transient: the 16-bit logits while the fp32 copy is made (fp32 logits are that
    // copy); the fused loss (--cross-entropy-loss-fusion) holds a second fp32 copy while it
    // exponentiates (layer_program).
    const double cast_copy = c.precision == Precision::FP32 ? 0.0 : e;
    a.loss_workspace = (cast_copy + (c.cross_entropy_fusion ? 4.0 : 0.0)) * sb * m.vocab_size / t;
    // A final logit soft cap keeps its tanh output beside the logits.
    if (m.final_logit_softcap > 0) a.fixed += e * sb * m.vocab_size / t;
    // Multi-token prediction layers, kept whole (not recomputed): their transformer layer of
    // the last decoder layer's kind beside their own projection, norms and logits.
    if (m.mtp_num_layers > 0) {
      const RecomputeGranularity mtp_recompute =
          c.recompute == RecomputeGranularity::Full ? RecomputeGranularity::None : c.recompute;
      const double mtp_layer = mtp_moe_layers_on_stage(m, c, s) > 0 ? moe_layer_bytes(m, c, mtp_recompute)
                                                                    : layer_bytes(m, c, mtp_recompute);
      a.fixed += mtp_activation_bytes(m, c, mtp_layer, e);
    }
  }
  return a;
}

MemoryReport memory_model(const ModelSpec& m, const ParallelConfig& c, const MemoryReserve& reserve,
                          const GpuSpec* gpu) {
  MemoryReport report;
  const double workspaces = gpu ? library_workspace_bytes(*gpu, m, c) : 0.0;
  const double shard = optimizer_shard_size(c);

  for (int s = 0; s < c.pp; ++s) {
    StageMemory stage;
    stage.parameters = stage_parameters(m, c, s);
    const double params = static_cast<double>(stage.parameters);
    stage.bytes.weights = weight_bytes(c, params, static_cast<double>(fp8_weight_parameters(m, c, s)));
    stage.bytes.gradients = params * c.main_grad_bytes();
    // Routed experts' optimizer state is sharded over their own data-parallel group (EDP).
    const double experts = static_cast<double>(stage_expert_parameters(m, c, s));
    const double expert_shard = c.distributed_optimizer ? c.expert_dp() : 1.0;
    stage.bytes.optimizer =
        ((params - experts) / shard + experts / expert_shard) * optimizer_bytes_per_param(c);
    // Routed experts are among the FP8 weights under --fp8-param-gather.
    stage.bytes.experts = weight_bytes(c, experts, c.fp8_param_gather ? experts : 0.0) + experts * c.main_grad_bytes() +
                          experts / expert_shard * optimizer_bytes_per_param(c);

    stage.in_flight = max_in_flight(s, c.pp, c.num_microbatches(), c.virtual_stages, c.microbatch_group_size);
    const StageActivations a = stage_activations(m, c, s);
    const double attention_transient = a.working + a.context_parallel_buffers;
    stage.loss_peak_extra = std::max(0.0, a.loss_workspace - attention_transient);
    const double activations =
        stage.in_flight * a.per_in_flight + attention_transient + stage.loss_peak_extra + a.fixed;
    stage.bytes.activations = activations;
    stage.bytes.workspaces = workspaces;
    stage.bytes.other = (reserve.cuda_context_gib + reserve.comm_buffers_gib) * kGiB +
                        reserve.fragmentation_fraction * activations;
    report.stages.push_back(stage);
  }
  for (int s = 1; s < c.pp; ++s)
    if (report.stages[static_cast<std::size_t>(s)].bytes.total() > report.peak().total()) report.peak_stage = s;
  return report;
}

}  // namespace cc
