#include "interop/layout_files.h"

#include <limits>
#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "sim/error.h"
#include "sim/json_fields.h"
#include "sim/presets.h"
#include "sim/result_json.h"

namespace cc {

namespace {

int to_int(const std::string& value, const std::string& what, const std::string& where) {
  try {
    std::size_t used = 0;
    const long v = std::stol(value, &used);
    if (used == value.size() && v >= 0 && v <= 1'000'000'000) return static_cast<int>(v);
  } catch (const std::exception&) {
  }
  fail("{}: {} is '{}'; expected a whole number", where, what, value);
}

double to_double(const std::string& value, const std::string& what, const std::string& where) {
  try {
    std::size_t used = 0;
    const double v = std::stod(value, &used);
    if (used == value.size()) return v;
  } catch (const std::exception&) {
  }
  fail("{}: {} is '{}'; expected a number", where, what, value);
}

// "--flag value" pairs and bare "--flag"s from whitespace-separated words.
std::map<std::string, std::string> flags_of(const std::vector<std::string>& words) {
  std::map<std::string, std::string> flags;
  for (std::size_t i = 0; i < words.size(); ++i) {
    if (words[i].rfind("--", 0) != 0) continue;
    const bool has_value = i + 1 < words.size() && words[i + 1].rfind("--", 0) != 0;
    flags[words[i]] = has_value ? words[i + 1] : "";
    if (has_value) ++i;
  }
  return flags;
}

std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The "# clustercast: ..." line: cluster, GPU count and memory reserve.
void apply_clustercast_comment(const std::string& text, LayoutFile& out, const std::string& where) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto pos = line.find("# clustercast:");
    if (pos == std::string::npos) continue;
    const auto flags = flags_of(words_of(line.substr(pos + 14)));
    if (flags.count("--cluster")) out.cluster = load_cluster(flags.at("--cluster"));
    if (flags.count("--gpus")) out.gpus = to_int(flags.at("--gpus"), "--gpus", where);
    MemoryReserve r;
    bool any = false;
    auto number = [&](const char* flag, double& field) {
      if (flags.count(flag)) {
        field = to_double(flags.at(flag), flag, where);
        any = true;
      }
    };
    number("--cuda-context-gib", r.cuda_context_gib);
    number("--comm-buffers-gib", r.comm_buffers_gib);
    number("--fragmentation", r.fragmentation_fraction);
    number("--memory-headroom", r.headroom_fraction);
    if (any) out.reserve = r;
  }
}

std::string clustercast_comment(const SimResult& r, const MemoryReserve& m) {
  return fmt::format("# clustercast: --cluster {} --gpus {} --cuda-context-gib {} --comm-buffers-gib {} "
                     "--fragmentation {} --memory-headroom {}\n",
                     r.cluster.name, r.config.gpus(), m.cuda_context_gib, m.comm_buffers_gib,
                     m.fragmentation_fraction, m.headroom_fraction);
}

std::string prediction_comment(const SimResult& r) {
  return fmt::format("# predicted by clustercast: {:.3f} s per iteration, {:.1f} TFLOP/s per GPU, MFU {:.1f}%, "
                     "{:.1f} GiB peak per GPU\n",
                     r.iteration_time_s, r.tflops_per_gpu, 100 * r.mfu, r.peak_memory_gib);
}

// A GPT-style base (the shape flags' own defaults) that Megatron / NeMo shape flags refine.
ModelSpec gpt_base() {
  ModelSpec m;
  m.name = "from-layout-file";
  m.vocab_size = 51200;
  m.seq_length = 2048;
  return m;
}

LayoutFile read_megatron(const std::string& text, const std::string& where) {
  LayoutFile out;
  std::string body;  // arguments without comment lines
  {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
      if (line.find('#') == std::string::npos) body += line + " ";
      else body += line.substr(0, line.find('#')) + " ";
  }
  const auto f = flags_of(words_of(body));
  auto integer = [&](const char* flag, int fallback) { return f.count(flag) ? to_int(f.at(flag), flag, where) : fallback; };
  ParallelConfig& c = out.config;
  c.tp = integer("--tensor-model-parallel-size", 1);
  c.pp = integer("--pipeline-model-parallel-size", 1);
  c.sequence_parallel = f.count("--sequence-parallel") > 0;
  c.micro_batch = integer("--micro-batch-size", 1);
  c.global_batch = integer("--global-batch-size", 0);
  c.first_stage_layers = integer("--decoder-first-pipeline-num-layers", 0);
  c.last_stage_layers = integer("--decoder-last-pipeline-num-layers", 0);
  if (f.count("--recompute-granularity")) c.recompute = recompute_granularity_from(f.at("--recompute-granularity"), where);
  if (f.count("--recompute-method")) c.recompute_method = recompute_method_from(f.at("--recompute-method"), where);
  c.recompute_num_layers = integer("--recompute-num-layers", 1);
  c.distributed_optimizer = f.count("--use-distributed-optimizer") > 0;
  c.overlap_grad_reduce = f.count("--overlap-grad-reduce") > 0;
  c.overlap_param_gather = f.count("--overlap-param-gather") > 0;
  // Megatron-LM's default --attention-backend auto runs flash or fused attention.
  c.attention = AttentionKernel::Flash;
  if (f.count("--attention-backend")) c.attention = attention_backend_from(f.at("--attention-backend"), where);
  if (f.count("--use-flash-attn")) c.attention = AttentionKernel::Flash;
  if (f.count("--fp16")) c.precision = Precision::FP16;
  if (f.count("--fp8-format")) c.precision = Precision::FP8;

  if (f.count("--num-layers") && f.count("--hidden-size") && f.count("--num-attention-heads")) {
    ModelSpec m = gpt_base();
    m.num_layers = integer("--num-layers", 0);
    m.hidden_size = integer("--hidden-size", 0);
    m.num_attention_heads = integer("--num-attention-heads", 0);
    m.num_query_groups = integer("--num-query-groups", m.num_attention_heads);
    m.ffn_hidden_size = integer("--ffn-hidden-size", 4 * m.hidden_size);
    m.seq_length = integer("--seq-length", m.seq_length);
    m.vocab_size = integer("--vocab-size", m.vocab_size);
    if (f.count("--swiglu")) m.activation = Activation::SwiGLU;
    if (f.count("--normalization") && f.at("--normalization") == "RMSNorm") m.normalization = Normalization::RMSNorm;
    if (f.count("--position-embedding-type") && f.at("--position-embedding-type") == "rope")
      m.position_embedding = PositionEmbedding::Rope;
    m.tied_embeddings = f.count("--untie-embeddings-and-output-weights") == 0;
    m.dropout = !(f.count("--hidden-dropout") && to_double(f.at("--hidden-dropout"), "--hidden-dropout", where) == 0);
    m.validate(where);
    out.model = m;
    if (f.count("--num-layers-per-virtual-pipeline-stage")) {
      const int per = integer("--num-layers-per-virtual-pipeline-stage", 1);
      if (per < 1 || m.num_layers % (c.pp * per) != 0)
        fail("{}: --num-layers-per-virtual-pipeline-stage {} does not divide {} layers over PP {}", where, per,
             m.num_layers, c.pp);
      c.virtual_stages = m.num_layers / (c.pp * per);
    }
  } else if (f.count("--num-layers-per-virtual-pipeline-stage")) {
    fail("{}: --num-layers-per-virtual-pipeline-stage needs --num-layers in the same file", where);
  }
  apply_clustercast_comment(text, out, where);
  if (out.gpus) c.dp = *out.gpus / std::max(1, c.tp * c.pp);
  if (c.global_batch == 0) c.global_batch = c.micro_batch * c.dp;
  return out;
}

// NeMo's config is YAML; we read the subset we write: nested "key: value" maps of scalars.
std::map<std::string, std::string> flat_yaml(const std::string& text, const std::string& where) {
  std::map<std::string, std::string> values;
  std::vector<std::pair<int, std::string>> path;  // (indent, key)
  std::istringstream lines(text);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line = line.substr(0, hash);
    const auto first = line.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    const int indent = static_cast<int>(first);
    const auto colon = line.find(':');
    if (colon == std::string::npos) fail("{}: line {} is not 'key: value'", where, number);
    const std::string key = line.substr(first, colon - first);
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(' '));
    value.erase(value.find_last_not_of(" \r") + 1);
    while (!path.empty() && path.back().first >= indent) path.pop_back();
    std::string full;
    for (const auto& p : path) full += p.second + ".";
    full += key;
    if (value.empty()) path.emplace_back(indent, key);
    else values[full] = value;
  }
  return values;
}

