// Checkpoint folders on disk: a step appears whole under its name or not at all, an older step of
// the same number is replaced only by a complete one, --save-keep removes the oldest by step number
// (step-10 is newer than step-9), and a run whose checkpoints the disk cannot hold is refused with
// the sizes and what would fit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <unistd.h>

#include "engine/checkpoint_folders.h"
#include "sim/error.h"

namespace cc::engine {
namespace {

namespace fs = std::filesystem;

class CheckpointFolders : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = (fs::temp_directory_path() / ("cc_ckdir_" + std::string(info->name()) + "_" + std::to_string(::getpid())))
               .string();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void write(const std::string& path, const std::string& text) {
    std::ofstream(path) << text;
    ASSERT_TRUE(fs::exists(path)) << path;
  }
  std::string read(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.insert(e.path().filename().string());
    return names;
  }
  std::string dir_;
};

TEST_F(CheckpointFolders, AStepIsInvisibleUntilPublishedAndThenHasEveryFile) {
  begin_step_folder(dir_, 3);
  write(partial_step_folder(dir_, 3) + "/rank-0.ckpt", "a");
  write(partial_step_folder(dir_, 3) + "/rank-1.ckpt", "b");
  EXPECT_TRUE(saved_steps(dir_).empty());  // a resume cannot find a half-written step
  publish_step_folder(dir_, 3);
  EXPECT_EQ(saved_steps(dir_), std::vector<long>{3});
  EXPECT_EQ(entries(), (std::set<std::string>{"step-3"}));
  EXPECT_EQ(read(step_folder(dir_, 3) + "/rank-1.ckpt"), "b");
}

TEST_F(CheckpointFolders, BeginClearsWhatAKilledSaveLeft) {
  fs::create_directories(partial_step_folder(dir_, 2));
  write(partial_step_folder(dir_, 2) + "/rank-3.ckpt", "stale rank of a larger run");
  begin_step_folder(dir_, 2);
  write(partial_step_folder(dir_, 2) + "/rank-0.ckpt", "new");
  publish_step_folder(dir_, 2);
  EXPECT_FALSE(fs::exists(step_folder(dir_, 2) + "/rank-3.ckpt"));
  EXPECT_EQ(read(step_folder(dir_, 2) + "/rank-0.ckpt"), "new");
}

TEST_F(CheckpointFolders, ARewrittenStepReplacesTheOldOneWhole) {
  fs::create_directories(step_folder(dir_, 4));
  write(step_folder(dir_, 4) + "/rank-0.ckpt", "old");
  write(step_folder(dir_, 4) + "/rank-1.ckpt", "old");
  begin_step_folder(dir_, 4);
  write(partial_step_folder(dir_, 4) + "/rank-0.ckpt", "new");
  publish_step_folder(dir_, 4);
  EXPECT_EQ(read(step_folder(dir_, 4) + "/rank-0.ckpt"), "new");
  EXPECT_FALSE(fs::exists(step_folder(dir_, 4) + "/rank-1.ckpt"));  // no file of the old run mixed in
  EXPECT_EQ(entries(), (std::set<std::string>{"step-4"}));
}

TEST_F(CheckpointFolders, DiscardRemovesTheUnfinishedFolderOnly) {
  fs::create_directories(step_folder(dir_, 1));
  begin_step_folder(dir_, 2);
  discard_step_folder(dir_, 2);
  EXPECT_EQ(entries(), (std::set<std::string>{"step-1"}));
}

TEST_F(CheckpointFolders, KeepRemovesTheOldestByStepNumberAndNothingElse) {
  for (long step : {9, 10, 2, 11}) fs::create_directories(step_folder(dir_, step));
  fs::create_directories(dir_ + "/step-x");         // not a step folder
  write(dir_ + "/step-1", "a file, not a folder");  // nor this
  fs::create_directories(dir_ + "/notes");
  prune_step_folders(dir_, 2);
  EXPECT_EQ(saved_steps(dir_), (std::vector<long>{10, 11}));
  EXPECT_EQ(entries(), (std::set<std::string>{"step-10", "step-11", "step-x", "step-1", "notes"}));
  prune_step_folders(dir_, 0);  // 0 keeps all
  EXPECT_EQ(saved_steps(dir_), (std::vector<long>{10, 11}));
}

TEST(CheckpointCounts, EverySaveEveryAndTheLast) {
  EXPECT_EQ(checkpoints_saved(0, 10, 0), 1);  // only at the end
  EXPECT_EQ(checkpoints_saved(0, 10, 1), 10);
  EXPECT_EQ(checkpoints_saved(0, 10, 3), 4);  // 3, 6, 9 and 10
  EXPECT_EQ(checkpoints_saved(0, 9, 3), 3);   // 3, 6, 9: the last is one of them
  EXPECT_EQ(checkpoints_saved(4, 10, 3), 3);  // resumed at 4: 6, 9, 10
  EXPECT_EQ(checkpoints_saved(10, 10, 3), 0);
  EXPECT_EQ(checkpoints_held(10, 0), 10);
  EXPECT_EQ(checkpoints_held(10, 2), 3);  // two kept and the one being written
  EXPECT_EQ(checkpoints_held(1, 5), 1);
}

TEST(CheckpointSpace, ARunTheDiskCannotHoldIsRefusedWithTheSizesAndWhatFits) {
  constexpr std::uint64_t MiB = 1024 * 1024;
  EXPECT_NO_THROW(check_checkpoint_space("/ckpt", 100 * MiB, 10, 1000 * MiB));
  try {
    check_checkpoint_space("/ckpt", 100 * MiB, 72, 550 * MiB);
    FAIL() << "72 checkpoints of 100 MiB do not fit in 550 MiB";
  } catch (const SpecError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--save /ckpt"), std::string::npos) << m;
    EXPECT_NE(m.find("72 checkpoint(s) of 100.0 MiB"), std::string::npos) << m;
    EXPECT_NE(m.find("7.0 GiB in all"), std::string::npos) << m;
    EXPECT_NE(m.find("550.0 MiB free"), std::string::npos) << m;
    EXPECT_NE(m.find("--save-keep N (N <= 4 fits)"), std::string::npos) << m;  // 4 kept + 1 being written
  }
  try {
    check_checkpoint_space("/ckpt", 100 * MiB, 1, 50 * MiB);
    FAIL() << "one checkpoint of 100 MiB does not fit in 50 MiB";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("not one checkpoint fits"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cc::engine
