#include "cli/search_command.h"

#include <chrono>
#include <iostream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "cli/common_options.h"
#include "interop/layout_files.h"
#include "interop/megatron_tokenizer.h"
#include "interop/resolver.h"
#include "interop/search_csv.h"
#include "cli/progress.h"
#include "cli/report.h"
#include "cli/value_lists.h"
#include "sim/atomic_file.h"
#include "sim/error.h"
#include "sim/result_json.h"
#include "sim/search.h"

namespace cc::cli {

namespace {

struct SearchFlags {
  ModelFlags model;
  ClusterFlags cluster;
  std::optional<int> global_batch;
  std::string train_tokens;
  int top = 10;
  int threads = 0;
  std::optional<double> tie_tolerance;  // default: the cost source's cross-validated error
  bool json = false;
  std::string export_json, export_megatron, export_nemo, csv;
  std::string tp, cp, cp_comm_type, pp, micro_batch = "1..8", virtual_stages;
  std::string recompute, recompute_method, recompute_num_layers;
  std::string ep, etp;  // MoE models: expert parallel and expert tensor parallel sizes to try
  // The MoE run-time switches, one value for every layout (Megatron-LM's defaults when not given).
  std::optional<std::string> moe_dispatcher, moe_flex_backend, moe_load_balancing;
  std::optional<double> moe_capacity_factor, moe_load_imbalance;
  bool moe_grouped_gemm = false, moe_pad_to_capacity = false, moe_shared_expert_overlap = false,
       overlap_moe_ep_comm = false;
  bool sp_on = false, sp_off = false, distopt_on = false, distopt_off = false;
  int distopt_instances = 1;
  bool allow_cross_node_tp = false, overlap_grad_reduce = false, overlap_param_gather = false, tp_comm_overlap = false,
       grad_reduce_in_bf16 = false, cross_entropy_fusion = false, no_rope_fusion = false, flash = false,
       fp8_param_gather = false;
  std::string precision = "bf16";
  std::optional<std::string> fp8_recipe;
  std::optional<std::string> framework;  // default: the cost database's stack, else Megatron-Core
  std::string costs;
};

SearchSpace space_from(const SearchFlags& f, const CostDatabase* measured, const ModelSpec& model) {
  SearchSpace s;
  if (!f.tp.empty()) s.tp = parse_int_list(f.tp, "--tensor-model-parallel-size");
  if (!f.cp.empty()) s.cp = parse_int_list(f.cp, "--context-parallel-size");
  if (!f.cp_comm_type.empty()) {
    s.cp_comm_type.clear();
    for (const auto& w : parse_word_list(f.cp_comm_type, "--cp-comm-type", {"p2p", "a2a", "allgather"}))
      s.cp_comm_type.push_back(cp_comm_type_from(w, "--cp-comm-type"));
  }
  if (!f.pp.empty()) s.pp = parse_int_list(f.pp, "--pipeline-model-parallel-size");
  s.micro_batch = parse_int_list(f.micro_batch, "--micro-batch-size");
  if (!f.virtual_stages.empty()) s.virtual_stages = parse_int_list(f.virtual_stages, "--virtual-stages");
  if (f.sp_on && f.sp_off) fail("--sequence-parallel and --no-sequence-parallel contradict each other");
  if (f.sp_on) s.sequence_parallel = {true};
  if (f.sp_off) s.sequence_parallel = {false};
  if (f.distopt_on && f.distopt_off)
    fail("--use-distributed-optimizer and --no-distributed-optimizer contradict each other");
  if (f.distopt_on) s.distributed_optimizer = {true};
  if (f.distopt_off) s.distributed_optimizer = {false};
  if (!f.recompute.empty()) {
    s.recompute.clear();
    for (const auto& w : parse_word_list(f.recompute, "--recompute-granularity", {"none", "selective", "full"}))
      s.recompute.push_back(recompute_granularity_from(w, "--recompute-granularity"));
  }
  if (!f.recompute_method.empty()) {
    s.recompute_method.clear();
    for (const auto& w : parse_word_list(f.recompute_method, "--recompute-method", {"uniform", "block"}))
      s.recompute_method.push_back(recompute_method_from(w, "--recompute-method"));
  }
  if (!f.recompute_num_layers.empty())
    s.recompute_num_layers = parse_int_list(f.recompute_num_layers, "--recompute-num-layers");
  if (!f.ep.empty()) s.ep = parse_int_list(f.ep, "--expert-model-parallel-size");
  if (!f.etp.empty()) s.etp = parse_int_list(f.etp, "--expert-tensor-parallel-size");
  if (f.moe_dispatcher) s.moe.dispatcher = token_dispatcher_from(*f.moe_dispatcher, "--moe-token-dispatcher-type");
  if (f.moe_flex_backend) s.moe.flex_backend = flex_backend_from(*f.moe_flex_backend, "--moe-flex-dispatcher-backend");
  if (f.moe_load_balancing)
    s.moe.load_balancing = load_balancing_from(*f.moe_load_balancing, "--moe-router-load-balancing-type");
  s.moe.capacity_factor = f.moe_capacity_factor;
  s.moe.load_imbalance = f.moe_load_imbalance;
  s.moe.grouped_gemm = f.moe_grouped_gemm;
  s.moe.pad_to_capacity = f.moe_pad_to_capacity;
  s.moe.shared_expert_overlap = f.moe_shared_expert_overlap;
  s.moe.overlap_ep_comm = f.overlap_moe_ep_comm;
  s.allow_cross_node_tp = f.allow_cross_node_tp;
  s.overlap_grad_reduce = f.overlap_grad_reduce;
  s.overlap_param_gather = f.overlap_param_gather;
  s.tp_comm_overlap = f.tp_comm_overlap;
  s.grad_reduce_in_bf16 = f.grad_reduce_in_bf16;
  s.cross_entropy_fusion = f.cross_entropy_fusion;
  check_fused_cross_entropy(s.cross_entropy_fusion, resolved_stack(f.framework, measured));
  s.rope_fusion = !f.no_rope_fusion;
  if (f.distopt_instances < 1)
    fail_at("--num-distributed-optimizer-instances", "--num-distributed-optimizer-instances is {}; it must be >= 1",
            f.distopt_instances);
  s.distributed_optimizer_instances = f.distopt_instances;
  s.precision = precision_from(f.precision, "--precision");
  s.fp8_param_gather = f.fp8_param_gather;
  if (f.fp8_recipe) s.fp8_recipe = fp8_recipe_from(*f.fp8_recipe, "--fp8-recipe");
  const FrameworkSpec& stack = load_framework(resolved_stack(f.framework, measured));
  s.framework = stack.name;
  // The same default as simulate's: the stack's (or a soft-capped model's) kernel unless --use-flash-attn.
  s.attention = f.flash ? AttentionKernel::Flash : default_attention(stack.name, model);
  return s;
}

std::string ranked_table(const SearchOutcome& out, const SearchRequest& r) {
  std::string t = fmt::format("{:>5}  {:<50} {:>9} {:>8} {:>6} {:>8} {:>7}\n", "rank", "layout", "iter s",
                              "TFLOP/s", "MFU", "mem GiB", "days");
  for (std::size_t i = 0; i < out.ranked.size(); ++i) {
    const SimResult& x = out.ranked[i].result;
    t += fmt::format("{:>4}{}  {:<50} {:9.3f} {:8.1f} {:5.1f}% {:8.1f} {:>7}\n", i + 1, out.ranked[i].tied ? "=" : " ",
                     x.config.summary(), x.iteration_time_s, x.tflops_per_gpu, 100 * x.mfu, x.peak_memory_gib,
                     r.train_tokens > 0 ? fmt::format("{:.1f}", x.training_days) : "-");
  }
  return t;
}

nlohmann::json outcome_json(const SearchOutcome& out, const SearchRequest& r) {
  nlohmann::json results = nlohmann::json::array();
  for (std::size_t i = 0; i < out.ranked.size(); ++i) {
    nlohmann::json entry = result_to_json(out.ranked[i].result);
    entry["rank"] = i + 1;
    entry["tied"] = out.ranked[i].tied;
    entry["estimate_s"] = out.ranked[i].estimate_s;
    results.push_back(entry);
  }
  return {{"model", r.model.name},
          {"cluster", r.cluster.name},
          {"gpus", r.gpus},
          {"global_batch_size", r.global_batch},
          {"layouts_enumerated", out.enumerated},
          {"layouts_valid", out.valid},
          {"layouts_fitting", out.fitting},
          {"layouts_simulated", out.simulated},
          {"excluded", out.excluded},
          {"usable_gib", r.reserve.usable_gib(r.cluster.gpu.hbm_gib)},
          {"tie_tolerance", r.tie_tolerance},
          {"results", results}};
}

void run(const SearchFlags& f) {
  SearchRequest r;
  r.model = f.model.resolve();
  f.model.refuse_tokenizer_flags_beside_model();
  // Model flags alone: their tokenizer's vocabulary, which Megatron-LM pads by the TP the search
  // varies: each layout is priced with its own TP's padding.
  if (f.model.model.empty() && !f.model.vocab_size) {
    const TokenizerVocabulary v = megatron_tokenizer_vocabulary(f.model, 1, "");
    if (!v.vocabulary) fail_at("--vocab-size", "{}; give it with --vocab-size", v.unknown);
    r.vocabulary = v.vocabulary;
    r.model.vocab_size = static_cast<int>(v.vocabulary->padded(1));
    fmt::print(stderr, "note: the vocabulary is {}; each layout trains it padded to a multiple of {} x its TP\n",
               v.source, v.vocabulary->divisible_by);
  }
  r.cluster = f.cluster.resolve();
  r.reserve = f.cluster.reserve();
  if (!f.cluster.gpus) fail("search needs --gpus (the cluster size to lay out)");
  if (!f.global_batch) fail("search needs --global-batch-size (it fixes the tokens per iteration)");
  r.gpus = *f.cluster.gpus;
  r.global_batch = *f.global_batch;
  if (r.global_batch < 1) fail("--global-batch-size is {}; it must be >= 1", r.global_batch);
  if (f.top < 1) fail("--top is {}; it must be >= 1", f.top);
  // Far beyond any core count: each thread holds a stack, and thousands fail to start.
  constexpr int kMaxThreads = 1024;
  if (f.threads < 0 || f.threads > kMaxThreads)
    fail("--threads is {}; it must be in 0..{} (0 = every core)", f.threads, kMaxThreads);
  if (f.tie_tolerance && !(*f.tie_tolerance >= 0 && *f.tie_tolerance < 1))
    fail("--tie-tolerance is {}; it must be in [0, 1)", *f.tie_tolerance);
  r.top = f.top;
  r.threads = f.threads;
  // Outputs that cannot be written are refused before the search, not after it.
  check_outputs_apart({{f.export_json, "--export"},
                       {f.export_megatron, "--export-megatron"},
                       {f.export_megatron.empty() ? "" : megatron_script_path(f.export_megatron), "--export-megatron"},
                       {f.export_nemo, "--export-nemo"},
                       {f.csv, "--csv"}},
                      {{f.costs, "--costs"}, {f.model.model, "--model"}, {f.cluster.cluster, "--cluster"}});
  if (!f.export_json.empty()) check_output_folder(f.export_json, "--export");
  if (!f.export_megatron.empty()) {
    check_output_folder(f.export_megatron, "--export-megatron");
    check_output_folder(megatron_script_path(f.export_megatron), "--export-megatron");
  }
  if (!f.export_nemo.empty()) check_output_folder(f.export_nemo, "--export-nemo");
  if (!f.csv.empty()) check_output_folder(f.csv, "--csv");
  const std::shared_ptr<const CostDatabase> measured = read_measured_costs(f.costs);
  if (measured)
    if (const auto warning = hardware_mismatch(*measured, r.cluster)) fmt::print(stderr, "warning: {}\n", *warning);
  r.space = space_from(f, measured.get(), r.model);
  if (!f.train_tokens.empty()) r.train_tokens = parse_token_count(f.train_tokens, "--train-tokens");
  const std::unique_ptr<CostSource> costs =
      make_cost_source(measured, f.costs, r.cluster, r.space.precision, r.space.framework);
  r.costs = costs.get();
  const std::optional<ErrorBand> band = costs->error_band(r.gpus);
  r.tie_tolerance = f.tie_tolerance ? *f.tie_tolerance : cross_validated_tie_tolerance(*costs, r.gpus);

  const auto start = std::chrono::steady_clock::now();
  SearchOutcome out;
  {
    ProgressBar bar;
    out = search(r, [&bar](std::size_t done, std::size_t total, const char* phase) { bar.update(done, total, phase); });
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const SimResult& best = out.ranked.front().result;
  // All exports or none: each goes to its temporary, and they are renamed only once every
  // one has been written.
  OutputSet files;
  if (!f.export_json.empty()) files.add(f.export_json, layout_json(best, r.reserve), "--export");
  if (!f.export_megatron.empty()) {
    // The arguments alone (`pretrain_gpt.py $(cat FILE)`), and beside them the launch script with
    // what arguments cannot say (environment, nodes, cluster), which `simulate --config` reads.
    files.add(f.export_megatron, megatron_arguments(best, r.reserve), "--export-megatron");
    files.add(megatron_script_path(f.export_megatron), megatron_launch_script(best, r.reserve, f.export_megatron),
              "--export-megatron");
  }
  if (!f.export_nemo.empty()) files.add(f.export_nemo, nemo_yaml(best, r.reserve), "--export-nemo");
  if (!f.csv.empty()) files.add(f.csv, search_csv(out), "--csv");
  files.commit();

  if (f.json) {
    std::cout << outcome_json(out, r).dump(2) << "\n";
    return;
  }
  const int threads = r.threads > 0 ? r.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::cout << fmt::format("{} on {} x {} ({}), global batch {}\n", r.model.name, r.gpus, r.cluster.gpu.name,
                           r.cluster.name, r.global_batch);
  std::cout << fmt::format("{} layouts enumerated, {} valid, {} fit in {:.1f} GiB, {} simulated ({} threads, {:.2f} s)\n\n",
                           with_commas(static_cast<double>(out.enumerated)), with_commas(static_cast<double>(out.valid)),
                           with_commas(static_cast<double>(out.fitting)), r.reserve.usable_gib(r.cluster.gpu.hbm_gib),
                           with_commas(static_cast<double>(out.simulated)), threads, seconds);
  if (!f.costs.empty()) std::cout << "costs: " << costs->describe() << "\n" << "       " << costs->coverage() << "\n\n";
  std::cout << ranked_table(out, r);
  if (f.tie_tolerance)
    std::cout << fmt::format("\n= tied with the best: within {:.1f}% of it (--tie-tolerance).\n", 100 * r.tie_tolerance);
  else if (band)
    std::cout << fmt::format("\n= tied with the best: within {:.1f}% of it, the cost model's held-out error between layouts of one job ({}); "
                             "their order is not meaningful.\n",
                             100 * r.tie_tolerance, band->basis);
  else
    std::cout << "\nno ties marked: this cost source has no cross-validated error (give --tie-tolerance).\n";
  std::cout << "\nexcluded (counted at the first rule each breaks):\n";
  for (const auto& [why, n] : out.excluded)
    if (n > 0) std::cout << fmt::format("  {:>9}  {}\n", with_commas(static_cast<double>(n)), why);
  for (const auto& path : files.paths()) std::cout << "wrote " << path << "\n";
}

}  // namespace

void add_search_command(CLI::App& app) {
  auto f = std::make_shared<SearchFlags>();
  CLI::App* sub = app.add_subcommand("search", "Find the fastest layouts that fit, rank them, export the best");
  f->model.add_to(*sub);
  f->cluster.add_to(*sub);
  const char* g = "Search space (lists: 8 | 4,8,16 | 1..4)";
  sub->add_option("--global-batch-size", f->global_batch, "Global batch size (required)")->group(g);
  sub->add_option("--tensor-model-parallel-size,--tp", f->tp, "TP values (default: every divisor of GPUs up to a node)")
      ->group(g);
  sub->add_option("--context-parallel-size,--cp", f->cp,
                  fmt::format("CP values (default: 1 and every divisor that leaves each rank >= {} tokens of a "
                              "sequence)",
                              kMinTokensPerCpRank))
      ->group(g);
  sub->add_option("--cp-comm-type", f->cp_comm_type,
                  "CP exchanges to try: p2p,a2a,allgather (default: p2p; a2a+p2p needs a group size, use simulate)")
      ->group(g);
  sub->add_option("--pipeline-model-parallel-size,--pp", f->pp, "PP values (default: every divisor)")->group(g);
  sub->add_option("--micro-batch-size", f->micro_batch, "Micro batch sizes")->capture_default_str()->group(g);
  sub->add_option("--virtual-stages", f->virtual_stages, "Model chunks per pipeline rank (default: all that divide)")
      ->group(g);
  sub->add_option("--expert-model-parallel-size,--ep", f->ep,
                  "EP values for MoE models (default: every divisor of the routed experts)")
      ->group(g);
  sub->add_option("--expert-tensor-parallel-size,--etp", f->etp,
                  "ETP values for MoE models (default: every divisor of TP; TP itself is Megatron-LM's default)")
      ->group(g);
  const char* moe = "MoE run-time switches (one value for every layout; Megatron-LM's defaults when not given)";
  sub->add_option("--moe-token-dispatcher-type", f->moe_dispatcher, "allgather (default), alltoall or flex")->group(moe);
  sub->add_option("--moe-flex-dispatcher-backend", f->moe_flex_backend, "flex's kernels: deepep (default) or hybridep")
      ->group(moe);
  sub->add_flag("--moe-grouped-gemm", f->moe_grouped_gemm, "One grouped GEMM for a rank's local experts")->group(moe);
  sub->add_option("--moe-expert-capacity-factor", f->moe_capacity_factor,
                  "Tokens an expert takes, over its even share (default: dropless)")
      ->group(moe);
  sub->add_flag("--moe-pad-expert-input-to-capacity", f->moe_pad_to_capacity,
                "Every expert runs its full capacity (needs a capacity factor)")
      ->group(moe);
  sub->add_option("--moe-router-load-balancing-type", f->moe_load_balancing,
                  "aux_loss (default), seq_aux_loss, global_aux_loss, sinkhorn or none")
      ->group(moe);
  sub->add_flag("--moe-shared-expert-overlap", f->moe_shared_expert_overlap,
                "Shared experts run beside dispatch and combine (alltoall or flex)")
      ->group(moe);
  sub->add_flag("--overlap-moe-expert-parallel-comm", f->overlap_moe_ep_comm,
                "Dispatch and combine hide behind another microbatch's experts (layouts where Megatron-Core allows it)")
      ->group(moe);
  sub->add_option("--moe-load-imbalance", f->moe_load_imbalance,
                  "Busiest EP rank's tokens over the mean (clustercast's own; default: docs/moe.md)")
      ->group(moe);
  sub->add_flag("--sequence-parallel", f->sp_on, "Only layouts with sequence parallelism")->group(g);
  sub->add_flag("--no-sequence-parallel", f->sp_off, "Only layouts without it")->group(g);
  sub->add_flag("--use-distributed-optimizer", f->distopt_on, "Only the distributed optimizer")->group(g);
  sub->add_flag("--no-distributed-optimizer", f->distopt_off, "Only the plain optimizer")->group(g);
  sub->add_option("--num-distributed-optimizer-instances", f->distopt_instances,
                  "Every layout with the distributed optimizer shards its state within this many blocks of DP x CP "
                  "(Megatron-LM's partial distributed optimizer; default 1); those it does not divide are excluded")
      ->group(g);
  sub->add_option("--recompute-granularity", f->recompute, "none,selective,full (default: all three)")->group(g);
  sub->add_option("--recompute-method", f->recompute_method, "uniform,block (default: both)")->group(g);
  sub->add_option("--recompute-num-layers", f->recompute_num_layers, "Layer counts for full recompute (default: all)")
      ->group(g);
  sub->add_flag("--allow-cross-node-tp", f->allow_cross_node_tp, "Let TP groups span NVLink domains (the node, or a rack-scale system's domain)")->group(g);
  sub->add_flag("--overlap-grad-reduce", f->overlap_grad_reduce, "Every layout overlaps DP reduction with backward")
      ->group(g);
  sub->add_flag("--overlap-param-gather", f->overlap_param_gather,
                "Every layout with the distributed optimizer overlaps its parameter all-gather with forward")
      ->group(g);
  sub->add_flag("--tp-comm-overlap", f->tp_comm_overlap,
                "Every sequence-parallel layout overlaps its TP communication with GEMMs (Transformer Engine "
                "userbuffers)")
      ->group(g);
  sub->add_flag("--grad-reduce-in-bf16", f->grad_reduce_in_bf16,
                "Every bf16 layout keeps and reduces its gradients in bf16 (Megatron-LM's --grad-reduce-in-bf16)")
      ->group(g);
  sub->add_option("--fp8-recipe", f->fp8_recipe,
                  "FP8 scaling of every layout: delayed (Megatron-LM's default) or tensorwise (current scaling)")
      ->group(g);
  sub->add_flag("--fp8-param-gather", f->fp8_param_gather,
                "Every FP8 layout with the distributed optimizer keeps its linear weights in FP8 and gathers them so")
      ->group(g);
  sub->add_flag("--cross-entropy-loss-fusion", f->cross_entropy_fusion,
                "Every layout runs Megatron-Core's fused cross-entropy loss")
      ->group(g);
  sub->add_flag("--no-rope-fusion", f->no_rope_fusion,
                "Every layout runs RoPE as separate PyTorch kernels instead of Transformer Engine's fused one")
      ->group(g);
  sub->add_flag("--use-flash-attn", f->flash, "Every layout uses flash attention")->group(g);
  sub->add_option("--precision", f->precision, "bf16, fp16, fp8 or fp32")->capture_default_str()->group(g);
  sub->add_option("--costs", f->costs, "Cost database from `clustercast profile` (default: the analytic model)");
  sub->add_option("--train-tokens", f->train_tokens, "Token budget for training days (e.g. 300e9)");
  sub->add_option("--top", f->top, "How many layouts to rank")->capture_default_str();
  sub->add_option("--threads", f->threads, "Worker threads (0 = every core); the answer does not depend on it")
      ->capture_default_str();
  sub->add_option("--tie-tolerance", f->tie_tolerance,
                  "Relative gap to the best under which layouts are tied (default: the cost model's held-out error)");
  sub->add_option("--framework", f->framework,
                  fmt::format("Software stack the layouts run under (default: the one a --costs database measured, else {})",
                              kDefaultFramework))
      ->group(g);
  sub->add_flag("--json", f->json, "Print one JSON document instead of the table");
  sub->add_option("--export", f->export_json, "Write the best layout and its prediction as JSON");
  sub->add_option("--export-megatron", f->export_megatron,
                  "Write the best layout as Megatron-LM arguments (FILE, for `pretrain_gpt.py $(cat FILE)`) and its "
                  "launch script (FILE.sh)");
  sub->add_option("--export-nemo", f->export_nemo, "Write the best layout as a NeMo Megatron YAML");
  sub->add_option("--csv", f->csv, "Write the ranked layouts (the --top best) as CSV, one row each");
  sub->callback([f] { run(*f); });
}

}  // namespace cc::cli
