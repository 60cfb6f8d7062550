// main_window.h — clustercast-gui's window: the Setup dock, the Summary / Timeline /
// Memory tabs, File (projects, recent files) and Export menus. Every edit re-simulates on
// the worker thread; a failed setup keeps the last valid result on screen, marked stale.
#pragma once

#include <functional>
#include <optional>

#include <QMainWindow>
#include <QMessageBox>

#include "gui/memory_table.h"
#include "gui/simulation.h"
#include "gui/simulation_runner.h"
#include "gui/timeline_model.h"

class QLabel;
class QMenu;
class QTabWidget;

namespace cc::gui {

class ClusterMapPage;
class ComparePage;
class MemoryPage;
class SearchPage;
class SetupPanel;
class SummaryPage;
class TimelineView;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);

  SetupPanel* setup() const { return setup_; }
  SimulationRunner* runner() { return &runner_; }
  TimelineModel* timeline_model() { return &timeline_; }
  MemoryTable* memory_table() { return &memory_; }
  SummaryPage* summary() const { return summary_; }
  TimelineView* timeline_view() const { return timeline_view_; }
  MemoryPage* memory_page() const { return memory_page_; }
  SearchPage* search_page() const { return search_page_; }
  ComparePage* compare_page() const { return compare_page_; }
  ClusterMapPage* cluster_page() const { return cluster_page_; }
  QTabWidget* tabs() const { return tabs_; }
  const SimResult* result() const { return last_ ? last_->result.get() : nullptr; }
  bool stale() const { return stale_; }

  void set_project(const Project& p);  // and simulate it now
  // Both replace the whole setup: with unsaved edits they ask Save / Discard / Cancel first, as
  // closing does, and return false when the setup stays. Both throw SpecError, changing nothing.
  bool open_project(const QString& path);
  // A layout file this window or `search` exported (JSON, Megatron-LM arguments, NeMo YAML),
  // read as `simulate --config` reads it.
  bool import_layout(const QString& path);
  void save_project(const QString& path);  // NAME without an extension: NAME.ccproj
  // format: "json", "megatron", "nemo". Megatron: `path` names the argument file, or its launch
  // script when it ends in .sh (megatron_arguments_path). A layout that does not fit asks first.
  void export_layout(const QString& path, const QString& format);
  void export_chrome_trace(const QString& path);
  void export_chart(const QString& path);  // the current tab's chart; PNG or SVG by suffix
  void export_search_csv(const QString& path);
  // Loads a layout (from the search) into the setup and simulates it.
  void load_layout(const ParallelConfig& config);

  // The window's questions to the user; tests answer them instead of a modal box.
  // Yes/No: true to go ahead (exporting a layout that does not fit).
  using Confirm = std::function<bool(const QString& question)>;
  // Save / Discard / Cancel for unsaved edits.
  using AskSave = std::function<QMessageBox::StandardButton(const QString& question)>;
  void set_questions(Confirm confirm, AskSave ask_save);

 signals:
  void result_shown();  // a new valid result or a new error is on screen

 protected:
  void closeEvent(QCloseEvent* e) override;

 private:
  void build_menus();
  bool save_with_dialog();  // to the project's file, else where the user says; false if not saved
  // Unsaved edits: asks Save / Discard / Cancel; true when the setup may be replaced.
  bool settle_unsaved_edits();
  void on_finished(const SimulationOutcome& outcome);
  void add_recent(const QString& path);
  void rebuild_recent_menu();
  void report(const QString& message);  // in the status bar, never a modal box
  void mark_tabs_stale(bool stale);
  template <typename F>
  void guarded(F&& action);

  SetupPanel* setup_;
  SimulationRunner runner_;
  TimelineModel timeline_;
  MemoryTable memory_;
  SummaryPage* summary_;
  TimelineView* timeline_view_;
  QLabel* details_;
  MemoryPage* memory_page_;
  SearchPage* search_page_;
  ComparePage* compare_page_;
  ClusterMapPage* cluster_page_;
  QTabWidget* tabs_;
  QLabel* status_;
  QMenu* recent_menu_ = nullptr;
  std::optional<SimulationOutcome> last_;
  bool stale_ = false;
  QString project_path_;
  Confirm confirm_;
  AskSave ask_save_;
};

}  // namespace cc::gui
