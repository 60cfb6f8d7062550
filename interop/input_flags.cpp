#include "interop/input_flags.h"

#include <span>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "interop/megatron_tokenizer.h"
#include "interop/model_input.h"
#include "sim/error.h"
#include "sim/presets.h"

namespace cc {

namespace {

// Registers one of interop's Megatron-LM option tables with CLI11: the names, help and fields
// come from there, so the command line and an argument file cannot drift apart.
template <class Args>
void add_megatron_options(CLI::App& app, Args& args, std::span<const MegatronOption<Args>> table) {
  for (const auto& o : table) {
    std::string names = o.flag;
    if (o.alias) names += std::string(",") + o.alias;
    CLI::Option* option = std::visit(
        [&](auto member) -> CLI::Option* {
          using T = std::remove_reference_t<decltype(args.*member)>;
          if constexpr (std::is_same_v<T, bool>) return app.add_flag(names, args.*member, o.help);
          else return app.add_option(names, args.*member, o.help);
        },
        o.field);
    option->group(o.group);
  }
}

}  // namespace

void ModelFlags::refuse_tokenizer_flags_beside_model() const {
  if (model.empty() || vocab_size) return;
  const char* flag = tokenizer_type                 ? "--tokenizer-type"
                     : tokenizer_model              ? "--tokenizer-model"
                     : make_vocab_size_divisible_by ? "--make-vocab-size-divisible-by"
                                                    : nullptr;
  if (flag)
    fail_at(flag, "{} beside --model {}: the model's vocabulary is its own; give --vocab-size to change it", flag, model);
}

void ModelFlags::add_to(CLI::App& app) {
  app.add_option("--model", model, "Model preset name, model JSON, or HuggingFace config.json")
      ->group("Model");
  add_megatron_options<MegatronModelArgs>(app, *this, megatron_model_options());
}

ModelSpec ModelFlags::resolve(const std::optional<ModelSpec>& from_file) const {
  ModelSpec m;
  if (!model.empty()) {
    std::vector<std::string> notes;  // what a HuggingFace import assumed (which key gave the length)
    m = read_model_input(model, seq_length, &notes);
    for (const auto& note : notes) fmt::print(stderr, "note: {}\n", note);
  } else if (from_file) {
    m = *from_file;
  } else {
    // No preset: a GPT-style model (4h GeLU MLP, LayerNorm, learned positions) from flags.
    if (!num_layers || !hidden_size || !num_attention_heads)
      fail("no --model given: pass a preset (e.g. --model gpt3-175b) or at least --num-layers, --hidden-size and "
           "--num-attention-heads");
    m.name = "custom";
    m.seq_length = 2048;
    m.vocab_size = 51200;
  }
  if (tokenizer_type) megatron_tokenizer_type(*tokenizer_type, "");
  if (make_vocab_size_divisible_by && vocab_size)
    fmt::print(stderr, "note: --make-vocab-size-divisible-by pads the --vocab-size of a Megatron argument file "
                       "(--config); on the command line --vocab-size is the vocabulary as simulated\n");
  const bool from_flags_alone = model.empty() && !from_file;
  return apply_megatron_model(*this, m, from_flags_alone,
                              from_flags_alone ? "model flags" : "model '" + m.name + "' with overrides");
}

void ClusterFlags::add_to(CLI::App& app) {
  app.add_option("--cluster", cluster, "Cluster preset name or cluster JSON (default: dgx-a100-80gb)")->group("Cluster");
  app.add_option("--gpus", gpus, "Total GPUs (DP = GPUs / (TP x CP x PP))")->group("Cluster");
  const MemoryReserve d;
  app.add_option("--cuda-context-gib", cuda_context_gib,
                 fmt::format("Memory reserve: CUDA context and library handles, GiB (default {})", d.cuda_context_gib))
      ->group("Memory reserve");
  app.add_option("--comm-buffers-gib", comm_buffers_gib,
                 fmt::format("Memory reserve: NCCL buffers, GiB (default {})", d.comm_buffers_gib))
      ->group("Memory reserve");
  app.add_option("--fragmentation", fragmentation,
                 fmt::format("Memory reserve: allocator fragmentation, fraction of activations (default {})",
                             d.fragmentation_fraction))
      ->group("Memory reserve");
  app.add_option("--memory-headroom", headroom,
                 fmt::format("Fraction of HBM a layout must leave free to fit (default {})", d.headroom_fraction))
      ->group("Memory reserve");
}

ClusterSpec ClusterFlags::resolve(const std::optional<ClusterSpec>& from_file) const {
  const ClusterSpec c = !cluster.empty() ? load_cluster(cluster) : from_file ? *from_file : load_cluster("dgx-a100-80gb");
  if (gpus) check_gpu_count(*gpus, "--gpus");
  if (gpus && c.max_nodes > 0 && *gpus > c.max_nodes * c.gpus_per_node)
    fail("--gpus {} exceeds cluster '{}' ({} nodes x {} GPUs)", *gpus, c.name, c.max_nodes, c.gpus_per_node);
  return c;
}

namespace {

// Every memory-reserve value, with its flag and its sane range. Flags and layout files go
// through the same check (check_reserve_value), so a file cannot carry what a flag would refuse.
struct ReserveField {
  const char* flag;
  double max;
  double MemoryReserve::*field;
};
constexpr ReserveField kReserveFields[] = {
    {"--cuda-context-gib", 1024, &MemoryReserve::cuda_context_gib},
    {"--comm-buffers-gib", 1024, &MemoryReserve::comm_buffers_gib},
    {"--fragmentation", 10, &MemoryReserve::fragmentation_fraction},
    {"--memory-headroom", 0.9, &MemoryReserve::headroom_fraction},
};

void check_reserve_value(const ReserveField& f, double value, const std::string& where) {
  if (!(value >= 0 && value <= f.max))  // also refuses NaN
    fail("{}{} is {}; it must be between 0 and {}", where.empty() ? "" : where + ": ", f.flag, value, f.max);
}

}  // namespace

MemoryReserve ClusterFlags::reserve(const std::optional<MemoryReserve>& from_file, const std::string& file) const {
  MemoryReserve r = from_file.value_or(MemoryReserve{});
  if (from_file)
    for (const auto& f : kReserveFields) check_reserve_value(f, r.*f.field, "layout file '" + file + "'");
  const std::optional<double> flags[] = {cuda_context_gib, comm_buffers_gib, fragmentation, headroom};
  for (std::size_t i = 0; i < std::size(kReserveFields); ++i) {
    if (!flags[i]) continue;
    check_reserve_value(kReserveFields[i], *flags[i], "");
    r.*kReserveFields[i].field = *flags[i];
  }
  return r;
}

void LayoutFlags::add_to(CLI::App& app) {
  const char* g = "Parallel layout (Megatron-LM names)";
  app.add_option("--config", config_file,
                 "Layout file exported by `search` (JSON, Megatron-LM arguments or NeMo YAML), or NeMo's own YAML")
      ->group(g);
  add_megatron_options<MegatronLayoutArgs>(app, *this, megatron_layout_options());
  app.add_option("--data-parallel-size,--dp", dp, "Data-parallel size (default: GPUs / (TP x PP))")->group(g);
  app.add_option("--precision", precision, "bf16 (default), fp16, fp8 or fp32")->group(g);
  app.add_option("--moe-load-imbalance", moe_load_imbalance,
                 fmt::format("clustercast's own: the busiest EP rank's tokens over the mean (>= 1; default 1 when "
                             "padded to capacity, else {} from FEPLB's measurements, see docs/moe.md)",
                             kDroplessLoadImbalance))
      ->group("Mixture of experts (Megatron-LM names)");
  app.add_option("--framework", framework,
                 fmt::format("Software stack: {} (default: the one a --costs database measured, else {})",
                             fmt::join(framework_preset_names(), ", "), kDefaultFramework))
      ->group(g);
  // Megatron-LM's flags without bearing on time or memory, so a launch line pastes: accepted,
  // left aside and named in a note. Not in --help: docs/cli.md names the categories, kIgnored in
  // megatron_flag_classes.cpp lists them.
  for (const auto& f : megatron_ignored_flags()) {
    if (!f.on_command_line) continue;
    CLI::Option* o = f.values == 0 ? app.add_flag(f.flag) : app.add_option(f.flag);
    if (f.values > 1) o->expected(f.values);
    if (f.values < 0) o->expected(1, CLI::detail::expected_max_vector_size);
    // Left aside at Megatron-LM's default only, the same rule as an argument file's; thrown as our
    // own error (exit 2, the message alone) rather than returned to CLI11, which prefixes it.
    if (f.only_value)
      o->check(CLI::Validator(
          [flag = &f](std::string& v) {
            if (const std::string why = ignored_flag_value_refusal(*flag, v); !why.empty())
              fail_at(flag->flag, "Megatron-LM flag that would change the run and is not modelled: {}", why);
            return std::string();
          },
          "", ""));
    o->group("");
    ignored_.emplace_back(f.flag, o);
  }
}

std::optional<LayoutFile> LayoutFlags::read_file() const {
  if (config_file.empty()) return std::nullopt;
  return read_layout_file(config_file);
}

LayoutRequest LayoutFlags::request(const ModelSpec& model, const LayoutFile* file) const {
  std::vector<std::string> ignored = file ? file->ignored : std::vector<std::string>{};
  for (const auto& [flag, option] : ignored_)
    if (option->count() > 0) ignored.push_back(flag);
  if (!ignored.empty())
    fmt::print(stderr, "note: Megatron-LM flags left aside, as they bear on neither time nor memory: {}\n",
               fmt::join(ignored, ", "));
  if (file)
    for (const auto& note : file->notes) fmt::print(stderr, "note: {}\n", note);

  LayoutRequest r;
  r.from_file = file != nullptr;
  if (file) r.config = file->config;
  apply_megatron_layout(*this, r.config, model, "");
  if (precision) {
    // Megatron-LM's spellings beside ours must agree (its fp8 runs pass --bf16 beside --fp8-format).
    const char* named = bf16 ? "bf16" : fp16 ? "fp16" : nullptr;
    if (named && *precision != named && !(*precision == "fp8" && bf16))
      fail("--{} contradicts --precision {}; give one of them", named, *precision);
    if (fp8_format && *precision != "fp8")
      fail("--fp8-format {} contradicts --precision {}; give one of them", *fp8_format, *precision);
    r.config.precision = precision_from(*precision, "--precision");
  }
  if (moe_load_imbalance) r.config.moe.load_imbalance = *moe_load_imbalance;
  r.dp = dp;
  r.global_batch_named = global_batch.has_value() || (file && file->global_batch_named);
  r.switches = megatron_switches(*this);
  if (file) r.switches |= file->switches;
  r.attention_named = use_flash_attn || attention_backend.has_value() || r.switches.local_layers;
  r.framework = framework;
  return r;
}

void RunFlags::add_to(CLI::App& app) {
  model.add_to(app);
  cluster.add_to(app);
  layout.add_to(app);
  app.add_option("--costs", costs,
                 "Cost database from `clustercast profile` (default: the analytic model of the cluster)");
}

namespace {

// The vocabulary the run trains, padded at its TP (Megatron-LM pads by TP): model flags alone train
// their tokenizer's, an argument file its own, with the tokenizer flags beside it in place of the
// file's as on Megatron-LM's command line; another format's file its own words. A preset's, or
// --vocab-size on the command line, is the vocabulary as simulated. One note says where the words
// came from, at the run's TP.
void train_vocabulary(const ModelFlags& flags, const LayoutFile* file, const std::string& path, int tp, ModelSpec& m) {
  flags.refuse_tokenizer_flags_beside_model();
  if (!flags.model.empty() || flags.vocab_size) return;
  const bool from_file = file && file->model;
  const std::string where = from_file ? fmt::format("layout file '{}'", path) : "";
  TokenizerVocabulary v;
  if (!from_file) {
    v = megatron_tokenizer_vocabulary(flags, tp, "");
  } else if (file->megatron_model && (file->vocabulary || names_tokenizer_flags(flags))) {
    v = megatron_tokenizer_vocabulary(with_later_tokenizer_flags(*file->megatron_model, flags), tp, where);
  } else if (names_tokenizer_flags(flags)) {
    const char* flag = flags.tokenizer_type ? "--tokenizer-type"
                       : flags.tokenizer_model ? "--tokenizer-model"
                                               : "--make-vocab-size-divisible-by";
    fail_at(flag, "{} beside {}: that file states its vocabulary in its own format, not Megatron-LM's flags; give "
                  "--vocab-size to change it", flag, where);
  } else if (!file->vocabulary_unknown.empty()) {
    fail_at("--vocab-size", "{}; give it with --vocab-size (the tokenizer's word count: 32000 for Llama 2's and "
                            "Mistral's sentencepiece models)", file->vocabulary_unknown);
  } else if (file->vocabulary) {  // a NeMo config's tokenizer words
    m.vocab_size = static_cast<int>(file->vocabulary->padded(tp));
    if (tp != file->config.tp)
      fmt::print(stderr, "note: {}: its vocabulary of {} words is padded to {} at TP {}\n", where,
                 file->vocabulary->words, m.vocab_size, tp);
    return;
  } else {
    return;  // the file's vocabulary as simulated (a JSON layout, an export's clustercast line)
  }
  if (!v.vocabulary)
    fail_at("--vocab-size", "{}; give it with --vocab-size{}", v.unknown,
            from_file ? " (the tokenizer's word count: 32000 for Llama 2's and Mistral's sentencepiece models)" : "");
  const long long padded = v.vocabulary->padded(tp);
  if (padded > 16'777'216)
    fail_at("--vocab-size", "{}the vocabulary of {} words padded to {} is beyond 16777216", where.empty() ? "" : where + ": ",
            v.vocabulary->words, padded);
  m.vocab_size = static_cast<int>(padded);
  if (!v.note.empty()) fmt::print(stderr, "note: {}\n", v.note);
  else if (from_file && tp != file->config.tp && padded != v.vocabulary->words)  // a stated --vocab-size, at another TP
    fmt::print(stderr, "note: {}: --vocab-size {} is padded to {} ({} x TP {})\n", where, v.vocabulary->words, padded,
               v.vocabulary->divisible_by, tp);
}

}  // namespace

RunRequest RunFlags::request() const {
  const std::optional<LayoutFile> file = layout.read_file();
  RunRequest r;
  r.model = model.resolve(file ? file->model : std::nullopt);
  r.cluster = cluster.resolve(file ? file->cluster : std::nullopt);
  r.gpus = cluster.gpus ? cluster.gpus : file ? file->gpus : std::nullopt;
  // A count from the file passes the check --gpus would, and the message names the file.
  if (!cluster.gpus && r.gpus && *r.gpus < 1)
    fail("layout file '{}': the GPU count is {}; it must be >= 1", layout.config_file, *r.gpus);
  r.layout = layout.request(r.model, file ? &*file : nullptr);
  train_vocabulary(model, file ? &*file : nullptr, layout.config_file, r.layout.config.tp, r.model);
  r.costs_file = costs;
  r.reserve = cluster.reserve(file ? file->reserve : std::nullopt, layout.config_file);
  return r;
}

}  // namespace cc
