#include "interop/layout_common.h"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

#include "sim/error.h"
#include "sim/layout_rules.h"
#include "sim/numbers.h"
#include "sim/presets.h"

namespace cc::interop {

std::string prefix(const std::string& where) { return where.empty() ? "" : where + ": "; }

int to_int(const std::string& value, const std::string& what, const std::string& where) {
  // Up to 1e9, below what an int holds: no count in a layout comes near it.
  return static_cast<int>(read_integer(value, what, 0, 1'000'000'000, where));
}

double to_double(const std::string& value, const std::string& what, const std::string& where) {
  // NaN and infinity reach the field's own range check, which names the range: every real a
  // layout file holds (dropouts, the memory reserve) has one.
  if (const auto non_finite = parse_non_finite(value)) return *non_finite;
  return read_real(value, what, where);
}

namespace {

std::vector<std::string> words_of(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

}  // namespace

void apply_clustercast_comment(const std::string& text, LayoutFile& out, const std::string& where) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const auto pos = line.find("# clustercast:");
    if (pos == std::string::npos) continue;
    const auto words = words_of(line.substr(pos + 14));
    auto value_of = [&](const char* flag) -> const std::string* {
      for (std::size_t i = 0; i + 1 < words.size(); ++i)
        if (words[i] == flag) return &words[i + 1];
      return nullptr;
    };
    if (const auto* v = value_of("--cluster")) out.cluster = load_cluster(*v);
    if (const auto* v = value_of("--gpus")) out.gpus = to_int(*v, "--gpus", where);
    // The comment's vocabulary is the simulated one, already padded: no TP change pads it again.
    if (const auto* v = value_of("--vocab-size"); v && out.model) {
      out.model->vocab_size = to_int(*v, "--vocab-size", where);
      out.vocabulary.reset();
    }
    if (const auto* v = value_of("--decoder-first-pipeline-num-layers"))
      out.config.first_stage_layers = to_int(*v, "--decoder-first-pipeline-num-layers", where);
    if (const auto* v = value_of("--decoder-last-pipeline-num-layers"))
      out.config.last_stage_layers = to_int(*v, "--decoder-last-pipeline-num-layers", where);
    if (std::find(words.begin(), words.end(), "--overlap-grad-reduce") != words.end())
      out.config.overlap_grad_reduce = true;
    if (const auto* v = value_of("--framework")) apply_framework(out.config, *v);
    if (const auto* v = value_of("--moe-load-imbalance"))
      out.config.moe.load_imbalance = to_double(*v, "--moe-load-imbalance", where);
    MemoryReserve r;
    bool any = false;
    auto number = [&](const char* flag, double& field) {
      if (const auto* v = value_of(flag)) {
        field = to_double(*v, flag, where);
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

std::string clustercast_comment(const SimResult& r, const MemoryReserve& m, const std::string& extra) {
  // --moe-load-imbalance is clustercast's own, so Megatron-LM's and NeMo's keys cannot carry it.
  const auto& imbalance = r.config.moe.load_imbalance;
  // The software stack too: neither format has a key for it, and it changes the prediction.
  return fmt::format("# clustercast: --cluster {} --gpus {} --framework {} --cuda-context-gib {} --comm-buffers-gib {} "
                     "--fragmentation {} --memory-headroom {}{}{}\n",
                     r.cluster.name, r.config.gpus(), r.config.framework, m.cuda_context_gib, m.comm_buffers_gib,
                     m.fragmentation_fraction, m.headroom_fraction,
                     imbalance ? fmt::format(" --moe-load-imbalance {}", *imbalance) : "", extra);
}

std::string prediction_comment(const SimResult& r) {
  return fmt::format("# predicted by clustercast: {:.3f} s per iteration, {:.1f} TFLOP/s per GPU, MFU {:.1f}%, "
                     "{:.1f} GiB peak per GPU\n",
                     r.iteration_time_s, r.tflops_per_gpu, 100 * r.mfu, r.peak_memory_gib);
}

ModelSpec gpt_base() {
  ModelSpec m;
  m.name = kLayoutFileModelName;
  m.vocab_size = 51200;
  m.seq_length = 2048;
  return m;
}

void refuse_unwritable_architecture(const ModelSpec& m, const std::string& export_flag) {
  auto refuse = [&](const char* what) {
    fail("{}: model '{}' has {}, which Megatron-LM's model flags and NeMo's keys cannot express; export it with "
         "--export (JSON)",
         export_flag, m.name, what);
  };
  if (m.moe.router_linear_bias) refuse("a router with a bias (gpt-oss)");
  if (m.attention_sinks) refuse("attention sinks (gpt-oss)");
  if (m.attention_softcap > 0 || m.final_logit_softcap > 0) refuse("soft-capped attention scores or logits (Gemma 2)");
  if (m.qk_norm == QkNorm::Full) refuse("q/k norms over the whole query and key widths (OLMoE)");
  // Biases are one switch in both (Megatron-LM's --add-bias-linear, NeMo's bias) with Q, K and V's
  // own beside it.
  if (m.moe.enabled() && m.projection_bias != m.moe.expert_linear_biases)
    refuse("biases on the attention's output projection but not on the experts' linears, or the reverse");
  if (m.moe_layer_count() < m.num_layers && m.projection_bias != m.dense_mlp_bias())
    refuse(m.projection_bias ? "biases on the attention's linears but none on the MLP's (give it "
                               "\"mlp_bias\": true in a model JSON, or drop every bias with --disable-bias-linear)"
                             : "biases on the MLP's linears but none on the attention's (GPT-J's layout; "
                               "--disable-bias-linear drops the MLP's too)");
  // Latent attention has no Q, K, V projections to bias: Megatron-LM's --add-bias-linear biases its
  // output projection alone.
  if (m.projection_bias && !m.qkv_bias && !m.mla.enabled) refuse("a biased output projection with unbiased Q, K and V");
}

void finish_layout(LayoutFile& out, const std::string& where) {
  ParallelConfig& c = out.config;
  // A count below 1 is refused by the command that reads the file, naming the file.
  if (out.gpus && *out.gpus >= 1) {
    const std::optional<int> dp = data_parallel_size(*out.gpus, c.tp, c.cp, c.pp);
    if (!dp)
      fail("{}: {} GPUs are not divisible by {}; DP = GPUs / (TP x CP x PP) must be whole", where, *out.gpus,
           model_parallel_text(c.tp, c.cp, c.pp));
    c.dp = *dp;
  }
  out.global_batch_named = c.global_batch != 0;
  if (c.global_batch == 0) c.global_batch = default_global_batch(c.micro_batch, c.dp);
}

}  // namespace cc::interop
