// vocabulary_padding.h — the vocabulary a run trains from its tokenizer's words: Megatron-LM (and
// NeMo, which builds the same tokenizers) pads them to a multiple of --make-vocab-size-divisible-by
// (default 128) x TP (megatron/training/vocab_utils.py, calculate_padded_vocab_size). The padded
// count depends on the TP, so whatever varies the TP (a search, flags beside a file) keeps the words
// and pads them per layout.
#pragma once

#include <algorithm>

namespace cc {

inline long long megatron_padded_vocab(long long vocab, long long divisible_by, long long tp) {
  const long long multiple = std::max(1LL, divisible_by * tp);  // callers check both >= 1; never divide by 0
  return (vocab + multiple - 1) / multiple * multiple;
}

// A vocabulary before its padding.
struct MegatronVocabulary {
  long long words = 0;
  long long divisible_by = 128;
  long long padded(int tp) const { return megatron_padded_vocab(words, divisible_by, tp); }
};

}  // namespace cc
