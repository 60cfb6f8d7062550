#include "sim/pipeline_layout_string.h"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include <fmt/format.h>

#include "sim/error.h"

namespace cc {

namespace {

constexpr const char* kFlag = "--pipeline-model-parallel-layout";
// A bound on the expanded string, so "t*99999999999" is refused rather than allocated.
constexpr std::int64_t kMostLayers = 1'000'000;

bool is_digit(char ch) { return std::isdigit(static_cast<unsigned char>(ch)) != 0; }

// The repeat count of "*N" starting at `at` (just past the '*'); `end` is set past its digits.
// None (-1) when no digit follows.
std::int64_t repeat_count(const std::string& s, std::size_t at, std::size_t& end, const std::string& layout) {
  end = at;
  std::int64_t n = 0;
  while (end < s.size() && is_digit(s[end])) {
    n = n * 10 + (s[end++] - '0');
    if (n > kMostLayers)
      fail_at(kFlag, "{} '{}' repeats a group more than {} times; give a layout of at most that many layers", kFlag,
              layout, kMostLayers);
  }
  return end == at ? -1 : n;
}

void append_repeated(std::string& out, const std::string& piece, std::int64_t times, const std::string& layout) {
  if (static_cast<std::int64_t>(out.size()) + static_cast<std::int64_t>(piece.size()) * times > kMostLayers)
    fail_at(kFlag, "{} '{}' expands to more than {} characters; give a layout of at most that many layers", kFlag,
            layout, kMostLayers);
  for (std::int64_t i = 0; i < times; ++i) out += piece;
}

// Megatron-Core's two rewrites, each one left-to-right pass as Python's re.sub makes it:
// "(group)*N" (a group holds no ')', so parentheses do not nest), then "x*N" for any one
// character x. What they leave ('(', '*', digits) is refused later as a character.
std::string unroll_groups(const std::string& s, const std::string& layout) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '(') {
      const std::size_t close = s.find(')', i + 1);
      std::size_t end = 0;
      if (close != std::string::npos && close > i + 1 && close + 1 < s.size() && s[close + 1] == '*') {
        const std::int64_t n = repeat_count(s, close + 2, end, layout);
        if (n >= 0) {
          append_repeated(out, s.substr(i + 1, close - i - 1), n, layout);
          i = end;
          continue;
        }
      }
    }
    out += s[i++];
  }
  return out;
}

std::string unroll_characters(const std::string& s, const std::string& layout) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t end = 0;
    if (s[i] != '\n' && i + 1 < s.size() && s[i + 1] == '*') {
      const std::int64_t n = repeat_count(s, i + 2, end, layout);
      if (n >= 0) {
        append_repeated(out, std::string(1, s[i]), n, layout);
        i = end;
        continue;
      }
    }
    out += s[i++];
  }
  return out;
}

std::string without_commas(const std::string& s) {
  std::string out;
  for (char ch : s)
    if (ch != ',') out += ch;
  return out;
}

std::string printable(char ch) {
  return std::isprint(static_cast<unsigned char>(ch)) ? fmt::format("'{}'", ch)
                                                     : fmt::format("byte {}", static_cast<unsigned char>(ch));
}

}  // namespace