LayoutFile read_nemo(const std::string& text, const std::string& where) {
  const auto y = flat_yaml(text, where);
  LayoutFile out;
  auto has = [&](const std::string& k) { return y.count(k) && y.at(k) != "null"; };
  auto integer = [&](const std::string& k, int fallback) { return has(k) ? to_int(y.at(k), k, where) : fallback; };
  auto boolean = [&](const std::string& k) { return has(k) && y.at(k) == "true"; };
  ParallelConfig& c = out.config;
  c.tp = integer("model.tensor_model_parallel_size", 1);
  c.pp = integer("model.pipeline_model_parallel_size", 1);
  c.virtual_stages = integer("model.virtual_pipeline_model_parallel_size", 1);
  c.sequence_parallel = boolean("model.sequence_parallel");
  c.micro_batch = integer("model.micro_batch_size", 1);
  c.global_batch = integer("model.global_batch_size", 0);
  if (has("model.activations_checkpoint_granularity"))
    c.recompute = recompute_granularity_from(y.at("model.activations_checkpoint_granularity"), where);
  if (has("model.activations_checkpoint_method"))
    c.recompute_method = recompute_method_from(y.at("model.activations_checkpoint_method"), where);
  c.recompute_num_layers = integer("model.activations_checkpoint_num_layers", 1);
  c.distributed_optimizer = has("model.optim.name") && y.at("model.optim.name") == "distributed_fused_adam";
  c.overlap_grad_reduce = boolean("model.optim.overlap_grad_sync");
  c.overlap_param_gather = boolean("model.optim.overlap_param_sync");
  if (boolean("model.use_flash_attention")) c.attention = AttentionKernel::Flash;
  if (has("trainer.precision") && y.at("trainer.precision").find("16") != std::string::npos &&
      y.at("trainer.precision").find("bf") == std::string::npos)
    c.precision = Precision::FP16;
  if (has("model.num_layers")) {
    ModelSpec m = gpt_base();
    m.num_layers = integer("model.num_layers", 0);
    m.hidden_size = integer("model.hidden_size", 0);
    m.num_attention_heads = integer("model.num_attention_heads", 0);
    m.num_query_groups = integer("model.num_query_groups", m.num_attention_heads);
    m.ffn_hidden_size = integer("model.ffn_hidden_size", 4 * m.hidden_size);
    m.seq_length = integer("model.encoder_seq_length", m.seq_length);
    m.vocab_size = integer("model.vocab_size", m.vocab_size);
    if (has("model.activation") && y.at("model.activation") == "swiglu") m.activation = Activation::SwiGLU;
    if (has("model.normalization") && y.at("model.normalization") == "rmsnorm") m.normalization = Normalization::RMSNorm;
    if (has("model.position_embedding_type") && y.at("model.position_embedding_type") == "rope")
      m.position_embedding = PositionEmbedding::Rope;
    m.tied_embeddings = !has("model.share_embeddings_and_output_weights") ||
                        y.at("model.share_embeddings_and_output_weights") == "true";
    m.dropout = !(has("model.hidden_dropout") && to_double(y.at("model.hidden_dropout"), "hidden_dropout", where) == 0);
    m.validate(where);
    out.model = m;
  }
  if (has("trainer.devices") && has("trainer.num_nodes")) {
    // In 64 bits: two values up to 1e9 each wrapped an int and printed an overflowed DP.
    const long long devices = integer("trainer.devices", 1), nodes = integer("trainer.num_nodes", 1);
    if (devices < 1 || nodes < 1 || devices * nodes > std::numeric_limits<int>::max())
      fail("{}: trainer.devices {} x trainer.num_nodes {} is not a GPU count; each must be >= 1 and the product at "
           "most {}",
           where, devices, nodes, std::numeric_limits<int>::max());
    out.gpus = static_cast<int>(devices * nodes);
  }
  apply_clustercast_comment(text, out, where);
  if (out.gpus) c.dp = *out.gpus / std::max(1, c.tp * c.pp);
  if (c.global_batch == 0) c.global_batch = c.micro_batch * c.dp;
  return out;
}

