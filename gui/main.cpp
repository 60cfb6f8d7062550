// clustercast-gui — set up a model, a cluster and a layout; see the simulated iteration's
// time, timeline and memory. Options mirror `clustercast simulate` so a launch line can be
// opened as it is; --screenshots saves each tab as PNG and quits (docs, CI).
#include <QApplication>
#include <QDir>
#include <QScrollArea>
#include <QScrollBar>
#include <QTabWidget>
#include <QTimer>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gui/chart_export.h"
#include "gui/compare_page.h"
#include "gui/launch_flags.h"
#include "gui/main_window.h"
#include "gui/project.h"
#include "gui/search_page.h"
#include "gui/setup_panel.h"
#include "sim/atomic_file.h"
#include "sim/error.h"

namespace {

using cc::gui::GuiFlags;
using cc::gui::Project;

// Shows each tab in turn and saves the whole window: Summary, Timeline, Memory and the setup
// once the first result is on screen, Search once the search it starts has finished, then Compare
// on the NeMo example and the Cluster map (and that of a layout with cross-node TP).
void save_tab(cc::gui::MainWindow& w, int tab, const QString& dir, const char* name) {
  w.tabs()->setCurrentIndex(tab);
  QApplication::processEvents();
  cc::gui::save_widget_png(w, QDir(dir).filePath(QStringLiteral("%1.png").arg(name)));
}

// The setup dock scrolled to its Layout group (the parallel sizes, the pipeline split, the
// recomputation), beside the Summary; scrolled back to the top afterwards.
void save_setup(cc::gui::MainWindow& w, const QString& dir) {
  QScrollArea* scroll = nullptr;
  for (QScrollArea* s : w.findChildren<QScrollArea*>())
    if (s->widget() == w.setup()) scroll = s;
  if (!scroll) return;
  const QWidget* layout_group = w.setup()->field("tp")->parentWidget();
  scroll->verticalScrollBar()->setValue(layout_group->mapTo(w.setup(), QPoint(0, 0)).y());
  save_tab(w, 0, dir, "setup");
  scroll->verticalScrollBar()->setValue(0);
}

}  // namespace

int main(int argc, char** argv) {
  cc::report_oversized_writes_as_errors();
  // The command line is read, and every input resolved, before Qt starts: bad input exits 2
  // with the simulator's message even where no display is. Arguments CLI11 does not know are
  // handed to Qt (-platform, -style, ...), which must then take every one of them.
  CLI::App cli("clustercast-gui: simulate LLM training layouts on a cluster", "clustercast-gui");
  cli.allow_extras();
  GuiFlags flags;
  flags.add_to(cli);
  Project p;
  std::optional<std::pair<int, int>> window_size;
  std::vector<std::string> qt_args{argv[0]};
  try {
    cli.parse(argc, argv);
    for (const auto& extra : cli.remaining()) qt_args.push_back(extra);
    if (const std::string bad = cc::gui::first_non_qt_argument(cli.remaining()); !bad.empty()) {
      std::cerr << "clustercast-gui: '" << bad
                << "' is not an option; see clustercast-gui --help (Qt's own: -platform, -style, ...)\n";
      return 2;
    }
    p = cc::gui::project_from_flags(flags, cli);
    if (!flags.window_size.empty()) window_size = cc::gui::window_size_from(flags.window_size);
  } catch (const CLI::CallForHelp& e) {
    return cli.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "clustercast-gui: " << e.what() << "\n";
    return 2;
  } catch (const cc::SpecError& e) {
    std::cerr << "clustercast-gui: " << e.what() << "\n";
    return 2;
  }
  // Screenshots need no screen: without a display, render offscreen rather than abort.
  if (!flags.screenshots.empty() && qEnvironmentVariableIsEmpty("DISPLAY") &&
      qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  std::vector<char*> qt_argv;
  for (auto& a : qt_args) qt_argv.push_back(a.data());
  int qt_argc = static_cast<int>(qt_argv.size());
  qt_argv.push_back(nullptr);
  QApplication app(qt_argc, qt_argv.data());
  QApplication::setOrganizationName("clustercast");
  QApplication::setApplicationName("clustercast-gui");
  if (qt_argc > 1) {
    std::cerr << "clustercast-gui: '" << qt_argv[1]
              << "' is not an option; see clustercast-gui --help (Qt's own: -platform, -style, ...)\n";
    return 2;
  }

  cc::gui::MainWindow w;
  const QString dir = QString::fromStdString(flags.screenshots);  // outlives the handlers below
  const QSize shot_size = window_size ? QSize(window_size->first, window_size->second) : QSize(1900, 1080);
  if (window_size) w.resize(shot_size);
  if (!dir.isEmpty()) {
    w.resize(shot_size);
    QDir().mkpath(dir);
    auto fail_with = [](const std::string& message, int code) {
      std::cerr << "clustercast-gui: " << message << "\n";
      QApplication::exit(code);
    };
    // Last, the cluster map of the same job at TP 16 x PP 8: TP groups that span two nodes,
    // so the shot shows the cross-node TP links beside the pipeline and DP ones.
    bool cross_node_tp_pending = false;
    QObject::connect(&w, &cc::gui::MainWindow::result_shown, &app, [&, fail_with] {
      if (std::exchange(cross_node_tp_pending, false)) {
        try {
          save_tab(w, 5, dir, "cluster-map-cross-node-tp");
          QApplication::exit(0);
        } catch (const cc::SpecError& e) {
          fail_with(e.what(), 1);
        }
        return;
      }
      static bool first = true;
      if (!std::exchange(first, false)) return;  // a later result: the search loading a row
      if (!w.result()) return fail_with("the setup is invalid: " + w.setup()->error_text().toStdString(), 2);
      try {
        save_tab(w, 0, dir, "summary");
        save_tab(w, 1, dir, "timeline");
        save_tab(w, 2, dir, "memory");
        save_setup(w, dir);
      } catch (const cc::SpecError& e) {
        return fail_with(e.what(), 1);
      }
      w.search_page()->start(w.setup()->project());
    });
    QObject::connect(w.search_page(), &cc::gui::SearchPage::finished, &app, [&, fail_with] {
      try {
        save_tab(w, 3, dir, "search");
      } catch (const cc::SpecError& e) {
        return fail_with(e.what(), 1);
      }
      w.compare_page()->pin_nemo_example();
    });
    QObject::connect(w.compare_page(), &cc::gui::ComparePage::changed, &app, [&, fail_with] {
      if (w.compare_page()->busy() || w.compare_page()->pinned() < 2) return;
      try {
        save_tab(w, 4, dir, "compare");
        // The pinned timelines can make the window taller than asked; the rest are saved at
        // the size asked, with nothing pinned.
        w.compare_page()->clear();
        QApplication::processEvents();  // the layouts' smaller minimum first, then the size
        w.resize(shot_size);
        save_tab(w, 5, dir, "cluster-map");
        Project tp16 = w.setup()->project();
        tp16.config.tp = 16;
        tp16.config.pp = 8;
        tp16.config.sequence_parallel = false;
        cross_node_tp_pending = true;
        w.set_project(tp16);
      } catch (const cc::SpecError& e) {
        fail_with(e.what(), 1);
      }
    });
  }
  w.show();
  w.set_project(p);
  return QApplication::exec();
}
