#include "gui/main_window.h"

#include <QApplication>
#include <QChartView>
#include <QCloseEvent>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QScrollArea>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QVBoxLayout>

#include "gui/breakdown_chart.h"
#include "gui/chart_export.h"
#include "gui/cluster_map.h"
#include "gui/compare_page.h"
#include "gui/file_names.h"
#include "gui/launch_flags.h"
#include "gui/memory_page.h"
#include "gui/search_page.h"
#include "gui/search_table.h"
#include "gui/setup_panel.h"
#include "gui/summary_page.h"
#include "gui/timeline_view.h"
#include "interop/layout_files.h"
#include "sim/atomic_file.h"
#include "sim/error.h"
#include "sim/result_json.h"

namespace cc::gui {

namespace {

constexpr int kMaxRecent = 8;

QString details_text(const TimelineModel& m, int i) {
  if (i < 0) return QObject::tr("Click a task for its details. Wheel: zoom · drag: pan · W/S zoom · A/D pan · F fit");
  const TimelineEvent& e = m.event(i);
  QString text = QStringLiteral("%1 — %2 · process %3, %4 stream · start %5 · duration %6")
                     .arg(QString::fromStdString(e.name), kind_label(e.kind))
                     .arg(e.process)
                     .arg(stream_name(e.lane), format_time_ns(static_cast<double>(e.start)),
                          format_time_ns(static_cast<double>(e.duration)));
  if (const int layers = m.layers_of(e)) text += QObject::tr(" · %1 layers").arg(layers);
  return text;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent)
    : QMainWindow(parent),
      setup_(new SetupPanel),
      runner_(this),
      timeline_(this),
      memory_(this),
      summary_(new SummaryPage),
      timeline_view_(new TimelineView(&timeline_)),
      details_(new QLabel),
      memory_page_(new MemoryPage(&memory_)),
      search_page_(new SearchPage),
      compare_page_(new ComparePage),
      cluster_page_(new ClusterMapPage),
      tabs_(new QTabWidget),
      status_(new QLabel) {
  setWindowTitle(tr("clustercast[*]"));  // [*]: Qt's mark of unsaved edits (setWindowModified)
  auto* dock = new QDockWidget(tr("Setup"), this);
  dock->setObjectName("setup_dock");
  auto* scroll = new QScrollArea;
  scroll->setWidget(setup_);
  scroll->setWidgetResizable(true);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(setup_->sizeHint().width() + 24);
  dock->setWidget(scroll);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  auto* timeline_page = new QWidget;
  auto* tl = new QVBoxLayout(timeline_page);
  tl->setContentsMargins(0, 0, 0, 0);
  tl->addWidget(timeline_view_, 1);
  details_->setWordWrap(true);
  details_->setText(details_text(timeline_, -1));
  tl->addWidget(details_);
  connect(timeline_view_, &TimelineView::selection_changed, this,
          [this](int i) { details_->setText(details_text(timeline_, i)); });

  tabs_->addTab(summary_, tr("Summary"));
  tabs_->addTab(timeline_page, tr("Timeline"));
  tabs_->addTab(memory_page_, tr("Memory"));
  tabs_->addTab(search_page_, tr("Search"));
  connect(search_page_, &SearchPage::run_requested, this, [this] { search_page_->start(setup_->project()); });
  connect(search_page_, &SearchPage::layout_chosen, this, &MainWindow::load_layout);
  // Two pinned timelines and the charts above them need more height than a 1280 x 800 window
  // has; the page scrolls instead of making the window taller than the screen.
  auto* compare_scroll = new QScrollArea;
  compare_scroll->setWidget(compare_page_);
  compare_scroll->setWidgetResizable(true);
  compare_scroll->setFrameShape(QFrame::NoFrame);
  tabs_->addTab(compare_scroll, tr("Compare"));
  connect(compare_page_, &ComparePage::setup_chosen, this, [this](const Project& p) {
    set_project(p);
    setWindowModified(true);
  });
  tabs_->addTab(cluster_page_, tr("Cluster map"));
  connect(compare_page_, &ComparePage::pin_requested, this, [this] {
    const Project p = setup_->project();
    compare_page_->pin(p, QString::fromStdString(p.resolved_config().summary()));
  });
  setCentralWidget(tabs_);
  statusBar()->addWidget(status_, 1);

  connect(setup_, &SetupPanel::edited, this, [this] {
    setWindowModified(true);
    search_page_->set_current_setup(setup_->project());
    runner_.request(setup_->project());
  });
  connect(&runner_, &SimulationRunner::started, this, [this] { status_->setText(tr("simulating…")); });
  connect(&runner_, &SimulationRunner::finished, this, &MainWindow::on_finished);
  build_menus();
  set_questions({}, {});

  QSettings settings;
  restoreGeometry(settings.value("window/geometry").toByteArray());
  restoreState(settings.value("window/state").toByteArray());
  rebuild_recent_menu();
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("&Open project…"), QKeySequence::Open, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Open project"), {}, tr("clustercast project (*.ccproj *.json)"));
    if (!path.isEmpty()) guarded([&] { open_project(path); });
  });
  file->addAction(tr("&Save project"), QKeySequence::Save, this, [this] { save_with_dialog(); });
  file->addAction(tr("Save project &as…"), QKeySequence::SaveAs, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Save project"), {}, tr("clustercast project (*.ccproj)"));
    if (!path.isEmpty()) guarded([&] { save_project(path); });
  });
  file->addAction(tr("&Import layout…"), this, [this] {
    const QString path = QFileDialog::getOpenFileName(
        this, tr("Import layout"), {},
        tr("Layout files (*.json *.txt *.args *.yaml *.yml);;All files (*)"));  // recognised by content
    if (!path.isEmpty()) guarded([&] { import_layout(path); });
  });
  recent_menu_ = file->addMenu(tr("Recent projects"));
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);

  QMenu* ex = menuBar()->addMenu(tr("&Export"));
  auto add = [&](const QString& label, const QString& filter, auto action) {
    ex->addAction(label, this, [this, label, filter, action] {
      const QString path = QFileDialog::getSaveFileName(this, label, {}, filter);
      if (!path.isEmpty()) guarded([&] { action(path); });
    });
  };
  add(tr("Layout as JSON…"), tr("JSON (*.json)"), [this](const QString& p) { export_layout(p, "json"); });
  add(tr("Megatron-LM arguments…"), tr("Megatron-LM arguments (*.txt);;Launch script (*.sh)"),
      [this](const QString& p) { export_layout(p, "megatron"); });
  add(tr("NeMo YAML…"), tr("YAML (*.yaml)"), [this](const QString& p) { export_layout(p, "nemo"); });
  add(tr("Timeline as Chrome trace…"), tr("JSON (*.json)"), [this](const QString& p) { export_chrome_trace(p); });
  add(tr("Current chart as PNG…"), tr("PNG (*.png)"), [this](const QString& p) { export_chart(p); });
  add(tr("Current chart as SVG…"), tr("SVG (*.svg)"), [this](const QString& p) { export_chart(p); });
  add(tr("Search results as CSV…"), tr("CSV (*.csv)"), [this](const QString& p) { export_search_csv(p); });
}