LayoutFile read_json_layout(const std::string& text, const std::string& where) {
  const auto doc = parse_json(text, where);
  LayoutFile out;
  const JsonFields f(doc, where);
  // Either an exported layout with a "config" object, or a bare config object.
  // layout_json() writes format "clustercast-layout", version 1: refuse what we did not write
  // rather than read a future or foreign file as if it were ours.
  if (f.has("format") && f.string("format") != "clustercast-layout")
    fail("{}: format is '{}'; the only layout format read is 'clustercast-layout'", where, f.string("format"));
  if (f.has("version") && f.integer("version", 0) != 1)
    fail("{}: version is {}; this clustercast reads layout version 1", where, f.raw("version").dump());
  const nlohmann::json& config_doc = f.has("config") ? f.raw("config") : doc;
  const JsonFields config(config_doc, where);
  for (const char* key : {"tensor_model_parallel_size", "pipeline_model_parallel_size"})
    if (!config.has(key)) fail("{}: config field '{}' is missing (not a clustercast layout?)", where, key);
  out.config = config_from_json(config_doc, where);
  if (!f.has("config")) return out;
  if (f.has("model") && f.raw("model").is_object()) out.model = model_from_json(f.raw("model"), where + " (model)");
  if (f.has("cluster_spec")) out.cluster = cluster_from_json(f.raw("cluster_spec"), where + " (cluster_spec)");
  if (f.has("gpus")) out.gpus = static_cast<int>(f.integer("gpus", 1));
  if (f.has("memory_reserve")) {
    const JsonFields m = f.object("memory_reserve");
    // Any number here: the range checks are the flags' own (cli ClusterFlags::reserve), one
    // path for values from flags and from files.
    constexpr double kAny = std::numeric_limits<double>::lowest();
    out.reserve = MemoryReserve{m.number("cuda_context_gib", kAny), m.number("comm_buffers_gib", kAny),
                                m.number("fragmentation_fraction", kAny), m.number("headroom_fraction", kAny)};
  }
  return out;
}

}  // namespace

