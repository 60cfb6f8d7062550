#include "profiler/host_recorder.h"

#include <cstring>
#include <stdexcept>

namespace cc::profiler {

HostRecorder::HostRecorder() : origin_(std::chrono::steady_clock::now()) {}

double HostRecorder::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
}

void HostRecorder::begin(const engine::OpAnnotation& op) {
  if (std::strcmp(op.name, kStepScope) == 0) step_ = static_cast<long>(op.shape[0]);
  open_.push_back({op, now()});
}

void HostRecorder::end(const engine::OpAnnotation& op) {
  const double t = now();
  if (open_.empty() || std::strcmp(open_.back().op.name, op.name) != 0)
    throw std::logic_error(std::string("HostRecorder: scope '") + op.name + "' ended out of order");
  const Open o = open_.back();
  open_.pop_back();
  const double duration = t - o.start_s;
  if (!open_.empty()) open_.back().nested_s += duration;
  events_.push_back({o.op, step_, o.start_s, duration, duration - o.nested_s});
  if (std::strcmp(op.name, kStepScope) == 0) step_ = -1;
}

}  // namespace cc::profiler
