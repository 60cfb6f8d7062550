#include "cli/common_options.h"

#include <cmath>
#include <filesystem>
#include <span>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/analytic_costs.h"
#include "sim/atomic_file.h"
#include "sim/error.h"
#include "sim/measured_costs.h"
#include "sim/presets.h"

namespace cc::cli {

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

void ModelFlags::add_to(CLI::App& app) {
  app.add_option("--model", model, "Model preset name, model JSON, or HuggingFace config.json")
      ->group("Model");
  add_megatron_options<MegatronModelArgs>(app, *this, megatron_model_options());
}

ModelSpec ModelFlags::resolve(const std::optional<ModelSpec>& from_file) const {
  ModelSpec m;
  if (!model.empty()) {
    std::vector<std::string> notes;  // what a HuggingFace import assumed (which key gave the length)
    m = load_model(model, seq_length, &notes);
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
  if (make_vocab_size_divisible_by)
    fmt::print(stderr, "note: --make-vocab-size-divisible-by pads the --vocab-size of a Megatron argument file "
                       "(--config); on the command line --vocab-size is the vocabulary as simulated\n");
  const bool from_flags_alone = model.empty() && !from_file;
  return apply_megatron_model(*this, m, from_flags_alone,
                              from_flags_alone ? "model flags" : "model '" + m.name + "' with overrides");
}

void ClusterFlags::add_to(CLI::App& app) {
  app.add_option("--cluster", cluster, "Cluster preset name or cluster JSON (default: dgx-a100-80gb)")->group("Cluster");
  app.add_option("--gpus", gpus, "Total GPUs (DP = GPUs / (TP x PP))")->group("Cluster");
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
  if (gpus && *gpus < 1) fail("--gpus is {}; it must be >= 1", *gpus);
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
  app.add_option("--framework", framework,
                 fmt::format("Software stack: {} (default: the one a --costs database measured, else {})",
                             fmt::join(framework_preset_names(), ", "), kDefaultFramework))
      ->group(g);
  // Megatron-LM's flags without bearing on time or memory, so a launch line pastes: accepted,
  // left aside and named in a note. Not in --help (the README lists them).
  for (const auto& f : megatron_ignored_flags()) {
    if (!f.on_command_line) continue;
    CLI::Option* o = f.values == 0 ? app.add_flag(f.flag) : app.add_option(f.flag);
    if (f.values > 1) o->expected(f.values);
    if (f.values < 0) o->expected(1, CLI::detail::expected_max_vector_size);
    o->group("");
    ignored_.emplace_back(f.flag, o);
  }
}

std::optional<LayoutFile> LayoutFlags::read_file() const {
  if (config_file.empty()) return std::nullopt;
  return read_layout_file(config_file);
}

ParallelConfig LayoutFlags::resolve(const ModelSpec& model, std::optional<int> gpus, const LayoutFile* file,
                                    const std::optional<std::string>& measured_framework) const {
  std::vector<std::string> ignored = file ? file->ignored : std::vector<std::string>{};
  for (const auto& [flag, option] : ignored_)
    if (option->count() > 0) ignored.push_back(flag);
  if (!ignored.empty())
    fmt::print(stderr, "note: Megatron-LM flags left aside, as they bear on neither time nor memory: {}\n",
               fmt::join(ignored, ", "));
  if (file)
    for (const auto& note : file->notes) fmt::print(stderr, "note: {}\n", note);

  ParallelConfig c;
  if (file) c = file->config;
  apply_megatron_layout(*this, c, model, "");
  if (precision) {
    // Megatron-LM's spellings beside ours must agree (its fp8 runs pass --bf16 beside --fp8-format).
    const char* named = bf16 ? "bf16" : fp16 ? "fp16" : nullptr;
    if (named && *precision != named && !(*precision == "fp8" && bf16))
      fail("--{} contradicts --precision {}; give one of them", named, *precision);
    if (fp8_format && *precision != "fp8")
      fail("--fp8-format {} contradicts --precision {}; give one of them", *fp8_format, *precision);
    c.precision = precision_from(*precision, "--precision");
  }
  if (framework) apply_framework(c, *framework);
  else if (measured_framework) apply_framework(c, *measured_framework);
  // No kernel named and no layout file: the stack's own default.
  if (!use_flash_attn && !attention_backend && !file) c.attention = default_attention(c.framework);
  if (dp) {
    c.dp = *dp;
  } else if (gpus) {
    if (*gpus % (c.tp * c.pp) != 0)
      fail("--gpus {} is not divisible by TP {} x PP {} = {}; DP would not be whole", *gpus, c.tp, c.pp, c.tp * c.pp);
    c.dp = *gpus / (c.tp * c.pp);
  } else if (!file) {
    c.dp = 1;
  }
  if (c.dp < 1) fail("--data-parallel-size is {}; it must be >= 1", c.dp);
  if (!global_batch && !file) c.global_batch = c.micro_batch * c.dp;
  return c;
}

void check_output_folder(const std::string& path, const char* flag) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty() && !std::filesystem::is_directory(parent))
    fail("{} {}: folder '{}' does not exist", flag, path, parent.string());
  check_output_target(path, flag);
}

double parse_token_count(const std::string& text, const std::string& flag) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    fail("{} '{}' is not a number; write e.g. 300e9 or 300B", flag, text);
  }
  std::string suffix = text.substr(used);
  double scale = 1;
  if (suffix == "K" || suffix == "k") scale = 1e3;
  else if (suffix == "M") scale = 1e6;
  else if (suffix == "B" || suffix == "G") scale = 1e9;
  else if (suffix == "T") scale = 1e12;
  else if (!suffix.empty()) fail("{} '{}' has an unknown suffix '{}'; use K, M, B or T", flag, text, suffix);
  // 1e16 tokens is a thousand times the largest runs published (about 1.5e13, 2024);
  // beyond it a budget is a typo, and near 1e308 it prints "inf days".
  constexpr double kMaxTokens = 1e16;
  const double tokens = value * scale;
  if (!(tokens > 0 && tokens <= kMaxTokens))
    fail("{} '{}' must be a positive token count of at most 1e16 (10000T)", flag, text);
  return tokens;
}

std::optional<CostDatabase> read_costs(const std::string& costs_file) {
  if (costs_file.empty()) return std::nullopt;
  return read_cost_database(costs_file);
}

std::optional<std::string> measured_framework(const std::optional<CostDatabase>& db) {
  if (!db) return std::nullopt;
  return db->framework;
}

std::unique_ptr<CostSource> make_cost_source(std::optional<CostDatabase> db, const std::string& costs_file,
                                             const ClusterSpec& cluster, Precision precision,
                                             const std::string& framework) {
  if (!db) return std::make_unique<AnalyticCosts>(cluster, precision, framework);
  return std::make_unique<MeasuredCosts>(std::move(*db), costs_file, cluster, precision);
}

}  // namespace cc::cli
