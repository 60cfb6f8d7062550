#include "sim/layout_validation.h"

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <numeric>
#include <string>
#include <vector>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/error.h"
#include "sim/layout_rules.h"
#include "sim/pipeline_layout_string.h"
#include "sim/step_plan.h"

namespace cc {

void validate(const ParallelConfig& c, const ModelSpec& m, const ClusterSpec& cluster, int gpus) {
  validate_layout(c, m, gpus);
  if (cluster.gpu.peak_flops(c.precision) <= 0) {
    std::vector<std::string> supported;
    for (Precision p : {Precision::BF16, Precision::FP16, Precision::FP8, Precision::FP32})
      if (cluster.gpu.peak_flops(p) > 0) supported.emplace_back(to_string(p));
    fail_at("--precision",
            "parallel config: precision {} is not supported by {} (its peak is 0 in the cluster spec); --precision {}",
            to_string(c.precision), cluster.gpu.name, fmt::join(supported, " or "));
  }
}

namespace {

// Context parallelism as Megatron-Core runs it through Transformer Engine's attention.
void validate_context_parallel(const ParallelConfig& c, const ModelSpec& m) {
  const std::string w = "parallel config";
  if (c.cp_a2a_size && c.cp_comm_type != CpCommType::AllToAllP2P)
    fail_at("--hierarchical-context-parallel-sizes",
            "{}: --hierarchical-context-parallel-sizes is read with --cp-comm-type a2a+p2p only (it is {})", w,
            to_string(c.cp_comm_type));
  if (c.cp == 1) return;
  // Causal load balancing cuts each sequence into 2 x CP chunks and gives rank i chunks i and
  // 2·CP-1-i; with SP each chunk is split over TP as well.
  const std::int64_t unit = std::int64_t{2} * c.cp * (c.sequence_parallel ? c.tp : 1);
  if (m.seq_length % unit != 0)
    fail_at("--context-parallel-size",
            "{}: --seq-length {} is not divisible by 2 x CP {}{} = {}: context parallelism cuts each sequence into 2 x "
            "CP equal chunks{}; valid CP sizes divide {}",
            w, m.seq_length, c.cp, c.sequence_parallel ? fmt::format(" x TP {}", c.tp) : "", unit,
            c.sequence_parallel ? ", each split over TP" : "",
            m.seq_length / (2 * (c.sequence_parallel ? c.tp : 1)));
  if (c.attention == AttentionKernel::Unfused)
    fail_at("--attention-backend",
            "{}: context parallelism (CP {}) runs inside Transformer Engine's fused attention; the unfused kernel has "
            "none. Use --attention-backend flash (or auto)",
            w, c.cp);
  const int a2a = cp_all_to_all_size(c);  // CP > 1 here
  if (c.cp_comm_type == CpCommType::AllToAllP2P && (a2a < 1 || c.cp % a2a != 0))
    fail_at("--hierarchical-context-parallel-sizes",
            "{}: --cp-comm-type a2a+p2p needs --hierarchical-context-parallel-sizes A P with A x P = CP {}", w, c.cp);
  // The all-to-all trades the sequence split for a head split: every rank takes whole heads.
  if (a2a > 1 && ((m.num_attention_heads / c.tp) % a2a != 0 || (m.num_query_groups / c.tp) % a2a != 0))
    fail_at("--cp-comm-type",
            "{}: --cp-comm-type {} splits the heads of each TP rank ({} query heads, {} key/value heads) over {} "
            "ranks, which does not divide them; use p2p or a smaller all-to-all group",
            w, to_string(c.cp_comm_type), m.num_attention_heads / c.tp, m.num_query_groups / c.tp, a2a);
}

// The divisors of n, as a message lists them: "1, 2, 4, 8".
std::string divisors_text(int n) {
  std::vector<int> valid;
  for (int v = 1; v <= n; ++v)
    if (n % v == 0) valid.push_back(v);
  return fmt::format("{}", fmt::join(valid, ", "));
}

// A dense model has no router, dispatcher or experts: an MoE switch given for it is refused by
// name (the first one that differs from Megatron-LM's default), never dropped.
void refuse_moe_options_on_dense(const MoeRunOptions& o, const ModelSpec& m) {
  const MoeRunOptions defaults;
  const std::pair<const char*, bool> given[] = {
      {"--moe-token-dispatcher-type", o.dispatcher != defaults.dispatcher},
      {"--moe-grouped-gemm", o.grouped_gemm},
      {"--moe-expert-capacity-factor", o.capacity_factor.has_value()},
      {"--moe-pad-expert-input-to-capacity", o.pad_to_capacity},
      {"--moe-router-load-balancing-type", o.load_balancing != defaults.load_balancing},
      {"--moe-aux-loss-coeff", o.aux_loss_coeff != defaults.aux_loss_coeff},
      {"--moe-token-drop-policy", o.drop_policy != defaults.drop_policy},
      {"--moe-shared-expert-overlap", o.shared_expert_overlap},
      {"--overlap-moe-expert-parallel-comm", o.overlap_ep_comm},
      {"--moe-load-imbalance", o.load_imbalance.has_value()},
  };
  for (const auto& [flag, set] : given)
    if (set)
      fail_at(flag, "parallel config: {} is a mixture-of-experts option, but model '{}' has no experts (dense); "
              "leave it out",
              flag, m.name);
}

}  // namespace

void validate_moe_switches(const MoeRunOptions& o, const ModelSpec& m) {
  if (!m.moe.enabled()) {
    refuse_moe_options_on_dense(o, m);
    return;
  }
  const std::string w = "parallel config";
  // Megatron-Core reads a negative factor as "none"; a factor given here is meant, so it must be one.
  // An infinite factor is no capacity at all, which Megatron-Core cannot compute (int(inf)).
  if (o.capacity_factor && !(*o.capacity_factor > 0 && std::isfinite(*o.capacity_factor)))
    fail_at("--moe-expert-capacity-factor",
            "{}: --moe-expert-capacity-factor is {}; it must be a finite number > 0 (leave it out for dropless "
            "routing)",
            w, *o.capacity_factor);
  if (o.capacity_factor && o.load_balancing == LoadBalancing::Sinkhorn)
    fail_at("--moe-router-load-balancing-type",
            "{}: --moe-expert-capacity-factor works with aux_loss, seq_aux_loss, global_aux_loss or none load "
            "balancing (Megatron-Core), not sinkhorn",
            w);
  if (o.pad_to_capacity && !o.capacity_factor)
    fail_at("--moe-pad-expert-input-to-capacity",
            "{}: --moe-pad-expert-input-to-capacity needs --moe-expert-capacity-factor (the capacity it pads to)", w);
  if (!(o.aux_loss_coeff >= 0))
    fail_at("--moe-aux-loss-coeff", "{}: --moe-aux-loss-coeff is {}; it must be >= 0", w, o.aux_loss_coeff);
  if (o.load_imbalance && !(*o.load_imbalance >= 1 && *o.load_imbalance <= 1e3))
    fail_at("--moe-load-imbalance",
            "{}: --moe-load-imbalance is {}; it is the busiest EP rank's tokens over the mean, so >= 1 (1: "
            "perfectly balanced)",
            w, *o.load_imbalance);
  if (o.shared_expert_overlap && m.moe.shared_expert_ffn_hidden_size == 0)
    fail_at("--moe-shared-expert-overlap",
            "{}: --moe-shared-expert-overlap: model '{}' has no shared expert to overlap", w, m.name);
  if (o.shared_expert_overlap && o.dispatcher == TokenDispatcher::AllGather)
    fail_at("--moe-shared-expert-overlap",
            "{}: --moe-shared-expert-overlap works with --moe-token-dispatcher-type alltoall or flex (Megatron-Core); "
            "it is allgather",
            w);
  if (o.dispatcher != TokenDispatcher::Flex && o.flex_backend != FlexBackend::DeepEP)
    fail_at("--moe-flex-dispatcher-backend",
            "{}: --moe-flex-dispatcher-backend {} chooses the flex dispatcher's kernels, but the dispatcher is {}; give "
            "--moe-token-dispatcher-type flex, or leave the backend out",
            w, to_string(o.flex_backend), to_string(o.dispatcher));
  // Megatron-Core's TransformerConfig: "Flex token dispatcher with deepep backend does not
  // support moe_pad_expert_input_to_capacity".
  if (o.dispatcher == TokenDispatcher::Flex && o.flex_backend == FlexBackend::DeepEP && o.pad_to_capacity)
    fail_at("--moe-pad-expert-input-to-capacity",
            "{}: --moe-pad-expert-input-to-capacity does not work with the flex dispatcher's deepep backend "
            "(Megatron-Core); use --moe-token-dispatcher-type alltoall, or --moe-flex-dispatcher-backend hybridep",
            w);
}

namespace {

// The MoE switches as Megatron-Core's TransformerConfig accepts them (those that depend on the
// layout after those that do not), and clustercast's own load imbalance.
void validate_moe_options(const ParallelConfig& c, const ModelSpec& m) {
  const std::string w = "parallel config";
  const MoeRunOptions& o = c.moe;
  validate_moe_switches(o, m);
  if (o.dispatcher == TokenDispatcher::Flex) {
    const char* flag = "--moe-token-dispatcher-type";
    // Both refusals name the dispatcher, the switch they hang on (the search counts them under it).
    // Megatron-Core's flex dispatcher sends over the ETP x EP group, each token to top-k x ETP
    // expert shards; the pricing models the ETP 1 case, where that group is EP.
    if (c.expert_tp() > 1)
      fail_at(flag,
              "{}: {} flex with expert tensor parallel size {} is not modelled; give --expert-tensor-parallel-size "
              "1, or --moe-token-dispatcher-type alltoall",
              w, flag, c.expert_tp());
    // Megatron-Core's MoEFlexTokenDispatcher: "DeepEP dispatcher requires TPxEP > 1".
    if (o.flex_backend == FlexBackend::DeepEP && c.ep == 1)
      fail_at(flag,
              "{}: {} flex with the deepep backend needs --expert-model-parallel-size > 1 (Megatron-Core's DeepEP "
              "dispatcher requires TP x EP > 1 over the experts); it is 1",
              w, flag);
  }
  if (o.overlap_ep_comm) {
    // Megatron-Core's TransformerConfig, each check in its order.
    const char* flag = "--overlap-moe-expert-parallel-comm";
    if (c.ep == 1)
      fail_at(flag, "{}: {} overlaps expert-parallel communication, which needs --expert-model-parallel-size > 1", w,
              flag);
    if (o.dispatcher == TokenDispatcher::AllGather)
      fail_at(flag, "{}: {} works with --moe-token-dispatcher-type alltoall or flex; it is allgather", w, flag);
    if (c.pp > 1 && c.virtual_stages == 1)
      fail_at(flag, "{}: {} with PP {} needs virtual pipeline stages (Megatron-Core overlaps across chunks)", w, flag,
              c.pp);
    if (c.recompute == RecomputeGranularity::Full)
      fail_at(flag, "{}: {} cannot be combined with full recomputation (Megatron-Core)", w, flag);
    if (o.shared_expert_overlap)
      fail_at(flag, "{}: {} cannot be combined with --moe-shared-expert-overlap (Megatron-Core)", w, flag);
  }
}

// Expert parallelism as Megatron-Core folds it (parallel_state.py initialize_model_parallel):
// the expert layers lay EP x ETP x EDP over the ranks of each pipeline stage, which the dense
// layers lay out as TP x CP x DP. ETP not given is TP (arguments.py).
void validate_expert_parallel(const ParallelConfig& c, const ModelSpec& m) {
  const std::string w = "parallel config";
  if (c.ep < 1)
    fail_at("--expert-model-parallel-size", "{}: --expert-model-parallel-size is {}; it must be >= 1", w, c.ep);
  if (c.etp < 0)
    fail_at("--expert-tensor-parallel-size", "{}: --expert-tensor-parallel-size is {}; it must be >= 1", w, c.etp);
  if (!m.moe.enabled()) {
    refuse_moe_options_on_dense(c.moe, m);
    if (c.ep > 1)
      fail_at("--expert-model-parallel-size",
              "{}: --expert-model-parallel-size {}: model '{}' has no experts (dense); valid: 1", w, c.ep, m.name);
    if (c.etp > 0 && c.etp != c.tp)
      fail_at("--expert-tensor-parallel-size",
              "{}: --expert-tensor-parallel-size {}: model '{}' has no experts (dense); leave it out or give TP {}", w,
              c.etp, m.name, c.tp);
    return;
  }
  // Megatron-LM's arguments.py: "Number of experts should be a multiple of expert model parallel_size".
  if (m.moe.num_experts % c.ep != 0)
    fail_at("--expert-model-parallel-size",
            "{}: --expert-model-parallel-size {} does not divide the {} routed experts of model '{}'; valid: {}", w,
            c.ep, m.moe.num_experts, m.name, divisors_text(m.moe.num_experts));
  const int etp = c.expert_tp();
  const std::int64_t stage_ranks = std::int64_t{c.tp} * c.cp * c.dp;
  const std::int64_t expert_ranks = std::int64_t{c.ep} * etp;
  // The field is EP: the dense layout (TP x CP x DP) is usually fixed first, experts fold into it.
  if (stage_ranks % expert_ranks != 0)
    fail_at("--expert-model-parallel-size",
            "{}: EP {} x ETP {} = {} does not divide TP {} x CP {} x DP {} = {}, the ranks of one pipeline stage over "
            "which Megatron-Core folds the experts; EP x ETP must divide {}",
            w, c.ep, etp, expert_ranks, c.tp, c.cp, c.dp, stage_ranks, stage_ranks);
  if (m.moe.ffn_hidden_size % etp != 0)
    fail_at("--expert-tensor-parallel-size",
            "{}: --expert-tensor-parallel-size {} does not divide the expert FFN size {} (--moe-ffn-hidden-size); "
            "ETP must divide it",
            w, etp, m.moe.ffn_hidden_size);
  // Megatron-Core's TransformerConfig: "expert_tensor_parallel_size == 1 or not add_bias_linear".
  if (m.moe.expert_linear_biases && etp > 1)
    fail_at("--expert-tensor-parallel-size",
            "{}: model '{}' has biases in its expert linears, which Megatron-Core splits over expert tensor parallel "
            "ranks only at ETP 1 (ETP is {}); give --expert-tensor-parallel-size 1",
            w, m.name, etp);
  // Megatron-Core's TransformerConfig: "When using expert parallelism and tensor parallelism,
  // sequence parallelism must be used".
  if (c.ep > 1 && c.tp > 1 && !c.sequence_parallel)
    fail_at("--sequence-parallel",
            "{}: expert parallelism (EP {}) with TP {} needs --sequence-parallel, as Megatron-Core requires", w, c.ep,
            c.tp);
  // Megatron-Core's MoELayer refuses to train MoE layers under TP without sequence parallelism
  // (moe_layer.py: "performance may degrade if MoE and tensor parallelism are enabled without
  // also enabling sequence parallelism"); the pricing routes each rank's SP share of tokens.
  if (m.moe.enabled() && c.tp > 1 && !c.sequence_parallel)
    fail_at("--sequence-parallel",
            "{}: model '{}' has MoE layers and TP is {}: Megatron-Core trains MoE layers under TP only with "
            "--sequence-parallel; give it, or TP 1",
            w, m.name, c.tp);
  validate_moe_options(c, m);
}

// The chunk counts per rank that divide every one of `counts` (Megatron-Core splits each
// stage's layers evenly over its chunks), as a message lists them: "1, 2, 4".
std::string chunk_counts_dividing(std::initializer_list<int> counts) {
  int common = 0;
  for (int n : counts) common = std::gcd(common, n);
  return divisors_text(common);
}

// Megatron-Core's interleaved schedule runs microbatches in groups of
// --microbatch-group-size-per-virtual-pipeline-stage N (default PP) per chunk
// (schedules.py forward_backward_pipelining_with_interleaving): N must lie in [PP, M], and the
// last group, M mod N microbatches, must be empty or hold at least PP.
void validate_interleaved_microbatches(const ParallelConfig& c) {
  const std::string w = "parallel config";
  const int m = c.num_microbatches(), n = c.microbatch_group_size, pp = c.pp;
  if (c.microbatch_group_size == 0) {
    // The default group is PP, so M must be a multiple of PP (a group size other than PP relaxes
    // it); the batch is what the user sizes.
    if (m % pp != 0 || m < pp)
      fail_at("--global-batch-size",
              "{}: the interleaved schedule needs the microbatch count {} divisible by PP {} (as in Megatron-LM)", w,
              m, pp);
    return;
  }
  const char* flag = "--microbatch-group-size-per-virtual-pipeline-stage";
  if (n < pp || n > m)
    fail_at(flag, "{}: {} {} must lie between PP {} and the microbatch count {}", w, flag, n, pp, m);
  if (m % n != 0 && m % n < pp)
    fail_at(flag,
            "{}: {} {} leaves a last group of {} mod {} = {} microbatches, fewer than PP {} (Megatron-Core refuses "
            "the dependency bubble); choose N with {} mod N 0 or >= PP",
            w, flag, n, m, n, m % n, pp, m);
}

// How the layers split over the pipeline as Megatron-Core accepts it (transformer_config.py
// __post_init__, arguments.py, transformer_block.py get_num_layers_to_build): one way of
// placing them, each of its counts dividing. step_plan.h's virtual_stage_layers() is the split.
void validate_pipeline_split(const ParallelConfig& c, const ModelSpec& m) {
  const std::string w = "parallel config";
  const bool uneven = c.first_stage_layers > 0 || c.last_stage_layers > 0;
  const bool accounted = c.account_for_embedding || c.account_for_loss;
  const char* account_flag = c.account_for_embedding ? "--account-for-embedding-in-pipeline-split"
                                                     : "--account-for-loss-in-pipeline-split";
  const FrameworkSpec& framework = load_framework(c.framework);
  const bool deepspeed = framework.layer_partition == LayerPartition::DeepSpeedUniform;
  if (c.virtual_stages > 1) {
    // Interleaving is what needs PP >= 2: with one stage there is nothing to interleave.
    if (c.pp < 2)
      fail_at("--num-layers-per-virtual-pipeline-stage",
              "{}: interleaved stages ({} per rank) need --pipeline-model-parallel-size >= 2", w, c.virtual_stages);
    if (deepspeed)
      fail_at("--num-layers-per-virtual-pipeline-stage",
              "{}: {} has no interleaved pipeline schedule (virtual stages {})", w, c.framework, c.virtual_stages);
    validate_interleaved_microbatches(c);
  } else if (c.microbatch_group_size != 0) {
    fail_at("--microbatch-group-size-per-virtual-pipeline-stage",
            "{}: --microbatch-group-size-per-virtual-pipeline-stage {} is read by the interleaved schedule only; give "
            "virtual stages or leave it out",
            w, c.microbatch_group_size);
  }
  if (deepspeed && (accounted || !c.pipeline_layout.empty()))
    fail_at(c.pipeline_layout.empty() ? account_flag : "--pipeline-model-parallel-layout",
            "{}: {} partitions layers uniformly; {} is Megatron-Core's", w, c.framework,
            c.pipeline_layout.empty() ? account_flag : "--pipeline-model-parallel-layout");
  if (!c.pipeline_layout.empty()) {
    // Megatron-Core refuses the layout beside any other way of placing layers.
    if (uneven || accounted)
      fail_at("--pipeline-model-parallel-layout",
              "{}: --pipeline-model-parallel-layout places every layer itself; it cannot be combined with {}", w,
              uneven ? "--decoder-first/last-pipeline-num-layers" : account_flag);
    check_pipeline_layout(c.pipeline_layout, parse_pipeline_layout(c.pipeline_layout), m.num_layers,
                          m.mtp_num_layers, c.pp, c.virtual_stages);
  } else if (uneven) {
    const char* field = c.first_stage_layers ? "--decoder-first-pipeline-num-layers"
                                             : "--decoder-last-pipeline-num-layers";
    if (accounted)
      fail_at(account_flag, "{}: {} cannot be combined with uneven first/last stages (as in Megatron-Core)", w,
              account_flag);
    const int middle = c.pp - (c.first_stage_layers > 0) - (c.last_stage_layers > 0);
    const int rest = m.num_layers - c.first_stage_layers - c.last_stage_layers;
    if (c.pp < 2 || rest < 0 || (middle == 0 ? rest != 0 : (rest % middle != 0 || rest == 0)))
      fail_at(field, "{}: first/last stage layers {}/{} leave {} layers that do not divide over {} middle stages", w,
              c.first_stage_layers, c.last_stage_layers, rest, middle);
    const int per_middle = middle > 0 ? rest / middle : 0;
    const int vp = c.virtual_stages;
    // Each stage splits its layers evenly over its chunks, so every stage's count divides by them.
    if (vp > 1 && (c.first_stage_layers % vp != 0 || c.last_stage_layers % vp != 0 || per_middle % vp != 0))
      fail_at("--num-virtual-stages-per-pipeline-rank",
              "{}: {} virtual stages per rank do not divide the stages' layers (first {}, middle {}, last {}): "
              "Megatron-Core splits each stage's layers evenly over its chunks; valid virtual stages per rank: {}, "
              "or a --pipeline-model-parallel-layout for an uneven interleaved split",
              w, vp, c.first_stage_layers, per_middle, c.last_stage_layers,
              chunk_counts_dividing({c.first_stage_layers, per_middle, c.last_stage_layers}));
  } else if (deepspeed) {
    if (m.num_layers < c.pp)
      fail_at("--pipeline-model-parallel-size", "{}: num_layers {} is fewer than PP {}; every stage needs a layer", w,
              m.num_layers, c.pp);
  } else {
    const std::int64_t chunks = std::int64_t{c.pp} * c.virtual_stages;
    const std::int64_t counted = std::int64_t{m.num_layers} + c.account_for_embedding + c.account_for_loss;
    if (counted % chunks != 0) {
      // The model is given; the layout is what the user chooses.
      if (!accounted)
        fail_at("--pipeline-model-parallel-size",
                "{}: num_layers {} is not divisible by PP {} x virtual stages {} = {}", w, m.num_layers, c.pp,
                c.virtual_stages, chunks);
      fail_at("--pipeline-model-parallel-size",
              "{}: num_layers {} + {} (the embedding and loss counted as layers) = {} is not divisible by PP {} x "
              "virtual stages {} = {}",
              w, m.num_layers, counted - m.num_layers, counted, c.pp, c.virtual_stages, chunks);
    }
  }
  if (c.recompute == RecomputeGranularity::Full) {
    if (c.recompute_num_layers < 1)
      fail_at("--recompute-num-layers", "{}: --recompute-num-layers is {}; it must be >= 1", w, c.recompute_num_layers);
    // Every chunk that holds layers recomputes them; a chunk of none has nothing to rerun.
    for (const int chunk : virtual_stage_layers(m, c)) {
      if (chunk == 0) continue;
      if (c.recompute_method == RecomputeMethod::Block && c.recompute_num_layers > chunk)
        fail_at("--recompute-num-layers",
                "{}: --recompute-num-layers {} exceeds the {} layers of a pipeline chunk (block method)", w,
                c.recompute_num_layers, chunk);
      if (c.recompute_method == RecomputeMethod::Uniform && chunk % c.recompute_num_layers != 0)
        fail_at("--recompute-num-layers",
                "{}: --recompute-num-layers {} does not divide the {} layers of a pipeline chunk (uniform method)", w,
                c.recompute_num_layers, chunk);
    }
  }
}

}  // namespace

// Multi-latent attention is priced as Megatron-Core runs it with Transformer Engine's fused
// attention, without context parallelism (its head widths differ between query/key and value,
// and the CP exchange of its latents is not modelled). What is not priced is refused by name,
// so nothing prices such a layout as something else. Multi-token prediction layers are priced on
// the last pipeline stage, where Megatron-Core places them by default.
void refuse_unpriced_attention(AttentionKernel attention, const ModelSpec& m) {
  if (m.attention_softcap > 0 && attention == AttentionKernel::Flash)
    fail_at("--attention-backend",
            "model '{}' caps its attention scores (attn_logit_softcapping {}, Gemma 2), which Megatron-Core's flash "
            "and fused attention cannot (Megatron-Bridge and NeMo run it unfused, Gemma2DotProductAttention); use "
            "--attention-backend unfused",
            m.name, m.attention_softcap);
}

void refuse_unpriced_architecture(const ParallelConfig& c, const ModelSpec& m) {
  refuse_unpriced_attention(c.attention, m);
  if (!m.mla.enabled) return;
  if (c.cp > 1)
    fail_at("--multi-latent-attention",
            "model '{}' uses multi-latent attention, which clustercast prices without context parallelism; "
            "--context-parallel-size is {}, use 1",
            m.name, c.cp);
}

namespace {

// Megatron-Core's partial distributed optimizer: its instances split the DP x CP group into equal
// blocks (parallel_state.py asserts the division, distributed_data_parallel.py the distributed
// optimizer). Experts shard theirs over intra-instance expert groups, which are not modelled.
void validate_optimizer_instances(const ParallelConfig& c, const ModelSpec& m, const std::string& w) {
  const int n = c.distributed_optimizer_instances;
  if (n < 1)
    fail_at("--num-distributed-optimizer-instances", "{}: --num-distributed-optimizer-instances is {}; it must be >= 1",
            w, n);
  if (n == 1) return;
  if (!c.distributed_optimizer)
    fail_at("--use-distributed-optimizer",
            "{}: --num-distributed-optimizer-instances {} needs --use-distributed-optimizer, as Megatron-Core asserts "
            "(\"Partial DistOpt cannot be used without DistOpt\")", w, n);
  const int group = c.dp * c.cp;
  if (group % n != 0)
    fail_at("--num-distributed-optimizer-instances",
            "{}: --num-distributed-optimizer-instances {} does not divide DP x CP = {}, as Megatron-Core requires; "
            "give a divisor of {}", w, n, group, group);
  if (m.moe.enabled())
    fail_at("--num-distributed-optimizer-instances",
            "{}: --num-distributed-optimizer-instances {} with experts (model '{}') is not modelled: their optimizer "
            "state shards over expert groups inside each instance; leave it out", w, n, m.name);
}

}  // namespace

void validate_fp8_switches(Precision precision, bool fp8_param_gather, Fp8Recipe recipe, const std::string& where) {
  if (precision == Precision::FP8) return;
  // Megatron-LM's TransformerConfig: "fp8_param must be used together with fp8 mode".
  if (fp8_param_gather)
    fail_at("--fp8-param-gather", "{}: --fp8-param-gather needs FP8 training (--fp8-format), as in Megatron-LM, or "
            "--precision fp8; the run is {}", where, to_string(precision));
  if (recipe != Fp8Recipe::Delayed)
    fail_at("--fp8-recipe", "{}: --fp8-recipe {} is an FP8 recipe and the run is {}; give --fp8-format or --precision fp8",
            where, to_string(recipe), to_string(precision));
}

void validate_layout(const ParallelConfig& c, const ModelSpec& m, int gpus) {
  const std::string w = "parallel config";
  // Each refusal's field (sim/error.h) is the flag the user should change; where a check is
  // about two flags, the comment beside it says why that one.
  auto positive = [&](const char* field, const char* what, int v) {
    if (v < 1) fail_at(field, "{}: {} is {}; it must be >= 1", w, what, v);
  };
  positive("--tensor-model-parallel-size", "--tensor-model-parallel-size", c.tp);
  positive("--context-parallel-size", "--context-parallel-size", c.cp);
  positive("--pipeline-model-parallel-size", "--pipeline-model-parallel-size", c.pp);
  positive("--data-parallel-size", "--data-parallel-size", c.dp);
  positive("--micro-batch-size", "--micro-batch-size", c.micro_batch);
  positive("--global-batch-size", "--global-batch-size", c.global_batch);
  // Virtual stages have no flag of their own: they come from this one.
  positive("--num-layers-per-virtual-pipeline-stage", "virtual pipeline stages", c.virtual_stages);
  // 0 means "an even split" (Megatron-Core's default); below it there is no such stage.
  for (const auto& [flag, layers] : {std::pair{"--decoder-first-pipeline-num-layers", c.first_stage_layers},
                                     std::pair{"--decoder-last-pipeline-num-layers", c.last_stage_layers}})
    if (layers < 0) fail_at(flag, "{}: {} is {}; it must be >= 1 (or 0 for an even split)", w, flag, layers);
  load_framework(c.framework);  // refuses an unknown stack by name
  // Products of sizes are taken in 64 bits: micro batch 65,536 x DP 65,536 wraps an int to
  // 0 (a SIGFPE in the modulo below), and TP x PP x DP can wrap onto the GPU count.
  const std::int64_t world = std::int64_t{c.tp} * c.cp * c.pp * c.dp;
  if (gpus > 0 && world != gpus)  // the message asks for another DP: the GPU count is the cluster's
    fail_at("--data-parallel-size",
            "{}: --gpus {} is not {} x DP {} = {}; choose DP = GPUs / (TP x CP x PP)", w, gpus,
            model_parallel_text(c.tp, c.cp, c.pp), c.dp, world);
  if (m.num_attention_heads % c.tp != 0)
    fail_at("--tensor-model-parallel-size",
            "{}: --tensor-model-parallel-size {} does not divide num_attention_heads {}", w, c.tp,
            m.num_attention_heads);
  if (m.num_query_groups % c.tp != 0)
    fail_at("--tensor-model-parallel-size", "{}: --tensor-model-parallel-size {} does not divide num_query_groups {}",
            w, c.tp, m.num_query_groups);
  if (m.ffn_hidden_size % c.tp != 0)
    fail_at("--tensor-model-parallel-size", "{}: --tensor-model-parallel-size {} does not divide ffn_hidden_size {}", w,
            c.tp, m.ffn_hidden_size);
  // Sequence parallelism and TP: the switch is what asks for TP > 1, so it is the field.
  if (c.sequence_parallel && c.tp == 1)
    fail_at("--sequence-parallel",
            "{}: --sequence-parallel needs --tensor-model-parallel-size > 1 (it splits the sequence over TP ranks)", w);
  if (c.sequence_parallel && m.seq_length % c.tp != 0)
    fail_at("--sequence-parallel", "{}: --sequence-parallel needs seq_length {} divisible by TP {}", w, m.seq_length,
            c.tp);
  validate_context_parallel(c, m);
  const std::int64_t samples_per_step = std::int64_t{c.micro_batch} * c.dp;
  if (c.global_batch % samples_per_step != 0)
    fail_at("--global-batch-size", "{}: --global-batch-size {} is not divisible by micro batch {} x DP {} = {}", w,
            c.global_batch, c.micro_batch, c.dp, samples_per_step);
  // The simulator runs every (microbatch, chunk) pass of every stage: bound the work.
  const double passes = 2.0 * c.num_microbatches() * c.virtual_stages * c.pp;
  if (passes > kMaxSimulatedPasses)  // the message asks for a smaller global batch (or a larger micro batch)
    fail_at("--global-batch-size",
            "{}: {} microbatches x {} chunks x {} stages is {:.3g} passes, more than the {:.3g} million a simulation "
            "handles; use a smaller global batch or a larger micro batch",
            w, c.num_microbatches(), c.virtual_stages, c.pp, passes, kMaxSimulatedPasses / 1e6);
  validate_pipeline_split(c, m);
  // The gather it hides exists only with the distributed optimizer: that is the one to turn on.
  if (c.overlap_param_gather && !c.distributed_optimizer)
    fail_at("--use-distributed-optimizer", "{}: --overlap-param-gather needs --use-distributed-optimizer", w);
  validate_fp8_switches(c.precision, c.fp8_param_gather, c.fp8_recipe, w);
  // Megatron-LM: "--fp8-param-gather only supported with distributed optimizer" (arguments.py, in training).
  if (c.fp8_param_gather && !c.distributed_optimizer)
    fail_at("--use-distributed-optimizer", "{}: --fp8-param-gather needs --use-distributed-optimizer, as in Megatron-LM",
            w);
  validate_optimizer_instances(c, m, w);
  // Megatron-LM: "Tensor parallel communication/GEMM overlap can happen only when sequence
  // parallelism is enabled".
  if (c.tp_comm_overlap && !c.sequence_parallel)  // the overlap is the extra asked for
    fail_at("--tp-comm-overlap", "{}: --tp-comm-overlap needs --sequence-parallel (and TP > 1), as in Megatron-LM", w);
  validate_expert_parallel(c, m);
  refuse_unpriced_architecture(c, m);
}

}  // namespace cc
