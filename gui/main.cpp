// clustercast-gui — set up a model, a cluster and a layout; see the simulated iteration's
// time, timeline and memory. Options mirror `clustercast simulate` so a launch line can be
// opened as it is; --screenshots saves each tab as PNG and quits (docs, CI).
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QTabWidget>
#include <QTimer>

#include <algorithm>
#include <iostream>
#include <string_view>
#include <utility>

#include "gui/chart_export.h"
#include "gui/compare_page.h"
#include "gui/main_window.h"
#include "gui/project.h"
#include "gui/search_page.h"
#include "gui/setup_panel.h"
#include "interop/layout_files.h"
#include "sim/error.h"
#include "sim/presets.h"

namespace {

using cc::gui::Project;

Project project_from_options(const QCommandLineParser& o) {
  if (o.isSet("project")) return cc::gui::load_project(o.value("project").toStdString());
  const int gpus = o.value("gpus").toInt();
  Project p = cc::gui::project_from_presets(o.value("model").toStdString(), o.value("cluster").toStdString(), gpus);
  auto& c = p.config;
  c.tp = o.value("tp").toInt();
  c.pp = o.value("pp").toInt();
  c.micro_batch = o.value("micro-batch-size").toInt();
  c.global_batch = o.isSet("global-batch-size") ? o.value("global-batch-size").toInt() : gpus / (c.tp * c.pp) * c.micro_batch;
  c.sequence_parallel = o.isSet("sequence-parallel");
  c.distributed_optimizer = o.isSet("use-distributed-optimizer");
  c.recompute = cc::recompute_granularity_from(o.value("recompute-granularity").toStdString(), "--recompute-granularity");
  if (const std::string backend = o.value("attention-backend").toStdString(); backend != "auto")
    c.attention = cc::attention_backend_from(backend, "--attention-backend");
  p.train_tokens = o.value("train-tokens-b").toDouble() * 1e9;
  p.costs_file = o.value("costs").toStdString();
  p.every_rank = o.isSet("every-rank");
  return p;
}

// Shows each tab in turn and saves the whole window: Summary, Timeline and Memory once the
// first result is on screen, Search once the search it starts has finished, then Compare
// on the NeMo example and the Cluster map (and that of a layout with cross-node TP).
void save_tab(cc::gui::MainWindow& w, int tab, const QString& dir, const char* name) {
  w.tabs()->setCurrentIndex(tab);
  QApplication::processEvents();
  cc::gui::save_widget_png(w, QDir(dir).filePath(QStringLiteral("%1.png").arg(name)));
}

}  // namespace

int main(int argc, char** argv) {
  // Screenshots need no screen: without a display, render offscreen rather than abort.
  const bool wants_screenshots = std::any_of(argv, argv + argc, [](const char* a) {
    return std::string_view(a).starts_with("--screenshots");
  });
  if (wants_screenshots && qEnvironmentVariableIsEmpty("DISPLAY") && qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY") &&
      qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  QApplication::setOrganizationName("clustercast");
  QApplication::setApplicationName("clustercast-gui");

  QCommandLineParser o;
  o.setApplicationDescription("clustercast-gui: simulate LLM training layouts on a cluster");
  o.addHelpOption();
  o.addOptions({
      {"model", "Model preset.", "NAME", "gpt3-175b"},
      {"cluster", "Cluster preset.", "NAME", "dgx-a100-80gb"},
      {"gpus", "Total GPUs.", "N", "1024"},
      {{"tp", "tensor-model-parallel-size"}, "Tensor-parallel size.", "N", "8"},
      {{"pp", "pipeline-model-parallel-size"}, "Pipeline-parallel size.", "N", "16"},
      {"micro-batch-size", "Micro batch size.", "N", "1"},
      {"global-batch-size", "Global batch size.", "N"},
      {"sequence-parallel", "Sequence parallelism."},
      {"use-distributed-optimizer", "Shard optimizer state over DP."},
      {"recompute-granularity", "none, selective or full.", "G", "selective"},
      {"attention-backend", "Megatron-LM's: auto (the stack's default, flash/fused), flash, fused, unfused or local.",
       "B", "auto"},
      {"train-tokens-b", "Token budget in billions.", "B", "300"},
      {"costs", "Cost database file (default: analytic).", "FILE"},
      {"every-rank", "Simulate every DP replica."},
      {"project", "Open a project file.", "FILE"},
      {"screenshots", "Save a PNG of each tab to DIR and quit.", "DIR"},
  });
  o.process(app);

  cc::gui::MainWindow w;
  Project p;
  try {
    p = project_from_options(o);
  } catch (const cc::SpecError& e) {
    std::cerr << "clustercast-gui: " << e.what() << "\n";
    return 2;
  }
  const QString dir = o.value("screenshots");  // outlives the handlers below
  if (!dir.isEmpty()) {
    w.resize(1900, 1080);
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
