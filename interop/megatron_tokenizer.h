// megatron_tokenizer.h — the vocabulary a Megatron-LM run (or a NeMo recipe, which builds the same
// tokenizers) trains when no --vocab-size says it: the tokenizer's words, padded as Megatron-LM pads
// them at the run's TP. One owner of the words clustercast can count without the tokenizer's files.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "sim/vocabulary_padding.h"

namespace cc {

struct MegatronModelArgs;

// GPT-2's byte-level BPE vocabulary (openai-community/gpt2's vocab.json): 50,256 merges and
// <|endoftext|>. pretrain_gpt.py's default --tokenizer-type, GPT2BPETokenizer, builds it.
inline constexpr long long kGpt2BpeWords = 50257;

// The words of a HuggingFace tokenizer named by its Hub repository (len(tokenizer), which
// Megatron-LM's HuggingFaceTokenizer and NeMo take as the vocabulary; each repository's config.json
// vocab_size, tests/reference/hf-configs/), for the repositories Megatron-LM's and
// NeMo-Framework-Launcher's Llama, Mistral and Mixtral recipes name; none for any other.
std::optional<long long> hub_tokenizer_words(const std::string& repository);
// Every repository hub_tokenizer_words knows, with its words (for messages that list them).
const std::map<std::string, long long>& hub_tokenizers();

// `value` when it is one of Megatron-LM's --tokenizer-type choices, else a SpecError naming them.
std::string megatron_tokenizer_type(const std::string& value, const std::string& where);

// The vocabulary Megatron-LM trains for model flags: --vocab-size when given, else its
// tokenizer's words — GPT2BPETokenizer (the default) GPT-2's 50,257; TikTokenizer 2^17;
// HuggingFaceTokenizer the Hub repository --tokenizer-model names, when hub_tokenizer_words knows
// it. NullTokenizer has --vocab-size alone, and the other tokenizers count a model file clustercast
// cannot read: no vocabulary then, and `unknown` says why. `note` says where the words came from
// and their padding at `tp`.
struct TokenizerVocabulary {
  std::optional<MegatronVocabulary> vocabulary;
  std::string note, unknown;
  std::string source;  // the note without its padding: where the words came from
};
TokenizerVocabulary megatron_tokenizer_vocabulary(const MegatronModelArgs& args, int tp, const std::string& where);

// `file`'s model flags with the tokenizer flags `later` names (--tokenizer-type, --tokenizer-model,
// --vocab-size, --make-vocab-size-divisible-by) in place of the file's: Megatron-LM's command line
// `pretrain_gpt.py $(cat FILE) FLAGS` keeps the last value of each flag, and a tokenizer named
// later that counts its own words (all but TikTokenizer and NullTokenizer) sets the file's
// --vocab-size aside, as Megatron-LM's build_tokenizer does.
MegatronModelArgs with_later_tokenizer_flags(MegatronModelArgs file, const MegatronModelArgs& later);
// Whether `args` names any of those four flags.
bool names_tokenizer_flags(const MegatronModelArgs& args);

}  // namespace cc
