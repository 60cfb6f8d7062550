// parallel_config.h — how one training run is laid out and executed: TP×CP×PP×DP, sequence
// parallelism, micro/global batch, interleaved stages, recomputation, optimizer sharding.
// Field meanings follow Megatron-LM's arguments of the same names.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/cluster_spec.h"
#include "sim/framework_spec.h"
#include "sim/model_spec.h"
#include "sim/parallel_grid.h"

namespace cc {

enum class RecomputeGranularity { None, Selective, Full };
enum class RecomputeMethod { Uniform, Block };
enum class AttentionKernel { Unfused, Flash };
// Megatron-LM's --fp8-recipe among the per-tensor scalings: delayed (its default: each tensor scaled
// from its amax history) or tensorwise (current scaling: from the tensor's own amax). Both are priced
// as per-tensor scaled FP8 GEMMs at the fitted FP8 fraction (AnalyticParams::fp8_gemm_fraction),
// which the corpus's runs of both recipes set; block scalings (blockwise, mxfp8) run other GEMMs and
// are refused.
enum class Fp8Recipe { Delayed, Tensorwise };
// How the ranks of a context-parallel group exchange keys and values (Megatron-LM's
// --cp-comm-type, run by Transformer Engine): a ring of point-to-point sends overlapped with
// the attention of the chunk at hand; an all-to-all that trades the sequence split for a head
// split around attention (DeepSpeed-Ulysses); an all-gather of K and V before attention; or an
// all-to-all inside groups of --hierarchical-context-parallel-sizes' first size and a ring
// between them.
enum class CpCommType { P2P, AllToAll, AllGather, AllToAllP2P };

// How an MoE layer's tokens reach the EP ranks holding their experts (--moe-token-dispatcher-type):
// an all-gather of every token over the EP group, the results summed back by reduce-scatter
// (Megatron-LM's default), an all-to-all each way that sends a token only where it is routed, or
// flex (DeepEP, HybridEP kernels): an all-to-all that sends a token once to each node it is routed
// to and forwards its copies there over NVLink.
enum class TokenDispatcher { AllGather, AllToAll, Flex };
// The kernels behind the flex dispatcher (--moe-flex-dispatcher-backend). Both send node to node
// once per token; HybridEP also spans a multi-node NVLink domain (GB200 NVL72). Megatron-LM's
// third, ncclep, is not modelled and refused by name.
enum class FlexBackend { DeepEP, HybridEP };
// The router's load-balancing loss (--moe-router-load-balancing-type).
enum class LoadBalancing { AuxLoss, SeqAuxLoss, GlobalAuxLoss, Sinkhorn, None };
// Which tokens an expert over capacity drops (--moe-token-drop-policy): lowest router
// probability first, or latest in the sequence first.
enum class TokenDropPolicy { Probs, Position };

// The run-time switches of MoE layers: Megatron-LM's --moe-* flags that are not the model's
// shape (those live in MoeSpec), with its defaults. A dense model takes none of them.
struct MoeRunOptions {
  TokenDispatcher dispatcher = TokenDispatcher::AllGather;
  FlexBackend flex_backend = FlexBackend::DeepEP;  // read with the flex dispatcher only
  bool grouped_gemm = false;  // --moe-grouped-gemm: one grouped GEMM for all local experts
  // --moe-expert-capacity-factor: an expert takes at most factor x its even share of tokens and
  // drops the rest; not given: dropless (every token reaches its experts).
  std::optional<double> capacity_factor;
  bool pad_to_capacity = false;  // --moe-pad-expert-input-to-capacity: every expert runs full capacity
  LoadBalancing load_balancing = LoadBalancing::AuxLoss;
  double aux_loss_coeff = 0.0;  // --moe-aux-loss-coeff
  TokenDropPolicy drop_policy = TokenDropPolicy::Probs;
  bool shared_expert_overlap = false;  // --moe-shared-expert-overlap: shared expert beside the all-to-all
  bool overlap_ep_comm = false;        // --overlap-moe-expert-parallel-comm: dispatch/combine beside another microbatch
  // --moe-load-imbalance (clustercast's own): tokens of the busiest EP rank over the mean; not
  // given: moe_load_imbalance() picks it.
  std::optional<double> load_imbalance;

