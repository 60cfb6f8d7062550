// atomic_file.h — every file clustercast writes goes to "<path>.tmp" first and is renamed
// into place only when complete, so a failed or interrupted run never leaves half a file.
#pragma once

#include <string>

namespace cc {

// Throws SpecError naming the path if the folder is missing or not writable.
void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace cc