AttentionKernel attention_backend_from(const std::string& name, const std::string& where) {
  if (name == "auto" || name == "flash" || name == "fused") return AttentionKernel::Flash;
  if (name == "unfused" || name == "local") return AttentionKernel::Unfused;
  fail("{}: --attention-backend '{}' is not one of auto, flash, fused, unfused, local", where, name);
}

LayoutFile read_layout_file(const std::string& path) {
  const std::string text = read_regular_file(path, "layout file");
  const std::string where = "layout file '" + path + "'";
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) fail("{} is empty", where);
  if (text[first] == '{') return read_json_layout(text, where);
  // A Megatron argument file has "--flags"; a NeMo config has "key:" lines.
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line[start] == '#') continue;
    if (line.compare(start, 2, "--") == 0) return read_megatron(text, where);
    if (line.find(':') != std::string::npos) return read_nemo(text, where);
    break;
  }
  fail("{}: not a clustercast JSON layout, a Megatron-LM argument file or a NeMo YAML", where);
}

std::string layout_json(const SimResult& r, const MemoryReserve& m) {
  nlohmann::json doc = result_to_json(r);
  doc["format"] = "clustercast-layout";
  doc["version"] = 1;
  doc["cluster_spec"] = cluster_to_json(r.cluster);
  doc["memory_reserve"] = {{"cuda_context_gib", m.cuda_context_gib},
                           {"comm_buffers_gib", m.comm_buffers_gib},
                           {"fragmentation_fraction", m.fragmentation_fraction},
                           {"headroom_fraction", m.headroom_fraction}};
  return doc.dump(2) + "\n";
}

