// data.h — the training corpus and how training windows are drawn from it.
//
// Tokens are bytes (vocabulary 256): no tokenizer, any file is a corpus. The bundled corpus
// is traces/data/kjv.txt (see traces/data/README.md).
//
// A split of N tokens holds windows() = (N - 1) / seq windows of seq+1 tokens with stride
// seq: window w covers tokens [w·seq, w·seq + seq] inclusive, so neighbouring windows share
// one boundary token (the last target of one is the first input of the next) and every
// token is a prediction target at most once per epoch. input = window[0, seq),
// target = window[1, seq].
//
// Sampling is a pure function of (seed, global sample index): sample g is window
// perm_e[g mod W] of epoch e = g / W, where perm_e is a Fisher-Yates shuffle driven by
// uniform01 (engine/rng.h) keyed on (seed, e). Any rank or thread asking for sample g gets
// the same window, and a resumed run continues the stream exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace cc::engine {

struct Corpus {
  std::vector<std::uint8_t> train, validation;  // disjoint; validation is the file's tail
  std::string path;
};

// Reads the file as bytes. The last `validation_fraction` of the bytes is the validation
// split, moved to the start of a line when a line boundary lies nearby (within
// min(4096, validation bytes / 2) of the exact cut). Throws SpecError naming the path if the
// file is missing or unreadable, empty, if seq_length < 1, if validation_fraction is not in
// (0, 1), or if either split is shorter than one window of seq_length + 1 tokens.
Corpus load_corpus(const std::string& path, int seq_length, double validation_fraction = 0.05);

// The corpus the engine trains on when --data is not given: the macro
// CLUSTERCAST_DEFAULT_CORPUS if the build defines it, else "traces/data/kjv.txt" (relative
// to the working directory).
std::string default_corpus_path();

// Deterministic, endless stream of training windows (see the file comment). Holds its own
// copy of the tokens. Caches the permutation of the most recent epoch, so it is not safe to
// call sample() from several threads at once; use one sampler per thread.
class WindowSampler {
 public:
  // Throws SpecError if seq_length < 1 or tokens holds fewer than seq_length + 1 tokens.
  WindowSampler(const std::vector<std::uint8_t>& tokens, int seq_length, std::uint64_t seed);

  std::size_t windows() const { return windows_; }
  int seq_length() const { return seq_; }

  // Index (into [0, windows())) of the window that sample `global_index` uses.
  std::size_t window_of(std::uint64_t global_index) const;

  // The global_index-th sample: input and target are resized to seq_length.
  void sample(std::uint64_t global_index, std::vector<int>& input,
              std::vector<int>& target) const;

 private:
  const std::vector<std::size_t>& permutation(std::uint64_t epoch) const;

  std::vector<std::uint8_t> tokens_;
  int seq_;
  std::uint64_t seed_;
  std::size_t windows_;
  mutable std::uint64_t cached_epoch_ = 0;
  mutable bool cache_valid_ = false;
  mutable std::vector<std::size_t> cache_;
};

// The deterministic evaluation set: the first min(max_windows, available) windows of
// `tokens` in order (same window geometry as WindowSampler). inputs and targets are
// replaced. Throws SpecError if seq_length < 1 or not even one window fits.
void validation_windows(const std::vector<std::uint8_t>& tokens, int seq_length,
                        std::size_t max_windows, std::vector<std::vector<int>>& inputs,
                        std::vector<std::vector<int>>& targets);

}  // namespace cc::engine
