// Pipeline splits in the GUI: the layout string, the embedding and loss counted as layers, the
// interleaved schedule's microbatch group and the uneven first/last stages have setup fields
// that round-trip through the project file; what the library refuses is shown beside the field
// it names, in its words, and no other field changes; the timeline colours communication lanes
// from one palette. Expected values are hand counts in the comments, or the library called
// directly with the same inputs.
#include <QCheckBox>
#include <QImage>
#include <QLineEdit>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <set>

#include "gui/main_window.h"
#include "gui/project.h"
#include "gui/setup_panel.h"
#include "gui/timeline_model.h"
#include "gui/timeline_palette.h"
#include "gui/timeline_view.h"
#include "tests/gui/gui_test_support.h"

using namespace cc;
using namespace cc::gui;

namespace {

// Llama 3.1 405B as Meta split it (Dubey et al. 2024, Sec. 3.3.2): one layer fewer on the first
// and last stages leaves the first chunk the embedding alone and the last the loss alone, so
// every chunk holds one layer: 126 layers + E + L = 128 chunks over PP 16, 8 per rank. 16,384
// H100s at TP 8 x PP 16 leave DP 128; 2,048 sequences of micro batch 1 are 16 microbatches.
Project llama_project() {
  Project p = project_from_presets("llama3-405b", "dgx-h100", 16384);
  p.config.tp = 8;
  p.config.pp = 16;
  p.config.virtual_stages = 8;
  p.config.pipeline_layout = "E|(t|)*126L";
  p.config.sequence_parallel = true;
  p.config.distributed_optimizer = true;
  p.config.recompute = RecomputeGranularity::Full;
  p.config.global_batch = 2048;
  return p;
}

// The same model split by counting: 126 layers + E + L = 128 over PP 16 x 2 chunks = 4 each.
Project counted_project() {
  Project p = llama_project();
  p.config.pipeline_layout.clear();
  p.config.virtual_stages = 2;
  p.config.account_for_embedding = true;
  p.config.account_for_loss = true;
  return p;
}

// Uneven stages: 126 - 6 - 6 = 114 layers over 14 middle stages does not divide; 126 - 7 - 7 =
// 112 = 14 x 8 does.
Project uneven_project() {
  Project p = llama_project();
  p.config.pipeline_layout.clear();
  p.config.virtual_stages = 1;
  p.config.first_stage_layers = 7;
  p.config.last_stage_layers = 7;
  return p;
}

QLineEdit* layout_field(MainWindow& w) { return field<QLineEdit>(w, "pipeline_layout"); }

// Types `text` into the layout field as a user does, ending with Return.
void type_layout(MainWindow& w, const QString& text) {
  QLineEdit* edit = layout_field(w);
  edit->setFocus();
  edit->selectAll();
  QTest::keyClick(edit, Qt::Key_Delete);
  QTest::keyClicks(edit, text);
  QTest::keyClick(edit, Qt::Key_Return);
}

QColor palette_color(const QString& label) {
  for (const Swatch& s : timeline_palette())
    if (s.label == label) return s.color;
  qFatal("no swatch %s", qPrintable(label));
}

// Stage 0: a forward pass on compute, its K,V exchange on CP, a send on P2P, a reduction on DP.
std::shared_ptr<SimResult> one_task_per_stream() {
  return hand_timeline({task(0, StreamLane::Compute, TaskKind::Forward, 0, 100),
                        task(0, StreamLane::Cp, TaskKind::Forward, 0, 100),
                        task(0, StreamLane::P2p, TaskKind::Send, 0, 100),
                        task(0, StreamLane::Dp, TaskKind::GradReduce, 0, 100)});
}

}  // namespace

