// progress.h — a progress bar on stderr for long work: count, phase and ETA. It draws only
// when stderr is a terminal and the work has run for more than a second, so short runs,
// pipes and CI logs stay clean.
#pragma once

#include <chrono>
#include <cstddef>

namespace cc::cli {

class ProgressBar {
 public:
  ProgressBar();
  ~ProgressBar();
  void update(std::size_t done, std::size_t total, const char* phase);

 private:
  std::chrono::steady_clock::time_point start_, phase_start_, last_draw_;
  const char* phase_ = nullptr;
  bool terminal_ = false;
  bool drawn_ = false;
};

}  // namespace cc::cli
