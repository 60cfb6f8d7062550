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

// The corpus schema, in file order (tests/reference/measured/README.md).
constexpr std::array<const char*, 40> kColumns = {
    "id", "source", "model", "num_layers", "hidden_size", "num_attention_heads", "num_query_groups",
    "ffn_hidden_size", "swiglu", "normalization", "seq_length", "vocab_size", "cluster", "gpus", "framework",
    "attention", "precision", "tp", "cp", "cp_comm_type", "pp", "dp", "virtual_stages", "pipeline_layout", "first_stage_layers", "last_stage_layers",
    "sequence_parallel", "recompute_granularity", "recompute_method", "recompute_num_layers", "micro_batch",
    "global_batch", "distributed_optimizer", "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap",
    "iteration_time_s", "peak_memory_gib", "assumed", "note"};

using Reader = io::CSVReader<kColumns.size(), io::trim_chars<' ', '\t'>, io::double_quote_escape<',', '"'>>;

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
  RowFields(const std::array<std::string, kColumns.size()>& values, std::string where)
      : values_(values), where_(std::move(where)) {}

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
  bool flag(const char* column) const {
    const std::string& t = text(column);
    if (t == "0" || t.empty()) return false;
    if (t == "1") return true;
    fail("{}: column {} is '{}'; it must be 0 or 1", where_, column, t);
  }
  const std::string& where() const { return where_; }

 private:
  static std::size_t index(const char* column) {
    for (std::size_t i = 0; i < kColumns.size(); ++i)
      if (std::string_view(kColumns[i]) == column) return i;
    throw std::logic_error(std::string("no corpus column ") + column);
  }
  const std::array<std::string, kColumns.size()>& values_;
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

CorpusRow row_from(const RowFields& f) {
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
  // The schema has no position, tying or dropout columns: Llama-style rows (SwiGLU with
  // RMSNorm) are RoPE, untied and without dropout, as their configs set; GPT-style rows
  // learned positions, tied embeddings and dropout 0.1, as GPT-3 and Megatron's examples do.
  const bool llama_style = m.activation == Activation::SwiGLU && m.normalization == Normalization::RMSNorm;
  m.position_embedding = llama_style ? PositionEmbedding::Rope : PositionEmbedding::Learned;
  m.tied_embeddings = !llama_style;
  m.dropout = !llama_style;
  m.validate(f.where());

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
  // A run overlaps as its stack does by default, unless its row states otherwise.
  apply_framework(c, f.text("framework"));
  for (auto [column, field] : {std::pair{"overlap_grad_reduce", &ParallelConfig::overlap_grad_reduce},
                               std::pair{"overlap_param_gather", &ParallelConfig::overlap_param_gather},
                               std::pair{"tp_comm_overlap", &ParallelConfig::tp_comm_overlap}})
    if (!f.text(column).empty()) c.*field = f.flag(column);
  const int gpus = f.integer("gpus", 1);
  validate(c, m, r.cluster, gpus);

  r.measured_s = f.positive("iteration_time_s");
  if (!f.text("peak_memory_gib").empty()) r.measured_peak_gib = f.positive("peak_memory_gib");
  return r;
}

template <std::size_t... I>
bool read_row(Reader& in, std::array<std::string, kColumns.size()>& v, std::index_sequence<I...>) {
  return in.read_row(v[I]...);
}

template <std::size_t... I>
void read_header(Reader& in, std::index_sequence<I...>) {
  in.read_header(io::ignore_no_column, kColumns[I]...);
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
  std::vector<std::string> files;
  if (!std::filesystem::is_directory(folder)) fail("corpus folder '{}' does not exist", folder);
  for (const auto& e : std::filesystem::directory_iterator(folder))
    if (e.is_regular_file() && e.path().extension() == ".csv") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<CorpusRow> rows;
  std::set<std::string> ids;
  for (const auto& file : files) {
    constexpr auto columns = std::make_index_sequence<kColumns.size()>{};
    try {
      Reader in(file);
      read_header(in, columns);
      std::array<std::string, kColumns.size()> values;
      while (read_row(in, values, columns)) {
        const std::string where = fmt::format("{} line {}", file, in.get_file_line());
        if (!ids.insert(values[0]).second) fail("{}: id '{}' appears twice in the corpus", where, values[0]);
        try {
          rows.push_back(row_from(RowFields(values, where)));
        } catch (const SpecError& e) {
          const std::string what = e.what();
          if (what.rfind(where, 0) == 0) throw;  // the row itself is malformed
          // A well-formed run the simulator does not model (yet): kept out, and listed.
          if (refused) refused->push_back({values[0], values[1], what, RowFields(values, where).integer_or("cp", 1, 1)});
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

std::vector<std::string> sources_of(const std::vector<CorpusRow>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows)
    if (std::find(out.begin(), out.end(), r.source) == out.end()) out.push_back(r.source);
  return out;
}

}  // namespace cc::accuracy
