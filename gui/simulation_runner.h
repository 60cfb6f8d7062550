// simulation_runner.h — runs simulations off the GUI thread (QtConcurrent). Edits arrive
// through request(); after a short debounce the newest project is simulated. At most one
// simulation runs at a time: an edit made while one runs replaces the pending project, and
// the running one's result is dropped when it finishes, so a newer edit always wins.
#pragma once

#include <optional>

#include <QFutureWatcher>
#include <QObject>
#include <QTimer>

#include "gui/project.h"
#include "gui/simulation.h"

namespace cc::gui {

class SimulationRunner : public QObject {
  Q_OBJECT
 public:
  explicit SimulationRunner(QObject* parent = nullptr, int debounce_ms = 150);
  void request(const Project& project);  // debounced
  void run_now(const Project& project);  // no debounce (open, first start)
  bool busy() const { return in_flight_ || timer_.isActive() || pending_.has_value(); }

 signals:
  void started();
  void finished(const cc::gui::SimulationOutcome& outcome);

 private:
  void start_pending();
  void on_done();

  QTimer timer_;
  QFutureWatcher<SimulationOutcome> watcher_;
  std::optional<Project> pending_;
  // Until on_done() has run, not merely until the thread returns: a result that finished
  // but was not yet delivered is still superseded by a newer edit.
  bool in_flight_ = false;
  bool running_stale_ = false;  // the running simulation has been superseded
};

}  // namespace cc::gui