  bool operator==(const MoeRunOptions&) const = default;
};

// Tokens of the busiest EP rank over the mean, which sets an MoE layer's pace when routing is
// dropless and not padded. FEPLB (Qi, Liu, Zhao, arXiv 2604.19654, Fig. 1b) measured GLM-5's MoE
// layers (128 experts, EP 8, H100, no auxiliary loss) losing 18.6% of GPU time per layer to the
// slowest rank: if the others wait for it, max/mean = 1 / (1 - 0.186) = 1.23.
inline constexpr double kDroplessLoadImbalance = 1.23;

struct ParallelConfig {
  int tp = 1;
  int cp = 1;  // context parallelism: each rank holds 1/CP of every sequence
  int pp = 1;
  int dp = 1;
  // Expert parallelism (--expert-model-parallel-size): the routed experts of an MoE layer spread
  // over EP ranks, tokens sent to them by all-to-all or all-gather. Dense layers ignore it.
  int ep = 1;
  // Expert tensor parallelism (--expert-tensor-parallel-size): each expert's FFN split over ETP
  // ranks. 0: not given, which Megatron-LM's arguments.py turns into TP (expert_tp() reads it).
  int etp = 0;
  CpCommType cp_comm_type = CpCommType::P2P;
  // a2a+p2p: the size of the inner all-to-all groups (the first of Megatron-LM's
  // --hierarchical-context-parallel-sizes); the ring runs over CP / this many of them.
  int cp_a2a_size = 0;
  bool sequence_parallel = false;
  int micro_batch = 1;
  int global_batch = 1;
  int virtual_stages = 1;     // model chunks per pipeline rank; > 1 selects interleaved 1F1B
  // --microbatch-group-size-per-virtual-pipeline-stage: how many microbatches the interleaved
  // schedule runs on one chunk before the next; 0: Megatron-Core's default, PP.
  int microbatch_group_size = 0;
  int first_stage_layers = 0;  // Megatron-core --decoder-first-pipeline-num-layers (0 = even split)
  int last_stage_layers = 0;   // --decoder-last-pipeline-num-layers
  // Megatron-Core's --pipeline-model-parallel-layout: every virtual stage's layers spelled out
  // ("E" embedding, "t" a transformer layer, "L" the loss, "|" between stages, "*N" repeats);
  // empty: the split follows the flags above.
  std::string pipeline_layout;
  // --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split: the
  // embedding (the loss) counts as one layer when the layers are split over the stages.
  bool account_for_embedding = false;
  bool account_for_loss = false;
  RecomputeGranularity recompute = RecomputeGranularity::None;
  RecomputeMethod recompute_method = RecomputeMethod::Uniform;
  int recompute_num_layers = 1;
  bool distributed_optimizer = false;
  // --num-distributed-optimizer-instances: the distributed optimizer's state sharded within each
  // of this many equal blocks of the DP x CP group (Megatron-Core's partial distributed
  // optimizer): gradients reduce-scattered inside a block, then all-reduced across the blocks
  // shard by shard; parameters gathered inside a block. Megatron-Core asserts the distributed
  // optimizer beside it.
  int distributed_optimizer_instances = 1;
  bool overlap_grad_reduce = false;   // bucketed DP reduction during the last backward passes
  bool overlap_param_gather = false;  // distributed optimizer: parameter all-gather hidden in the next forward
  // --tp-comm-overlap: sequence parallelism's all-gathers and reduce-scatters run in chunks
  // pipelined with the GEMM beside them (Transformer Engine userbuffers), so they hide.
  bool tp_comm_overlap = false;
  // --grad-reduce-in-bf16: a bf16 run keeps, accumulates and reduces its gradients in bf16
  // instead of fp32 (main_grad_bytes).
  bool grad_reduce_in_bf16 = false;
  // --cross-entropy-loss-fusion: Megatron-Core's native fused vocab-parallel cross-entropy, three
  // fused kernels and two TP all-reduces where the plain one runs six and three (layer_program).
  bool cross_entropy_fusion = false;
  // --no-rope-fusion turns this off: RoPE by separate PyTorch kernels instead of Transformer
  // Engine's one fused kernel (Megatron-LM's default is the fused one).
  bool rope_fusion = true;
  // --fp8-param-gather (FP8 with the distributed optimizer): Transformer Engine's linear layers keep
  // their weights in FP8 (Megatron-Core's uint8 parameter buffer), so those weights take one byte
  // each in memory and in the parameter all-gather (fp8_weight_parameters in memory_model.h).
  bool fp8_param_gather = false;
  Fp8Recipe fp8_recipe = Fp8Recipe::Delayed;  // read with FP8 only (validate_layout)
  Precision precision = Precision::BF16;
  AttentionKernel attention = AttentionKernel::Unfused;
  MoeRunOptions moe;
  // The software stack (a preset of traces/presets/frameworks/): how layers spread over
  // stages, whether sends block, and which fitted overheads the analytic model charges.
  std::string framework = kDefaultFramework;

