// The GUI driven as a user would, under the offscreen platform: real widgets, real
// simulations on the worker thread. Expected values come from calling the library
// directly with the same inputs, or are worked out by hand in the comments.
#include <QDir>
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QComboBox>
#include <QFile>
#include <QLabel>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QFormLayout>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTabWidget>
#include <QTest>

#include "gui/breakdown_chart.h"
#include "gui/main_window.h"
#include "tests/gui/gui_test_support.h"
#include "gui/memory_page.h"
#include "gui/memory_table.h"
#include "gui/project.h"
#include "gui/setup_panel.h"
#include "gui/summary_page.h"
#include "gui/timeline_model.h"
#include "interop/layout_files.h"
#include "sim/analytic_costs.h"
#include "sim/error.h"
#include "sim/layout_validation.h"
#include "sim/presets.h"
#include "sim/units.h"

using namespace cc;
using namespace cc::gui;

namespace {

// GPT-3 1.3B on two DGX A100 nodes: TP 2 x PP 4 x DP 2, 32 sequences of micro batch 1,
// so each DP replica runs 32 / 2 = 16 microbatches.
Project small_project() {
  Project p = project_from_presets("gpt3-1.3b", "dgx-a100-80gb", 16);
  p.config.tp = 2;
  p.config.pp = 4;
  p.config.global_batch = 32;
  p.train_tokens = 300e9;
  return p;
}


SimResult simulate_directly(const Project& p) {
  ParallelConfig c = p.config;
  c.dp = p.gpus / (c.tp * c.pp);
  SimOptions o;
  o.keep_timeline = true;
  o.train_tokens = p.train_tokens;
  o.reserve = p.reserve;
  return simulate(p.model, p.cluster, c, AnalyticCosts(p.cluster, c.precision), o);
}


// Opens `p` in the window and, separately, asks the library for the same result.
[[nodiscard]] bool show_and_simulate(MainWindow& w, const Project& p, SimResult& lib) {
  w.set_project(p);
  if (!wait_for_result(w) || !w.result()) return false;
  lib = simulate_directly(p);
  return true;
}

}  // namespace

