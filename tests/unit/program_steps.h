// program_steps.h — a step of an op program found by its name, for the pricing tests that read
// one kernel or collective of a layer's program.
#pragma once

#include <string>

#include "sim/step_plan.h"

namespace cc::test {

// The first step named `name` (an op's or a collective's), or nullptr.
inline const ProgramStep* find_step(const OpProgram& p, const std::string& name) {
  for (const ProgramStep& s : p)
    if (name == (s.is_collective ? s.comm.name : s.op.name)) return &s;
  return nullptr;
}

}  // namespace cc::test
