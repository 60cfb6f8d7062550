// tiny_with_layers.h — the tiny preset with another layer count: the model the step-plan and
// split tests lay out over stages.
#pragma once

#include "sim/model_spec.h"
#include "sim/presets.h"

namespace cc {

inline ModelSpec tiny_with_layers(int layers) {
  ModelSpec m = load_model("tiny");
  m.num_layers = layers;
  return m;
}

}  // namespace cc
