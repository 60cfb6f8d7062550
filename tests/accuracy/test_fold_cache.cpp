// The kept held-out fits (fold_cache.h) are reused only while what they were computed from holds:
// a fold whose rows the simulator prices differently, or any change to the corpus files, has it
// refitted.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "accuracy/corpus.h"
#include "accuracy/fold_cache.h"
#include "sim/error.h"
#include "sim/json_fields.h"

namespace cc::accuracy {
namespace {

const char* kCorpus = CLUSTERCAST_SOURCE_DIR "/tests/reference/measured";

std::string text_of(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct TempDir {
  std::filesystem::path path = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "fold-cache-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    return std::filesystem::path(pattern);
  }();
  ~TempDir() { std::filesystem::remove_all(path); }
};

struct Corpus {
  std::vector<RefusedRow> refused;
  std::vector<CorpusRow> rows = load_corpus(kCorpus, &refused);
};

TEST(FoldCache, AFoldWhoseRowsArePricedDifferentlyIsRefittedTheOthersKept) {
  const Corpus c;
  const std::vector<std::string> sources = sources_of(c.rows);
  ASSERT_GE(sources.size(), 2u);
  nlohmann::json doc = nlohmann::json::parse(text_of(kFoldCachePath));
  // One fold's Ampere GEMM efficiency nudged (the fold is fitted to Ampere runs among others): its
  // data cost no longer recomputes to the kept one.
  nlohmann::json& moved = doc["folds"][sources[0]]["calibration"]["generations"]["ampere"]["gemm_peak_fraction"];
  moved = moved.get<double>() * 1.01;
  const TempDir dir;
  const std::string path = (dir.path / "fold-fits.json").string();
  std::ofstream(path) << doc.dump(1);
  std::vector<std::string> notes;
  const auto kept = reusable_folds(path, kCorpus, c.rows, {}, &notes);
  EXPECT_EQ(kept.size(), sources.size() - 1);
  EXPECT_FALSE(kept.count(sources[0]));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("the fit without " + sources[0] + " prices its rows differently now"), std::string::npos)
      << notes[0];
}

TEST(FoldCache, AChangedCorpusFileKeepsNothing) {
  const Corpus c;
  const TempDir dir;
  for (const auto& file : corpus_files(kCorpus))
    std::filesystem::copy_file(file, dir.path / std::filesystem::path(file).filename());
  std::ofstream(corpus_files(dir.path.string()).front(), std::ios::app) << "\n";  // one byte more: the same rows
  std::vector<std::string> notes;
  EXPECT_TRUE(reusable_folds(kFoldCachePath, dir.path.string(), c.rows, {}, &notes).empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("the corpus files changed"), std::string::npos) << notes[0];
}

TEST(FoldCache, OtherFitOptionsKeepNothing) {
  const Corpus c;
  FitOptions other;
  other.max_rows_per_source = 120;
  std::vector<std::string> notes;
  EXPECT_TRUE(reusable_folds(kFoldCachePath, kCorpus, c.rows, other, &notes).empty());
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("the fit's options changed"), std::string::npos) << notes[0];
}

TEST(FoldCache, AMissingFileIsAnEmptyCacheAnotherFormatAnError) {
  const Corpus c;
  const TempDir dir;
  std::vector<std::string> notes;
  EXPECT_TRUE(reusable_folds((dir.path / "none.json").string(), kCorpus, c.rows, {}, &notes).empty());
  EXPECT_EQ(notes.size(), 1u);
  const std::string other = (dir.path / "other.json").string();
  std::ofstream(other) << R"({"format": "clustercast-calibration", "version": 1})";
  EXPECT_THROW(reusable_folds(other, kCorpus, c.rows, {}, &notes), SpecError);
}

}  // namespace
}  // namespace cc::accuracy