std::string megatron_arguments(const SimResult& r, const MemoryReserve& reserve) {
  const ParallelConfig& c = r.config;
  const ModelSpec& m = r.model;
  std::string out = fmt::format("# Megatron-LM arguments for {} on {} x {} — pass them to pretrain_gpt.py\n", m.name,
                                c.gpus(), r.cluster.gpu.name);
  out += prediction_comment(r);
  out += clustercast_comment(r, reserve);
  auto arg = [&](const std::string& flag, const std::string& value = "") {
    out += value.empty() ? flag + "\n" : flag + " " + value + "\n";
  };
  arg("--tensor-model-parallel-size", std::to_string(c.tp));
  arg("--pipeline-model-parallel-size", std::to_string(c.pp));
  if (c.virtual_stages > 1)
    arg("--num-layers-per-virtual-pipeline-stage", std::to_string(m.num_layers / (c.pp * c.virtual_stages)));
  if (c.first_stage_layers) arg("--decoder-first-pipeline-num-layers", std::to_string(c.first_stage_layers));
  if (c.last_stage_layers) arg("--decoder-last-pipeline-num-layers", std::to_string(c.last_stage_layers));
  if (c.sequence_parallel) arg("--sequence-parallel");
  arg("--micro-batch-size", std::to_string(c.micro_batch));
  arg("--global-batch-size", std::to_string(c.global_batch));
  if (c.recompute != RecomputeGranularity::None) arg("--recompute-granularity", to_string(c.recompute));
  if (c.recompute == RecomputeGranularity::Full) {
    arg("--recompute-method", to_string(c.recompute_method));
    arg("--recompute-num-layers", std::to_string(c.recompute_num_layers));
  }
  if (c.distributed_optimizer) arg("--use-distributed-optimizer");
  if (c.overlap_grad_reduce) arg("--overlap-grad-reduce");
  if (c.overlap_param_gather) arg("--overlap-param-gather");
  // Always written: without it Megatron-LM (and our reader) take auto, i.e. flash.
  arg("--attention-backend", c.attention == AttentionKernel::Flash ? "flash" : "unfused");
  switch (c.precision) {
    case Precision::BF16: arg("--bf16"); break;
    case Precision::FP16: arg("--fp16"); break;
    case Precision::FP8: arg("--bf16"); arg("--fp8-format", "hybrid"); break;
    case Precision::FP32: break;
  }
  arg("--num-layers", std::to_string(m.num_layers));
  arg("--hidden-size", std::to_string(m.hidden_size));
  arg("--num-attention-heads", std::to_string(m.num_attention_heads));
  if (m.num_query_groups != m.num_attention_heads) {
    arg("--group-query-attention");
    arg("--num-query-groups", std::to_string(m.num_query_groups));
  }
  arg("--ffn-hidden-size", std::to_string(m.ffn_hidden_size));
  arg("--seq-length", std::to_string(m.seq_length));
  arg("--max-position-embeddings", std::to_string(m.seq_length));
  arg("--vocab-size", std::to_string(m.vocab_size));
  if (m.activation == Activation::SwiGLU) arg("--swiglu");
  if (m.normalization == Normalization::RMSNorm) arg("--normalization", "RMSNorm");
  if (m.position_embedding == PositionEmbedding::Rope) arg("--position-embedding-type", "rope");
  if (!m.tied_embeddings) arg("--untie-embeddings-and-output-weights");
  if (!m.dropout) {
    arg("--attention-dropout", "0.0");
    arg("--hidden-dropout", "0.0");
  }
  return out;
}

