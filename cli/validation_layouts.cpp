#include "cli/validation_layouts.h"

#include <charconv>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sim/error.h"
#include "sim/layout_rules.h"
#include "sim/layout_validation.h"

namespace cc::cli {

namespace {

constexpr const char* kKeys =
    "tp=N, pp=N, dp=N (optional: ranks / (TP x PP)), mbs=N, gbs=N, vpp=N (virtual stages per pipeline stage) or lpvs=N (layers per virtual stage), sp, "
    "recompute=none|selective|full, method=uniform|block, rlayers=N, distopt, seq=N, layers=N (the model at another sequence length or depth)";

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\n");
  const auto e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string& s, char by) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (std::size_t at; (at = s.find(by, from)) != std::string::npos; from = at + 1) out.push_back(trim(s.substr(from, at - from)));
  out.push_back(trim(s.substr(from)));
  return out;
}

int positive(const std::string& item, const std::string& key, const std::string& value) {
  int v = 0;
  const auto [end, err] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (err != std::errc() || end != value.data() + value.size() || v < 1)
    fail("--layouts '{}': {}={} is not a positive integer", item, key, value);
  return v;
}

ValidationLayout parse_item(const std::string& item, const ModelSpec& model, int ranks, Precision precision) {
  std::map<std::string, std::string> keys;
  for (const std::string& part : split(item, ',')) {
    const auto eq = part.find('=');
    const std::string key = trim(part.substr(0, eq));
    const std::string value = eq == std::string::npos ? "" : trim(part.substr(eq + 1));
    static const std::set<std::string> flags = {"sp", "distopt"};
    static const std::set<std::string> valued = {"tp", "pp", "dp", "mbs", "gbs", "vpp", "lpvs", "recompute", "method", "rlayers", "seq", "layers"};
    if (flags.count(key) ? eq != std::string::npos : !valued.count(key) || value.empty())
      fail("--layouts '{}': '{}' is not understood; an item is a comma list of {}", item, part, kKeys);
    if (!keys.emplace(key, value).second) fail("--layouts '{}': '{}' is given twice", item, key);
  }
  auto number = [&](const char* key, int fallback) {
    const auto it = keys.find(key);
    return it == keys.end() ? fallback : positive(item, key, it->second);
  };
  ValidationLayout l;
  l.text = item;
  ParallelConfig& c = l.config;
  c.tp = number("tp", 1);
  c.pp = number("pp", 1);
  const std::optional<int> dp = data_parallel_size(ranks, c.tp, 1, c.pp);
  if (!dp)
    fail("--layouts '{}': TP {} x PP {} does not divide the {} ranks (DP = ranks / (TP x PP))", item, c.tp, c.pp, ranks);
  c.dp = *dp;
  if (number("dp", c.dp) != c.dp)
    fail("--layouts '{}': dp={} but {} ranks / (TP {} x PP {}) = {}", item, keys["dp"], ranks, c.tp, c.pp, c.dp);
  c.micro_batch = number("mbs", 1);
  c.global_batch = number("gbs", default_global_batch(c.micro_batch, c.dp) * kValidationMicrobatches);
  if (keys.count("vpp") && keys.count("lpvs")) fail("--layouts '{}': give vpp= or lpvs=, not both", item);
  c.virtual_stages = number("vpp", 1);
  c.sequence_parallel = keys.count("sp") > 0;
  c.distributed_optimizer = keys.count("distopt") > 0;
  if (keys.count("recompute")) c.recompute = recompute_granularity_from(keys["recompute"], fmt::format("--layouts '{}': recompute", item));
  if (keys.count("method")) c.recompute_method = recompute_method_from(keys["method"], fmt::format("--layouts '{}': method", item));
  c.recompute_num_layers = number("rlayers", 1);
  c.precision = precision;
  c.attention = AttentionKernel::Unfused;  // the engine materialises the attention scores
  if (keys.count("seq")) l.seq_length = number("seq", 0);
  if (keys.count("layers")) l.num_layers = number("layers", 0);
  const ModelSpec m = l.model_for(model);
  if (keys.count("lpvs"))
    c.virtual_stages =
        virtual_stages_from_layers_per_stage(number("lpvs", 1), m.num_layers, c, fmt::format("--layouts '{}': ", item));
  if (m.num_layers % (c.pp * c.virtual_stages) != 0)
    fail("--layouts '{}': {} layers do not split into PP {} x vpp {} equal chunks", item, m.num_layers, c.pp,
         c.virtual_stages);
  validate_layout(c, m, ranks);
  return l;
}

}  // namespace

ModelSpec ValidationLayout::model_for(const ModelSpec& base) const {
  ModelSpec m = base;
  if (seq_length) m.seq_length = *seq_length;
  if (num_layers) m.num_layers = *num_layers;
  return m;
}

std::vector<std::string> ValidationLayout::train_flags(const ModelSpec& base) const {
  const ParallelConfig& c = config;
  std::vector<std::string> f = {"--tp", std::to_string(c.tp), "--pp", std::to_string(c.pp), "--micro-batch-size",
                                std::to_string(c.micro_batch), "--global-batch-size", std::to_string(c.global_batch),
                                "--recompute-granularity", to_string(c.recompute), "--recompute-method",
                                to_string(c.recompute_method), "--recompute-num-layers",
                                std::to_string(c.recompute_num_layers)};
  if (c.virtual_stages > 1) {
    f.push_back("--num-layers-per-virtual-pipeline-stage");
    f.push_back(std::to_string(model_for(base).num_layers / (c.pp * c.virtual_stages)));
  }
  if (c.sequence_parallel) f.push_back("--sequence-parallel");
  if (c.distributed_optimizer) f.push_back("--use-distributed-optimizer");
  if (seq_length) {
    f.push_back("--seq-length");
    f.push_back(std::to_string(*seq_length));
  }
  if (num_layers) {
    f.push_back("--num-layers");
    f.push_back(std::to_string(*num_layers));
  }
  return f;
}

std::vector<ValidationLayout> parse_validation_layouts(const std::string& text, const ModelSpec& model, int ranks,
                                                       Precision precision) {
  std::vector<ValidationLayout> out;
  for (const std::string& item : split(text, ';'))
    if (!item.empty()) out.push_back(parse_item(item, model, ranks, precision));
  if (out.empty()) fail("--layouts '{}' names no layout; write e.g. \"pp=2,mbs=2; tp=2,sp\" ({})", text, kKeys);
  return out;
}

}  // namespace cc::cli
