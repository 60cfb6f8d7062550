// gui_test_support.h — what the GUI test programs share: the README's paper layout as a
// project, and waiting for the window to show a result.
#pragma once

#include <QCoreApplication>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>

#include "gui/main_window.h"
#include "gui/project.h"

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

}  // namespace cc::gui
