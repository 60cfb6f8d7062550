#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace cc::cli {

ProgressBar::ProgressBar()
    : start_(std::chrono::steady_clock::now()), phase_start_(start_), last_draw_(start_),
      terminal_(isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
}

void ProgressBar::update(std::size_t done, std::size_t total, const char* phase) {
  const auto now = std::chrono::steady_clock::now();
  if (phase != phase_) {
    phase_ = phase;
    phase_start_ = now;
  }
  if (!terminal_ || total == 0) return;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (elapsed < 1.0 || (now - last_draw_ < std::chrono::milliseconds(100) && done < total)) return;
  last_draw_ = now;
  drawn_ = true;
  const double fraction = static_cast<double>(done) / static_cast<double>(total);
  const double phase_elapsed = std::chrono::duration<double>(now - phase_start_).count();
  const double eta = fraction > 0 ? phase_elapsed * (1 - fraction) / fraction : 0;
  constexpr int width = 30;
  const int filled = static_cast<int>(fraction * width);
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar += std::string(static_cast<std::size_t>(width - filled), '.');
  std::fprintf(stderr, "\r\033[K[%s] %-10s %zu/%zu  ETA %.0fs", bar.c_str(), phase, done, total, eta);
  std::fflush(stderr);
}

}  // namespace cc::cli
