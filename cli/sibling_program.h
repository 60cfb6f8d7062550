// sibling_program.h — run another clustercast program in place of this process: the one the
// build put beside this executable, else one on PATH. `clustercast` hands `gui` to
// clustercast-gui and `train`/`profile`/`validate` to clustercast-engine this way, so the
// commands that only simulate never load Qt, MPI or the CUDA libraries.
#pragma once

#include <string>
#include <vector>

namespace cc::cli {

// Replaces this process with `program` (argv[0] = argv0, then args). Returns only by throwing
// ExitCode{2} after saying that `program` was found neither beside this executable nor on PATH,
// followed by `how_to_get_it`.
[[noreturn]] void exec_sibling(const std::string& program, const std::string& argv0,
                               const std::vector<std::string>& args, const std::string& how_to_get_it);

}  // namespace cc::cli