class TestPipelineSplit : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { isolate_settings(); }

  // Each way of splitting survives the file and the panel: the file keeps it, the panel shows
  // it in its field and hands it back unchanged.
  void fieldsRoundTripThroughTheProjectFile() {
    QTemporaryDir dir;
    Project grouped = llama_project();
    grouped.config.microbatch_group_size = 16;  // in [PP 16, M 16]
    int n = 0;
    for (const Project& p : {llama_project(), grouped, counted_project(), uneven_project()}) {
      const std::string path = dir.filePath(QString("split-%1.ccproj").arg(n++)).toStdString();
      save_project(path, p);
      const Project back = load_project(path);
      QVERIFY(back == p);
      QCOMPARE(back.config.pipeline_layout, p.config.pipeline_layout);
      QCOMPARE(back.config.account_for_embedding, p.config.account_for_embedding);
      QCOMPARE(back.config.account_for_loss, p.config.account_for_loss);
      QCOMPARE(back.config.microbatch_group_size, p.config.microbatch_group_size);
      QCOMPARE(back.config.first_stage_layers, p.config.first_stage_layers);
      QCOMPARE(back.config.last_stage_layers, p.config.last_stage_layers);

      MainWindow w;
      w.setup()->set_project(back);
      QCOMPARE(layout_field(w)->text(), QString::fromStdString(p.config.pipeline_layout));
      QCOMPARE(field<QCheckBox>(w, "account_for_embedding")->isChecked(), p.config.account_for_embedding);
      QCOMPARE(field<QCheckBox>(w, "account_for_loss")->isChecked(), p.config.account_for_loss);
      QCOMPARE(field<QSpinBox>(w, "microbatch_group_size")->value(), p.config.microbatch_group_size);
      QCOMPARE(field<QSpinBox>(w, "first_stage_layers")->value(), p.config.first_stage_layers);
      QCOMPARE(field<QSpinBox>(w, "last_stage_layers")->value(), p.config.last_stage_layers);
      QCOMPARE(field<QSpinBox>(w, "virtual_stages")->value(), p.config.virtual_stages);
      QVERIFY(w.setup()->project() == p);
      QVERIFY2(refusal(p).isEmpty(), qPrintable(refusal(p)));
    }
    // The keys were in the layout format already (no version of their own), and a version 3
    // file written before these fields existed (none of the keys) opens as an even split.
    Project even = project_from_presets("gpt3-1.3b", "dgx-a100-80gb", 16);
    even.config.pp = 4;
    nlohmann::json doc = project_to_json(even);
    doc["version"] = 3;
    for (const char* key : {"pipeline_model_parallel_layout", "account_for_embedding_in_pipeline_split",
                            "account_for_loss_in_pipeline_split", "microbatch_group_size_per_vp_stage"})
      QVERIFY(!doc.at("config").contains(key));
    const Project back = project_from_json(doc, "v3");
    QVERIFY(back == even);
    QVERIFY(back.config.pipeline_layout.empty());
    QCOMPARE(back.config.microbatch_group_size, 0);
  }

  // The layout string's run: 128 chunks of the library's, 8 per rank, one transformer layer in
  // every chunk but the first (the embedding alone) and the last (the loss alone).
  void layoutStringRunsAsTyped() {
    MainWindow w;
    w.set_project(llama_project());
    QVERIFY(wait_for_result(w));
    QVERIFY2(w.result(), qPrintable(w.setup()->error_text()));
    QCOMPARE(w.result()->config.pipeline_layout, std::string("E|(t|)*126L"));
    QCOMPARE(w.result()->config.virtual_stages, 8);
    QCOMPARE(w.result()->config.dp, 128);  // 16384 / (8 x 16)
    QCOMPARE(w.result()->config.num_microbatches(), 16);  // 2048 / (1 x 128)
  }

  // A string the library cannot read is refused in its words beside the layout field; the
  // field keeps what was typed and every other field stays as it was.
  void badLayoutStringShowsTheResolversMessage() {
    MainWindow w;
    w.show();
    const Project good = llama_project();
    w.set_project(good);
    QVERIFY(wait_for_result(w));
    QVERIFY(w.result());
    for (const QString& bad : {QString("E|(t|)*126"), QString("E|(t|)*125L"), QString("E|(t|)*126Lx"),
                               QString("E|(t|)*62L")}) {
      type_layout(w, bad);
      QVERIFY(wait_for_result(w));
      Project expected = good;
      expected.config.pipeline_layout = bad.toStdString();
      const QString message = refusal(expected);
      QVERIFY2(message.contains("--pipeline-model-parallel-layout"), qPrintable(message));
      QCOMPARE(w.setup()->error_text(), message);
      QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("pipeline_layout"));
      QCOMPARE(layout_field(w)->text(), bad);
      QVERIFY(w.setup()->project() == expected);
      QCOMPARE(w.result()->config.pipeline_layout, std::string("E|(t|)*126L"));  // the last valid result, stale
    }
    // Typed right again: the error goes, the run follows.
    type_layout(w, "E|(t|)*126L");
    QVERIFY(wait_for_result(w));
    QVERIFY(w.setup()->error_text().isEmpty());
    QVERIFY(w.setup()->project() == good);
  }

  // What contradicts a layout string (other virtual stages, uneven stages, counted
  // embedding/loss) is refused beside the layout field, never overwritten; the group size and
  // the counted layers beside their own fields.
  void contradictionsAreRefusedBesideTheirField() {
    MainWindow w;
    w.show();
    struct Case {
      const char* what;
      Project project;
      const char* field;
    };
    std::vector<Case> cases;
    Project p = llama_project();
    p.config.virtual_stages = 4;  // the string's 128 stages over PP 16 are 8 per rank
    cases.push_back({"virtual stages", p, "pipeline_layout"});
    p = llama_project();
    p.config.first_stage_layers = 7;
    cases.push_back({"first stage layers", p, "pipeline_layout"});
    p = llama_project();
    p.config.last_stage_layers = 7;
    cases.push_back({"last stage layers", p, "pipeline_layout"});
    p = llama_project();
    p.config.account_for_loss = true;
    cases.push_back({"loss counted", p, "pipeline_layout"});
    p = uneven_project();
    p.config.account_for_embedding = true;  // Megatron-Core has no counted embedding beside uneven stages
    cases.push_back({"embedding counted beside uneven stages", p, "account_for_embedding"});
    p = uneven_project();
    p.config.microbatch_group_size = 16;  // read by the interleaved schedule only
    cases.push_back({"group without interleaving", p, "microbatch_group_size"});
    p = llama_project();
    p.config.microbatch_group_size = 8;  // below PP 16
    cases.push_back({"group below PP", p, "microbatch_group_size"});
    p = uneven_project();
    p.config.last_stage_layers = 6;  // 126 - 7 - 6 = 113 layers over 14 middle stages
    cases.push_back({"uneven stages that do not divide", p, "first_stage_layers"});
    for (const Case& c : cases) {
      w.set_project(c.project);
      QVERIFY(wait_for_result(w));
      const QString message = refusal(c.project);
      QVERIFY2(!message.isEmpty(), c.what);
      QVERIFY2(w.setup()->error_text() == message, qPrintable(QString("%1: %2").arg(c.what, w.setup()->error_text())));
      QVERIFY2(w.setup()->error_field_widget() == w.setup()->field(c.field), c.what);
      QVERIFY2(w.setup()->project() == c.project, c.what);
    }
    // The stage count is named in the message, so the user knows what to set.
    p = llama_project();
    p.config.virtual_stages = 4;
    QVERIFY2(refusal(p).contains("8 per rank"), qPrintable(refusal(p)));
  }

  // Each palette row is one swatch; every task kind has one; the CP lane has its own colour,
  // not its passes' forward and backward ones.
  void communicationLanesHaveTheirOwnColours() {
    for (const TaskKind k : {TaskKind::Forward, TaskKind::Backward, TaskKind::Send, TaskKind::GradReduce,
                             TaskKind::EmbeddingSync, TaskKind::GradNorm, TaskKind::Optimizer, TaskKind::ParamGather})
      QVERIFY2(kind_label(k) != "?", qPrintable(QString::number(static_cast<int>(k))));
    std::set<QRgb> colours;
    for (const Swatch& s : timeline_palette()) colours.insert(s.color.rgb());
    QCOMPARE(colours.size(), timeline_palette().size());

    TimelineModel m;
    m.set_result(one_task_per_stream());
    const QColor forward = palette_color("forward"), cp = palette_color("CP K/V exchange");
    QCOMPARE(QColor(m.bar_rgb(0)), forward);
    QCOMPARE(QColor(m.bar_rgb(1)), cp);
    QCOMPARE(QColor(m.bar_rgb(2)), palette_color("PP transfer"));
    QCOMPARE(QColor(m.bar_rgb(3)), palette_color("DP gradient comm"));
    QStringList legend;
    for (const int i : m.legend()) legend << timeline_palette()[static_cast<std::size_t>(i)].label;
    QCOMPARE(legend, QStringList({"forward", "PP transfer", "CP K/V exchange", "DP gradient comm"}));

    // Drawn: lanes in StreamLane's order (compute, P2P, DP, CP), 20-pixel rows under the
    // ruler; the middle of each row is its bar's colour.
    TimelineView view(&m);
    view.resize(600, TimelineView::kRulerHeight + 4 * 20 + TimelineView::kLegendHeight);
    view.fit();
    QImage image(view.size(), QImage::Format_RGB32);
    view.render(&image);
    const int x = TimelineView::kLabelWidth + 240;
    auto at_row = [&](int row) { return image.pixelColor(x, TimelineView::kRulerHeight + row * 20 + 10); };
    QCOMPARE(at_row(0), forward);
    QCOMPARE(at_row(1), palette_color("PP transfer"));
    QCOMPARE(at_row(2), palette_color("DP gradient comm"));
    QCOMPARE(at_row(3), cp);
  }

  // A view too narrow for its legend on one line (a pinned timeline at 1280 pixels) takes
  // another line, so the last entry, idle (bubble), is drawn rather than cut.
  void narrowTimelineLegendFlowsOntoAnotherLine() {
    TimelineModel m;
    m.set_result(one_task_per_stream());
    TimelineView view(&m);
    const QFontMetrics fm(view.font());
    int one_line = 0;  // the legend's width on one line: a swatch, the label and a gap each
    for (const char* label : {"forward", "PP transfer", "CP K/V exchange", "DP gradient comm", "idle (bubble)"})
      one_line += 16 + fm.horizontalAdvance(QString(label)) + 14;
    view.resize(std::max(one_line * 3 / 5, TimelineView::kLabelWidth + 50), 400);
    view.fit();
    QImage image(view.size(), QImage::Format_RGB32);
    view.render(&image);
    // The 12-pixel swatch in the legend's bottom line: a run of its colour (lone pixels of that
    // grey are the text's anti-aliasing).
    int longest_run = 0;
    for (int y = image.height() - TimelineView::kLegendHeight; y < image.height(); ++y)
      for (int x = 0, run = 0; x < image.width(); ++x) {
        run = image.pixelColor(x, y) == bubble_color() ? run + 1 : 0;
        longest_run = std::max(longest_run, run);
      }
    QVERIFY(longest_run >= 10);
  }
};

QTEST_MAIN(TestPipelineSplit)
#include "test_pipeline_split.moc"
