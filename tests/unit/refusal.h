// refusal.h — what a test of bad input reads from the SpecError it expects: the message and the
// field (sim/error.h), or "(no error)" when the call succeeded.
#pragma once

#include <string>

#include "sim/error.h"

namespace cc {

struct Refusal {
  std::string message, field;
};

inline Refusal refusal_of(auto&& f) {
  try {
    f();
  } catch (const SpecError& e) {
    return {e.what(), e.field()};
  }
  return {"(no error)", ""};
}

}  // namespace cc
