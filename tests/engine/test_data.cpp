// Engine data: the shipped corpus (size, character set, splits), load errors, and the
// window sampler's determinism, coverage and window geometry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "engine/data.h"
#include "sim/error.h"

namespace cc::engine {
namespace {

namespace fs = std::filesystem;

const std::string kCorpus = std::string(CLUSTERCAST_SOURCE_DIR) + "/traces/data/kjv.txt";

std::vector<std::uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A scratch folder unique to this test and process (ctest runs tests in parallel).
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("cc_data_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string file(const std::string& name, const std::string& contents) const {
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << contents;
    return path;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

// Expects `f` to throw SpecError whose message contains every one of `parts`.
template <typename F>
void expect_spec_error(F&& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "expected a SpecError";
  } catch (const SpecError& e) {
    const std::string message = e.what();
    for (const auto& part : parts)
      EXPECT_NE(message.find(part), std::string::npos)
          << "message '" << message << "' lacks '" << part << "'";
  }
}

// Tokens where window w (stride seq) starts with token value w: identifies windows.
std::vector<std::uint8_t> labelled_tokens(std::size_t windows, int seq, std::size_t extra = 1) {
  std::vector<std::uint8_t> tokens(windows * static_cast<std::size_t>(seq) + extra);
  for (std::size_t k = 0; k < tokens.size(); ++k)
    tokens[k] = static_cast<std::uint8_t>((k / static_cast<std::size_t>(seq)) % 256);
  return tokens;
}

// ---- the shipped corpus --------------------------------------------------------------

TEST(Corpus, ShippedCorpusIsOneToTwoMegabytesOfPrintableAscii) {
  const std::vector<std::uint8_t> bytes = read_all(kCorpus);
  ASSERT_GE(bytes.size(), 1'000'000u) << kCorpus;
  ASSERT_LE(bytes.size(), 2'000'000u) << kCorpus;
  std::size_t bad = 0;
  for (const std::uint8_t b : bytes)
    if (!(b == '\n' || (b >= 0x20 && b <= 0x7E))) ++bad;
  EXPECT_EQ(bad, 0u) << "bytes outside printable ASCII and \\n";
  EXPECT_EQ(bytes.back(), '\n');
  const std::string head(bytes.begin(), bytes.begin() + 66);
  EXPECT_EQ(head, "Genesis 1:1 In the beginning God created the heaven and the earth.");
}

TEST(Corpus, ShippedCorpusLoadsWithDisjointSplitsAndValidationTail) {
  const Corpus corpus = load_corpus(kCorpus, 256);
  const std::vector<std::uint8_t> bytes = read_all(kCorpus);
  EXPECT_EQ(corpus.path, kCorpus);
  ASSERT_EQ(corpus.train.size() + corpus.validation.size(), bytes.size());
  // Train is the head, validation the tail: together exactly the file, no overlap.
  EXPECT_TRUE(std::equal(corpus.train.begin(), corpus.train.end(), bytes.begin()));
  EXPECT_TRUE(std::equal(corpus.validation.begin(), corpus.validation.end(),
                         bytes.begin() + static_cast<std::ptrdiff_t>(corpus.train.size())));
  // About 5%, cut at a line boundary.
  const double fraction =
      static_cast<double>(corpus.validation.size()) / static_cast<double>(bytes.size());
  EXPECT_NEAR(fraction, 0.05, 0.005);
  EXPECT_EQ(corpus.train.back(), '\n');
}

TEST(Corpus, ValidationFractionIsHonoured) {
  const Corpus corpus = load_corpus(kCorpus, 64, 0.2);
  const double total = static_cast<double>(corpus.train.size() + corpus.validation.size());
  EXPECT_NEAR(static_cast<double>(corpus.validation.size()) / total, 0.2, 0.005);
  EXPECT_EQ(corpus.train.back(), '\n');
}

TEST(Corpus, DefaultPathNamesTheBundledCorpus) {
  const std::string path = default_corpus_path();
  ASSERT_GE(path.size(), 7u);
  EXPECT_EQ(path.substr(path.size() - 7), "kjv.txt");
}

TEST(Corpus, SplitMovesToANearbyLineStartAndStaysExactWithoutOne) {
  const ScratchDir scratch;
  // 100 lines of 99 letters + '\n' = 10000 bytes; 5% = 500 bytes is already a line start.
  std::string lines;
  for (int i = 0; i < 100; ++i) lines += std::string(99, static_cast<char>('a' + i % 26)) + "\n";
  Corpus c = load_corpus(scratch.file("lines.txt", lines), 8, 0.0523);  // exact cut 523
  EXPECT_EQ(c.validation.size(), 500u);
  EXPECT_EQ(c.train.back(), '\n');
  // No newline at all: the cut is exact.
  c = load_corpus(scratch.file("flat.txt", std::string(10000, 'x')), 8, 0.0523);
  EXPECT_EQ(c.validation.size(), 523u);
  EXPECT_EQ(c.train.size(), 10000u - 523u);
}

TEST(Corpus, MissingEmptyAndTooSmallFilesNameThePath) {
  const ScratchDir scratch;
  const std::string missing = scratch.path("no_such_corpus.txt");
  expect_spec_error([&] { load_corpus(missing, 8); }, {missing, "no such file"});

  const std::string empty = scratch.file("empty.txt", "");
  expect_spec_error([&] { load_corpus(empty, 8); }, {empty, "empty"});

  // 100 bytes, 5% validation = 5 bytes: too small for a window of 9.
  const std::string small = scratch.file("small.txt", std::string(100, 'z'));
  expect_spec_error([&] { load_corpus(small, 8); }, {small, "too small", "seq_length 8"});
  // Big enough for validation but not for train.
  expect_spec_error([&] { load_corpus(small, 60, 0.5); }, {small, "too small"});
  EXPECT_NO_THROW(load_corpus(small, 8, 0.5));

  const std::string dir = scratch.path("");
  expect_spec_error([&] { load_corpus(dir, 8); }, {"directory"});
}

TEST(Corpus, BadArgumentsAreSpecErrors) {
  expect_spec_error([&] { load_corpus(kCorpus, 0); }, {kCorpus, "seq_length 0"});
  expect_spec_error([&] { load_corpus(kCorpus, 8, 0.0); }, {kCorpus, "validation fraction"});
  expect_spec_error([&] { load_corpus(kCorpus, 8, 1.0); }, {kCorpus, "validation fraction"});
}

// ---- the window sampler ---------------------------------------------------------------

TEST(WindowSampler, WindowCountUsesStrideSeqAndSharedBoundaryToken) {
  const std::vector<std::uint8_t> tokens(1001);
  EXPECT_EQ(WindowSampler(tokens, 10, 1).windows(), 100u);  // last window ends at token 1000
  EXPECT_EQ(WindowSampler(std::vector<std::uint8_t>(1000), 10, 1).windows(), 99u);
  EXPECT_EQ(WindowSampler(std::vector<std::uint8_t>(11), 10, 1).windows(), 1u);
  expect_spec_error([] { WindowSampler(std::vector<std::uint8_t>(10), 10, 1); }, {"10 tokens"});
  expect_spec_error([] { WindowSampler(std::vector<std::uint8_t>(10), 0, 1); }, {"seq_length"});
}

TEST(WindowSampler, TargetIsInputShiftedByOneFromTheRightWindow) {
  const int seq = 16;
  const std::vector<std::uint8_t> tokens = labelled_tokens(200, seq);
  const WindowSampler sampler(tokens, seq, 42);
  std::vector<int> input, target;
  for (std::uint64_t g = 0; g < 450; ++g) {
    sampler.sample(g, input, target);
    ASSERT_EQ(input.size(), static_cast<std::size_t>(seq));
    ASSERT_EQ(target.size(), static_cast<std::size_t>(seq));
    const std::size_t w = sampler.window_of(g);
    EXPECT_EQ(static_cast<std::size_t>(input[0]), w);
    for (int i = 0; i < seq; ++i) {
      EXPECT_EQ(input[i], tokens[w * seq + i]);
      EXPECT_EQ(target[i], tokens[w * seq + i + 1]);
      if (i + 1 < seq) {
        EXPECT_EQ(target[i], input[i + 1]);
      }
    }
    EXPECT_EQ(static_cast<std::size_t>(target[seq - 1]), w + 1);  // the shared boundary token
  }
}

TEST(WindowSampler, EveryWindowExactlyOncePerEpoch) {
  const std::vector<std::uint8_t> tokens = labelled_tokens(137, 8, 5);
  const WindowSampler sampler(tokens, 8, 7);
  ASSERT_EQ(sampler.windows(), 137u);
  for (std::uint64_t epoch = 0; epoch < 4; ++epoch) {
    std::vector<int> seen(137, 0);
    for (std::uint64_t i = 0; i < 137; ++i) ++seen.at(sampler.window_of(epoch * 137 + i));
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }))
        << "epoch " << epoch;
  }
}

