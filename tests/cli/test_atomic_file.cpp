// sim/atomic_file: unique temporaries (concurrent writers of one target never share one),
// no rename over what is not a regular file, and OutputSet's all-or-none outputs.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <thread>

#include "cli_runner.h"
#include "sim/atomic_file.h"
#include "sim/error.h"

namespace cc::cli_test {
namespace {

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

TEST(AtomicFile, ConcurrentWritersOfOneTargetLeaveOneWholeFileAndNoTemporary) {
  const TempDir dir;
  const std::string target = dir.file("out.json");
  // A fixed NAME.tmp let two writers interleave into one temporary (invalid JSON) or rename it
  // away under each other ("no such file"); every writer's contents here are distinct.
  constexpr int kThreads = 8, kWrites = 40;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kWrites; ++i) {
        try {
          write_file_atomically(target, std::string(20000 + 97 * (t * kWrites + i), static_cast<char>('a' + t)));
        } catch (const SpecError&) {
          ++failures;
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  const std::string text = read_file(target);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.find_first_not_of(text[0]), std::string::npos) << "contents of two writers mixed";
  EXPECT_EQ((text.size() - 20000) % 97, 0u) << "a torn write";
  EXPECT_EQ(dir.entries(), std::set<std::string>{"out.json"});
}

TEST(AtomicFile, NewFilesGetTheUsualPermissionsNotMkstemps0600) {
  const TempDir dir;
  const mode_t old = umask(022);
  write_file_atomically(dir.file("x"), "x");
  umask(old);
  struct stat st {};
  ASSERT_EQ(stat(dir.file("x").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

TEST(AtomicFile, RefusesToReplaceAFifoADirectoryOrASymlinkAndLeavesThemAlone) {
  const TempDir dir;
  ASSERT_EQ(mkfifo(dir.file("fifo").c_str(), 0644), 0);
  std::filesystem::create_directory(dir.path() / "folder");
  write_file(dir.file("real"), "kept");
  std::filesystem::create_symlink(dir.file("real"), dir.file("link"));
  EXPECT_NE(message_of([&] { write_file_atomically(dir.file("fifo"), "x"); }).find("is a FIFO"), std::string::npos);
  EXPECT_NE(message_of([&] { write_file_atomically(dir.file("folder"), "x"); }).find("is a directory"),
            std::string::npos);
  EXPECT_NE(message_of([&] { write_file_atomically(dir.file("link"), "x"); }).find("is a symbolic link"),
            std::string::npos);
  struct stat st {};
  ASSERT_EQ(lstat(dir.file("fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  ASSERT_EQ(lstat(dir.file("link").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(read_file(dir.file("real")), "kept");
  EXPECT_EQ(dir.entries(), (std::set<std::string>{"fifo", "folder", "link", "real"}));
}

TEST(AtomicFile, ADeviceTargetIsRefusedNotReplaced) {
  struct stat before {};
  ASSERT_EQ(stat("/dev/full", &before), 0);
  EXPECT_NE(message_of([] { write_file_atomically("/dev/full", "x"); }).find("is a character device"),
            std::string::npos);
  struct stat after {};
  ASSERT_EQ(stat("/dev/full", &after), 0);
  EXPECT_TRUE(S_ISCHR(after.st_mode));
}

TEST(OutputSet, WhenOneOutputFailsNoneIsLeftBehind) {
  const TempDir dir;
  std::filesystem::create_directory(dir.path() / "folder");
  {
    OutputSet files;
    files.add(dir.file("a.json"), "{}\n", "--export");
    EXPECT_NE(message_of([&] { files.add(dir.file("folder"), "x", "--export-nemo"); })
                  .find("--export-nemo '" + dir.file("folder") + "' is a directory"),
              std::string::npos);
    EXPECT_EQ(dir.entries().size(), 2u) << "the first output waits as a temporary, not under its name";
    EXPECT_FALSE(std::filesystem::exists(dir.file("a.json")));
  }  // not committed: the temporary goes
  EXPECT_EQ(dir.entries(), std::set<std::string>{"folder"});
}

TEST(OutputSet, CommitPutsEveryOutputInPlace) {
  const TempDir dir;
  write_file(dir.file("b.args"), "old");
  OutputSet files;
  files.add(dir.file("a.json"), "A", "--export");
  files.add(dir.file("b.args"), "B", "--export-megatron");
  EXPECT_EQ(read_file(dir.file("b.args")), "old") << "nothing replaced before commit";
  files.commit();
  EXPECT_EQ(read_file(dir.file("a.json")), "A");
  EXPECT_EQ(read_file(dir.file("b.args")), "B");
  EXPECT_EQ(dir.entries(), (std::set<std::string>{"a.json", "b.args"}));
  EXPECT_EQ(files.paths(), (std::vector<std::string>{dir.file("a.json"), dir.file("b.args")}));
}

TEST(OutputSet, TwoOutputsOnOnePathAreRefused) {
  const TempDir dir;
  OutputSet files;
  files.add(dir.file("x"), "A", "--export");
  const std::string m = message_of([&] { files.add(dir.path().string() + "/./x", "B", "--export-nemo"); });
  EXPECT_NE(m.find("name the same file"), std::string::npos) << m;
}

}  // namespace
}  // namespace cc::cli_test
