#include "interop/resolver.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/analytic_costs.h"
#include "sim/error.h"
#include "sim/framework_spec.h"
#include "sim/layout_rules.h"
#include "sim/layout_validation.h"
#include "sim/measured_costs.h"

namespace cc {

namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The GPU model in a name as a vendor or a preset writes it: "NVIDIA H200" -> "h200",
// "A100-SXM4-80GB" -> "a100".
std::string gpu_model(const std::string& name) {
  std::string s = lower(name);
  if (s.starts_with("nvidia ")) s = s.substr(7);
  const auto end = s.find_first_of(" -_");
  return end == std::string::npos ? s : s.substr(0, end);
}

}  // namespace

std::string resolved_stack(const std::optional<std::string>& named, const CostDatabase* measured) {
  if (named) return load_framework(*named).name;  // refuses an unknown stack by name
  if (measured) return load_framework(measured->framework).name;
  return kDefaultFramework;
}

std::optional<std::string> hardware_mismatch(const CostDatabase& db, const ClusterSpec& cluster) {
  if (db.machine.backend != "cuda" || db.machine.gpu_name.empty()) return std::nullopt;
  if (gpu_model(db.machine.gpu_name) == gpu_model(cluster.gpu.name)) return std::nullopt;
  return fmt::format("the cost database was measured on {} but cluster '{}' has {} GPUs: its op times are "
                     "priced as they were measured, not scaled to the cluster's GPU",
                     db.machine.gpu_name, cluster.name, cluster.gpu.name);
}

