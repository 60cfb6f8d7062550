// gui_test_support.h — what the GUI test programs share: the README's paper layout and a
// Mixtral layout as projects, waiting for the window to show a result, the setup's editors, the library's
// refusal of a project, and hand-made timelines.
#pragma once

#include <memory>
#include <vector>

#include <QCoreApplication>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>

#include "gui/main_window.h"
#include "gui/project.h"
#include "gui/setup_panel.h"
#include "sim/error.h"
#include "sim/layout_validation.h"
#include "sim/simulator.h"

namespace cc::gui {

// The paper layout of the README: GPT-3 175B on 1,024 A100s, TP 8 x PP 16 (DP 8), sequence
// parallel, selective recomputation, global batch 1,536, 300B tokens, unfused attention.
inline Project paper_project() {
  Project p = project_from_presets("gpt3-175b", "dgx-a100-80gb", 1024);
  p.config.tp = 8;
  p.config.pp = 16;
  p.config.sequence_parallel = true;
  p.config.recompute = RecomputeGranularity::Selective;
  p.config.global_batch = 1536;
  p.train_tokens = 300e9;
  p.config.attention = cc::AttentionKernel::Unfused;  // that run stored the s x s attention scores
  return p;
}

// Mixtral-8x7B (32 layers, 8 experts, top-2, expert FFN 14,336, hidden 4,096) on 64 H100s at
// TP 2 x PP 4 (DP 8), 8 layers a stage; ETP 1 so that at EP 1 each GPU runs its own tokens
// through all 8 experts and nothing is dispatched.
inline Project mixtral_project() {
  Project p = project_from_presets("mixtral-8x7b", "dgx-h100", 64);
  p.model.seq_length = 4096;
  p.config.tp = 2;
  p.config.pp = 4;
  p.config.etp = 1;
  p.config.sequence_parallel = true;  // Megatron-Core's rule for EP > 1 beside TP > 1
  p.config.distributed_optimizer = true;
  p.config.recompute = RecomputeGranularity::Full;
  p.config.global_batch = 256;
  return p;
}

inline Project with_ep(Project p, int ep) {
  p.config.ep = ep;
  return p;
}

// Recent files and window state go to a test-only settings store, emptied first.
inline void isolate_settings() {
  QStandardPaths::setTestModeEnabled(true);
  QCoreApplication::setOrganizationName("clustercast-tests");
  QSettings().clear();
}

inline bool wait_for_result(MainWindow& w) {
  QSignalSpy spy(&w, &MainWindow::result_shown);
  return spy.wait(120000);
}

// The setup's editor of `name` (SetupPanel::field), of the type the test expects.
template <typename W>
W* field(MainWindow& w, const char* name) {
  auto* widget = qobject_cast<W*>(w.setup()->field(name));
  if (!widget) qFatal("setup field %s is missing or of another type", name);
  return widget;
}

// The library's refusal of `p` (the resolver's, then validate()'s), in its words; empty if none.
inline QString refusal(const Project& p) {
  try {
    validate(p.resolved_config(), p.model, p.cluster, p.gpus);
  } catch (const SpecError& e) {
    return QString::fromStdString(e.what());
  }
  return {};
}

// A timeline of hand-made tasks: the model must lay out whatever streams they name.
inline std::shared_ptr<SimResult> hand_timeline(const std::vector<TimelineEvent>& events) {
  auto r = std::make_shared<SimResult>();
  r->timeline = events;
  return r;
}

inline TimelineEvent task(int stage, StreamLane lane, TaskKind kind, SimTime start, SimTime duration) {
  TimelineEvent e;
  e.process = stage;
  e.stage = stage;
  e.lane = lane;
  e.kind = kind;
  e.start = start;
  e.duration = duration;
  e.name = "t";
  return e;
}

}  // namespace cc::gui
