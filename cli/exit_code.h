// exit_code.h — a command that has already reported its error (e.g. every MPI rank of a
// failed training run, where only rank 0 prints) throws this to leave with a status code.
#pragma once

namespace cc::cli {

struct ExitCode {
  int code;
};

}  // namespace cc::cli