void MainWindow::set_questions(Confirm confirm, AskSave ask_save) {
  confirm_ = confirm ? std::move(confirm) : Confirm([this](const QString& question) {
    return QMessageBox::question(this, tr("clustercast"), question) == QMessageBox::Yes;
  });
  ask_save_ = ask_save ? std::move(ask_save) : AskSave([this](const QString& question) {
    return QMessageBox::question(this, tr("clustercast"), question,
                                 QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  });
}

template <typename F>
void MainWindow::guarded(F&& action) {
  try {
    action();
  } catch (const SpecError& e) {
    report(QString::fromStdString(e.what()));
  }
}

void MainWindow::report(const QString& message) { status_->setText(message); }

void MainWindow::set_project(const Project& p) {
  setup_->set_project(p);
  search_page_->set_current_setup(setup_->project());
  runner_.run_now(setup_->project());
}

void MainWindow::on_finished(const SimulationOutcome& outcome) {
  if (!outcome.ok()) {
    setup_->show_error(outcome.error_field, QString::fromStdString(outcome.error));
    stale_ = last_.has_value();
    summary_->set_stale(stale_, tr("The current setup is invalid: %1").arg(QString::fromStdString(outcome.error)));
    mark_tabs_stale(stale_);
    report(tr("invalid setup: %1").arg(QString::fromStdString(outcome.error)));
    emit result_shown();
    return;
  }
  setup_->show_error({}, {});
  last_ = outcome;
  stale_ = false;
  summary_->set_stale(false);
  mark_tabs_stale(false);
  summary_->set_result(*outcome.result);
  timeline_.set_result(outcome.result);
  memory_.set_result(outcome.result);
  memory_page_->set_curves(outcome.memory_curves, outcome.result->usable_gib);
  cluster_page_->set_result(*outcome.result);
  setup_->set_coverage(outcome.result->cost_coverage.empty()
                           ? QString()
                           : tr("Coverage: %1 (measured share %2 %)")
                                 .arg(QString::fromStdString(outcome.result->cost_coverage))
                                 .arg(outcome.result->measured_fraction * 100, 0, 'f', 0));
  QString done = tr("simulated %1 tasks in %2 ms").arg(outcome.result->tasks).arg(outcome.wall_seconds * 1e3, 0, 'f', 0);
  for (const auto& warning : outcome.warnings) done += tr(" — warning: %1").arg(QString::fromStdString(warning));
  report(done);
  emit result_shown();
}

void MainWindow::mark_tabs_stale(bool stale) {
  // The tabs that show the last result say so when the setup has moved on to an invalid one.
  const std::pair<QWidget*, QString> shown[] = {
      {summary_, tr("Summary")}, {timeline_view_->parentWidget(), tr("Timeline")}, {memory_page_, tr("Memory")},
      {cluster_page_, tr("Cluster map")}};
  for (const auto& [page, title] : shown) tabs_->setTabText(tabs_->indexOf(page), stale ? title + tr(" (stale)") : title);
}

bool MainWindow::open_project(const QString& path) {
  const Project p = load_project(path.toStdString());  // a file that cannot open asks nothing
  if (!settle_unsaved_edits()) return false;
  set_project(p);
  project_path_ = path;
  setWindowModified(false);
  add_recent(path);
  return true;
}

bool MainWindow::import_layout(const QString& path) {
  const Project p = project_from_layout_file(path.toStdString(), setup_->project());
  if (!settle_unsaved_edits()) return false;
  set_project(p);
  setWindowModified(true);  // a new setup, not yet a project file
  report(tr("imported %1").arg(path));
  return true;
}

bool MainWindow::settle_unsaved_edits() {
  if (!isWindowModified()) return true;
  const QMessageBox::StandardButton answer = ask_save_(tr("The setup has unsaved changes. Save them?"));
  // Cancel (or Escape), or a save that was cancelled or failed: the setup and its edits stay.
  return answer == QMessageBox::Discard || (answer == QMessageBox::Save && save_with_dialog());
}

void MainWindow::save_project(const QString& chosen) {
  const QString path = with_default_suffix(chosen, QStringLiteral("ccproj"));
  cc::gui::save_project(path.toStdString(), setup_->project());
  project_path_ = path;
  setWindowModified(false);
  add_recent(path);
  report(tr("saved %1").arg(path));
}

bool MainWindow::save_with_dialog() {
  QString path = project_path_;
  if (path.isEmpty())
    path = QFileDialog::getSaveFileName(this, tr("Save project"), {}, tr("clustercast project (*.ccproj)"));
  if (path.isEmpty()) return false;
  guarded([&] { save_project(path); });
  return !isWindowModified();
}

void MainWindow::export_layout(const QString& path, const QString& format) {
  if (!last_ || stale_) fail("nothing to export: the current setup has no valid result");
  const SimResult& r = *last_->result;
  // A launch file for a run that runs out of memory is most likely a mistake; it is written only
  // when the user says so.
  if (!r.fits && !confirm_(tr("This layout does not fit: it needs %1 GiB per GPU and %2 GiB are usable. Export "
                              "it anyway?")
                               .arg(r.peak_memory_gib, 0, 'f', 1)
                               .arg(r.usable_gib, 0, 'f', 1))) {
    report(tr("not exported: the layout does not fit in memory"));
    return;
  }
  const MemoryReserve reserve = setup_->project().reserve;
  const std::string target = (format == "megatron" ? megatron_arguments_path(path) : path).toStdString();
  OutputSet files;  // the Megatron arguments and their launch script, both or neither
  if (format == "megatron") {
    files.add(target, megatron_arguments(r, reserve));
    files.add(megatron_script_path(target), megatron_launch_script(r, reserve, target));
  } else {
    files.add(target, format == "json" ? layout_json(r, reserve) : nemo_yaml(r, reserve));
  }
  files.commit();
  report(tr("exported %1").arg(QString::fromStdString(target)));
}

void MainWindow::export_chrome_trace(const QString& path) {
  if (!last_) fail("nothing to export: no result yet");
  write_file_atomically(path.toStdString(), timeline_to_chrome_trace(*last_->result).dump() + "\n");
  report(tr("exported %1").arg(path));
}

void MainWindow::export_chart(const QString& path) {
  QWidget* current = tabs_->currentWidget();
  QWidget* chart = current == summary_       ? static_cast<QWidget*>(summary_->breakdown())
                   : current == memory_page_ ? static_cast<QWidget*>(memory_page_)
                   : current == search_page_ ? static_cast<QWidget*>(search_page_->scatter())
                   : current->isAncestorOf(compare_page_) ? static_cast<QWidget*>(compare_page_)
                   : current == cluster_page_ ? static_cast<QWidget*>(cluster_page_->view())
                                             : static_cast<QWidget*>(timeline_view_);
  if (path.endsWith(".svg", Qt::CaseInsensitive)) save_widget_svg(*chart, path, tabs_->tabText(tabs_->currentIndex()));
  else save_widget_png(*chart, path);
  report(tr("exported %1").arg(path));
}

void MainWindow::export_search_csv(const QString& path) {
  if (!search_page_->table()->outcome()) fail("nothing to export: no search has finished");
  write_file_atomically(path.toStdString(), search_page_->table()->to_csv());
  report(tr("exported %1").arg(path));
}

void MainWindow::load_layout(const ParallelConfig& config) {
  Project p = setup_->project();
  const int instances = p.config.distributed_optimizer_instances;
  p.config = config;
  // A plain-optimizer layout leaves the greyed-out instances field as the user set it.
  if (!config.distributed_optimizer) p.config.distributed_optimizer_instances = instances;
  p.auto_dp = config.gpus() == p.gpus;
  setup_->set_project(p);
  setWindowModified(true);  // the user chose it: an edit like any other
  search_page_->set_current_setup(setup_->project());
  runner_.run_now(setup_->project());
}

void MainWindow::add_recent(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value("recent").toStringList();
  const QString absolute = QFileInfo(path).absoluteFilePath();
  recent.removeAll(absolute);
  recent.prepend(absolute);
  while (recent.size() > kMaxRecent) recent.removeLast();
  settings.setValue("recent", recent);
  rebuild_recent_menu();
}

void MainWindow::rebuild_recent_menu() {
  recent_menu_->clear();
  const QStringList recent = QSettings().value("recent").toStringList();
  for (const QString& path : recent)
    recent_menu_->addAction(path, this, [this, path] { guarded([&] { open_project(path); }); });
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::closeEvent(QCloseEvent* e) {
  if (!settle_unsaved_edits()) {
    e->ignore();
    return;
  }
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
  e->accept();
}

}  // namespace cc::gui
