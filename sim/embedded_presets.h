// embedded_presets.h — the preset files of traces/presets/, compiled into the binary by
// cmake/EmbedFiles.cmake so clustercast runs from any directory.
#pragma once

#include <string>
#include <vector>

namespace cc {

struct EmbeddedFile {
  std::string path;  // relative to traces/presets/, e.g. "models/gpt3-175b.json"
  std::string text;
};

const std::vector<EmbeddedFile>& embedded_presets();

}  // namespace cc