std::vector<LayoutStage> parse_pipeline_layout(const std::string& layout) {
  const std::string expanded = unroll_characters(unroll_groups(without_commas(layout), layout), layout);
  std::vector<LayoutStage> stages(1);
  for (std::size_t i = 0; i < expanded.size(); ++i) {
    const char ch = expanded[i];
    LayoutStage& stage = stages.back();
    switch (ch) {
      case '|': stages.emplace_back(); break;
      case 't':
        // Megatron-Core: "decoder layers must be placed before MTP layers".
        if (std::any_of(stages.begin(), stages.end(), [](const LayoutStage& s) { return s.mtp_layers > 0; }))
          fail_at(kFlag, "{} '{}': a transformer layer t after an MTP layer m; MTP layers follow every decoder layer",
                  kFlag, layout);
        ++stage.transformer_layers;
        break;
      case 'E':
        // Megatron-Core: the first layer must be the embedding, and it comes once. It builds the
        // embedding on the first virtual stage, so an empty stage before it is refused too.
        if (i != 0)
          fail_at(kFlag,
                  "{} '{}': the embedding E comes once, as the first layer of the first virtual stage (e.g. "
                  "\"Et*7|...\")",
                  kFlag, layout);
        stage.embedding = true;
        break;
      case 'L':
        if (i + 1 != expanded.size())
          fail_at(kFlag,
                  "{} '{}': the loss L comes once, as the last layer of the last virtual stage (e.g. \"...|t*7L\")",
                  kFlag, layout);
        stage.loss = true;
        break;
      case 'm': ++stage.mtp_layers; break;
      default:
        fail_at(kFlag,
                "{} '{}': {} is not a layer; known: E (embedding), t (transformer layer), m (multi-token prediction "
                "layer), L (loss), | between virtual stages, (...)*N and x*N repeats, commas",
                kFlag, layout, printable(ch));
    }
  }
  if (!stages.front().embedding)
    fail_at(kFlag, "{} '{}': the first layer must be the embedding E (e.g. \"Et*7|...\")", kFlag, layout);
  if (!stages.back().loss)
    fail_at(kFlag, "{} '{}': the last layer must be the loss L (e.g. \"...|t*7L\")", kFlag, layout);
  for (std::size_t i = 0; i + 1 < stages.size(); ++i)
    if (stages[i].mtp_layers > 0)
      fail_at(kFlag,
              "{} '{}': MTP layers m in virtual stage {} of {} (Megatron-Core's standalone MTP stage) are not "
              "modelled; clustercast prices them in the last virtual stage, beside the loss (e.g. \"...|tmL\")",
              kFlag, layout, i, stages.size());
  return stages;
}

int layout_virtual_stages(const std::string& layout, const std::vector<LayoutStage>& stages, int pp,
                          const std::string& where) {
  const auto count = static_cast<std::int64_t>(stages.size());
  if (pp < 1 || count % pp != 0)
    fail_at(kFlag,
            "{}{} '{}' has {} virtual stages, not a multiple of --pipeline-model-parallel-size {}; give PP x the "
            "virtual stages per rank ({}, {}, ...)",
            where, kFlag, layout, count, pp, pp, 2 * std::int64_t{pp});
  return static_cast<int>(count / pp);
}

void check_pipeline_layout(const std::string& layout, const std::vector<LayoutStage>& stages, int num_layers,
                           int mtp_num_layers, int pp, int virtual_stages) {
  const int per_rank = layout_virtual_stages(layout, stages, pp, "parallel config: ");
  // Megatron-LM infers the virtual stages from the layout and refuses another count beside it.
  if (per_rank != virtual_stages)
    fail_at(kFlag,
            "parallel config: {} '{}' has {} virtual stages over PP {}, {} per rank, but the run has {} per rank; "
            "the layout sets the interleave depth, give no other",
            kFlag, layout, stages.size(), pp, per_rank, virtual_stages);
  std::int64_t transformer_layers = 0;
  for (const LayoutStage& s : stages) transformer_layers += s.transformer_layers;
  if (transformer_layers != num_layers)
    fail_at(kFlag, "parallel config: {} '{}' places {} transformer layers t, but the model has num_layers {}", kFlag, layout,
            transformer_layers, num_layers);
  // Megatron-Core: "Number of mtp layers in layout must match mtp_num_layers".
  if (stages.back().mtp_layers != mtp_num_layers)
    fail_at(kFlag,
            "parallel config: {} '{}' places {} MTP layers m, but the model has mtp_num_layers {}; give {} m before "
            "the loss L",
            kFlag, layout, stages.back().mtp_layers, mtp_num_layers, mtp_num_layers);
}

}  // namespace cc
