// common_options.h — what the commands share beyond the run's own flags (interop/input_flags.h):
// output-folder checks and token budgets.
#pragma once

#include <string>

#include "interop/input_flags.h"

namespace cc::cli {

// The folder an output file goes into must exist before an hour of work, not after.
void check_output_folder(const std::string& path, const char* flag);

// "300e9", "300B", "1.5T" → tokens. Throws SpecError naming the flag on anything else.
double parse_token_count(const std::string& text, const std::string& flag);

}  // namespace cc::cli
