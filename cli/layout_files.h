// layout_files.h — reads a parallel layout back from a file `search` exported: our JSON
// (the full prediction, or just its "config" object), a Megatron-LM argument file, or a
// NeMo Megatron YAML. The format is recognised from the content, not the file name.
#pragma once

#include <string>

#include "sim/parallel_config.h"

namespace cc::cli {

ParallelConfig read_layout_file(const std::string& path);

}  // namespace cc::cli