std::vector<std::size_t> order(const WindowSampler& sampler, std::uint64_t epoch) {
  std::vector<std::size_t> out;
  for (std::uint64_t i = 0; i < sampler.windows(); ++i)
    out.push_back(sampler.window_of(epoch * sampler.windows() + i));
  return out;
}

TEST(WindowSampler, SameSeedSameStreamDifferentSeedDifferentOrder) {
  const std::vector<std::uint8_t> tokens = labelled_tokens(200, 4);
  const WindowSampler a(tokens, 4, 1234), b(tokens, 4, 1234), c(tokens, 4, 1235);
  std::vector<int> ia, ta, ib, tb;
  for (std::uint64_t g = 0; g < 600; ++g) {
    a.sample(g, ia, ta);
    b.sample(g, ib, tb);
    ASSERT_EQ(ia, ib);
    ASSERT_EQ(ta, tb);
  }
  EXPECT_NE(order(a, 0), order(c, 0));
  EXPECT_NE(order(a, 1), order(c, 1));
}

TEST(WindowSampler, EpochsAreShuffledDifferently) {
  const std::vector<std::uint8_t> tokens = labelled_tokens(200, 4);
  const WindowSampler sampler(tokens, 4, 99);
  const auto e0 = order(sampler, 0), e1 = order(sampler, 1), e2 = order(sampler, 2);
  EXPECT_NE(e0, e1);
  EXPECT_NE(e1, e2);
  EXPECT_NE(e0, e2);
  // Actually shuffled, not the identity: few windows stay in place.
  std::size_t fixed = 0;
  for (std::size_t i = 0; i < e0.size(); ++i) fixed += e0[i] == i;
  EXPECT_LT(fixed, 10u);
}

