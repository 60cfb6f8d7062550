// ensure_mpi.h — MPI started once for a test program that gtest runs as one process (the
// engine's groups are MPI communicators, of one rank here), finalized at exit.
#pragma once

#include <mpi.h>

#include <cstdlib>

namespace cc::engine {

inline void ensure_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    MPI_Init(nullptr, nullptr);
    std::atexit([] { MPI_Finalize(); });
  }
}

}  // namespace cc::engine
