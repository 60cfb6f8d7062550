#include "engine/annotations.h"

namespace cc::engine {

OpRecorder*& active_recorder() {
  static OpRecorder* recorder = nullptr;
  return recorder;
}

CurrentOp& current_op() {
  static CurrentOp op;
  return op;
}

}  // namespace cc::engine
