#include "cli/child_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <fstream>

#include "sim/error.h"

namespace cc::cli {

namespace {

volatile sig_atomic_t g_child_group = 0;
volatile sig_atomic_t g_interrupted = 0;

// Async-signal-safe: only kill() and flag stores.
void pass_on(int sig) {
  g_interrupted = 1;
  if (g_child_group > 0) kill(-g_child_group, sig);
}

class SignalsPassedOn {
 public:
  SignalsPassedOn() {
    struct sigaction a {};
    a.sa_handler = pass_on;
    sigemptyset(&a.sa_mask);
    sigaction(SIGINT, &a, &old_int_);
    sigaction(SIGTERM, &a, &old_term_);
  }
  ~SignalsPassedOn() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {}, old_term_ {};
};

}  // namespace

ChildOutcome run_child(const std::vector<std::string>& argv, const std::string& log_path) {
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) fail("cannot write the log '{}': {}", log_path, std::strerror(errno));
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  const SignalsPassedOn signals;
  g_interrupted = 0;
  const pid_t pid = fork();
  if (pid < 0) {
    close(log);
    fail("cannot start '{}': {}", argv[0], std::strerror(errno));
  }
  if (pid == 0) {  // the child: its own process group, output to the log
    setpgid(0, 0);
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    execvp(args[0], args.data());
    const char* why = std::strerror(errno);
    (void)!write(STDERR_FILENO, "cannot run the program: ", 24);
    (void)!write(STDERR_FILENO, why, std::strlen(why));
    _exit(127);
  }
  setpgid(pid, pid);  // also here: whichever side runs first, the group exists before a signal
  g_child_group = pid;
  close(log);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) break;
  g_child_group = 0;
  ChildOutcome out;
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  out.interrupted = g_interrupted != 0;
  return out;
}

std::string log_tail(const std::string& log_path, int lines) {
  std::ifstream in(log_path);
  std::deque<std::string> last;
  for (std::string line; std::getline(in, line);) {
    last.push_back(line);
    if (static_cast<int>(last.size()) > lines) last.pop_front();
  }
  std::string out;
  for (const auto& l : last) out += "  | " + l + "\n";
  return out;
}

}  // namespace cc::cli