  // The ranks as a grid of named dimensions (kDenseGridOrder): every consumer takes group
  // sizes, coordinates and process groups from it.
  ParallelGrid grid() const;
  // The expert layers' grid over the same ranks (Megatron-Core's expert RankGenerator: order
  // "tp-cp-ep-dp-pp" with tp = ETP, cp = 1, dp = EDP, so "etp-ep-edp-pp"): MoE layers take their
  // EP, ETP and expert-data-parallel groups from it, the pipeline groups are the dense grid's.
  // Needs EP x ETP to divide TP x CP x DP (validate_layout refuses it otherwise).
  ParallelGrid expert_grid() const;
  int expert_tp() const { return etp > 0 ? etp : tp; }
  // Expert data parallelism: the ranks of a pipeline stage (TP x CP x DP) over EP x ETP.
  int expert_dp() const { return tp * cp * dp / (ep * expert_tp()); }
  int gpus() const { return tp * cp * pp * dp; }
  // Bytes of one element of the main-gradient buffers, which the data-parallel reduction sends:
  // Megatron-LM (arguments.py) accumulates and reduces a bf16 run's gradients in fp32 unless
  // --grad-reduce-in-bf16 says bf16 (FP8 runs are bf16 runs here); fp16 runs keep them in fp16,
  // fp32 runs in fp32.
  double main_grad_bytes() const;
  int num_microbatches() const { return global_batch / (micro_batch * dp); }
  bool interleaved() const { return virtual_stages > 1; }
  // One line, e.g. "tp8 pp16 dp8 sp mb1 gb1536 v1 selective" ("cp2 p2p" after TP with CP,
  // "ep8 etp1" after DP with expert parallelism or an ETP given;
  // "ends7/7", "countEL" or "layout E|t*8|..." where the layers do not split evenly; "fp8-params"
  // last with --fp8-param-gather).
  std::string summary() const;
};


// Whether a stage's next pass waits for its own pipeline send under the config's stack and
// schedule (the stack's blocking_p2p, unless Megatron-Core's interleaved schedule overlaps it).
// Such a send ends in a device sync (Megatron's batched isend/irecv is followed by
// torch.cuda.synchronize()), so the host cannot run ahead into the next pass either.
bool pipeline_sends_block(const ParallelConfig& config);

// The flag of `config` that Megatron-LM's --deterministic-mode refuses beside it (determinism.py,
// ARG_VALUES_REQUIRED_FOR_DETERMINISM: the fused loss, TP communication overlap), or nullptr.
// resolve_run refuses the pair; the Megatron export leaves the stack's deterministic mode out.
const char* flag_refusing_deterministic_mode(const ParallelConfig& config);

// Runs `config` under the stack `framework` (a preset name; unknown is a SpecError): names it,
// and turns on the DP overlap the stack does by default (what a launch line asked stays on).
void apply_framework(ParallelConfig& config, const std::string& framework);

nlohmann::json config_to_json(const ParallelConfig& config);
// Fills fields present in `doc` over `base`; unknown recompute names and the like are errors.
ParallelConfig config_from_json(const nlohmann::json& doc, const std::string& where, ParallelConfig base = {});

const char* to_string(RecomputeGranularity g);
const char* to_string(RecomputeMethod m);
const char* to_string(AttentionKernel a);
const char* to_string(Fp8Recipe r);  // Megatron-LM's spelling: delayed, tensorwise
const char* to_string(CpCommType t);  // Megatron-LM's spelling: p2p, a2a, allgather, a2a+p2p
// Megatron-LM's spellings: alltoall, allgather, flex; deepep, hybridep; aux_loss, seq_aux_loss,
// global_aux_loss, sinkhorn, none; probs, position. The readers refuse any other, naming the valid
// ones (ncclep with its own reason).
const char* to_string(TokenDispatcher d);
const char* to_string(FlexBackend b);
FlexBackend flex_backend_from(const std::string& name, const std::string& where);
const char* to_string(LoadBalancing b);
const char* to_string(TokenDropPolicy p);
TokenDispatcher token_dispatcher_from(const std::string& name, const std::string& where);
LoadBalancing load_balancing_from(const std::string& name, const std::string& where);
TokenDropPolicy token_drop_policy_from(const std::string& name, const std::string& where);
// The busiest EP rank's tokens over the mean for `config`: --moe-load-imbalance when given; 1.0
// when every expert is padded to capacity (all run the same count); otherwise
// kDroplessLoadImbalance; capped by a capacity factor (no expert takes more than factor x mean)
// and by EP (the busiest rank holds at most every token).
double moe_load_imbalance(const ParallelConfig& config);
CpCommType cp_comm_type_from(const std::string& name, const std::string& where);
RecomputeGranularity recompute_granularity_from(const std::string& name, const std::string& where);
RecomputeMethod recompute_method_from(const std::string& name, const std::string& where);
Precision precision_from(const std::string& name, const std::string& where);
AttentionKernel attention_from(const std::string& name, const std::string& where);
// delayed or tensorwise; Megatron-LM's block scalings (blockwise, mxfp8) and custom recipes are
// refused by name as not modelled, anything else naming the valid ones.
Fp8Recipe fp8_recipe_from(const std::string& name, const std::string& where);
// The attention kernel a stack runs when a launch line (or a new GUI project) names none, from
// its preset's flash_attention: Megatron-Core and NeMo (--attention-backend auto) run flash or
// fused attention; the 2021-2022 papers' stacks (megatron-2021, megatron-2022, megatron-deepspeed) and our CPU
// engine materialise the s x s scores.
AttentionKernel default_attention(const std::string& framework);
// The same for a model: one whose attention scores are soft-capped (Gemma 2) runs unfused
// whatever the stack, as Megatron-Bridge and NeMo run it.
AttentionKernel default_attention(const std::string& framework, const ModelSpec& model);

}  // namespace cc