TEST(WindowSampler, ShuffleIsUniformOverPermutations) {
  // 5 windows, 6000 epochs: a correct Fisher-Yates gives each of the 120 orders and each
  // (position, window) pair equally often; biased shuffles (e.g. Sattolo's, which never
  // leaves a window in place) do not.
  const std::vector<std::uint8_t> tokens = labelled_tokens(5, 3);
  const WindowSampler sampler(tokens, 3, 31337);
  ASSERT_EQ(sampler.windows(), 5u);
  constexpr int kEpochs = 6000;
  std::set<std::vector<std::size_t>> orders;
  int counts[5][5] = {};
  for (std::uint64_t e = 0; e < kEpochs; ++e) {
    const auto o = order(sampler, e);
    orders.insert(o);
    for (std::size_t p = 0; p < 5; ++p) ++counts[p][o[p]];
  }
  EXPECT_EQ(orders.size(), 120u);
  for (int p = 0; p < 5; ++p)
    for (int w = 0; w < 5; ++w)
      EXPECT_NEAR(counts[p][w], kEpochs / 5, 150) << "position " << p << " window " << w;
}

TEST(WindowSampler, SampleDependsOnlyOnItsIndexNotOnQueryOrder) {
  const std::vector<std::uint8_t> tokens = labelled_tokens(50, 6);
  const WindowSampler forward(tokens, 6, 5), backward(tokens, 6, 5);
  std::vector<std::size_t> f, b(300);
  for (std::uint64_t g = 0; g < 300; ++g) f.push_back(forward.window_of(g));
  for (std::uint64_t g = 300; g-- > 0;) b[g] = backward.window_of(g);  // epochs interleave
  EXPECT_EQ(f, b);
  // A sampler that jumps straight into epoch 5 agrees with one that walked there.
  const WindowSampler jumper(tokens, 6, 5);
  EXPECT_EQ(jumper.window_of(5 * 50 + 17), forward.window_of(5 * 50 + 17));
}

TEST(WindowSampler, WorksOnTheShippedCorpus) {
  const Corpus corpus = load_corpus(kCorpus, 128);
  const WindowSampler sampler(corpus.train, 128, 2024);
  EXPECT_EQ(sampler.windows(), (corpus.train.size() - 1) / 128);
  std::vector<int> input, target;
  sampler.sample(123456, input, target);
  const std::size_t start = sampler.window_of(123456) * 128;
  for (int i = 0; i < 128; ++i) {
    EXPECT_EQ(input[i], corpus.train[start + i]);
    EXPECT_EQ(target[i], corpus.train[start + i + 1]);
  }
}

// ---- validation windows --------------------------------------------------------------

TEST(ValidationWindows, FirstWindowsInOrder) {
  const int seq = 5;
  const std::vector<std::uint8_t> tokens = labelled_tokens(30, seq, 3);
  std::vector<std::vector<int>> inputs, targets;
  validation_windows(tokens, seq, 10, inputs, targets);
  ASSERT_EQ(inputs.size(), 10u);
  ASSERT_EQ(targets.size(), 10u);
  for (std::size_t w = 0; w < 10; ++w)
    for (int i = 0; i < seq; ++i) {
      EXPECT_EQ(inputs[w][i], tokens[w * seq + i]);
      EXPECT_EQ(targets[w][i], tokens[w * seq + i + 1]);
    }
  // Asking for more than there are gives all of them; results are replaced, not appended.
  validation_windows(tokens, seq, 1000, inputs, targets);
  EXPECT_EQ(inputs.size(), 30u);
  EXPECT_EQ(targets.size(), 30u);
  expect_spec_error(
      [&] { validation_windows(std::vector<std::uint8_t>(5), seq, 4, inputs, targets); },
      {"validation", "5 tokens"});
}

}  // namespace
}  // namespace cc::engine
