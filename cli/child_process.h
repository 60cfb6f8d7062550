// child_process.h — runs another program (mpirun with its ranks) to its end, with its output
// in a log file, in a process group of its own, so that Ctrl-C (SIGINT) or SIGTERM on
// `clustercast validate` reaches the whole job and the caller learns that it was stopped.
#pragma once

#include <string>
#include <vector>

namespace cc::cli {

struct ChildOutcome {
  int exit_code = 0;         // the program's status; 128 + N when signal N ended it
  bool interrupted = false;  // SIGINT or SIGTERM arrived while it ran (it was passed on)
};

// argv[0] is looked up on PATH. stdout and stderr go to `log_path` (created or truncated).
// Throws SpecError when the program cannot be started.
ChildOutcome run_child(const std::vector<std::string>& argv, const std::string& log_path);

// The last `lines` lines of a log (for the message when a child failed).
std::string log_tail(const std::string& log_path, int lines);

}  // namespace cc::cli
