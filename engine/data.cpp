#include "engine/data.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <system_error>

#include "engine/rng.h"
#include "sim/error.h"
#include "sim/json_fields.h"

namespace cc::engine {
namespace {

// Keys the shuffle's random numbers so they never coincide with other users of the same
// seed (initialisation, dropout): "ccwindow" in ASCII.
constexpr std::uint64_t kShuffleTag = 0x6363'7769'6e64'6f77ULL;

// How far the validation cut may move to land on a line boundary.
constexpr std::size_t kMaxLineSearch = 4096;

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) fail("corpus '{}': no such file", path);
  if (fs::is_directory(status)) fail("corpus '{}': is a directory, not a file", path);

  // One reader for every user-named input: a FIFO or device is refused, never read forever.
  const std::string text = read_regular_file(path, "corpus");
  std::vector<std::uint8_t> bytes(text.begin(), text.end());
  return bytes;
}

void check_seq_length(int seq_length, const std::string& what) {
  if (seq_length < 1) fail("{}: seq_length {} is invalid; it must be at least 1", what, seq_length);
}

std::size_t window_count(std::size_t tokens, int seq_length) {
  const auto seq = static_cast<std::size_t>(seq_length);
  return tokens < seq + 1 ? 0 : (tokens - 1) / seq;
}

void copy_window(const std::vector<std::uint8_t>& tokens, std::size_t start, int seq_length,
                 std::vector<int>& input, std::vector<int>& target) {
  const auto seq = static_cast<std::size_t>(seq_length);
  input.resize(seq);
  target.resize(seq);
  for (std::size_t i = 0; i < seq; ++i) {
    input[i] = tokens[start + i];
    target[i] = tokens[start + i + 1];
  }
}

}  // namespace

Corpus load_corpus(const std::string& path, int seq_length, double validation_fraction) {
  check_seq_length(seq_length, fmt::format("corpus '{}'", path));
  if (!(validation_fraction > 0.0 && validation_fraction < 1.0))
    fail("corpus '{}': validation fraction {} is invalid; it must lie strictly between 0 and 1",
         path, validation_fraction);

  std::vector<std::uint8_t> bytes = read_bytes(path);
  const std::size_t n = bytes.size();
  if (n == 0) fail("corpus '{}': file is empty", path);

  // Exact cut, then the nearest line start within reach (the validation split begins a line).
  const auto wanted = static_cast<std::size_t>(
      std::llround(static_cast<double>(n) * validation_fraction));
  const std::size_t val_bytes = std::clamp<std::size_t>(wanted, 1, n);
  std::size_t split = n - val_bytes;
  const std::size_t radius = std::min(kMaxLineSearch, val_bytes / 2);
  for (std::size_t d = 0; d <= radius; ++d) {
    // A cut at s is "at a line boundary" when bytes[s - 1] == '\n'; try s = split ∓ d.
    if (split >= d && split - d >= 1 && bytes[split - d - 1] == '\n') {
      split -= d;
      break;
    }
    if (split + d < n && split + d >= 1 && bytes[split + d - 1] == '\n') {
      split += d;
      break;
    }
  }

  const auto need = static_cast<std::size_t>(seq_length) + 1;
  const std::size_t train_bytes = split, valid_bytes = n - split;
  if (train_bytes < need || valid_bytes < need)
    fail("corpus '{}': too small for seq_length {}: {} bytes give a training split of {} and a "
         "validation split of {} bytes, and each needs at least {} (one window of seq_length + 1 "
         "tokens); use a larger file or a shorter sequence",
         path, seq_length, n, train_bytes, valid_bytes, need);

  Corpus corpus;
  corpus.path = path;
  corpus.validation.assign(bytes.begin() + static_cast<std::ptrdiff_t>(split), bytes.end());
  bytes.resize(split);
  bytes.shrink_to_fit();
  corpus.train = std::move(bytes);
  return corpus;
}

std::string default_corpus_path() {
#ifdef CLUSTERCAST_DEFAULT_CORPUS
  return CLUSTERCAST_DEFAULT_CORPUS;
#else
  return "traces/data/kjv.txt";
#endif
}

WindowSampler::WindowSampler(const std::vector<std::uint8_t>& tokens, int seq_length,
                             std::uint64_t seed)
    : tokens_(tokens), seq_(seq_length), seed_(seed), windows_(0) {
  check_seq_length(seq_length, "training windows");
  windows_ = window_count(tokens_.size(), seq_length);
  if (windows_ == 0)
    fail("training windows: the training split has {} tokens, fewer than one window of "
         "seq_length + 1 = {}",
         tokens_.size(), seq_length + 1);
}

const std::vector<std::size_t>& WindowSampler::permutation(std::uint64_t epoch) const {
  if (cache_valid_ && cached_epoch_ == epoch) return cache_;
  cache_.resize(windows_);
  std::iota(cache_.begin(), cache_.end(), std::size_t{0});
  const std::uint64_t key = hash3(seed_, kShuffleTag, 0);
  for (std::size_t i = windows_ - 1; i > 0; --i) {
    const double u = uniform01(key, epoch, i);
    const auto j = std::min(i, static_cast<std::size_t>(u * static_cast<double>(i + 1)));
    std::swap(cache_[i], cache_[j]);
  }
  cached_epoch_ = epoch;
  cache_valid_ = true;
  return cache_;
}

std::size_t WindowSampler::window_of(std::uint64_t global_index) const {
  const std::uint64_t w = windows_;
  return permutation(global_index / w)[static_cast<std::size_t>(global_index % w)];
}

void WindowSampler::sample(std::uint64_t global_index, std::vector<int>& input,
                           std::vector<int>& target) const {
  const std::size_t w = window_of(global_index);
  copy_window(tokens_, w * static_cast<std::size_t>(seq_), seq_, input, target);
}

void validation_windows(const std::vector<std::uint8_t>& tokens, int seq_length,
                        std::size_t max_windows, std::vector<std::vector<int>>& inputs,
                        std::vector<std::vector<int>>& targets) {
  check_seq_length(seq_length, "validation windows");
  const std::size_t available = window_count(tokens.size(), seq_length);
  if (available == 0)
    fail("validation windows: the validation split has {} tokens, fewer than one window of "
         "seq_length + 1 = {}",
         tokens.size(), seq_length + 1);
  const std::size_t count = std::min(max_windows, available);
  inputs.assign(count, {});
  targets.assign(count, {});
  for (std::size_t w = 0; w < count; ++w)
    copy_window(tokens, w * static_cast<std::size_t>(seq_length), seq_length, inputs[w],
                targets[w]);
}

}  // namespace cc::engine
