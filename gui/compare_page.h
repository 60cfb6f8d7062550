// compare_page.h — the Compare tab: two or more pinned setups (layouts, clusters or cost
// sources) side by side: the summary figures with their difference from the first, the time
// breakdowns as aligned stacked bars, memory per stage, and the timelines on one time axis.
// "NeMo example" pins GPT-3 175B on 1,024 A100s with full recomputation against sequence
// parallelism with selective recomputation (Korthikanti et al. 2022), in days.
#pragma once

#include <memory>
#include <vector>

#include <QWidget>

#include "gui/project.h"
#include "gui/simulation.h"

class QChartView;
class QLabel;
class QSplitter;
class QTableWidget;
class QVBoxLayout;

namespace cc::gui {

class TimelineModel;
class TimelineView;

class ComparePage : public QWidget {
  Q_OBJECT
 public:
  explicit ComparePage(QWidget* parent = nullptr);
  ~ComparePage() override;

  // Simulates `p` on a worker thread and adds it; `name` labels its column.
  void pin(const Project& p, const QString& name);
  void clear();
  void pin_nemo_example();
  int pinned() const { return static_cast<int>(entries_.size()); }
  bool busy() const { return pending_ > 0; }
  const SimResult& result(int i) const { return *entries_[static_cast<std::size_t>(i)].outcome.result; }
  const Project& project(int i) const { return entries_[static_cast<std::size_t>(i)].project; }
  QTableWidget* figures() const { return figures_; }
  QChartView* breakdown_chart() const { return breakdown_; }
  QChartView* memory_chart() const { return memory_; }
  TimelineView* timeline(int i) const;

 signals:
  void pin_requested();  // "Pin current setup": the window answers with pin(its project)
  void setup_chosen(const cc::gui::Project& project);  // a column header clicked: load it (to export it)
  void changed();        // a pinned result arrived, or the pins were cleared

 private:
  void delete_entries();
  struct Entry {
    QString name;
    int order = 0;
    Project project;
    SimulationOutcome outcome;
    std::unique_ptr<TimelineModel> model;
    TimelineView* view = nullptr;
    QWidget* box = nullptr;  // the view under its name, owned by the splitter
  };
  void add(const QString& name, int order, const Project& project, const SimulationOutcome& outcome);
  void rebuild();

  std::vector<Entry> entries_;
  int pending_ = 0;
  int next_order_ = 0;
  int generation_ = 0;  // clear() drops results still on their way
  QTableWidget* figures_;
  QChartView* breakdown_;
  QChartView* memory_;
  QSplitter* timelines_;
  QLabel* status_;
};

}  // namespace cc::gui