std::string nemo_yaml(const SimResult& r, const MemoryReserve& reserve) {
  const ParallelConfig& c = r.config;
  const ModelSpec& m = r.model;
  const int gpn = r.cluster.gpus_per_node;
  const int devices = std::min(gpn, c.gpus());
  auto yes = [](bool b) { return b ? "true" : "false"; };
  std::string out = fmt::format("# NeMo Megatron GPT config for {} on {} x {}\n", m.name, c.gpus(), r.cluster.gpu.name);
  out += prediction_comment(r);
  out += clustercast_comment(r, reserve);
  out += "trainer:\n";
  out += fmt::format("  devices: {}\n  num_nodes: {}\n", devices, c.gpus() / devices);
  out += fmt::format("  precision: {}\n", c.precision == Precision::FP16 ? "16-mixed" : "bf16-mixed");
  out += "model:\n";
  out += fmt::format("  micro_batch_size: {}\n  global_batch_size: {}\n", c.micro_batch, c.global_batch);
  out += fmt::format("  tensor_model_parallel_size: {}\n  pipeline_model_parallel_size: {}\n", c.tp, c.pp);
  out += fmt::format("  virtual_pipeline_model_parallel_size: {}\n",
                     c.virtual_stages > 1 ? std::to_string(c.virtual_stages) : "null");
  out += fmt::format("  sequence_parallel: {}\n", yes(c.sequence_parallel));
  const bool full = c.recompute == RecomputeGranularity::Full;
  out += fmt::format("  activations_checkpoint_granularity: {}\n",
                     c.recompute == RecomputeGranularity::None ? "null" : to_string(c.recompute));
  out += fmt::format("  activations_checkpoint_method: {}\n", full ? to_string(c.recompute_method) : "null");
  out += fmt::format("  activations_checkpoint_num_layers: {}\n",
                     full ? std::to_string(c.recompute_num_layers) : "null");
  out += fmt::format("  encoder_seq_length: {}\n  max_position_embeddings: {}\n", m.seq_length, m.seq_length);
  out += fmt::format("  num_layers: {}\n  hidden_size: {}\n  ffn_hidden_size: {}\n", m.num_layers, m.hidden_size,
                     m.ffn_hidden_size);
  out += fmt::format("  num_attention_heads: {}\n  num_query_groups: {}\n", m.num_attention_heads, m.num_query_groups);
  out += fmt::format("  vocab_size: {}\n", m.vocab_size);
  out += fmt::format("  activation: {}\n", m.activation == Activation::SwiGLU ? "swiglu" : "gelu");
  out += fmt::format("  normalization: {}\n", m.normalization == Normalization::RMSNorm ? "rmsnorm" : "layernorm");
  out += fmt::format("  position_embedding_type: {}\n",
                     m.position_embedding == PositionEmbedding::Rope ? "rope" : "learned_absolute");
  out += fmt::format("  share_embeddings_and_output_weights: {}\n", yes(m.tied_embeddings));
  out += fmt::format("  hidden_dropout: {}\n  attention_dropout: {}\n", m.dropout ? 0.1 : 0.0, m.dropout ? 0.1 : 0.0);
  out += fmt::format("  use_flash_attention: {}\n", yes(c.attention == AttentionKernel::Flash));
  out += "  optim:\n";
  out += fmt::format("    name: {}\n", c.distributed_optimizer ? "distributed_fused_adam" : "fused_adam");
  out += fmt::format("    overlap_grad_sync: {}\n    overlap_param_sync: {}\n", yes(c.overlap_grad_reduce),
                     yes(c.overlap_param_gather));
  return out;
}

}  // namespace cc