class TestGui : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { isolate_settings(); }

  void loadPresetAndSimulate() {
    MainWindow w;
    w.show();
    SimResult lib;
    QVERIFY(show_and_simulate(w, paper_project(), lib));
    // DP = 1,024 / (8 x 16) = 8; 1,536 / 8 = 192 microbatches per replica.
    QCOMPARE(w.result()->config.dp, 8);
    QCOMPARE(w.result()->config.num_microbatches(), 192);
    QVERIFY(w.summary()->value("iteration").startsWith(QString::number(lib.iteration_time_s, 'f', 3)));
    QVERIFY(w.summary()->value("mfu").startsWith(QString::number(lib.mfu * 100, 'f', 1)));
    QVERIFY(w.summary()->value("days").startsWith(QString::number(lib.training_days, 'f', 1)));
    QCOMPARE(w.summary()->value("fits"), lib.fits ? QString("yes") : QString("<span style='color:#b00020'>no</span>"));
    QVERIFY(!w.stale());
  }

  void timelineModelHoldsTheLibrarysPasses() {
    MainWindow w;
    SimResult lib;
    QVERIFY(show_and_simulate(w, small_project(), lib));
    TimelineModel* m = w.timeline_model();
    QCOMPARE(m->rowCount(), static_cast<int>(lib.timeline.size()));
    int forwards = 0;
    for (int i = 0; i < m->rowCount(); ++i) {
      const TimelineEvent& e = m->event(i);
      const TimelineEvent& l = lib.timeline[static_cast<std::size_t>(i)];
      QCOMPARE(e.start, l.start);
      QCOMPARE(e.duration, l.duration);
      QCOMPARE(e.name, l.name);
      forwards += e.kind == TaskKind::Forward;
    }
    // One forward per stage and microbatch: 4 stages x 16 microbatches.
    QCOMPARE(forwards, 64);
    // Lanes: stage x {compute, p2p, dp}, each task in exactly one, in start order.
    std::size_t in_lanes = 0;
    for (const TimelineLane& lane : m->lanes()) {
      in_lanes += lane.events.size();
      for (std::size_t k = 1; k < lane.events.size(); ++k)
        QVERIFY(m->event(lane.events[k - 1]).start <= m->event(lane.events[k]).start);
    }
    QCOMPARE(in_lanes, lib.timeline.size());
    QCOMPARE(m->end_time(), [&] {
      SimTime end = 0;
      for (const auto& e : lib.timeline) end = std::max(end, e.start + e.duration);
      return end;
    }());
  }

  void memoryChartTotalsEqualTheSimulators() {
    MainWindow w;
    SimResult lib;
    QVERIFY(show_and_simulate(w, paper_project(), lib));
    const std::vector<double> drawn = w.memory_page()->drawn_totals_gib();
    QCOMPARE(drawn.size(), std::size_t(16));
    for (std::size_t s = 0; s < drawn.size(); ++s) {
      const double expected = lib.memory.stages[s].bytes.total() / kGiB;
      QVERIFY2(std::abs(drawn[s] - expected) < 1e-9 * expected, qPrintable(QString("stage %1").arg(s)));
      QCOMPARE(w.memory_table()->gib(static_cast<int>(s), MemoryTable::Total), expected);
    }
    QCOMPARE(w.memory_table()->usable_gib(), lib.usable_gib);
  }

  void breakdownEqualsTheSimulators() {
    MainWindow w;
    SimResult lib;
    QVERIFY(show_and_simulate(w, small_project(), lib));
    const auto& b = lib.breakdown;
    const std::vector<double> expected = {b.compute, b.recompute, b.tp_comm,   b.cp_comm, b.ep_comm,
                                         b.pp_comm, b.dp_comm,   b.optimizer, b.host,    b.bubble};
    QCOMPARE(w.summary()->breakdown()->drawn_seconds(), expected);
  }

  void invalidLayoutShowsInlineMessageAndKeepsStaleResult() {
    MainWindow w;
    w.show();
    w.set_project(small_project());
    QVERIFY(wait_for_result(w));
    const SimResult* before = w.result();
    const QString iteration = w.summary()->value("iteration");

    // 33 sequences do not split over micro batch 1 x DP 2.
    auto* global = qobject_cast<QSpinBox*>(w.setup()->field("global_batch"));
    QVERIFY(global);
    global->setValue(33);
    QVERIFY(wait_for_result(w));
    Project bad = small_project();
    bad.config.global_batch = 33;
    QString expected;
    try {
      validate(bad.resolved_config(), bad.model, bad.cluster, bad.gpus);
      QFAIL("the library accepted global batch 33 over DP 2");
    } catch (const SpecError& e) {
      expected = QString::fromStdString(e.what());
    }
    QCOMPARE(w.setup()->error_text(), expected);
    QCOMPARE(w.setup()->error_field_widget(), static_cast<QWidget*>(global));
    // The message sits in the row right below the field.
    auto* label = w.setup()->findChild<QLabel*>("inline_error");
    QVERIFY(label && label->isVisible());
    auto* form = qobject_cast<QFormLayout*>(global->parentWidget()->layout());
    QVERIFY(form);
    int field_row = -1, label_row = -1;
    QFormLayout::ItemRole role;
    form->getWidgetPosition(global, &field_row, &role);
    form->getWidgetPosition(label, &label_row, &role);
    QCOMPARE(label_row, field_row + 1);
    // The old result stays, marked stale.
    QVERIFY(w.stale());
    QCOMPARE(w.result(), before);
    QCOMPARE(w.summary()->value("iteration"), iteration);
    QCOMPARE(w.tabs()->tabText(1), QString("Timeline (stale)"));

    global->setValue(32);
    QVERIFY(wait_for_result(w));
    QVERIFY(!w.stale());
    QCOMPARE(w.tabs()->tabText(1), QString("Timeline"));
    QVERIFY(w.setup()->error_text().isEmpty());
    QVERIFY(!label->isVisible());
  }

  void projectFileRoundTrips() {
    Project p = project_from_presets("llama2-7b", "dgx-h100", 64);
    p.model.num_layers = 30;
    p.cluster.intra_node.bandwidth_gbs = 333;
    p.cluster.gpu.hbm_gib = 70;
    p.auto_dp = false;
    p.config.tp = 4;
    p.config.pp = 2;
    p.config.dp = 8;
    p.config.sequence_parallel = true;
    p.config.micro_batch = 2;
    p.config.global_batch = 256;
    p.config.recompute = RecomputeGranularity::Full;
    p.config.recompute_method = RecomputeMethod::Block;
    p.config.recompute_num_layers = 3;
    p.config.distributed_optimizer = true;
    p.config.overlap_grad_reduce = true;
    p.config.attention = AttentionKernel::Flash;
    p.train_tokens = 2e12;
    p.every_rank = true;
    p.reserve.cuda_context_gib = 1.25;
    p.reserve.comm_buffers_gib = 0.75;
    p.reserve.fragmentation_fraction = 0.2;
    p.reserve.headroom_fraction = 0.1;

    QTemporaryDir dir;
    const QString path = dir.filePath("run.ccproj");
    save_project(path.toStdString(), p);
    const Project back = load_project(path.toStdString());
    QVERIFY(back == p);
    QCOMPARE(back.config.recompute_num_layers, 3);
    QCOMPARE(back.cluster.intra_node.bandwidth_gbs, 333.0);

    // Through the window: every field the panel shows survives set_project -> project().
    MainWindow w;
    w.setup()->set_project(p);
    QVERIFY(w.setup()->project() == p);
    w.save_project(dir.filePath("again.ccproj"));
    QVERIFY(load_project(dir.filePath("again.ccproj").toStdString()) == p);
    QCOMPARE(QSettings().value("recent").toStringList().first(), QFileInfo(dir.filePath("again.ccproj")).absoluteFilePath());

    // A newer version is refused, naming it.
    nlohmann::json doc = project_to_json(p);
    doc["version"] = 99;
    try {
      project_from_json(doc, "test");
      QFAIL("version 99 accepted");
    } catch (const SpecError& e) {
      QVERIFY(QString(e.what()).contains("version 99"));
    }
  }

  void gpuTypeSwapsOnlyTheGpu() {
    MainWindow w;
    w.setup()->set_project(paper_project());
    auto* gpu = qobject_cast<QComboBox*>(w.setup()->field("gpu"));
    QVERIFY(gpu);
    const ClusterSpec h100 = load_cluster("dgx-h100");
    gpu->setCurrentText(QString::fromStdString(h100.gpu.name));
    const Project p = w.setup()->project();
    QCOMPARE(p.cluster.gpu.name, h100.gpu.name);
    QCOMPARE(p.cluster.gpu.peak_tflops_bf16, h100.gpu.peak_tflops_bf16);
    QCOMPARE(p.cluster.gpu.hbm_gib, h100.gpu.hbm_gib);
    // The node and fabrics stay the A100 cluster's.
    const ClusterSpec a100 = load_cluster("dgx-a100-80gb");
    QCOMPARE(p.cluster.inter_node.bandwidth_gbs, a100.inter_node.bandwidth_gbs);
    QCOMPARE(p.cluster.name, a100.name);
  }

  void importHuggingFaceConfig() {
    MainWindow w;
    QTemporaryDir dir;
    const QString path = dir.filePath("config.json");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    // A Llama-style config: GQA (8 KV heads), SwiGLU (silu), RMSNorm, RoPE, untied output.
    f.write(R"({"architectures": ["LlamaForCausalLM"], "_name_or_path": "my-llama", "hidden_size": 4096,
                "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32,
                "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 8192,
                "hidden_act": "silu", "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
                "tie_word_embeddings": false})");
    f.close();
    QSignalSpy edited(w.setup(), &SetupPanel::edited);
    const int seq_before = w.setup()->project().model.seq_length;
    w.setup()->import_hf_config(path);
    QCOMPARE(edited.count(), 1);
    const Project p = w.setup()->project();
    QCOMPARE(p.model.num_layers, 32);
    QCOMPARE(p.model.hidden_size, 4096);
    QCOMPARE(p.model.num_query_groups, 8);
    QCOMPARE(p.model.ffn_hidden_size, 14336);
    QCOMPARE(p.model.vocab_size, 128256);
    // The file's 8192 is the longest the model supports; the length the setup showed is kept.
    QCOMPARE(p.model.seq_length, seq_before);
    QVERIFY(seq_before != 8192);
    QVERIFY(p.model.activation == Activation::SwiGLU);
    QVERIFY(p.model.normalization == Normalization::RMSNorm);  // kept although the panel does not show it
    QVERIFY(p.model.position_embedding == PositionEmbedding::Rope);
    QVERIFY(!p.model.tied_embeddings);
    QVERIFY(p.model_preset.empty());  // no longer a preset
    QVERIFY(qobject_cast<QComboBox*>(w.setup()->field("model"))->currentText() == "custom");
  }

  // A model that caps its attention scores (Gemma 2) cannot run flash attention, the stack's
  // default: a fresh import of one starts unfused and runs. A kernel the user then chooses stays,
  // refused beside its box; a model without caps brings the stack's flash back.
  void importSoftCappedModelStartsUnfused() {
    MainWindow w;
    w.set_project(small_project());  // Megatron-Core's default: flash
    QVERIFY(wait_for_result(w));
    auto* flash = field<QCheckBox>(w, "attention");
    QVERIFY(flash->isChecked());
    QTemporaryDir dir;
    auto write = [&](const QString& name, const QByteArray& json) {
      QFile f(dir.filePath(name));
      if (!f.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(f.fileName()));
      f.write(json);
      return f.fileName();
    };
    // Gemma-2's keys at a small size (8 layers for PP 4; 8 heads and 4 KV heads of 256 for TP 2).
    const QString gemma = write("gemma.json", R"({"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2",
        "hidden_size": 2048, "intermediate_size": 8192, "num_attention_heads": 8, "num_key_value_heads": 4,
        "head_dim": 256, "num_hidden_layers": 8, "vocab_size": 256000, "max_position_embeddings": 8192,
        "hidden_activation": "gelu_pytorch_tanh", "rms_norm_eps": 1e-06, "rope_theta": 10000.0,
        "attn_logit_softcapping": 50.0, "final_logit_softcapping": 30.0, "query_pre_attn_scalar": 256})");
    w.setup()->import_hf_config(gemma);
    QVERIFY(wait_for_result(w));
    QCOMPARE(w.setup()->project().model.attention_softcap, 50.0);
    QVERIFY(!flash->isChecked());
    QVERIFY2(!w.stale(), qPrintable(w.setup()->error_text()));
    QCOMPARE(w.result()->config.attention, AttentionKernel::Unfused);

    flash->setChecked(true);  // the user's choice: kept, and refused where it was made
    QVERIFY(wait_for_result(w));
    QVERIFY(w.stale());
    QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("attention"));
    w.setup()->import_hf_config(gemma);
    QVERIFY(flash->isChecked());

    flash->setChecked(false);
    const QString llama = write("llama.json", R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 2048,
        "intermediate_size": 8192, "num_attention_heads": 16, "num_hidden_layers": 8, "num_key_value_heads": 8,
        "vocab_size": 32000, "max_position_embeddings": 4096, "hidden_act": "silu", "rms_norm_eps": 1e-5})");
    w.setup()->import_hf_config(llama);
    QVERIFY(flash->isChecked());
  }

  // Megatron-LM arguments and NeMo YAML name no model: an import of one is named after its file;
  // a layout JSON names its model, which stays.
  void importedLayoutIsNamedAfterItsFile() {
    MainWindow w;
    w.set_project(small_project());
    QVERIFY(wait_for_result(w));
    const std::string preset_name = w.result()->model.name;
    w.set_questions({}, [](const QString&) { return QMessageBox::Discard; });  // each import replaces the last
    QTemporaryDir dir;
    const std::pair<QString, QString> files[] = {
        {"llama3_8b.sh", "megatron"}, {"tuned.run.yaml", "nemo"}, {"named.json", "json"}};
    for (const auto& [file, format] : files) w.export_layout(dir.filePath(file), format);
    // The Megatron-LM arguments are the file beside the launch script, "llama3_8b" (megatron_arguments_path).
    const std::pair<QString, std::string> expected[] = {
        {"llama3_8b", "llama3_8b"}, {"tuned.run.yaml", "tuned.run"}, {"named.json", preset_name}};
    for (const auto& [file, name] : expected) {
      w.import_layout(dir.filePath(file));
      QVERIFY(wait_for_result(w));
      QCOMPARE(w.setup()->project().model.name, name);
      QCOMPARE(w.result()->model.name, name);
      bool headed = false;  // the Summary's heading names it
      for (const QLabel* l : w.summary()->findChildren<QLabel*>())
        headed = headed || l->text().startsWith(QString::fromStdString(name) + " on ");
      QVERIFY2(headed, qPrintable(file));
    }
  }

  void itemModelsPassTheTester() {
    MainWindow w;
    QAbstractItemModelTester timeline(w.timeline_model(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester memory(w.memory_table(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    w.set_project(small_project());
    QVERIFY(wait_for_result(w));
    Project p = small_project();
    p.config.pp = 2;  // a second reset with other row counts
    w.set_project(p);
    QVERIFY(wait_for_result(w));
    QCOMPARE(w.memory_table()->rowCount(), 2);
    QVERIFY(w.timeline_model()->rowCount() > 0);
  }

  void exportsWriteEveryFormat() {
    MainWindow w;
    w.show();
    w.resize(1200, 800);
    w.set_project(small_project());
    QVERIFY(wait_for_result(w));
    QTemporaryDir dir;
    for (const char* format : {"json", "megatron", "nemo"}) {
      const QString path = dir.filePath(QString("layout.%1").arg(format));
      w.export_layout(path, format);
      const LayoutFile back = read_layout_file(path.toStdString());  // the CLI's reader
      QCOMPARE(back.config.tp, 2);
      QCOMPARE(back.config.pp, 4);
      QCOMPARE(back.config.dp, 2);
      QCOMPARE(back.config.global_batch, 32);
    }
    const QString trace = dir.filePath("trace.json");
    w.export_chrome_trace(trace);
    QFile f(trace);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const auto doc = nlohmann::json::parse(f.readAll().toStdString());
    std::size_t complete = 0;
    for (const auto& e : doc.at("traceEvents")) complete += e.value("ph", "") == "X";
    QCOMPARE(complete, w.result()->timeline.size());
    for (int tab = 0; tab < 3; ++tab) {
      w.tabs()->setCurrentIndex(tab);
      const QString png = dir.filePath(QString("chart%1.png").arg(tab)), svg = dir.filePath(QString("chart%1.svg").arg(tab));
      w.export_chart(png);
      w.export_chart(svg);
      QFile a(png), b(svg);
      QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
      QCOMPARE(a.read(8), QByteArray("\x89PNG\r\n\x1a\n"));
      QVERIFY(b.readAll().contains("<svg"));
    }
    // Every export went through a unique temporary beside its target: none is left over.
    for (const QString& name : QDir(dir.path()).entryList(QDir::Files))
      QVERIFY2(!name.endsWith(".tmp"), qPrintable(name));
  }

  // File > Import layout reads the exports as `simulate --config` does: the same run, the same
  // prediction as the window that wrote them.
  void exportsOpenBackWithTheSamePrediction() {
    MainWindow w;
    Project p = paper_project();
    p.config.distributed_optimizer = true;
    p.config.micro_batch = 2;
    w.set_project(p);
    QVERIFY(wait_for_result(w));
    const SimResult exported = *w.result();
    w.set_questions({}, [](const QString&) { return QMessageBox::Discard; });  // each import replaces the last
    QTemporaryDir dir;
    const std::pair<const char*, const char*> files[] = {{"json", "best.json"}, {"megatron", "best.txt"},
                                                         {"nemo", "best.yaml"}};
    for (const auto& [format, name] : files) {
      w.set_project(p);
      QVERIFY(wait_for_result(w));
      w.export_layout(dir.filePath(name), format);
      w.set_project(project_from_presets("llama3-8b", "dgx-h100", 8));  // another run in between
      QVERIFY(wait_for_result(w));
      QVERIFY(w.result()->iteration_time_s != exported.iteration_time_s);
      w.import_layout(dir.filePath(name));
      QVERIFY(wait_for_result(w));
      QVERIFY2(!w.stale(), format);
      QCOMPARE(w.result()->config.summary(), exported.config.summary());
      QCOMPARE(w.result()->model.num_layers, exported.model.num_layers);  // the name is the file's
      QCOMPARE(w.result()->model.hidden_size, exported.model.hidden_size);
      QCOMPARE(w.result()->iteration_time_s, exported.iteration_time_s);
      QCOMPARE(w.result()->peak_memory_gib, exported.peak_memory_gib);
      QVERIFY(w.isWindowModified());
    }
  }

  void newerEditWins() {
    SimulationRunner runner(nullptr, 10);
    std::vector<int> finished_tp;
    QObject::connect(&runner, &SimulationRunner::finished,
                     [&](const SimulationOutcome& o) { finished_tp.push_back(o.ok() ? o.result->config.tp : -1); });
    Project a = paper_project();
    Project b = paper_project();
    b.config.tp = 4;  // DP 16
    runner.run_now(a);  // starts at once
    runner.request(b);  // arrives while a runs: a's result must never be shown
    QTRY_VERIFY_WITH_TIMEOUT(!runner.busy(), 120000);
    QCOMPARE(finished_tp, std::vector<int>{4});
  }
};

QTEST_MAIN(TestGui)
#include "test_gui.moc"
