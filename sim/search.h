// search.h — finds the fastest layouts that fit: enumerates every combination of the
// allowed TP, PP, micro batch, virtual stages, SP, recomputation and optimizer sharding,
// refuses what does not divide or does not fit, ranks the rest with a fast analytic
// estimate, and runs the discrete-event simulator on every layout that could reach the
// top. Every ranked result is the simulator's answer. The ranking is identical for any
// thread count.
#pragma once

#include <atomic>
#include <functional>
#include <stdexcept>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/cluster_spec.h"
#include "sim/memory_model.h"
#include "sim/model_spec.h"
#include "sim/parallel_config.h"
#include "sim/simulator.h"
#include "sim/vocabulary_padding.h"

namespace cc {

// A recompute choice: granularity, and for full recomputation its method and layer count.
struct RecomputeChoice {
  RecomputeGranularity granularity = RecomputeGranularity::None;
  RecomputeMethod method = RecomputeMethod::Uniform;
  int num_layers = 1;
};

struct SearchSpace {
  // Empty = every value that can work. Values that do not divide are counted as excluded.
  // CP's default: 1 and each CP that leaves every rank at least kMinTokensPerCpRank tokens of
  // a sequence (shorter chunks only add exchange steps); a pinned list is searched as given.
  std::vector<int> tp, cp, pp, micro_batch, virtual_stages;
  std::vector<CpCommType> cp_comm_type = {CpCommType::P2P};  // tried for every CP > 1
  std::vector<bool> sequence_parallel = {false, true};
  std::vector<bool> distributed_optimizer = {false, true};
  std::vector<RecomputeGranularity> recompute = {RecomputeGranularity::None, RecomputeGranularity::Selective,
                                                 RecomputeGranularity::Full};
  std::vector<RecomputeMethod> recompute_method = {RecomputeMethod::Uniform, RecomputeMethod::Block};
  std::vector<int> recompute_num_layers;  // empty: every count that divides (uniform) or fits (block)
  // MoE models: EP (empty: every divisor of the routed experts) and ETP (empty: every divisor of
  // TP, Megatron-LM's default TP among them). Dense models search EP 1 and no ETP.
  std::vector<int> ep, etp;
  bool allow_cross_node_tp = false;
  // Applied to every layout (not searched), beside the stack's own defaults (apply_framework).
  bool overlap_grad_reduce = false;
  bool overlap_param_gather = false;  // to every layout with the distributed optimizer
  bool tp_comm_overlap = false;  // to every layout with sequence parallelism
  bool grad_reduce_in_bf16 = false;  // --grad-reduce-in-bf16 (ParallelConfig::main_grad_bytes)
  bool cross_entropy_fusion = false;  // --cross-entropy-loss-fusion
  bool rope_fusion = true;            // off: --no-rope-fusion
  // --fp8-param-gather to every layout with the distributed optimizer (FP8 runs only: the search
  // refuses it at another precision, validate_fp8_switches).
  bool fp8_param_gather = false;
  Fp8Recipe fp8_recipe = Fp8Recipe::Delayed;  // FP8 runs only, as fp8_param_gather
  // --num-distributed-optimizer-instances for every layout with the distributed optimizer (one
  // whose DP x CP it does not divide is excluded, as Megatron-Core asserts).
  int distributed_optimizer_instances = 1;
  MoeRunOptions moe;             // MoE models' run-time switches (dispatcher, grouped GEMM, overlaps)
  Precision precision = Precision::BF16;
  AttentionKernel attention = AttentionKernel::Unfused;
  std::string framework = kDefaultFramework;
};

inline constexpr int kMinTokensPerCpRank = 1024;

struct SearchRequest {
  ModelSpec model;
  // The model's vocabulary before its padding, when a tokenizer's words give it: each layout
  // trains it padded at its own TP (model.vocab_size is then ignored). Absent: model.vocab_size
  // for every layout.
  std::optional<MegatronVocabulary> vocabulary;
  ClusterSpec cluster;
  int gpus = 0;
  int global_batch = 0;
  SearchSpace space;
  MemoryReserve reserve;
  double train_tokens = 0;
  int top = 10;
  int threads = 0;                // 0: every hardware thread
  // Layouts this close to the best are tied; the CLI takes it from the cost source's
  // cross-validated error (ErrorBand::mean_abs).
  double tie_tolerance = 0.03;
  // Prices every op, for the estimate and the simulation; null: the analytic model of the
  // cluster. Must be safe to call from the worker threads (both sources are).
  const CostSource* costs = nullptr;
  // Set (from any thread) to stop: search() then throws SearchCancelled as soon as each
  // worker has finished the layout it holds. Null: the search cannot be cancelled.
  const std::atomic<bool>* cancel = nullptr;
  // How many of the layouts refused only because they do not fit to simulate anyway and
  // return in SearchOutcome::unfit, the fastest by the estimate first: a picture of what
  // more memory would buy (the GUI greys them out right of the usable-HBM line). Each costs
  // an estimate and one simulation, so the CLI asks for none and pays nothing. Only those
  // needing at most unfit_within x the usable memory are candidates: the near misses (a GPU
  // of twice the memory, by default), not layouts that would need 8x and crowd the picture.
  int unfit = 0;
  double unfit_within = 2.0;
};

// Thrown by search() when SearchRequest::cancel was set; not an input error.
struct SearchCancelled : std::runtime_error {
  SearchCancelled() : std::runtime_error("search cancelled") {}
};

struct RankedLayout {
  SimResult result;
  double estimate_s = 0;  // the analytic estimate that admitted it to simulation
  bool tied = false;      // within tie_tolerance of the best
};

struct SearchOutcome {
  std::vector<RankedLayout> ranked;  // best first, at most `top`
  std::size_t enumerated = 0;        // every combination considered
  std::size_t valid = 0;             // divides and is allowed
  std::size_t fitting = 0;
  std::size_t simulated = 0;         // fitting layouts run on the event engine
  std::map<std::string, std::size_t> excluded;  // reason -> count
  // At most SearchRequest::unfit of the excluded["does not fit in memory"] layouts (those
  // within unfit_within x usable memory), chosen by the estimate and simulated, fastest
  // first; never ranked, never tied.
  std::vector<RankedLayout> unfit;
  // When nothing fits: the valid layout needing the least memory, and that memory.
  ParallelConfig closest;
  double closest_peak_gib = 0;
};

// progress(done, total, phase): called from the calling thread only.
using SearchProgress = std::function<void(std::size_t, std::size_t, const char*)>;

// Throws SpecError when no layout is valid or none fits, naming why and what the closest
// layout lacks.
SearchOutcome search(const SearchRequest& request, const SearchProgress& progress = {});

// The tie tolerance a search over `gpus` GPUs priced by `costs` should use: layouts closer
// than the source's cross-validated error between layouts of one job cannot be told apart.
// 0 for a source nobody cross-validated (a fresh profile): it ties nothing.
double cross_validated_tie_tolerance(const CostSource& costs, int gpus);

// The analytic estimate of iteration time used to choose what to simulate (exposed for
// tests, which compare it with the simulator).
double estimate_iteration_time(const ModelSpec& model, const ClusterSpec& cluster, const ParallelConfig& config);

}  // namespace cc
