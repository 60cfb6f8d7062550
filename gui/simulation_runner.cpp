#include "gui/simulation_runner.h"

#include <QtConcurrent/QtConcurrentRun>

namespace cc::gui {

SimulationRunner::SimulationRunner(QObject* parent, int debounce_ms) : QObject(parent) {
  timer_.setSingleShot(true);
  timer_.setInterval(debounce_ms);
  connect(&timer_, &QTimer::timeout, this, &SimulationRunner::start_pending);
  connect(&watcher_, &QFutureWatcher<SimulationOutcome>::finished, this, &SimulationRunner::on_done);
}

void SimulationRunner::request(const Project& project) {
  pending_ = project;
  if (in_flight_) running_stale_ = true;
  timer_.start();
}

void SimulationRunner::run_now(const Project& project) {
  pending_ = project;
  if (in_flight_) running_stale_ = true;
  timer_.stop();
  start_pending();
}

void SimulationRunner::start_pending() {
  if (!pending_ || in_flight_) return;  // on_done() starts it
  Project p = std::move(*pending_);
  pending_.reset();
  running_stale_ = false;
  in_flight_ = true;
  emit started();
  watcher_.setFuture(QtConcurrent::run([p = std::move(p)] { return run_simulation(p); }));
}

void SimulationRunner::on_done() {
  const SimulationOutcome outcome = watcher_.result();
  const bool stale = running_stale_;
  running_stale_ = false;
  in_flight_ = false;
  if (!stale) emit finished(outcome);
  if (pending_ && !timer_.isActive()) start_pending();
}

}  // namespace cc::gui
