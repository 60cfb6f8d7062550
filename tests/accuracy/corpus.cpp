#include "accuracy/corpus.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <filesystem>
#include <set>

#include <fmt/format.h>
// libfccp's error type copies file names with strncpy; GCC 12 flags that inside our code
// once inlined. The truncation is the library's intent (a fixed 255-byte buffer).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"
#include <libfccp/csv.h>
#pragma GCC diagnostic pop

#include "sim/error.h"
#include "sim/layout_validation.h"
#include "sim/presets.h"

namespace cc::accuracy {

namespace {

// The corpus schema (tests/reference/measured/README.md, tools/schema.py); the reader matches columns
// by name.
constexpr std::array<const char*, 46> kColumns = {
    "id", "source", "model", "num_layers", "hidden_size", "num_attention_heads", "num_query_groups",
    "ffn_hidden_size", "swiglu", "normalization", "seq_length", "vocab_size", "cluster", "gpus", "framework",
    "attention", "precision", "tp", "cp", "cp_comm_type", "pp", "dp", "virtual_stages", "pipeline_layout", "first_stage_layers", "last_stage_layers",
    "sequence_parallel", "recompute_granularity", "recompute_method", "recompute_num_layers", "micro_batch",
    "global_batch", "distributed_optimizer", "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap",
    "iteration_time_s", "peak_memory_gib", "assumed", "note", "position_embedding", "untie_embeddings",
    "add_bias_linear", "distributed_optimizer_instances", "cross_entropy_loss_fusion", "apply_rope_fusion"};

// The mixture-of-experts runs (tests/reference/measured/moe/README.md, schema in
// tools/schema_moe.py): the columns above, then these. Only the MoE runs' loader reads them.
constexpr std::array<const char*, 27> kMoeOnlyColumns = {
    "kv_channels", "num_experts", "router_topk", "moe_ffn_hidden_size", "shared_expert_ffn_hidden_size",
    "moe_layer_freq", "first_dense_layers", "ep", "etp", "token_dispatcher", "grouped_gemm", "capacity_factor",
    "pad_to_capacity", "router_score_function", "router_load_balancing", "multi_latent_attention", "q_lora_rank",
    "kv_lora_rank", "qk_head_dim", "qk_pos_emb_head_dim", "v_head_dim", "mtp_num_layers", "fp8_recipe",
    "overlap_moe_expert_parallel_comm", "moe_shared_expert_overlap", "allocated_memory_gib", "features"};

template <std::size_t N, std::size_t M>
constexpr std::array<const char*, N + M> joined(const std::array<const char*, N>& a, const std::array<const char*, M>& b) {
  std::array<const char*, N + M> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = a[i];
  for (std::size_t i = 0; i < M; ++i) out[N + i] = b[i];
  return out;
}
constexpr auto kMoeColumns = joined(kColumns, kMoeOnlyColumns);

template <std::size_t N>
using Reader = io::CSVReader<N, io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>>;

// `text` parsed whole by `parse` (std::stoi, std::stod); nothing when it is not a number
// or has anything after it.
template <typename T, typename Parse>
std::optional<T> whole(const std::string& text, Parse parse) {
  std::size_t used = 0;
  try {
    const T v = parse(text, &used);
    if (used == text.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

class RowFields {
 public:
  template <std::size_t N>
  RowFields(const std::array<const char*, N>& names, const std::array<std::string, N>& values, std::string where)
      : names_(names.data()), values_(values.data()), columns_(N), where_(std::move(where)) {}

  const std::string& text(const char* column) const { return values_[index(column)]; }
  int integer(const char* column, int min_value) const {
    const auto v = whole<int>(text(column), [](const std::string& t, std::size_t* used) { return std::stoi(t, used); });
    if (!v || *v < min_value) fail("{}: column {} is '{}'; it must be an integer >= {}", where_, column, text(column), min_value);
    return *v;
  }
  int integer_or(const char* column, int min_value, int fallback) const {
    return text(column).empty() ? fallback : integer(column, min_value);
  }
  double positive(const char* column) const {
    const auto v = whole<double>(text(column), [](const std::string& t, std::size_t* used) { return std::stod(t, used); });
    if (!v || !(*v > 0) || !std::isfinite(*v))
      fail("{}: column {} is '{}'; it must be a positive number", where_, column, text(column));
    return *v;
  }
  std::optional<double> positive_or_none(const char* column) const {
    if (text(column).empty()) return std::nullopt;
    return positive(column);
  }
  bool flag(const char* column) const {
    const std::string& t = text(column);
    if (t == "0" || t.empty()) return false;
    if (t == "1") return true;
    fail("{}: column {} is '{}'; it must be 0 or 1", where_, column, t);
  }
  const std::string& where() const { return where_; }

 private:
  std::size_t index(const char* column) const {
    for (std::size_t i = 0; i < columns_; ++i)
      if (std::string_view(names_[i]) == column) return i;
    throw std::logic_error(std::string("no corpus column ") + column);
  }
  const char* const* names_;
  const std::string* values_;
  std::size_t columns_;
  std::string where_;
};

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string part;
  for (char ch : text) {
    if (ch == sep) {
      if (!part.empty()) out.push_back(part);
      part.clear();
    } else {
      part += ch;
    }
  }
  if (!part.empty()) out.push_back(part);
  return out;
}

// The run a row states, before it is checked: model, cluster and layout from the dense columns.
CorpusRow stated_run(const RowFields& f) {
  CorpusRow r;
  r.id = f.text("id");
  r.source = f.text("source");
  r.note = f.text("note");
  r.assumed = split(f.text("assumed"), ';');

  ModelSpec& m = r.model;
  m.name = f.text("model");
  m.num_layers = f.integer("num_layers", 1);
  m.hidden_size = f.integer("hidden_size", 1);
  m.num_attention_heads = f.integer("num_attention_heads", 1);
  m.num_query_groups = f.integer("num_query_groups", 1);
  m.ffn_hidden_size = f.integer("ffn_hidden_size", 1);
  m.seq_length = f.integer("seq_length", 1);
  m.vocab_size = f.integer("vocab_size", 1);
  m.activation = f.flag("swiglu") ? Activation::SwiGLU : Activation::GeLU;
  const std::string& norm = f.text("normalization");
  if (norm != "layernorm" && norm != "rmsnorm")
    fail("{}: normalization '{}' is not known; valid: layernorm, rmsnorm", f.where(), norm);
  m.normalization = norm == "rmsnorm" ? Normalization::RMSNorm : Normalization::LayerNorm;
  // Where a row leaves its architecture columns empty (tools/schema.py ARCHITECTURE_COLUMNS):
  // Llama-style rows (SwiGLU with RMSNorm) are RoPE, untied, without biases and without dropout,
  // as their configs set; GPT-style rows learned positions, tied embeddings, biases and dropout
  // 0.1, as GPT-3 and Megatron's examples do. The schema has no dropout column.
  const bool llama_style = m.activation == Activation::SwiGLU && m.normalization == Normalization::RMSNorm;
  const std::string& position = f.text("position_embedding");
  if (!position.empty() && position != "learned_absolute" && position != "rope")
    fail("{}: position_embedding '{}' is not known; valid: learned_absolute, rope, or empty", f.where(), position);
  const bool rope = position.empty() ? llama_style : position == "rope";
  m.position_embedding = rope ? PositionEmbedding::Rope : PositionEmbedding::Learned;
  m.tied_embeddings = f.text("untie_embeddings").empty() ? !llama_style : !f.flag("untie_embeddings");
  const bool biases = f.text("add_bias_linear").empty() ? !llama_style : f.flag("add_bias_linear");
  m.qkv_bias = m.projection_bias = biases;
  m.mlp_bias = biases;  // Megatron-LM's one switch, on a gated MLP too
  m.dropout = !llama_style;

  r.cluster = load_cluster(f.text("cluster"));
  ParallelConfig& c = r.config;
  c.attention = attention_from(f.text("attention"), f.where());
  c.precision = precision_from(f.text("precision"), f.where());
  c.tp = f.integer("tp", 1);
  c.cp = f.integer_or("cp", 1, 1);
  if (!f.text("cp_comm_type").empty()) c.cp_comm_type = cp_comm_type_from(f.text("cp_comm_type"), f.where());
  c.pp = f.integer("pp", 1);
  c.dp = f.integer("dp", 1);
  c.virtual_stages = f.integer_or("virtual_stages", 1, 1);
  c.pipeline_layout = f.text("pipeline_layout");
  c.first_stage_layers = f.integer_or("first_stage_layers", 1, 0);
  c.last_stage_layers = f.integer_or("last_stage_layers", 1, 0);
  // Megatron-LM turns sequence parallelism off when TP is 1 (arguments.py: "Disabling
  // sequence parallelism because tensor model parallelism is disabled"); so do we.
  c.sequence_parallel = f.flag("sequence_parallel") && c.tp > 1;
  c.recompute = recompute_granularity_from(f.text("recompute_granularity"), f.where());
  if (!f.text("recompute_method").empty()) c.recompute_method = recompute_method_from(f.text("recompute_method"), f.where());
  c.recompute_num_layers = f.integer_or("recompute_num_layers", 1, 1);
  c.micro_batch = f.integer("micro_batch", 1);
  c.global_batch = f.integer("global_batch", 1);
  c.distributed_optimizer = f.flag("distributed_optimizer");
  c.distributed_optimizer_instances = f.integer_or("distributed_optimizer_instances", 1, 1);
  // Kernel fusions as the row states them, else Megatron-LM's defaults (fused RoPE, plain loss).
  if (!f.text("cross_entropy_loss_fusion").empty()) c.cross_entropy_fusion = f.flag("cross_entropy_loss_fusion");
  if (!f.text("apply_rope_fusion").empty()) c.rope_fusion = f.flag("apply_rope_fusion");
  // A run overlaps as its stack does by default, unless its row states otherwise.
  apply_framework(c, f.text("framework"));
  for (auto [column, field] : {std::pair{"overlap_grad_reduce", &ParallelConfig::overlap_grad_reduce},
                               std::pair{"overlap_param_gather", &ParallelConfig::overlap_param_gather},
                               std::pair{"tp_comm_overlap", &ParallelConfig::tp_comm_overlap}})
    if (!f.text(column).empty()) c.*field = f.flag(column);
  r.measured_s = f.positive("iteration_time_s");
  r.measured_peak_gib = f.positive_or_none("peak_memory_gib");
  return r;
}

// `r` checked as the simulator checks a launch line: a layout it does not model is refused.
CorpusRow checked(CorpusRow r, const RowFields& f) {
  r.model.validate(f.where());
  validate(r.config, r.model, r.cluster, f.integer("gpus", 1));
  return r;
}

CorpusRow row_from(const RowFields& f) { return checked(stated_run(f), f); }

// A refusal of something the row states that the simulator does not model (not a malformed
// row): the message does not start with the row's location, so the loader lists it as refused.
[[noreturn]] void not_modelled(const char* column, const std::string& what) {
  fail_at(column, "{} is not modelled", what);
}

// What a run's `features` column names (tools/schema_moe.py FEATURES), applied where the model
// has it and refused by name where it does not.
void apply_features(CorpusRow& r, const RowFields& f) {
  for (const std::string& feature : split(f.text("features"), ';')) {
    if (feature == "force-balanced-routing") {
      // The benchmark forces a uniform token split: every EP rank gets the mean.
      r.config.moe.load_imbalance = 1.0;
    } else if (feature == "expert-bias") {
      r.model.moe.router_expert_bias = true;
    } else if (feature == "qk-layernorm") {
      // With MLA, Megatron-Core's --qk-layernorm normalises the q and kv latents, which
      // MlaSpec always counts; otherwise each head's q and k.
      if (!r.model.mla.enabled) r.model.qk_norm = QkNorm::PerHead;
    } else if (feature == "deepep" || feature == "hybridep") {
      // The flex dispatcher's kernels (token_dispatcher flex).
      r.config.moe.flex_backend = flex_backend_from(feature, f.where());
    } else if (feature == "token-drop" || feature == "moe-a2a-overlap") {
      // Stated by their own columns (capacity_factor, pad_to_capacity,
      // overlap_moe_expert_parallel_comm), read with the other MoE columns.
    } else if (feature == "group-limited-routing") {
      // The router picks its top-k within the best groups: the same router GEMM and a top-k
      // over fewer candidates, which the router's pricing already covers; the groups' sizes
      // are not columns, and no parameter depends on them.
    } else {
      not_modelled("features", fmt::format("feature '{}' (tools/schema_moe.py)", feature));
    }
  }
}

CorpusRow moe_row_from(const RowFields& f) {
  CorpusRow r = stated_run(f);
  ModelSpec& m = r.model;
  if (!f.text("kv_channels").empty()) m.explicit_head_dim = f.integer("kv_channels", 1);
  // Linear biases: every functional test states --disable-bias-linear (its note), and Qwen3's and
  // DeepSeek-V3's configs have none (attention_bias false); gpt-oss, the model with attention
  // sinks, has them on attention, router and experts (its config.json).
  const bool gpt_oss = f.text("features").find("attention-sinks") != std::string::npos;
  m.qkv_bias = m.projection_bias = gpt_oss;
  m.mlp_bias = gpt_oss;  // the dense layers' MLPs: the same switch
  MoeSpec& e = m.moe;
  e.num_experts = f.integer("num_experts", 1);
  e.router_topk = f.integer("router_topk", 1);
  e.ffn_hidden_size = f.integer("moe_ffn_hidden_size", 1);
  e.shared_expert_ffn_hidden_size = f.integer_or("shared_expert_ffn_hidden_size", 1, 0);
  // --moe-layer-freq as written: an integer, or Megatron's list expression ([0]*N+[1]*M),
  // whose leading dense layers the row states in first_dense_layers.
  const int first_dense = f.integer_or("first_dense_layers", 0, 0);
  const std::string& freq = f.text("moe_layer_freq");
  if (freq.rfind("([0]*", 0) == 0) {
    e.layer_pattern.assign(static_cast<std::size_t>(m.num_layers), 1);
    for (int i = 0; i < std::min(first_dense, m.num_layers); ++i) e.layer_pattern[static_cast<std::size_t>(i)] = 0;
  } else {
    e.layer_freq = f.integer("moe_layer_freq", 1);
    if (first_dense > 0) fail("{}: first_dense_layers {} with moe_layer_freq {}: the pattern form states them", f.where(), first_dense, freq);
  }
  e.router_linear_bias = e.expert_linear_biases = gpt_oss;
  e.score_function = f.text("router_score_function") == "sigmoid" ? RouterScore::Sigmoid : RouterScore::Softmax;
  if (f.flag("multi_latent_attention")) {
    m.mla.enabled = true;
    m.mla.q_lora_rank = f.integer_or("q_lora_rank", 1, 0);
    m.mla.kv_lora_rank = f.integer("kv_lora_rank", 1);
    m.mla.qk_head_dim = f.integer("qk_head_dim", 1);
    m.mla.qk_pos_emb_head_dim = f.integer("qk_pos_emb_head_dim", 1);
    m.mla.v_head_dim = f.integer("v_head_dim", 1);
  }
  m.mtp_num_layers = f.integer_or("mtp_num_layers", 0, 0);

  ParallelConfig& c = r.config;
  c.ep = f.integer("ep", 1);
  c.etp = f.integer_or("etp", 1, 0);
  MoeRunOptions& o = c.moe;
  // Not stated: the stack's default. Megatron-Core's arguments default to allgather;
  // Megatron-Bridge's MoE model providers (Qwen3-MoE, DeepSeek-V3, gpt-oss: the `nemo` stack's
  // rows) set moe_token_dispatcher_type = "alltoall".
  const std::string& dispatcher = f.text("token_dispatcher");
  if (!dispatcher.empty()) o.dispatcher = token_dispatcher_from(dispatcher, "the run");
  else if (c.framework == "nemo") o.dispatcher = TokenDispatcher::AllToAll;
  o.grouped_gemm = f.flag("grouped_gemm");
  o.capacity_factor = f.positive_or_none("capacity_factor");
  o.pad_to_capacity = f.flag("pad_to_capacity");
  o.load_balancing = load_balancing_from(f.text("router_load_balancing"), f.where());
  if (!f.text("overlap_moe_expert_parallel_comm").empty()) o.overlap_ep_comm = f.flag("overlap_moe_expert_parallel_comm");
  if (!f.text("moe_shared_expert_overlap").empty()) o.shared_expert_overlap = f.flag("moe_shared_expert_overlap");
  // FP8 as priced is per-tensor scaling (delayed or tensorwise); block scaling has other GEMMs
  // and casts.
  const std::string& recipe = f.text("fp8_recipe");
  if (recipe == "blockwise" || recipe == "mxfp8") not_modelled("fp8_recipe", fmt::format("FP8 recipe '{}'", recipe));
  apply_features(r, f);
  r.measured_resident_gib = f.positive_or_none("allocated_memory_gib");
  return checked(r, f);
}

template <typename In, std::size_t N, std::size_t... I>
bool read_row(In& in, std::array<std::string, N>& v, std::index_sequence<I...>) {
  return in.read_row(v[I]...);
}

template <typename In, std::size_t N, std::size_t... I>
void read_header(In& in, const std::array<const char*, N>& names, std::index_sequence<I...>) {
  in.read_header(io::ignore_no_column, names[I]...);
}

// Every *.csv directly in `folder` (file-name order), each row read with the schema `names`
// and built by `build`.
template <std::size_t N, typename Build>
std::vector<CorpusRow> load_rows(const std::string& folder, const std::array<const char*, N>& names, Build build,
                                 std::vector<RefusedRow>* refused) {
  const std::vector<std::string> files = corpus_files(folder);
  std::vector<CorpusRow> rows;
  std::set<std::string> ids;
  for (const auto& file : files) {
    constexpr auto columns = std::make_index_sequence<N>{};
    try {
      Reader<N> in(file);
      read_header(in, names, columns);
      std::array<std::string, N> values;
      while (read_row(in, values, columns)) {
        const std::string where = fmt::format("{} line {}", file, in.get_file_line());
        if (!ids.insert(values[0]).second) fail("{}: id '{}' appears twice in the corpus", where, values[0]);
        const RowFields fields(names, values, where);
        try {
          rows.push_back(build(fields));
        } catch (const SpecError& e) {
          const std::string what = e.what();
          if (what.rfind(where, 0) == 0) throw;  // the row itself is malformed
          // A well-formed run the simulator does not model (yet): kept out, and listed.
          if (refused) refused->push_back({values[0], values[1], what, e.field(), fields.integer_or("cp", 1, 1)});
          else fail("{} (id {}): {}", where, values[0], what);
        }
      }
    } catch (const io::error::base& e) {
      fail("{}: {}", file, e.what());
    }
  }
  if (rows.empty()) fail("corpus folder '{}' holds no measured rows (*.csv)", folder);
  return rows;
}

}  // namespace

bool CorpusRow::assumes(const std::string& column) const {
  return std::find(assumed.begin(), assumed.end(), column) != assumed.end();
}

std::string CorpusRow::job() const {
  return fmt::format("{} {} on {} x{} gb{} s{}", source, model.name, cluster.name, config.gpus(), config.global_batch,
                     model.seq_length);
}

std::vector<CorpusRow> load_corpus(const std::string& folder, std::vector<RefusedRow>* refused) {
  return load_rows(folder, kColumns, row_from, refused);
}

std::vector<CorpusRow> load_moe_corpus(const std::string& folder, std::vector<RefusedRow>* refused) {
  return load_rows(folder, kMoeColumns, moe_row_from, refused);
}

std::vector<std::string> corpus_files(const std::string& folder) {
  if (!std::filesystem::is_directory(folder)) fail("corpus folder '{}' does not exist", folder);
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(folder))
    if (e.is_regular_file() && e.path().extension() == ".csv") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<CorpusRow> rows_without(const std::vector<CorpusRow>& rows, const std::string& source) {
  std::vector<CorpusRow> kept;
  for (const auto& r : rows)
    if (r.source != source) kept.push_back(r);
  return kept;
}

std::vector<std::string> sources_of(const std::vector<CorpusRow>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows)
    if (std::find(out.begin(), out.end(), r.source) == out.end()) out.push_back(r.source);
  return out;
}

}  // namespace cc::accuracy