namespace {

// The stacks whose measured runs made a kernel choice, for a refusal to name.
std::string stacks_that(bool FrameworkSpec::*fact, bool value) {
  std::vector<std::string> names;
  for (const auto& name : framework_preset_names())
    if (load_framework(name).*fact == value) names.push_back(name);
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

// A kernel choice the launch line states that the stack's measured runs did not make is refused
// (FrameworkSpec: no fitted quantity prices it on its own); one the line is silent on takes the
// stack's.
void check_stated_kernels(const LayoutRequest& layout, const std::string& framework) {
  const FrameworkSpec& stack = load_framework(framework);
  if (layout.switches.deterministic_mode && !stack.deterministic_mode)
    fail_at("--deterministic-mode",
            "--deterministic-mode is not priced under stack '{}': deterministic kernels are priced only as part of a "
            "stack whose measured runs used them ({}; give --framework), or drop the flag",
            framework, stacks_that(&FrameworkSpec::deterministic_mode, true));
  if (layout.switches.no_gradient_accumulation_fusion && stack.gradient_accumulation_fusion)
    fail_at("--no-gradient-accumulation-fusion",
            "--no-gradient-accumulation-fusion is not priced under stack '{}': the separate gradient-accumulation "
            "kernels are priced only as part of a stack whose measured runs used them ({}; give --framework), or "
            "drop the flag",
            framework, stacks_that(&FrameworkSpec::gradient_accumulation_fusion, false));
  check_fused_cross_entropy(layout.config.cross_entropy_fusion, framework);
}

}  // namespace

void check_fused_cross_entropy(bool fused, const std::string& framework) {
  if (fused && !load_framework(framework).fused_cross_entropy)
    fail_at("--cross-entropy-loss-fusion",
            "--cross-entropy-loss-fusion under stack '{}': its Megatron-LM has no fused cross-entropy (Megatron-Core's "
            "fusions/fused_cross_entropy.py; stacks with it: {}); drop the flag or give --framework",
            framework, stacks_that(&FrameworkSpec::fused_cross_entropy, true));
}

namespace {

// --expert-tensor-parallel-size on a model without experts: Megatron-Core builds the expert groups
// (ETP x EP x EDP over each stage's ranks, parallel_state.py) and no layer uses them, so the run
// is the dense one (it may decide whether the run starts: check_rank_order); the warning says so. An ETP that does not divide the stage's ranks is left for
// validate to refuse, as Megatron-Core's rank generator refuses it.
void apply_dense_expert_tp(ParallelConfig& c, const ModelSpec& model, std::vector<std::string>& warnings) {
  if (model.moe.enabled() || c.etp <= 0 || c.etp == c.tp || c.ep != 1) return;
  if (c.dp < 1 || (std::int64_t{c.tp} * c.cp * c.dp) % c.etp != 0) return;
  warnings.push_back(fmt::format("--expert-tensor-parallel-size {} left aside: model '{}' has no experts, so no layer "
                                 "uses the expert groups Megatron-LM builds",
                                 c.etp, model.name));
  c.etp = 0;
}

// --use-tp-pp-dp-mapping orders the ranks TP, CP, EP, PP, DP (Megatron-LM's initialize.py) where
// the default is TP, CP, EP, DP, PP: only which ranks form the pipeline and the data-parallel
// groups changes. Inside one NVLink domain every pair of GPUs has the same link, so the order
// changes nothing there, nor with PP 1 or DP 1; across domains the groups would cross other links
// than the ones priced. Megatron-Core also asserts, with PP, that the expert grid folds onto the
// dense one (TP x CP = ETP x EP, parallel_state.py), for a dense model's unused expert groups too.
void check_rank_order(const MegatronSwitches& switches, const ParallelConfig& c, const ClusterSpec& cluster) {
  if (!switches.tp_pp_dp_rank_order) return;
  const int etp = c.etp > 0 ? c.etp : c.tp;
  if (c.pp > 1 && c.tp * c.cp != etp * c.ep)
    fail_at("--use-tp-pp-dp-mapping",
            "--use-tp-pp-dp-mapping with PP {} needs TP x CP ({}) equal to ETP x EP ({}), as Megatron-Core asserts "
            "(the attention's and the experts' data-parallel sizes must be the same in that order; the expert groups "
            "are built for a dense model too); drop the flag or change the layout",
            c.pp, c.tp * c.cp, etp * c.ep);
  if (c.pp > 1 && c.dp > 1 && c.gpus() > cluster.nvlink_domain_size())
    fail_at("--use-tp-pp-dp-mapping",
            "--use-tp-pp-dp-mapping over {} GPUs is not modelled: its rank order (TP, CP, EP, PP, DP) puts other "
            "ranks in each pipeline and data-parallel group than the default order, and across NVLink domains of {} "
            "GPUs those groups would cross other links; it changes nothing within one domain, or with PP 1 or DP 1",
            c.gpus(), cluster.nvlink_domain_size());
}

// --overlap-p2p-communication-warmup-flush: Megatron-Core's interleaved schedule then posts its
// warm-up and flush sends and waits for them where the data is needed, as in the steady state
// (schedules.py). The simulator prices the interleaved schedule's sends so in every phase under a
// stack whose interleaved sends overlap (FrameworkSpec::interleaved_p2p_overlap), so the flag is
// read there; under a stack whose sends block it is refused, and without virtual stages (no
// interleaved schedule reads it) it is left aside with a warning.
void check_warmup_flush_overlap(const MegatronSwitches& switches, const ParallelConfig& c,
                                std::vector<std::string>& warnings) {
  if (!switches.overlap_p2p_warmup_flush) return;
  if (!c.interleaved()) {
    warnings.push_back(
        "--overlap-p2p-communication-warmup-flush left aside: only the interleaved schedule (virtual stages) reads it");
    return;
  }
  if (!load_framework(c.framework).interleaved_p2p_overlap)
    fail_at("--overlap-p2p-communication-warmup-flush",
            "--overlap-p2p-communication-warmup-flush is not priced under stack '{}', whose interleaved pipeline sends "
            "block; give --framework {} (stacks that overlap them), or drop the flag",
            c.framework, stacks_that(&FrameworkSpec::interleaved_p2p_overlap, true));
}

// --overlap-param-gather-with-optimizer-step: Megatron-Core gives the first model chunk an optimizer
// of its own and starts that chunk's parameter all-gather as soon as it has stepped, hiding the
// gather the next forward would otherwise wait for first. The simulator prices the gather of
// --overlap-param-gather as hidden whole, that first bucket's too, so the flag is read with the
// prediction unchanged; Megatron-LM's asserts (arguments.py) are refused by name.
void check_param_gather_with_optimizer_step(const MegatronSwitches& switches, const ParallelConfig& c) {
  if (!switches.param_gather_with_optimizer_step) return;
  const char* flag = "--overlap-param-gather-with-optimizer-step";
  if (!c.distributed_optimizer)
    fail_at("--use-distributed-optimizer", "{} needs --use-distributed-optimizer, as Megatron-LM asserts", flag);
  if (!c.overlap_param_gather)
    fail_at("--overlap-param-gather", "{} needs --overlap-param-gather, as Megatron-LM asserts", flag);
  if (!c.interleaved())
    fail_at(flag, "{} needs the interleaved schedule (virtual stages, --num-layers-per-virtual-pipeline-stage), as "
                  "Megatron-LM asserts; drop the flag or interleave the pipeline", flag);
  // Megatron-LM: "not supported with distributed checkpointing yet" (any format but torch).
  if (switches.ckpt_format.value_or("torch_dist") != "torch")
    fail_at("--ckpt-format", "{} needs --ckpt-format torch (this run's is {}), as Megatron-LM asserts: it is not "
            "supported with distributed checkpointing", flag, switches.ckpt_format.value_or("torch_dist, the default"));
}

// --transformer-impl local, from a file or the command line, against the run both make together:
// each set of flags was checked alone (apply_transformer_impl), and a flag beside a file may bring
// what the local layers cannot run.
void check_local_layers(const MegatronSwitches& switches, const ParallelConfig& c) {
  if (!switches.local_layers) return;
  refuse_beside_local_layers(c.attention == AttentionKernel::Flash ? "a flash attention flag" : "",
                             c.precision == Precision::FP8, c.tp_comm_overlap, "");
}

// Megatron-LM's --deterministic-mode asserts that the loss is not fused and that TP
// communication does not overlap (determinism.py: ARG_VALUES_REQUIRED_FOR_DETERMINISM), so a
// launch line with either beside it never trains.
// Megatron-LM asserts native beside the fused loss ("Transformer Engine cross entropy loss fusion
// is disabled due to stability issues"), whichever of a file and a command line gave each.
void check_cross_entropy_fusion_impl(const MegatronSwitches& switches, const ParallelConfig& c) {
  if (c.cross_entropy_fusion && switches.cross_entropy_fusion_impl == "te")
    fail_at("--cross-entropy-fusion-impl",
            "--cross-entropy-fusion-impl te beside --cross-entropy-loss-fusion: Megatron-LM refuses it (Transformer "
            "Engine's fused loss is disabled for stability); use native, the default");
}

void check_deterministic_mode(const MegatronSwitches& switches, const ParallelConfig& c) {
  if (!switches.deterministic_mode) return;
  if (const char* flag = flag_refusing_deterministic_mode(c))
    fail_at(flag, "--deterministic-mode beside {}: Megatron-LM refuses it (a deterministic run needs {} off); drop "
            "one of them", flag, flag);
}

}  // namespace

ResolvedRun resolve_run(RunRequest request) {
  ResolvedRun out;
  try {
    out.measured = read_measured_costs(request.costs_file);
  } catch (const SpecError& e) {
    throw SpecError(e.what(), "--costs");  // whatever is wrong inside it, the database is the input to change
  }
  if (out.measured) {
    if (auto warning = hardware_mismatch(*out.measured, request.cluster)) out.warnings.push_back(std::move(*warning));
  }
  if (request.gpus) check_gpu_count(*request.gpus, "--gpus");

  const LayoutRequest& layout = request.layout;
  ParallelConfig c = layout.config;
  // The stack: a named one, else the measured database's; a layout file's stands otherwise.
  if (layout.framework || out.measured) apply_framework(c, resolved_stack(layout.framework, out.measured.get()));
  if (!layout.attention_named && !layout.from_file) {
    c.attention = default_attention(c.framework, request.model);
    if (c.attention != default_attention(c.framework))
      out.warnings.push_back(fmt::format(
          "attention: unfused, as Megatron-Bridge and NeMo run a model that caps its scores (attn_logit_softcapping "
          "{}); {}'s default flash attention cannot cap them",
          request.model.attention_softcap, c.framework));
  }
  // --no-masked-softmax-fusion swaps Megatron-LM's fused scale-mask-softmax for separate kernels,
  // which only the unfused attention path runs (DotProductAttention's FusedScaleMaskSoftmax):
  // under flash attention it changes nothing; the unfused path's softmax is priced fused.
  if (layout.switches.no_masked_softmax_fusion) {
    if (c.attention == AttentionKernel::Unfused)
      fail_at("--no-masked-softmax-fusion",
              "--no-masked-softmax-fusion with the unfused attention kernels is not modelled (their softmax is "
              "priced as Megatron-LM's fused scale-mask-softmax); drop it, or use flash attention "
              "(--attention-backend flash), under which it changes nothing");
    out.warnings.push_back(
        "--no-masked-softmax-fusion left aside: with flash attention there is no separate softmax for it to unfuse");
  }
  check_stated_kernels(layout, c.framework);
  if (layout.dp) {
    c.dp = *layout.dp;
  } else if (request.gpus) {
    const std::optional<int> dp = data_parallel_size(*request.gpus, c.tp, c.cp, c.pp);
    if (!dp)
      fail_at("--gpus", "--gpus {} is not divisible by {} = {}; DP would not be whole", *request.gpus,
              model_parallel_text(c.tp, c.cp, c.pp), std::int64_t{c.tp} * c.cp * c.pp);
    c.dp = *dp;
  } else if (!layout.from_file) {
    c.dp = 1;
  }
  if (c.dp < 1) fail_at("--data-parallel-size", "--data-parallel-size is {}; it must be >= 1", c.dp);
  // Megatron-LM's default global batch, at the run's DP (a file that states none takes it too).
  if (!layout.global_batch_named) c.global_batch = default_global_batch(c.micro_batch, c.dp);

  // Megatron-LM reads --grad-reduce-in-bf16 under --bf16 only (arguments.py): fp16 runs reduce in
  // fp16 and fp32 runs in fp32 whatever it says, so it is left aside there, and exports do not carry it.
  if (c.grad_reduce_in_bf16 && (c.precision == Precision::FP16 || c.precision == Precision::FP32)) {
    c.grad_reduce_in_bf16 = false;
    out.warnings.push_back(fmt::format("--grad-reduce-in-bf16 left aside: Megatron-LM reads it under --bf16 only, and "
                                       "this run is {}",
                                       to_string(c.precision)));
  }
  // Megatron-LM's arguments.py (and NeMo after it) turns sequence parallelism off at TP 1 —
  // "Disabling sequence parallelism because tensor model parallelism is disabled" — so a launch
  // line that asks for both trains without it; the warning says so, as Megatron's does. (Its
  // --tp-comm-overlap check comes after, so that flag is then refused, as Megatron refuses it.)
  if (c.sequence_parallel && c.tp == 1) {
    c.sequence_parallel = false;
    out.warnings.push_back(
        "--sequence-parallel is off at --tensor-model-parallel-size 1, as Megatron-LM turns it off (there is no "
        "TP group to split the sequence over)");
  }
  check_rank_order(layout.switches, c, request.cluster);  // with the ETP as given: Megatron-Core checks it
  check_warmup_flush_overlap(layout.switches, c, out.warnings);
  check_param_gather_with_optimizer_step(layout.switches, c);
  check_local_layers(layout.switches, c);
  check_deterministic_mode(layout.switches, c);
  check_cross_entropy_fusion_impl(layout.switches, c);
  apply_dense_expert_tp(c, request.model, out.warnings);
  request.model.validate("model '" + request.model.name + "'");
  try {
    request.cluster.validate("cluster '" + request.cluster.name + "'");
  } catch (const SpecError& e) {
    throw SpecError(e.what(), "--cluster");  // its keys are no flags: the cluster is the input to change
  }
  validate(c, request.model, request.cluster, request.gpus.value_or(0));

  out.model = std::move(request.model);
  out.cluster = std::move(request.cluster);
  out.config = std::move(c);
  out.reserve = request.reserve;
  out.costs_file = std::move(request.costs_file);
  return out;
}

std::unique_ptr<CostSource> ResolvedRun::cost_source() const {
  return make_cost_source(measured, costs_file, cluster, config.precision, config.framework);
}

std::shared_ptr<const CostDatabase> read_measured_costs(const std::string& costs_file) {
  if (costs_file.empty()) return nullptr;
  return std::make_shared<const CostDatabase>(read_cost_database(costs_file));
}

std::unique_ptr<CostSource> make_cost_source(const std::shared_ptr<const CostDatabase>& measured,
                                             const std::string& costs_file, const ClusterSpec& cluster,
                                             Precision precision, const std::string& framework) {
  if (!measured) return std::make_unique<AnalyticCosts>(cluster, precision, framework);
  return std::make_unique<MeasuredCosts>(*measured, costs_file, cluster, precision);
}

}  // namespace cc
