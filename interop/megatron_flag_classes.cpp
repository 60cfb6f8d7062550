// The Megatron-LM flags clustercast does not model, in two classes: those with no bearing on an
// iteration's time or memory, left aside (at any value, or at Megatron-LM's default only), and
// why each of the rest is refused. The flags it models are megatron_option_tables.cpp's tables.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <string_view>
#include <vector>

#include "interop/megatron_options.h"

namespace cc {

namespace {

// Megatron-LM flags with no bearing on iteration time or memory: optimiser hyperparameters and
// the learning-rate schedule, initialisation and seeds, numerics constants, data and tokenizer
// files, checkpoints, evaluation, logging and profiling, the run's length, and flags given at
// Megatron-LM's default (only_value). Kernel and fusion switches are not here: they change time,
// and clustercast does not model them one by one.
const IgnoredMegatronFlag kIgnored[] = {
    // Megatron-LM's default, written out by most launch scripts (the distributed config's
    // distributed_backend); any other value changes what runs.
    {"--distributed-backend", 1, true, "nccl", "gloo carries the collectives through the CPUs, which is not modelled"},
    // validate_results, the rerun engine's default, reruns an iteration only when a result is found
    // wrong; disabled evaluates the same checks (each validate_result still calls its rejection
    // function and raises on a bad result, rerun_state_machine.py) and reruns nothing, so both run
    // the same kernels and host synchronisations once the first iteration is done
    {"--rerun-mode", 1, true, "validate_results|disabled",
     "report_stats reruns every iteration to measure its variability, which is not modelled"},
    // learning rate and its schedule
    {"--lr", 1}, {"--min-lr", 1}, {"--lr-decay-style", 1}, {"--lr-decay-iters", 1}, {"--lr-decay-samples", 1},
    {"--lr-warmup-fraction", 1}, {"--lr-warmup-iters", 1}, {"--lr-warmup-samples", 1}, {"--lr-warmup-init", 1},
    {"--lr-wsd-decay-style", 1}, {"--lr-wsd-decay-iters", 1}, {"--lr-wsd-decay-samples", 1},
    {"--override-opt-param-scheduler", 0}, {"--use-checkpoint-opt-param-scheduler", 0},
    // Megatron-LM's parser also takes these two with an underscore (arguments.py), and its tests use them
    {"--override-opt_param-scheduler", 0}, {"--use-checkpoint-opt_param-scheduler", 0},
    // the embedding's and output layer's own learning rate
    {"--decoupled-lr", 1}, {"--decoupled-min-lr", 1},
    // optimiser hyperparameters
    {"--weight-decay", 1}, {"--start-weight-decay", 1}, {"--end-weight-decay", 1}, {"--weight-decay-incr-style", 1},
    {"--adam-beta1", 1}, {"--adam-beta2", 1}, {"--adam-eps", 1}, {"--sgd-momentum", 1}, {"--clip-grad", 1},
    // loss scaling (fp16)
    {"--loss-scale", 1}, {"--initial-loss-scale", 1}, {"--min-loss-scale", 1}, {"--loss-scale-window", 1},
    {"--hysteresis", 1},
    // initialisation, seeds and numerics constants
    {"--init-method-std", 1}, {"--init-method-xavier-uniform", 0}, {"--seed", 1}, {"--data-parallel-random-init", 0},
    {"--norm-epsilon", 1}, {"--apply-query-key-layer-scaling", 0}, {"--rotary-percent", 1},
    {"--rotary-interleaved", 0}, {"--rotary-seq-len-interpolation-factor", 1}, {"--rope-scaling-factor", 1},
    {"--rotary-scaling-factor", 1}, {"--mscale", 1}, {"--mscale-all-dim", 1},
    // LayerNorm's weight stored as an offset from 1 (zero-centred gamma): the same kernel and the same weights
    {"--apply-layernorm-1p", 0},
    // Under --transformer-impl local, apex's persistent LayerNorm kernel (FastLayerNormFN) or its
    // general one (FusedLayerNormAffineFunction): one fused kernel either way, keeping the same input
    // and statistics (fused_layer_norm.py, which also falls back to the general kernel at hidden
    // sizes outside the persistent kernel's list); Transformer Engine's norms never read it
    {"--no-persist-layer-norm", 0},
    // read only by Megatron-Core's own DotProductAttention (dot_product_attention.py, the layers of
    // --transformer-impl local), whose fused scale-mask-softmax kernel computes in fp32 either way;
    // the PyTorch softmax it would change runs under --no-masked-softmax-fusion, refused with the
    // unfused attention; Transformer Engine's attention never reads it
    {"--attention-softmax-in-fp32", 0},
    {"--use-mcore-models", 0},
    // the run's length and its batch ramp-up (iteration time is that of the full global batch)
    {"--train-iters", 1, false}, {"--train-samples", 1}, {"--exit-interval", 1}, {"--exit-duration-in-mins", 1},
    {"--exit-signal-handler", 0}, {"--rampup-batch-size", 3},
    // data and tokenizer
    {"--data-path", -1}, {"--split", 1}, {"--train-data-path", -1}, {"--valid-data-path", -1},
    {"--test-data-path", -1}, {"--data-cache-path", 1}, {"--data-args-path", 1}, {"--per-split-data-args-path", 1},
    {"--mock-data", 0}, {"--num-workers", 1}, {"--dataloader-type", 1}, {"--reset-position-ids", 0},
    {"--reset-attention-mask", 0}, {"--eod-mask-loss", 0}, {"--num-dataset-builder-threads", 1},
    {"--object-storage-cache-path", 1}, {"--vocab-file", 1}, {"--merge-file", 1}, {"--vocab-extra-ids", 1},
    {"--tokenizer-metadata", 1},
    {"--tokenizer-special-tokens", -1}, {"--tiktoken-pattern", 1}, {"--tiktoken-num-special-tokens", 1},
    {"--null-tokenizer-eod-id", 1}, {"--null-tokenizer-pad-id", 1}, {"--no-mmap-bin-files", 0},
    // the data loader builds no s x s mask: the simulated run (flash or fused attention by default) holds none either
    {"--no-create-attention-mask-in-dataloader", 0},
    // checkpoints
    {"--save", 1}, {"--save-interval", 1}, {"--load", 1}, {"--no-load-optim", 0}, {"--no-load-rng", 0},
    {"--no-save-optim", 0}, {"--no-save-rng", 0}, {"--finetune", 0}, {"--pretrained-checkpoint", 1},
    {"--ckpt-step", 1}, {"--use-checkpoint-args", 0}, {"--exit-on-missing-checkpoint", 0},
    {"--auto-detect-ckpt-format", 0}, {"--async-save", 0}, {"--use-dist-ckpt", 0}, {"--dist-ckpt-format", 1},
    {"--ckpt-fully-parallel-save", 0}, {"--ckpt-fully-parallel-load", 0}, {"--ckpt-assume-constant-structure", 0},
    {"--non-persistent-save-interval", 1}, {"--non-persistent-ckpt-type", 1}, {"--save-retain-interval", 1},
    {"--use-persistent-ckpt-worker", 0}, {"--async-strategy", 1}, {"--async-ckpt-use-cpu-shm", 0},
    {"--no-ckpt-fully-parallel-save", 0}, {"--dist-ckpt-strictness", 1}, {"--dist-ckpt-optim-fully-reshardable", 0},
    {"--no-use-tokenizer-model-from-checkpoint-args", 0},
    // evaluation, logging and profiling
    {"--eval-iters", 1}, {"--eval-interval", 1}, {"--skip-train", 0}, {"--log-interval", 1}, {"--log-params-norm", 0},
    {"--log-throughput", 0}, {"--log-progress", 0}, {"--timing-log-level", 1}, {"--timing-log-option", 1},
    {"--tensorboard-dir", 1}, {"--tensorboard-log-interval", 1}, {"--tensorboard-queue-size", 1},
    {"--log-timers-to-tensorboard", 0}, {"--log-validation-ppl-to-tensorboard", 0},
    {"--log-memory-to-tensorboard", 0}, {"--log-num-zeros-in-grad", 0}, {"--log-world-size-to-tensorboard", 0},
    {"--wandb-project", 1}, {"--wandb-exp-name", 1}, {"--wandb-save-dir", 1}, {"--wandb-entity", 1},
    {"--log-energy", 0}, {"--log-straggler", 0}, {"--distributed-timeout-minutes", 1}, {"--manual-gc", 0},
    {"--manual-gc-interval", 1}, {"--profile", 0}, {"--profile-step-start", 1}, {"--profile-step-end", 1},
    {"--profile-ranks", -1}, {"--eval-global-batch-size", 1}, {"--logging-level", 1},
    {"--straggler-minmax-count", 1},
    // a weight-hash comparison across DP replicas every N iterations, as evaluation runs every N
    {"--check-weight-hash-across-dp-replicas-interval", 1},
    // the router's numerics and bookkeeping: the router's scores are priced in fp32 whatever
    // --moe-router-dtype says; the order of softmax and top-k, the expert bias's update rate and the
    // z-loss's weight change which experts win, not the work; the permutation is priced as memory
    // passes over the routed copies, fused or not
    {"--moe-router-dtype", 1}, {"--moe-router-pre-softmax", 0}, {"--moe-router-bias-update-rate", 1},
    {"--moe-z-loss-coeff", 1}, {"--moe-per-layer-logging", 0}, {"--moe-permute-fusion", 0},
    // FP8 delayed scaling's bookkeeping: how many amax values a tensor keeps and which one scales it
    // (a few kilobytes per tensor); the GEMMs are FP8 either way
    {"--fp8-amax-history-len", 1}, {"--fp8-amax-compute-algo", 1},
    // Where the gradients are divided: by default each bucket is scaled by 1/DP before its
    // reduction (param_and_grad_buffer.py); --ddp-average-in-collective has NCCL average instead and
    // --calculate-per-token-loss sums and scales the reduced buffer by 1/tokens once per iteration
    // (finalize_model_grads.py), with two scalar collectives for the token count. At most one pass
    // over the gradient buffer either way, which clustercast does not price in any of the three.
    {"--ddp-average-in-collective", 0}, {"--calculate-per-token-loss", 0},
    // checkpoint-only: verifying a saved checkpoint, and the gloo groups that only checkpointing uses
    {"--verify-integrity", 0}, {"--disable-gloo-process-groups", 0},
    // fill-in-the-middle reorders a sample's tokens on the data loader's CPU; its length is unchanged
    {"--fim-data", 0}, {"--fim-rate", 1}, {"--fim-spm-rate", 1}, {"--fim-split-sample", 1},
    {"--fim-fragment-rate", 1}, {"--fim-no-prefix", 1}, {"--fim-prefix-token", 1}, {"--fim-middle-token", 1},
    {"--fim-suffix-token", 1}, {"--fim-pad-token", 1}, {"--fim-eod-token", 1},
    // muP at its default width multiplier of 1 changes the softmax's scale and the initialisation only
    // (transformer_config.py); the multipliers that would add work are flags of their own, refused
    {"--use-mup", 0},
};

}  // namespace

std::span<const IgnoredMegatronFlag> megatron_ignored_flags() { return kIgnored; }

const IgnoredMegatronFlag* find_ignored_megatron_flag(const std::string& flag) {
  for (const auto& f : kIgnored)
    if (flag == f.flag) return &f;
  return nullptr;
}

std::vector<std::string> ignored_flag_values(const IgnoredMegatronFlag& f) {
  std::vector<std::string> values;
  if (!f.only_value) return values;
  const std::string_view all = f.only_value;
  for (std::size_t start = 0;;) {
    const std::size_t bar = all.find('|', start);
    values.emplace_back(all.substr(start, bar == std::string_view::npos ? bar : bar - start));
    if (bar == std::string_view::npos) return values;
    start = bar + 1;
  }
}

std::string ignored_flag_value_refusal(const IgnoredMegatronFlag& f, const std::string& value) {
  const std::vector<std::string> allowed = ignored_flag_values(f);
  if (allowed.empty() || std::find(allowed.begin(), allowed.end(), value) != allowed.end()) return "";
  return fmt::format("{} {} ({}; only {} {} left aside)", f.flag, value.empty() ? "without a value" : value,
                     f.otherwise, fmt::join(allowed, " or "), allowed.size() == 1 ? "is" : "are");
}

// Why a flag that is neither modelled nor ignored is refused, for the families users meet.
std::string megatron_refusal_reason(const std::string& flag) {
  if (flag == "--moe-load-imbalance")
    return "clustercast's own flag, not Megatron-LM's: give it on the command line, beside --config";
  // Switches that Megatron-LM's functional tests set and that change time or memory.
  static const std::pair<const char*, const char*> kReasons[] = {
      {"--mup-base-hidden-size", "sets muP's width multiplier, which at a value other than 1 gives the hidden "
       "weights their own optimizer parameter groups (optimizer/__init__.py); not modelled"},
      {"--mup-width-mult", "muP's width multiplier, which at a value other than 1 gives the hidden weights their own "
       "optimizer parameter groups (optimizer/__init__.py); not modelled"},
      {"--test-mode", "runs Megatron-Core's real-time tests in every attention layer's forward (with "
       "--qk-layernorm an all-gather over data parallelism and host synchronisations), which is not modelled"},
      {"--empty-unused-memory-level", "empties PyTorch's cached memory during the iteration, which is not modelled"},
  };
  for (const auto& [name, reason] : kReasons)
    if (flag == name) return reason;
  // Mixture-of-experts switches that change what runs, each with what it changes.
  static const std::pair<const char*, const char*> kMoeReasons[] = {
      {"--moe-layer-recompute", "recomputes the MoE layers in backward, which is not modelled"},
      {"--moe-use-upcycling", "converts a dense checkpoint into an MoE model, not a training run"},
      {"--moe-upcycling-granularity", "belongs to --moe-use-upcycling, which is not modelled"},
      {"--moe-router-force-load-balancing",
       "forces even routing; give clustercast's --moe-load-imbalance 1 on the command line instead"},
      {"--moe-latent-size", "latent MoE projections are not modelled"},
  };
  for (const auto& [name, reason] : kMoeReasons)
    if (flag == name) return reason;
  if (flag.rfind("--moe-", 0) == 0) return "a mixture-of-experts switch that changes what runs and is not modelled";
  if (flag.rfind("--mtp-", 0) == 0) return "a multi-token prediction option that is not modelled";
  // Switching a fusion on or off changes the kernels that run (--moe-permute-fusion, ignored
  // above, says why it alone does not).
  if (flag.find("fusion") != std::string::npos) return "kernel fusion switches are not modelled";
  return "not a flag clustercast models or knows to leave time and memory unchanged";
}


}  // namespace cc
