// program_cost.cpp — what a program of kernels and collectives costs (ProgramCost, cost_of): the
// device time of each kernel, the exposed part of each collective, and the host's issue time,
// combined as a two-machine flow shop (layer_program.h).
#include <algorithm>

#include "sim/layer_program.h"

namespace cc {

ProgramCost& ProgramCost::operator+=(const ProgramCost& o) {
  span_s = std::max(span_s + o.device(), host_s + o.span_s);
  compute_s += o.compute_s;
  comm_exposed_s += o.comm_exposed_s;
  ep_comm_exposed_s += o.ep_comm_exposed_s;
  cp_comm_exposed_s += o.cp_comm_exposed_s;
  cp_comm_s += o.cp_comm_s;
  measured_s += o.measured_s;
  flops += o.flops;
  host_s += o.host_s;
  return *this;
}

ProgramCost ProgramCost::repeated(int n) const {
  if (n <= 0) return {};
  const double f = n;
  ProgramCost p = *this;
  for (double* x : {&p.compute_s, &p.comm_exposed_s, &p.ep_comm_exposed_s, &p.cp_comm_exposed_s, &p.cp_comm_s, &p.measured_s, &p.flops,
                    &p.host_s})
    *x *= f;
  p.span_s = span_s + (f - 1) * std::max(device(), host_s);
  return p;
}

ProgramCost ProgramCost::host_only(double seconds) {
  ProgramCost p;
  p.host_s = p.span_s = seconds;
  return p;
}

ProgramCost cost_of(const OpProgram& program, const CostSource& costs) {
  std::vector<OpCost> kernels(program.size());
  for (std::size_t i = 0; i < program.size(); ++i)
    if (!program[i].is_collective) kernels[i] = costs.compute(program[i].op);
  // In program order, each op after the last: the flow shop's span accumulates op by op.
  ProgramCost total;
  for (std::size_t i = 0; i < program.size(); ++i) {
    const ProgramStep& step = program[i];
    ProgramCost op;
    if (!step.is_collective) {
      const OpCost& c = kernels[i];
      op.compute_s = c.seconds;
      op.flops = step.op.flops;
      op.host_s = c.host_s;
      if (c.measured) op.measured_s = c.seconds;
    } else {
      const OpCost c = costs.collective(step.comm);
      double hidden = 0;
      for (int k = step.hides_behind; k >= 0 && k <= std::max(step.hides_behind, step.hides_through); ++k)
        hidden += kernels[static_cast<std::size_t>(k)].seconds;
      const double exposed =
          std::max(0.0, c.seconds - hidden) + costs.overlap_interference() * std::min(c.seconds, hidden);
      if (is_context_parallel(step.comm.runs_on)) {
        op.cp_comm_exposed_s = exposed;
        op.cp_comm_s = c.seconds;
      } else if (step.comm.runs_on == CommGroup::Expert) {
        op.ep_comm_exposed_s = exposed;
      } else {
        op.comm_exposed_s = exposed;
      }
      op.host_s = c.host_s;
      if (c.measured) op.measured_s = exposed;
    }
    op.span_s = op.host_s + op.device();
    total += op;
  }
  return total;
}

}  // namespace cc
