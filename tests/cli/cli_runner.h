// Helpers for the command-line tests: run the real `clustercast` binary as a subprocess
// and capture its exit code, stdout and stderr; make and clean up temporary directories.
#pragma once

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace cc::cli_test {

// A fresh directory under the system temp dir, removed with everything in it when destroyed.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "clustercast_cli_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Names of the entries in the directory (not recursive).
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path_)) names.insert(e.path().filename().string());
    return names;
  }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline void write_file(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
}

struct RunResult {
  int exit_code = -1;  // the exit status, or 128 + signal number when killed by a signal
  std::string out;
  std::string err;
};

// Runs a command (argv[0] a path) with stdout and stderr redirected to files in a private
// temp dir.
inline RunResult run_command(std::vector<std::string> full) {
  const TempDir capture;
  const std::string out_path = capture.file("stdout");
  const std::string err_path = capture.file("stderr");
  std::vector<char*> argv;
  for (auto& a : full) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    const int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (out_fd < 0 || err_fd < 0 || null_fd < 0) _exit(126);
    dup2(null_fd, STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), read_file(out_path),
          read_file(err_path)};
}

// Runs `clustercast ARGS...`.
inline RunResult run_clustercast(const std::vector<std::string>& args) {
  std::vector<std::string> full{CLUSTERCAST_BINARY};
  full.insert(full.end(), args.begin(), args.end());
  return run_command(full);
}

// The layout of the GPT-3 175B run of Korthikanti et al. (2022) on 1024 A100s, whose
// attention stored the s x s scores (selective recompute recomputes exactly those).
inline std::vector<std::string> gpt3_175b_args() {
  return {"simulate", "--model", "gpt3-175b", "--cluster", "dgx-a100-80gb", "--gpus", "1024", "--tp", "8",
          "--pp", "16", "--sequence-parallel", "--recompute-granularity", "selective", "--micro-batch-size", "1",
          "--global-batch-size", "1536", "--train-tokens", "300e9", "--attention-backend", "unfused"};
}

inline std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// The JSON `clustercast ARGS...` prints (an empty object, and a test failure, when it exits non-zero).
inline nlohmann::json json_output(const std::vector<std::string>& args) {
  const RunResult r = run_clustercast(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

}  // namespace cc::cli_test
