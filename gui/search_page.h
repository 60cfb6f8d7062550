// search_page.h — the Search tab: the library's search (sim/search.h) over the setup's
// model, cluster, GPUs, global batch and budget, with pins and lists per dimension, run on a
// worker thread with progress, count and ETA. Results: a sortable, filterable table and a
// scatter of throughput against peak memory (usable HBM line, ties highlighted, the fastest
// layouts that do not fit greyed out right of the line, hover names the layout). Choosing a
// row or a ranked point loads that layout into the setup; unfit layouts are not in the table.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>

#include <QTimer>
#include <QWidget>

#include "gui/project.h"
#include "sim/search.h"

class QChartView;
class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QScatterSeries;
class QPushButton;
class QSortFilterProxyModel;
class QSpinBox;
class QTableView;

namespace cc::gui {

class SearchTable;

struct SearchRun {
  std::shared_ptr<const SearchOutcome> outcome;  // null on error
  std::string error;
  double wall_seconds = 0;
};

class SearchPage : public QWidget {
  Q_OBJECT
 public:
  explicit SearchPage(QWidget* parent = nullptr);
  ~SearchPage() override;

  // The request the Run button sends for `base` (tests hand the same to the library).
  // Throws SpecError on a list that does not parse.
  // `measured`, when given, receives the cost database the request was made for (none: analytic).
  SearchRequest request_for(const Project& base, std::shared_ptr<const CostDatabase>* measured = nullptr) const;
  void start(const Project& base);
  // Returns at once and keeps the previous results. The library's search has no stop
  // hook, so the abandoned run finishes in the background and its answer is dropped.
  void cancel();
  bool running() const { return running_; }
  // The setup now on screen: results searched for another model, cluster, GPU count, batch,
  // budget, cost source or set of switches are marked stale, and a row no longer loads.
  void set_current_setup(const Project& current);
  bool results_stale() const { return results_stale_; }
  QLabel* stale_note() const { return stale_note_; }

  SearchTable* table() const { return table_; }
  QSortFilterProxyModel* proxy() const { return proxy_; }
  QTableView* view() const { return view_; }
  QChartView* scatter() const { return scatter_; }
  // The greyed points (SearchOutcome::unfit, in its order); null before a search.
  QScatterSeries* unfit_series() const { return unfit_series_; }
  QLineEdit* filter() const { return filter_; }
  QLabel* status() const { return status_; }
  QLineEdit* tp_list() const { return tp_; }
  QLineEdit* pp_list() const { return pp_; }
  QLineEdit* ep_list() const { return ep_; }
  QLineEdit* etp_list() const { return etp_; }

 signals:
  void run_requested();  // the Run button: the window answers with start(its project)
  void layout_chosen(const cc::ParallelConfig& config);
  void finished();  // new results, an error, or a cancel is on screen

 private:
  void on_done(int generation, const SearchRun& run);
  void poll_progress();
  void rebuild_scatter();
  void choose(int source_row);

  struct Progress {
    std::atomic<std::size_t> done{0}, total{0};
    std::atomic<int> phase{0};  // 0 estimating, 1 simulating
    std::atomic<bool> cancel{false};  // set by Cancel: the library's search stops
  };

  SearchTable* table_;
  QSortFilterProxyModel* proxy_;
  QTableView* view_;
  QChartView* scatter_;
  QScatterSeries* unfit_series_ = nullptr;  // owned by the chart
  QLineEdit *tp_, *pp_, *micro_, *virtual_, *ep_, *etp_, *filter_;
  QComboBox *sp_, *distopt_, *color_by_;
  QCheckBox *rc_none_, *rc_selective_, *rc_full_, *cross_node_tp_;
  QSpinBox* top_;
  QPushButton *run_, *cancel_;
  QProgressBar* progress_bar_;
  QLabel* status_;
  QLabel* exclusions_;
  QLabel* stale_note_;
  QTimer poll_;
  std::shared_ptr<Progress> progress_;
  std::chrono::steady_clock::time_point started_;
  bool running_ = false;
  Project searching_for_;                 // the setup of the run in flight
  Project current_setup_;                 // the setup on screen now
  std::optional<Project> results_for_;    // the setup the table's results were searched for
  bool results_stale_ = false;
  bool refiltering_ = false;  // the filter is moving the current row, not the user
  int generation_ = 0;  // each start or cancel moves it on; an answer from an older one is dropped
};

}  // namespace cc::gui
