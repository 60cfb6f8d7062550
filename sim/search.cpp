#include "sim/search.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <mutex>
#include <numeric>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/analytic_costs.h"
#include "sim/error.h"
#include "sim/iteration_costs.h"
#include "sim/layout_rules.h"
#include "sim/layout_validation.h"
#include "sim/step_plan.h"
#include "sim/units.h"

namespace cc {

namespace {

// The run switches the space applies to every layout (not searched), given the layout's SP and
// distributed optimizer.
void apply_space_switches(ParallelConfig& c, const SearchSpace& s) {
  c.tp_comm_overlap = s.tp_comm_overlap && c.sequence_parallel;
  c.fp8_param_gather = s.fp8_param_gather && c.distributed_optimizer;
  c.fp8_recipe = s.fp8_recipe;
  // Megatron-LM reads it under --bf16 only (resolve_run leaves it aside elsewhere).
  c.grad_reduce_in_bf16 = s.grad_reduce_in_bf16 && (s.precision == Precision::BF16 || s.precision == Precision::FP8);
  c.cross_entropy_fusion = s.cross_entropy_fusion;
  c.rope_fusion = s.rope_fusion;
  c.precision = s.precision;
  c.attention = s.attention;
}

// The estimate admits a layout to simulation when it is within this fraction of the
// top-N-th estimate. tests/unit/test_search.cpp measures the estimate against the
// simulator: it is never more than 6% off, and errs high mostly on bubble-bound layouts,
// so a 12% margin admits every layout that could rank.
constexpr double kAdmitMargin = 0.12;

double estimate_from(const IterationCosts& ic, const ParallelConfig& c) {
  const int p = c.pp, v = c.virtual_stages, m = c.num_microbatches();
  // Steady state: the busiest stage's passes and its sends where they block the sender.
  double busiest = 0, per_chunk = 0;
  const double sends = (p > 1 && pipeline_sends_block(c) ? 2.0 * v : 0.0) * ic.p2p_s;
  for (int s = 0; s < p; ++s) {
    double work = 0;
    for (const auto& chunk : ic.chunks[static_cast<std::size_t>(s)]) work += chunk.forward.total() + chunk.backward.total();
    busiest = std::max(busiest, m * (work + sends));
    per_chunk = std::max(per_chunk, (work + sends) / v);
  }
  // Fill and drain: p-1 chunk slots (Narayanan 2021's bubble, (p-1)/v of a stage's time).
  const double bubble = (p - 1) * per_chunk;
  // The first stage finishes last: its gradient reduction is exposed, except what the
  // bucketed overlap hides behind its last backward pass.
  double dp = c.dp > 1 ? ic.grad_reduce_s[0] : 0.0;
  if (c.overlap_grad_reduce && c.dp > 1) {
    const double last_backward = ic.chunks[0][0].backward.total();
    dp = std::max(ic.bucket_reduce_s[0], dp - last_backward);
  }
  const double optimizer = *std::max_element(ic.optimizer_s.begin(), ic.optimizer_s.end());
  const double gather = c.distributed_optimizer && !c.overlap_param_gather && c.dp > 1
                            ? *std::max_element(ic.param_gather_s.begin(), ic.param_gather_s.end())
                            : 0.0;
  return busiest + bubble + dp + ic.embedding_sync_s + ic.grad_norm_sync_s + optimizer + gather;
}

std::vector<int> divisors(int n) {
  std::vector<int> d;
  for (int i = 1; i <= n; ++i)
    if (n % i == 0) d.push_back(i);
  return d;
}

// Runs f(i) for i in [0, n) on `threads` threads; results land by index, so the outcome
// does not depend on scheduling. Progress is reported from the calling thread.
template <typename F>
void parallel_for(std::size_t n, int threads, const SearchProgress& progress, const char* phase,
                  const std::atomic<bool>* cancel, F f) {
  std::atomic<std::size_t> next{0}, done{0};
  // An exception escaping a std::thread calls std::terminate, so each item's is caught and
  // the first one is rethrown here, on the calling thread, once every worker has joined
  // (the caller then sees the SpecError it would have seen single-threaded).
  std::mutex failure_mutex;
  std::exception_ptr failure;
  std::atomic<bool> failed{false};
  // A cancelled or failed search stops handing out items: each worker finishes the one it holds.
  auto stopped = [&] { return failed.load(std::memory_order_relaxed) || (cancel && cancel->load(std::memory_order_relaxed)); };
  auto run_one = [&](std::size_t i) {
    try {
      f(i);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      failed.store(true);
    }
    done.fetch_add(1);
  };
  auto work = [&] {
    for (std::size_t i; !stopped() && (i = next.fetch_add(1)) < n;) run_one(i);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  if (!progress) {
    work();
  } else {
    // The calling thread works too, reporting after its first item and every 256th after that
    // (counted by its own items: which indices it draws depends on scheduling).
    std::size_t mine = 0;
    for (std::size_t i; !stopped() && (i = next.fetch_add(1)) < n;) {
      run_one(i);
      if ((mine++ & 255) == 0) progress(done.load(), n, phase);
    }
  }
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  if (stopped()) throw SearchCancelled();
  if (progress) progress(n, n, phase);
}

// What a layer's price depends on: the per-rank shape and the CP exchange.
// What a layer's price depends on: the per-rank shape, the CP exchange and, for MoE layers,
// the expert groups (EP, ETP: the innermost dimensions of the expert grid, so their placement
// does not depend on DP).
struct ShapeKey {
  int tp, cp, micro_batch;
  bool sp;
  CpCommType cp_comm_type;
  int ep, etp;
  explicit ShapeKey(const ParallelConfig& c)
      : tp(c.tp), cp(c.cp), micro_batch(c.micro_batch), sp(c.sequence_parallel), cp_comm_type(c.cp_comm_type),
        ep(c.ep), etp(c.etp) {}
  bool operator<(const ShapeKey& o) const {
    return std::tie(tp, cp, micro_batch, sp, cp_comm_type, ep, etp) <
           std::tie(o.tp, o.cp, o.micro_batch, o.sp, o.cp_comm_type, o.ep, o.etp);
  }
};

// The exclusion a layout the layout rules refuse is counted under, by the flag the refusal
// names (SpecError::field): validate_layout() is the one statement of the rules.
const char* exclusion_for(const std::string& field) {
  static const std::pair<const char*, const char*> kReasons[] = {
      {"--context-parallel-size", "sequence not divisible by 2 x CP (x TP with SP)"},
      {"--cp-comm-type", "all-to-all CP does not divide a TP rank's heads"},
      {"--attention-backend", "context parallelism needs flash attention"},
      {"--global-batch-size", "microbatch count the schedule refuses"},
      {"--num-layers-per-virtual-pipeline-stage", "layers do not split over PP x virtual stages"},
      {"--num-virtual-stages-per-pipeline-rank", "layers do not split over PP x virtual stages"},
      {"--decoder-first-pipeline-num-layers", "layers do not split over PP x virtual stages"},
      {"--decoder-last-pipeline-num-layers", "layers do not split over PP x virtual stages"},
      {"--pipeline-model-parallel-size", "layers do not split over PP x virtual stages"},
      {"--sequence-parallel", "sequence not divisible by TP (sequence parallelism)"},
      {"--recompute-num-layers", "recompute layer count does not fit the chunk"},
      {"--expert-model-parallel-size", "EP x ETP does not divide the ranks of a stage (TP x CP x DP)"},
      {"--expert-tensor-parallel-size", "ETP does not divide the expert FFN (or biased experts need ETP 1)"},
      {"--overlap-moe-expert-parallel-comm", "EP communication overlap does not apply (Megatron-Core's rules)"},
      {"--moe-shared-expert-overlap", "shared-expert overlap does not apply (Megatron-Core's rules)"},
      {"--moe-token-dispatcher-type", "the flex dispatcher is priced at ETP 1 (and DeepEP needs EP > 1)"},
      {"--multi-latent-attention", "multi-latent attention is priced without CP"},
      {"--num-distributed-optimizer-instances", "DP x CP not divisible by the distributed optimizer's instances"},
  };
  for (const auto& [flag, reason] : kReasons)
    if (field == flag) return reason;
  return "refused by the layout rules";
}

class Enumerator {
 public:
  explicit Enumerator(const SearchRequest& r) : r_(r), m_(r.model), space_(r.space) {}

  std::vector<ParallelConfig> run(SearchOutcome& out) {
    std::vector<ParallelConfig> valid;
    const int g = r_.gpus;
    const auto tps = space_.tp.empty() ? divisors(g) : space_.tp;
    const auto pps = space_.pp.empty() ? divisors(g) : space_.pp;
    std::vector<int> cps = space_.cp;
    if (cps.empty())
      for (int cp : divisors(g))
        if (cp == 1 || m_.seq_length / cp >= kMinTokensPerCpRank) cps.push_back(cp);
    for (int tp : tps)
      for (int cp : cps)
        for (int pp : pps)
          for (CpCommType type : cp > 1 ? space_.cp_comm_type : std::vector<CpCommType>{CpCommType::P2P})
            add_pipeline_choices(tp, cp, type, pp, out, valid);
    return valid;
  }

 private:
  // Every layout of (TP, CP, PP) over the other dimensions; the layout rules
  // (validate_layout) decide which are valid.
  void add_pipeline_choices(int tp, int cp, CpCommType cp_comm_type, int pp, SearchOutcome& out,
                            std::vector<ParallelConfig>& valid) {
    // Products of pinned or divisor values are taken in 64 bits (data_parallel_size too): TP x
    // PP of 65,536 x 65,536 wraps an int to 0 (a SIGFPE in a modulo), and micro batch x DP can
    // wrap likewise.
    const std::optional<int> dp_or_none = data_parallel_size(r_.gpus, tp, cp, pp);
    if (!dp_or_none) return reject(out, "GPUs not divisible by TP x CP x PP");
    if (m_.num_attention_heads % tp || m_.num_query_groups % tp || m_.ffn_hidden_size % tp)
      return reject(out, "TP does not divide heads, query groups or FFN size");
    // TP talks at every layer, so it stays where NVLink reaches: the node, or on rack-scale
    // systems the whole NVLink domain.
    if (tp > r_.cluster.nvlink_domain_size() && !space_.allow_cross_node_tp)
      return reject(out, "TP spans NVLink domains (allow with --allow-cross-node-tp)");
    const int dp = *dp_or_none;
    // How the layers spread over the stages: evenly where PP divides them; otherwise both of
    // Megatron-Core's ways, lighter first and last stages (Llama 3 405B ran 126 layers on 16
    // stages as 7 + 14x8 + 7) and the embedding and loss counted as a layer each (128 = 16 x 8).
    struct Split {
      int first = 0, last = 0;
      bool counted = false;
      int stage_layers = 0;  // layers of a (middle) stage, whose divisors are the chunk counts
    };
    std::vector<Split> splits;
    if (pp == 1 || m_.num_layers % pp == 0) {
      splits.push_back({0, 0, false, m_.num_layers / pp});
    } else {
      const int middle = (m_.num_layers + pp - 1) / pp;
      const int ends = m_.num_layers - (pp - 2) * middle;
      // The two end stages share what the middle ones leave, evenly where they can; otherwise
      // one takes a layer more, at either end, since the first stage's embedding or the last
      // stage's output layer may weigh more (DeepSeek-V3's 61 layers on PP 16: 2 + 14x4 + 3, or
      // 3 + 14x4 + 2).
      if (pp >= 3 && ends >= 2) {
        splits.push_back({ends / 2, ends - ends / 2, false, middle});
        if (ends % 2 != 0) splits.push_back({ends - ends / 2, ends / 2, false, middle});
      }
      if ((m_.num_layers + 2) % pp == 0) splits.push_back({0, 0, true, (m_.num_layers + 2) / pp});
      if (splits.empty()) splits.push_back({0, 0, false, 1});  // refused by the layout rules, and counted
    }
    std::vector<int> mbs = space_.micro_batch;
    if (mbs.empty()) mbs = {1, 2, 3, 4, 5, 6, 7, 8};
    for (const Split& split : splits)
      add_split_choices(tp, cp, cp_comm_type, pp, dp, split.first, split.last, split.counted,
                        space_.virtual_stages.empty() && pp > 1 ? divisors(split.stage_layers) : space_.virtual_stages,
                        mbs, out, valid);
  }

  void add_split_choices(int tp, int cp, CpCommType cp_comm_type, int pp, int dp, int first, int last, bool counted,
                         const std::vector<int>& vs_or_empty, const std::vector<int>& mbs, SearchOutcome& out,
                         std::vector<ParallelConfig>& valid) {
    const std::vector<int> vs = vs_or_empty.empty() ? std::vector<int>{1} : vs_or_empty;
    for (int v : vs) {
      if (v > 1 && pp == 1) {
        reject(out, "interleaving needs PP > 1");
        continue;
      }
      for (int mb : mbs) {
        if (mb < 1 || r_.global_batch % (std::int64_t{mb} * dp) != 0) {
          reject(out, "global batch not divisible by micro batch x DP");
          continue;
        }
        for (bool sp : space_.sequence_parallel) {
          if (sp && (tp == 1 || m_.seq_length % tp != 0)) continue;  // not a distinct layout
          if (m_.moe.enabled() && tp > 1 && !sp) {
            reject(out, "MoE under TP needs sequence parallelism (Megatron-Core)");
            continue;
          }
          for (bool distopt : space_.distributed_optimizer) {
            if (distopt && dp * cp == 1) continue;  // identical to the plain optimizer
            for (const auto& [ep, etp] : expert_choices(tp)) {
              ParallelConfig c;
              c.ep = ep;
              c.etp = etp;
              c.moe = space_.moe;
              c.tp = tp;
              c.cp = cp;
              c.cp_comm_type = cp_comm_type;
              c.pp = pp;
              c.dp = dp;
              c.virtual_stages = v;
              c.first_stage_layers = first;
              c.last_stage_layers = last;
              c.account_for_embedding = c.account_for_loss = counted;
              c.micro_batch = mb;
              c.global_batch = r_.global_batch;
              c.sequence_parallel = sp;
              c.distributed_optimizer = distopt;
              c.overlap_grad_reduce = space_.overlap_grad_reduce;
              c.overlap_param_gather = space_.overlap_param_gather && distopt;  // it overlaps the optimizer's gather
              c.distributed_optimizer_instances = distopt ? space_.distributed_optimizer_instances : 1;
              apply_space_switches(c, space_);
              apply_framework(c, space_.framework);  // the stack's own defaults, as simulate applies them
              try {
                validate_layout(c, m_, r_.gpus);  // the rules every other path applies
              } catch (const SpecError& e) {
                reject(out, exclusion_for(e.field()));
                continue;
              }
              add_recompute_choices(c, out, valid);
            }
          }
        }
      }
    }
  }

  // (EP, ETP) pairs to try: EP 1 and no ETP for a dense model; else the space's lists, or every
  // divisor of the routed experts and of TP (ETP 0 stands for "not given", which is TP).
  std::vector<std::pair<int, int>> expert_choices(int tp) const {
    if (!m_.moe.enabled()) return {{1, 0}};
    const std::vector<int> eps = space_.ep.empty() ? divisors(m_.moe.num_experts) : space_.ep;
    const std::vector<int> etps = space_.etp.empty() ? divisors(tp) : space_.etp;
    std::vector<std::pair<int, int>> out;
    for (int ep : eps)
      for (int etp : etps) out.emplace_back(ep, space_.etp.empty() && etp == tp ? 0 : etp);
    return out;
  }

  void reject(SearchOutcome& out, const char* reason) {
    ++out.excluded[reason];
    ++out.enumerated;
  }

  void add_recompute_choices(ParallelConfig c, SearchOutcome& out, std::vector<ParallelConfig>& valid) {
    // Recompute layer counts must suit every stage's chunk; the smallest chunk bounds them.
    int chunk_layers = m_.num_layers;
    for (int s = 0; s < c.pp; ++s) chunk_layers = std::min(chunk_layers, cc::chunk_layers(m_, c, s, 0).count);
    int common = 0;  // uniform groups must divide every stage's chunk
    for (int s = 0; s < c.pp; ++s) common = std::gcd(common, cc::chunk_layers(m_, c, s, 0).count);
    auto accept = [&](const ParallelConfig& x) {
      ++out.enumerated;
      ++out.valid;
      valid.push_back(x);
    };
    for (RecomputeGranularity g : space_.recompute) {
      c.recompute = g;
      c.recompute_method = RecomputeMethod::Uniform;
      c.recompute_num_layers = 1;
      if (g != RecomputeGranularity::Full) {
        if (g == RecomputeGranularity::Selective && c.attention == AttentionKernel::Flash) continue;  // same as none
        accept(c);
        continue;
      }
      for (RecomputeMethod method : space_.recompute_method) {
        c.recompute_method = method;
        std::vector<int> counts = space_.recompute_num_layers;
        if (counts.empty()) {
          if (method == RecomputeMethod::Uniform) counts = divisors(common);
          else for (int n = 1; n <= chunk_layers; ++n) counts.push_back(n);
        }
        for (int n : counts) {
          const bool ok = n >= 1 && (method == RecomputeMethod::Uniform ? common % n == 0 : n <= chunk_layers);
          if (!ok) {
            reject(out, "recompute layer count does not fit the chunk");
            continue;
          }
          // Block with every layer recomputed is uniform with one layer per group.
          if (method == RecomputeMethod::Block && n == chunk_layers &&
              std::find(space_.recompute_method.begin(), space_.recompute_method.end(), RecomputeMethod::Uniform) !=
                  space_.recompute_method.end())
            continue;
          c.recompute_num_layers = n;
          accept(c);
        }
      }
    }
  }

  const SearchRequest& r_;
  const ModelSpec& m_;
  const SearchSpace& space_;
};

}  // namespace

double estimate_iteration_time(const ModelSpec& model, const ClusterSpec& cluster, const ParallelConfig& config) {
  const AnalyticCosts costs(cluster, config.precision, config.framework);
  return estimate_from(price_iteration(model, cluster, config, costs), config);
}

double cross_validated_tie_tolerance(const CostSource& costs, int gpus) {
  const std::optional<ErrorBand> band = costs.error_band(gpus);
  return band ? band->within_job_mean_abs : 0.0;
}

namespace {

// What the space asks of the experts that no layout could change, refused once by name instead
// of excluding every layout: the run-time switches' own rules, an EP list value that does not
// divide the routed experts, EP or ETP lists on a dense model.
void check_expert_space(const SearchSpace& space, const ModelSpec& m) {
  validate_moe_switches(space.moe, m);
  const bool moe = m.moe.enabled();
  for (int ep : space.ep) {
    if (ep < 1) fail_at("--expert-model-parallel-size", "--expert-model-parallel-size {} in the list; it must be >= 1", ep);
    if (!moe && ep != 1)
      fail_at("--expert-model-parallel-size",
              "--expert-model-parallel-size {}: model '{}' has no experts (dense); valid: 1", ep, m.name);
    if (moe && m.moe.num_experts % ep != 0)
      fail_at("--expert-model-parallel-size",
              "--expert-model-parallel-size {} does not divide the {} routed experts of model '{}'; valid: {}", ep,
              m.moe.num_experts, m.name, fmt::join(divisors(m.moe.num_experts), ", "));
  }
  for (int etp : space.etp) {
    if (etp < 1)
      fail_at("--expert-tensor-parallel-size", "--expert-tensor-parallel-size {} in the list; it must be >= 1", etp);
    if (!moe)
      fail_at("--expert-tensor-parallel-size",
              "--expert-tensor-parallel-size {}: model '{}' has no experts (dense); leave it out", etp, m.name);
  }
}

}  // namespace

SearchOutcome search(const SearchRequest& r, const SearchProgress& progress) {
  if (r.gpus < 1) fail("--gpus is {}; the search needs a GPU count >= 1", r.gpus);
  if (r.global_batch < 1) fail("--global-batch-size is {}; the search needs a global batch >= 1", r.global_batch);
  check_expert_space(r.space, r.model);
  // Likewise the FP8 switches: at another precision they would exclude every layout.
  validate_fp8_switches(r.space.precision, r.space.fp8_param_gather, r.space.fp8_recipe, "search");
  refuse_unpriced_attention(r.space.attention, r.model);  // the kernel is one for the whole space
  const int threads = r.threads > 0 ? r.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  SearchOutcome out;
  const std::vector<ParallelConfig> valid = Enumerator(r).run(out);
  if (valid.empty()) {
    std::string reasons;
    for (const auto& [why, n] : out.excluded) reasons += fmt::format("{}{} x {}", reasons.empty() ? "" : "; ", n, why);
    std::string pinned;
    auto pin = [&](const char* name, const std::vector<int>& values) {
      if (!values.empty()) pinned += fmt::format(", {} in {{{}}}", name, fmt::join(values, ","));
    };
    pin("TP", r.space.tp);
    pin("CP", r.space.cp);
    pin("PP", r.space.pp);
    pin("micro batch", r.space.micro_batch);
    pin("virtual stages", r.space.virtual_stages);
    fail("no valid layout for {} on {} GPUs with global batch {}{}: {}", r.model.name, r.gpus, r.global_batch, pinned,
         reasons.empty() ? "the search space is empty" : reasons);
  }

  // Each TP's model: the request's words padded at that TP, when it gives them.
  std::map<int, ModelSpec> models;
  for (const auto& c : valid) {
    if (models.count(c.tp)) continue;
    ModelSpec m = r.model;
    if (r.vocabulary) m.vocab_size = static_cast<int>(r.vocabulary->padded(c.tp));
    models.emplace(c.tp, std::move(m));
  }
  auto model_at = [&models](int tp) -> const ModelSpec& { return models.at(tp); };

  // Per-rank layer costs depend only on the ShapeKey: price each shape once.
  const AnalyticCosts analytic(r.cluster, r.space.precision, r.space.framework);
  const CostSource& costs = r.costs ? *r.costs : analytic;
  std::map<ShapeKey, LayerCosts> shapes;
  for (const auto& c : valid) shapes.try_emplace(ShapeKey(c));
  std::vector<std::map<ShapeKey, LayerCosts>::iterator> shape_slots;
  for (auto it = shapes.begin(); it != shapes.end(); ++it) shape_slots.push_back(it);
  parallel_for(shape_slots.size(), threads, {}, "pricing", r.cancel, [&](std::size_t i) {
    ParallelConfig c;
    const ShapeKey& key = shape_slots[i]->first;
    c.tp = key.tp;
    c.cp = key.cp;
    c.cp_comm_type = key.cp_comm_type;
    c.micro_batch = key.micro_batch;
    c.sequence_parallel = key.sp;
    apply_space_switches(c, r.space);
    c.framework = r.space.framework;
    c.ep = key.ep;
    c.etp = key.etp;
    c.dp = c.ep * c.expert_tp();  // any DP the expert grid folds into; the groups priced do not depend on it
    c.moe = r.space.moe;
    shape_slots[i]->second = price_layers(model_at(c.tp), r.cluster, c, costs);
  });

  // 1. Memory and the analytic estimate for every valid layout.
  const double usable = r.reserve.usable_gib(r.cluster.gpu.hbm_gib);
  std::vector<double> peak(valid.size()), estimate(valid.size(), std::numeric_limits<double>::infinity());
  parallel_for(valid.size(), threads, progress, "estimating", r.cancel, [&](std::size_t i) {
    const ParallelConfig& c = valid[i];
    peak[i] = memory_model(model_at(c.tp), c, r.reserve, &r.cluster.gpu).peak().total() / kGiB;
    if (peak[i] > usable && (r.unfit <= 0 || peak[i] > usable * r.unfit_within)) return;  // estimated only when shown
    const LayerCosts& layers = shapes.at(ShapeKey(c));
    estimate[i] = estimate_from(price_iteration(model_at(c.tp), r.cluster, c, costs, layers), c);
  });
  std::vector<std::size_t> fitting, unfit;
  std::size_t closest = 0;
  for (std::size_t i = 0; i < valid.size(); ++i) {
    if (peak[i] <= usable) fitting.push_back(i);
    else if (peak[i] <= usable * r.unfit_within) unfit.push_back(i);
    if (peak[i] < peak[closest]) closest = i;
  }
  out.fitting = fitting.size();
  out.excluded["does not fit in memory"] += valid.size() - fitting.size();
  out.closest = valid[closest];
  out.closest_peak_gib = peak[closest];
  if (fitting.empty())
    fail("no layout of {} fits on {} x {} ({:.1f} of {} GiB usable): of {} valid layouts the closest ({}) needs "
         "{:.1f} GiB per GPU, {:.1f} GiB more; use more GPUs, a smaller micro batch, or allow more recomputation",
         r.model.name, r.gpus, r.cluster.gpu.name, usable, r.cluster.gpu.hbm_gib, valid.size(), valid[closest].summary(),
         peak[closest], peak[closest] - usable);

  // 2. Simulate every layout whose estimate could place it in the top list.
  std::stable_sort(fitting.begin(), fitting.end(), [&](std::size_t a, std::size_t b) { return estimate[a] < estimate[b]; });
  const std::size_t keep = std::min<std::size_t>(fitting.size(), static_cast<std::size_t>(std::max(1, r.top)));
  const double threshold = estimate[fitting[keep - 1]] * (1 + kAdmitMargin);
  std::vector<std::size_t> admitted;
  for (std::size_t i : fitting)
    if (estimate[i] <= threshold || admitted.size() < keep) admitted.push_back(i);
  out.simulated = admitted.size();
  // The unfit layouts asked for: the fastest by the estimate, simulated in the same pass.
  std::stable_sort(unfit.begin(), unfit.end(), [&](std::size_t a, std::size_t b) { return estimate[a] < estimate[b]; });
  unfit.resize(std::min(unfit.size(), static_cast<std::size_t>(std::max(0, r.unfit))));
  std::vector<std::size_t> to_simulate = admitted;
  to_simulate.insert(to_simulate.end(), unfit.begin(), unfit.end());
  std::vector<SimResult> results(to_simulate.size());
  SimOptions options;
  options.train_tokens = r.train_tokens;
  options.reserve = r.reserve;
  parallel_for(to_simulate.size(), threads, progress, "simulating", r.cancel, [&](std::size_t k) {
    const ParallelConfig& c = valid[to_simulate[k]];
    results[k] = simulate(model_at(c.tp), r.cluster, c, costs, options);
  });
  for (std::size_t k = admitted.size(); k < to_simulate.size(); ++k)
    out.unfit.push_back({std::move(results[k]), estimate[to_simulate[k]], false});
  std::stable_sort(out.unfit.begin(), out.unfit.end(), [](const RankedLayout& a, const RankedLayout& b) {
    return a.result.iteration_time_s < b.result.iteration_time_s;
  });
  results.resize(admitted.size());

  // 3. Rank: fastest first; equal times by memory headroom; then by enumeration order.
  std::vector<std::size_t> order(admitted.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (results[a].iteration_time_s != results[b].iteration_time_s)
      return results[a].iteration_time_s < results[b].iteration_time_s;
    if (results[a].peak_memory_gib != results[b].peak_memory_gib)
      return results[a].peak_memory_gib < results[b].peak_memory_gib;
    return admitted[a] < admitted[b];
  });
  const double best = results[order[0]].iteration_time_s;
  for (std::size_t k = 0; k < order.size() && static_cast<int>(k) < r.top; ++k) {
    RankedLayout ranked;
    ranked.result = std::move(results[order[k]]);
    ranked.estimate_s = estimate[admitted[order[k]]];
    ranked.tied = ranked.result.iteration_time_s <= best * (1 + r.tie_tolerance);
    out.ranked.push_back(std::move(ranked));
  }
  return out;
}

}  // namespace cc
