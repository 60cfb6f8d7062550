#include "engine/annotations.h"

namespace cc::engine {

OpRecorder*& active_recorder() {
  static OpRecorder* recorder = nullptr;
  return recorder;
}

}  // namespace cc::engine
