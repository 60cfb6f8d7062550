#include "interop/megatron_tokenizer.h"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "interop/layout_common.h"
#include "interop/megatron_options.h"
#include "sim/error.h"

namespace cc {

using interop::prefix;

const std::map<std::string, long long>& hub_tokenizers() {
  static const std::map<std::string, long long> kHubWords = {
      {"meta-llama/Meta-Llama-3-8B", 128256},    {"meta-llama/Meta-Llama-3-70B", 128256},
      {"meta-llama/Meta-Llama-3.1-8B", 128256},  {"meta-llama/Meta-Llama-3.1-70B", 128256},
      {"meta-llama/Meta-Llama-3.1-405B", 128256}, {"meta-llama/Llama-3.1-8B", 128256},
      {"meta-llama/Llama-3.1-70B", 128256},      {"meta-llama/Llama-3.1-405B", 128256},
      {"meta-llama/Llama-2-7b-hf", 32000},       {"meta-llama/Llama-2-13b-hf", 32000},
      {"meta-llama/Llama-2-70b-hf", 32000},      {"mistralai/Mixtral-8x7B-v0.1", 32000},
      {"mistralai/Mistral-7B-v0.1", 32000}};
  return kHubWords;
}

std::optional<long long> hub_tokenizer_words(const std::string& repository) {
  const auto it = hub_tokenizers().find(repository);
  return it == hub_tokenizers().end() ? std::nullopt : std::optional<long long>(it->second);
}

// SentencePiece models known by their file's name, whose words a file cannot state otherwise.
// nemotron_2_256k.model is Nemotron-4's tokenizer, which Megatron-LM's Nemotron-4 15B release test
// names: 256,000 words (transformers' NemotronConfig default vocab_size, and Nemotron-4 checkpoints'
// config.json).
std::optional<long long> sentencepiece_model_words(const std::string& path) {
  static const std::map<std::string, long long> kWords = {{"nemotron_2_256k.model", 256000}};
  const auto it = kWords.find(path.substr(path.find_last_of('/') + 1));
  return it == kWords.end() ? std::nullopt : std::optional<long long>(it->second);
}

// Megatron-LM's --tokenizer-type choices (arguments.py at the commit tests/reference/megatron/ names).
std::string megatron_tokenizer_type(const std::string& value, const std::string& where) {
  static const char* const kChoices[] = {"BertWordPieceLowerCase", "BertWordPieceCase", "GPT2BPETokenizer",
                                         "SentencePieceTokenizer", "GPTSentencePieceTokenizer", "HuggingFaceTokenizer",
                                         "Llama2Tokenizer", "TikTokenizer", "MultimodalTokenizer", "NullTokenizer",
                                         "NullMultimodalTokenizer", "SFTTokenizer"};
  for (const char* c : kChoices)
    if (value == c) return value;
  fail_at("--tokenizer-type", "{}--tokenizer-type {} is not one of Megatron-LM's: {}", prefix(where), value,
          fmt::join(kChoices, ", "));
}

TokenizerVocabulary megatron_tokenizer_vocabulary(const MegatronModelArgs& a, int tp, const std::string& where) {
  const std::string tokenizer = megatron_tokenizer_type(a.tokenizer_type.value_or("GPT2BPETokenizer"), where);
  // TikTokenizer without --vocab-size builds 2^17 words (tiktoken_tokenizer.py, DEFAULT_TIKTOKEN_MAX_VOCAB).
  constexpr long long kTiktokenDefaultWords = 131072;
  const long long unit = a.make_vocab_size_divisible_by.value_or(128);
  TokenizerVocabulary out;
  // `says` names the words, followed by their padding at `tp`.
  auto counted = [&](long long words, const std::string& says, const std::string& tail = "") {
    out.vocabulary = MegatronVocabulary{words, unit};
    out.source = says + tail;
    out.note = fmt::format("{}the vocabulary is {}, padded to {} ({} x TP {}){}", prefix(where), says,
                           out.vocabulary->padded(tp), unit, tp, tail);
  };
  if (a.vocab_size) {
    counted(*a.vocab_size, "--vocab-size's");
    out.note.clear();  // the flag said it; only the padding is Megatron-LM's, as the flag's help says
  } else if (tokenizer == "GPT2BPETokenizer") {
    counted(kGpt2BpeWords,
            fmt::format("{}'s{}: GPT-2's {} words", tokenizer,
                        a.tokenizer_type ? "" : " (pretrain_gpt.py's default tokenizer)", kGpt2BpeWords),
            "; give --vocab-size if its vocab.json has another count");
  } else if (tokenizer == "TikTokenizer") {
    counted(kTiktokenDefaultWords, fmt::format("TikTokenizer's default without --vocab-size, {} words", kTiktokenDefaultWords));
  } else if (tokenizer == "NullTokenizer") {
    out.unknown = fmt::format("{}NullTokenizer takes its vocabulary from --vocab-size, which is not given", prefix(where));
  } else if (tokenizer == "HuggingFaceTokenizer") {
    const auto words = a.tokenizer_model ? hub_tokenizer_words(*a.tokenizer_model) : std::nullopt;
    if (words) {
      counted(*words, fmt::format("HuggingFaceTokenizer {}'s: {} words", *a.tokenizer_model, *words));
    } else {
      std::vector<std::string> known;
      for (const auto& [repository, count] : hub_tokenizers()) known.push_back(repository);
      out.unknown = fmt::format("{}HuggingFaceTokenizer {}; the Hub repositories whose words clustercast knows: {}",
                                prefix(where),
                                a.tokenizer_model ? fmt::format("--tokenizer-model {} is not one clustercast knows",
                                                                *a.tokenizer_model)
                                                  : std::string("without --tokenizer-model"),
                                fmt::join(known, ", "));
    }
  } else if (const auto words = (tokenizer == "GPTSentencePieceTokenizer" || tokenizer == "SentencePieceTokenizer") &&
                                         a.tokenizer_model
                                     ? sentencepiece_model_words(*a.tokenizer_model)
                                     : std::nullopt) {
    counted(*words, fmt::format("{} {}'s: {} words", tokenizer, *a.tokenizer_model, *words));
  } else {
    out.unknown = fmt::format("{}the vocabulary comes from {}'s --tokenizer-model, whose words clustercast cannot count",
                              prefix(where), tokenizer);
  }
  return out;
}

MegatronModelArgs with_later_tokenizer_flags(MegatronModelArgs file, const MegatronModelArgs& later) {
  if (later.tokenizer_type) file.tokenizer_type = later.tokenizer_type;
  if (later.tokenizer_model) file.tokenizer_model = later.tokenizer_model;
  if (later.make_vocab_size_divisible_by) file.make_vocab_size_divisible_by = later.make_vocab_size_divisible_by;
  // A tokenizer named later counts its own words: Megatron-LM's build_tokenizer passes --vocab-size
  // to TikTokenizer and NullTokenizer only, so the file's stands for those alone.
  const std::string type = file.tokenizer_type.value_or("GPT2BPETokenizer");
  if ((later.tokenizer_type || later.tokenizer_model) && type != "TikTokenizer" && type != "NullTokenizer")
    file.vocab_size.reset();
  if (later.vocab_size) file.vocab_size = later.vocab_size;
  return file;
}

bool names_tokenizer_flags(const MegatronModelArgs& a) {
  return a.tokenizer_type || a.tokenizer_model || a.vocab_size || a.make_vocab_size_divisible_by;
}

}  // namespace cc
