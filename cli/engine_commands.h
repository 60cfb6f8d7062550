// engine_commands.h — the subcommands that run the real training engine (`train`, `profile`,
// `validate`). They live in a second executable, clustercast-engine, which links MPI, the
// engine and (where built) CUDA, cuBLAS, NCCL and CUPTI; `clustercast` itself links none of
// them and hands these subcommands over whole (same arguments, same argv[0]), so `simulate`,
// `search` and `--help` start without loading them.
#pragma once

#include <string_view>

#include <CLI/CLI.hpp>

namespace cc::cli {

struct EngineCommand {
  const char* name;
  const char* summary;  // the one-line description both executables show
};

inline constexpr EngineCommand kEngineCommands[] = {
    {"profile", "Measure every op and collective of a real engine run at a model's shapes; write a cost database"},
    {"train", "Train a GPT for real (one MPI rank; start with mpirun -np N)"},
    {"validate",
     "Profile once, predict layouts the profile never ran, train each for real and compare (exit 3 on a miss)"},
};

// The summary of engine command `name` (one of kEngineCommands).
const char* engine_command_summary(std::string_view name);

bool is_engine_command(std::string_view word);

// In `clustercast`: registers each engine command, so help lists it, as a hand-over to
// clustercast-engine.
void add_engine_command_forwarders(CLI::App& app);

// Replaces this process with clustercast-engine running argv[1...]; argv[1] is an engine command.
[[noreturn]] void forward_to_engine(int argc, char** argv);

}  // namespace cc::cli
