// sim/atomic_file: unique temporaries (concurrent writers of one target never share one),
// no rename over what is not a regular file, and OutputSet's all-or-none outputs.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <functional>
#include <thread>

#include <fmt/format.h>

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

TEST(OutputSet, ARenameFailingPartwayPutsBackTheOutputsBeforeIt) {
  const TempDir dir;
  write_file(dir.file("a.json"), "old a");
  OutputSet files;
  files.add(dir.file("a.json"), "new a", "--export");
  files.add(dir.file("new.yaml"), "new yaml", "--export-nemo");
  files.add(dir.file("c.args"), "new c", "--export-megatron");
  // After every check of add(): c.args becomes a folder with a file in it, which rename()
  // cannot replace, so the third move fails after the first two succeeded.
  std::filesystem::create_directories(dir.path() / "c.args" / "inside");
  const std::string m = message_of([&] { files.commit(); });
  EXPECT_NE(m.find("cannot move --export-megatron '" + dir.file("c.args") + "' into place"), std::string::npos) << m;
  EXPECT_NE(m.find("put back as they were"), std::string::npos) << m;
  EXPECT_EQ(read_file(dir.file("a.json")), "old a");
  EXPECT_EQ(dir.entries(), (std::set<std::string>{"a.json", "c.args"})) << "no new file, no temporary, no kept copy";
}

TEST(OutputSet, ConcurrentSetsOfOnePathsNeverMix) {
  const TempDir dir;
  std::filesystem::create_directory(dir.path() / "sub");
  const std::vector<std::string> paths = {dir.file("a.json"), dir.file("sub/b.yaml"), dir.file("c.args")};
  // Each trial, several writers race to commit a set of three files naming themselves; the
  // set left must be one writer's whole.
  constexpr int kTrials = 30, kWriters = 6;
  for (int trial = 0; trial < kTrials; ++trial) {
    std::vector<std::thread> threads;
    std::atomic<int> ready{0};
    for (int w = 0; w < kWriters; ++w)
      threads.emplace_back([&, w] {
        OutputSet files;
        for (const std::string& p : paths) files.add(p, fmt::format("writer {}", w));
        ++ready;
        while (ready.load() < kWriters) std::this_thread::yield();
        files.commit();
      });
    for (auto& t : threads) t.join();
    const std::string first = read_file(paths[0]);
    for (const std::string& p : paths) ASSERT_EQ(read_file(p), first) << "trial " << trial << ": " << p;
  }
  EXPECT_EQ(dir.entries(), (std::set<std::string>{"a.json", "sub", "c.args"}));
}

TEST(OutputSet, TwoOutputsOnOnePathAreRefused) {
  const TempDir dir;
  OutputSet files;
  files.add(dir.file("x"), "A", "--export");
  const std::string m = message_of([&] { files.add(dir.path().string() + "/./x", "B", "--export-nemo"); });
  EXPECT_NE(m.find("name the same file"), std::string::npos) << m;
}

// "b.json" and "./b.json" are one file even where the first does not exist yet (weakly_canonical
// alone leaves a relative path whose first element does not exist as it is); a hard link is the
// file it links to.
TEST(SameFile, RelativeSpellingsAndHardLinksNameOneFile) {
  const TempDir dir;
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  EXPECT_TRUE(same_file("b.json", "./b.json"));
  EXPECT_TRUE(same_file("b.json", dir.file("b.json")));
  EXPECT_TRUE(same_file("folder/../b.json", "b.json"));
  EXPECT_FALSE(same_file("b.json", "c.json"));
  write_file("db.json", "{}");
  std::filesystem::create_hard_link("db.json", "link.json");
  EXPECT_TRUE(same_file("link.json", "db.json"));
  std::filesystem::current_path(before);
}

TEST(OutputSet, RelativeSpellingsOfOnePathAreRefused) {
  const TempDir dir;
  const std::filesystem::path before = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  OutputSet files;
  files.add("b.json", "A", "--export");
  const std::string m = message_of([&] { files.add("./b.json", "B", "--export-nemo"); });
  std::filesystem::current_path(before);
  EXPECT_NE(m.find("--export 'b.json' and --export-nemo './b.json' name the same file"), std::string::npos) << m;
}

// An output that names a file the command reads is refused before any work, the input intact:
// `search --costs db.json --export db.json` used to replace the measured database.
TEST(OutputsApart, AnOutputNeverReplacesAnInput) {
  const TempDir dir;
  const std::string db = dir.file("db.json");
  const RunResult written = run_clustercast({"simulate", "--model", "tiny", "--gpus", "1", "--trace-out", db});
  ASSERT_EQ(written.exit_code, 0) << written.err;
  const std::string before = read_file(db);
  const RunResult s = run_clustercast({"search", "--costs", db, "--model", "tiny", "--gpus", "1",
                                       "--global-batch-size", "8", "--export", dir.path().string() + "/./db.json"});
  EXPECT_EQ(s.exit_code, 2) << s.out << s.err;
  EXPECT_NE(s.err.find("would overwrite --costs '" + db + "', which this command reads"), std::string::npos) << s.err;
  EXPECT_EQ(read_file(db), before);
  // A hard link to the input is the input.
  std::filesystem::create_hard_link(db, dir.file("link.json"));
  const RunResult t =
      run_clustercast({"simulate", "--costs", db, "--model", "tiny", "--gpus", "1", "--trace-out", dir.file("link.json")});
  EXPECT_EQ(t.exit_code, 2) << t.err;
  EXPECT_NE(t.err.find("--trace-out '" + dir.file("link.json") + "' would overwrite --costs"), std::string::npos) << t.err;
  EXPECT_EQ(read_file(db), before);
  // Two exports spelled differently are one file: refused before the search, nothing written.
  const RunResult e = run_clustercast({"search", "--model", "tiny", "--gpus", "1", "--global-batch-size", "8",
                                       "--export", dir.file("b.json"), "--export-nemo",
                                       dir.path().string() + "/folder/../b.json"});
  EXPECT_EQ(e.exit_code, 2) << e.err;
  EXPECT_NE(e.err.find("name the same file"), std::string::npos) << e.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("b.json")));
}

// A report that cannot reach stdout (a full disk, a closed descriptor) fails the command.
TEST(Stdout, AWriteErrorFailsTheCommandWithAMessage) {
  const RunResult full = run_command({"/bin/sh", "-c", std::string(CLUSTERCAST_BINARY) +
                                                           " simulate --model tiny --gpus 1 > /dev/full"});
  EXPECT_EQ(full.exit_code, 1) << full.err;
  EXPECT_NE(full.err.find("clustercast: writing the report to standard output failed: No space left on device"),
            std::string::npos)
      << full.err;
  const RunResult closed =
      run_command({"/bin/sh", "-c", std::string(CLUSTERCAST_BINARY) + " simulate --model tiny --gpus 1 >&-"});
  EXPECT_EQ(closed.exit_code, 1) << closed.err;
  EXPECT_NE(closed.err.find("writing the report to standard output failed"), std::string::npos) << closed.err;
}

}  // namespace
}  // namespace cc::cli_test
