// common_options.h — what the commands share beyond the run's own flags (interop/input_flags.h):
// output-folder checks and token budgets.
#pragma once

#include <string>
#include <vector>

#include "interop/input_flags.h"

namespace cc::cli {

// The folder an output file goes into must exist before an hour of work, not after.
void check_output_folder(const std::string& path, const char* flag);
// Refuses (SpecError naming `flag`) a folder to be written later that could not be made: its
// nearest existing ancestor is not a writable folder, or a name below it is longer than that
// file system allows. Nothing is created: a run checks its checkpoint folder before training.
void check_folder_can_be_made(const std::string& path, const char* flag);

// A file a command reads or writes, named by its flag for messages.
struct NamedPath {
  std::string path;  // empty: not given
  std::string flag;
};
// Before any work: refuses (exit 2) two outputs that name one file, and an output that names a
// file the command reads (an input that exists as a file: a preset name is not one), by path or
// by inode (sim/atomic_file.h same_file), so no output replaces another or its own input.
void check_outputs_apart(const std::vector<NamedPath>& outputs, const std::vector<NamedPath>& inputs);

// "300e9", "300B", "1.5T" → tokens. Throws SpecError naming the flag on anything else.
double parse_token_count(const std::string& text, const std::string& flag);

}  // namespace cc::cli
