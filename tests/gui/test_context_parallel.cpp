// Context parallelism in the GUI: the layout fields and the project file, DP following CP, the
// library's CP refusals beside their field, exports, the timeline's lanes as the library sends
// them (the CP lane), and CP groups and their traffic on the cluster map. Expected values are
// hand counts in the comments, or the library called directly with the same inputs.
#include <QComboBox>
#include <QFile>
#include <QFormLayout>
#include <QImage>
#include <QLabel>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include "gui/cluster_map.h"
#include "gui/main_window.h"
#include "gui/project.h"
#include "gui/setup_panel.h"
#include "gui/timeline_model.h"
#include "interop/layout_files.h"
#include "sim/error.h"
#include "tests/gui/gui_test_support.h"

using namespace cc;
using namespace cc::gui;

namespace {

// Llama 3 70B at 32K tokens on 64 H100s (8 nodes of 8): TP 8 x CP 2 leaves DP 64 / 16 = 4.
Project cp_project() {
  Project p = project_from_presets("llama3-70b", "dgx-h100", 64);
  p.model.seq_length = 32768;
  p.config.tp = 8;
  p.config.cp = 2;
  p.config.global_batch = 32;
  p.config.sequence_parallel = true;
  p.config.recompute = RecomputeGranularity::Full;
  p.config.distributed_optimizer = true;
  return p;
}

// Whether the row of `widget` in its form is shown.
bool row_visible(QWidget* widget) {
  auto* form = qobject_cast<QFormLayout*>(widget->parentWidget()->layout());
  return form && form->isRowVisible(widget);
}

}  // namespace

class TestContextParallel : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { isolate_settings(); }

  // CP, its communication type and the a2a+p2p group survive the file and the panel.
  void fieldsRoundTripThroughTheProjectFile() {
    QTemporaryDir dir;
    for (const CpCommType type : {CpCommType::P2P, CpCommType::AllToAll, CpCommType::AllGather, CpCommType::AllToAllP2P}) {
      Project p = cp_project();
      p.config.cp = 4;
      p.config.cp_comm_type = type;
      p.config.cp_a2a_size = type == CpCommType::AllToAllP2P ? 2 : 0;
      const std::string path = dir.filePath(QString("cp-%1.ccproj").arg(to_string(type))).toStdString();
      save_project(path, p);
      const Project back = load_project(path);
      QVERIFY(back == p);
      QCOMPARE(back.config.cp, 4);
      QVERIFY(back.config.cp_comm_type == type);
      QCOMPARE(back.config.cp_a2a_size, p.config.cp_a2a_size);

      MainWindow w;
      w.setup()->set_project(p);
      QCOMPARE(field<QSpinBox>(w, "cp")->value(), 4);
      QCOMPARE(field<QComboBox>(w, "cp_comm_type")->currentText(), QString(to_string(type)));
      QVERIFY(w.setup()->project() == p);
      QCOMPARE(row_visible(w.setup()->field("cp_a2a_size")), type == CpCommType::AllToAllP2P);
    }
    // A type chosen at CP 1 is the user's too: the file keeps it (layout files name it only
    // where CP > 1).
    Project p = project_from_presets("llama3-8b", "dgx-h100", 8);
    p.config.cp_comm_type = CpCommType::AllGather;
    QCOMPARE(project_to_json(p).at("version").get<int>(), kProjectVersion);
    QVERIFY(project_from_json(project_to_json(p), "test") == p);
  }

  // A version 2 project has no CP fields: it opens as CP 1 with p2p, DP from TP x PP alone.
  void versionTwoProjectsReadAsCpOne() {
    Project p = project_from_presets("gpt3-1.3b", "dgx-a100-80gb", 16);
    p.config.tp = 2;
    p.config.pp = 4;
    p.config.global_batch = 32;
    nlohmann::json doc = project_to_json(p);
    doc["version"] = 2;
    for (const char* key : {"context_parallel_size", "cp_comm_type", "hierarchical_context_parallel_sizes"})
      doc["config"].erase(key);
    const Project back = project_from_json(doc, "v2");
    QCOMPARE(back.config.cp, 1);
    QVERIFY(back.config.cp_comm_type == CpCommType::P2P);
    QCOMPARE(back.config.cp_a2a_size, 0);
    QCOMPARE(back.resolved_config().dp, 2);  // 16 / (2 x 1 x 4)
  }

  // The panel takes CP as typed and shows DP = GPUs / (TP x CP x PP); the run gets that DP.
  void dpFollowsCp() {
    MainWindow w;
    Project p = cp_project();
    p.config.cp = 1;
    w.set_project(p);
    QVERIFY(wait_for_result(w));
    auto* dp = field<QSpinBox>(w, "dp");
    QCOMPARE(dp->value(), 0);  // auto
    QCOMPARE(dp->specialValueText(), QString("auto: 64 / (8 × 1 × 1) = 8"));
    QCOMPARE(w.result()->config.dp, 8);

    field<QSpinBox>(w, "cp")->setValue(2);
    QCOMPARE(dp->specialValueText(), QString("auto: 64 / (8 × 2 × 1) = 4"));
    QVERIFY(wait_for_result(w));
    QVERIFY(w.result());
    QCOMPARE(w.result()->config.cp, 2);
    QCOMPARE(w.result()->config.dp, 4);
    QCOMPARE(w.result()->config.num_microbatches(), 8);  // 32 / (1 x 4)

    // CP 3: 64 is not a multiple of 8 x 3 = 24; the panel says so, and the resolver refuses it.
    field<QSpinBox>(w, "cp")->setValue(3);
    QCOMPARE(dp->specialValueText(), QString("auto: 64 / (8 × 3 × 1) is not whole"));
    QVERIFY(wait_for_result(w));
    QCOMPARE(field<QSpinBox>(w, "cp")->value(), 3);  // kept as typed
    QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("gpus"));
  }

  // A CP the sequence does not allow is refused in the library's words, beside the CP field;
  // the field keeps the value.
  void sequenceRefusalShowsBesideTheCpField() {
    MainWindow w;
    w.show();
    Project p = cp_project();
    p.model.seq_length = 32760;  // 2 x CP 2 x TP 8 (sequence parallel) = 32 does not divide it
    w.set_project(p);
    QVERIFY(wait_for_result(w));
    QVERIFY(!w.result());
    const QString expected = refusal(p);
    QVERIFY(expected.contains("--seq-length 32760"));
    QCOMPARE(w.setup()->error_text(), expected);
    QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("cp"));
    QCOMPARE(w.setup()->project().config.cp, 2);
    auto* label = w.setup()->findChild<QLabel*>("inline_error");
    auto* form = qobject_cast<QFormLayout*>(w.setup()->field("cp")->parentWidget()->layout());
    QVERIFY(label && form);
    int field_row = -1, label_row = -1;
    QFormLayout::ItemRole role;
    form->getWidgetPosition(w.setup()->field("cp"), &field_row, &role);
    form->getWidgetPosition(label, &label_row, &role);
    QCOMPARE(label_row, field_row + 1);
  }

  // Each CP refusal lands on the field that edits what it names.
  void communicationRefusalsLandOnTheirFields() {
    MainWindow w;
    w.show();
    // Llama 3 70B: 64 query heads, 8 KV heads; TP 8 leaves one KV head per rank, which an
    // all-to-all over 2 ranks cannot split.
    Project p = cp_project();
    p.config.cp_comm_type = CpCommType::AllToAll;
    w.set_project(p);
    QVERIFY(wait_for_result(w));
    QCOMPARE(w.setup()->error_text(), refusal(p));
    QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("cp_comm_type"));
    // a2a+p2p with no group size: the row shows, empty, and the refusal sits beside it.
    field<QComboBox>(w, "cp_comm_type")->setCurrentText("a2a+p2p");
    QVERIFY(row_visible(w.setup()->field("cp_a2a_size")));
    QCOMPARE(field<QSpinBox>(w, "cp_a2a_size")->value(), 0);
    QVERIFY(wait_for_result(w));
    p.config.cp_comm_type = CpCommType::AllToAllP2P;
    QCOMPARE(w.setup()->error_text(), refusal(p));
    QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("cp_a2a_size"));
    // Back to p2p with the size still set: the GUI does not clear it; the library refuses it.
    field<QSpinBox>(w, "cp_a2a_size")->setValue(1);
    QVERIFY(wait_for_result(w));
    QVERIFY(w.result());  // a2a inside groups of 1 and a ring of 2 over them
    field<QComboBox>(w, "cp_comm_type")->setCurrentText("p2p");
    QVERIFY(wait_for_result(w));
    QCOMPARE(w.setup()->project().config.cp_a2a_size, 1);
    QVERIFY(row_visible(w.setup()->field("cp_a2a_size")));
    QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("cp_a2a_size"));
    // Unfused attention has no CP: beside the attention box.
    Project unfused = cp_project();
    unfused.config.attention = AttentionKernel::Unfused;
    w.set_project(unfused);
    QVERIFY(wait_for_result(w));
    QCOMPARE(w.setup()->error_text(), refusal(unfused));
    QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("attention"));
  }

  // An exported CP layout reads back as CP through the command line's reader, in every format.
  void exportsKeepCp() {
    MainWindow w;
    Project p = cp_project();
    p.config.cp_comm_type = CpCommType::AllToAllP2P;
    p.config.cp_a2a_size = 1;
    w.set_project(p);
    QVERIFY(wait_for_result(w));
    QVERIFY2(w.result(), qPrintable(w.setup()->error_text()));
    QTemporaryDir dir;
    for (const char* format : {"json", "megatron", "nemo"}) {
      const QString path = dir.filePath(QString("layout.%1").arg(format));
      w.export_layout(path, format);
      const LayoutFile back = read_layout_file(path.toStdString());
      QCOMPARE(back.config.tp, 8);
      QCOMPARE(back.config.cp, 2);
      QVERIFY(back.config.cp_comm_type == CpCommType::AllToAllP2P);
      QCOMPARE(back.config.cp_a2a_size, 1);
    }
  }

  // Lanes are the (rank, stream) pairs the timeline carries, in StreamLane's order, named by
  // the library's stream names; the legend lists the swatches its tasks are drawn with.
  void lanesFollowTheTimeline() {
    TimelineModel m;
    // Stage 1 has a compute and a DP stream only; stage 0 compute and P2P.
    m.set_result(hand_timeline({task(1, StreamLane::Dp, TaskKind::GradReduce, 50, 10),
                                task(0, StreamLane::P2p, TaskKind::Send, 10, 5),
                                task(0, StreamLane::Compute, TaskKind::Forward, 0, 10),
                                task(1, StreamLane::Compute, TaskKind::Forward, 15, 10)}));
    QCOMPARE(m.lanes().size(), std::size_t{4});
    QCOMPARE(m.lanes()[0].label, QString("stage 0 compute"));
    QCOMPARE(m.lanes()[1].label, QString("stage 0 P2P"));
    QCOMPARE(m.lanes()[2].label, QString("stage 1 compute"));
    QCOMPARE(m.lanes()[3].label, QString("stage 1 DP"));
    QVERIFY(m.lanes()[0].compute && !m.lanes()[1].compute);
    QStringList legend;
    for (const int i : m.legend()) legend << timeline_palette()[static_cast<std::size_t>(i)].label;
    QCOMPARE(legend, QStringList({"forward", "PP transfer", "DP gradient comm"}));
    QCOMPARE(m.end_time(), SimTime{60});
  }

  // Under CP the simulator's timeline carries a CP stream: it gets its own lane, "CP", holding
  // exactly the library's CP events. PP 1, 32 sequences over DP 4: 8 microbatches, each a
  // forward and a backward pass with its K,V exchange, so 16 events.
  void cpLaneAppears() {
    MainWindow w;
    w.set_project(cp_project());
    QVERIFY(wait_for_result(w));
    QVERIFY2(w.result(), qPrintable(w.setup()->error_text()));
    std::size_t library_cp = 0;
    for (const TimelineEvent& e : w.result()->timeline) library_cp += e.lane == StreamLane::Cp;
    QCOMPARE(library_cp, std::size_t{16});
    const TimelineModel& m = *w.timeline_model();
    const TimelineLane* cp_lane = nullptr;
    for (const TimelineLane& lane : m.lanes())
      if (lane.label == "stage 0 CP") cp_lane = &lane;
    QVERIFY(cp_lane);
    QVERIFY(!cp_lane->compute);
    QCOMPARE(cp_lane->events.size(), library_cp);
    for (int i : cp_lane->events) QVERIFY(m.event(i).lane == StreamLane::Cp);
    QCOMPARE(m.data(m.index(cp_lane->events.front(), TimelineModel::Lane)).toString(), QString("CP"));
    // At CP 1 there is none.
    Project no_cp = cp_project();
    no_cp.config.cp = 1;
    w.set_project(no_cp);
    QVERIFY(wait_for_result(w));
    QVERIFY(w.result());
    for (const TimelineLane& lane : m.lanes()) QVERIFY2(!lane.label.endsWith(" CP"), qPrintable(lane.label));
  }

  // TP 8 fills a node, so the CP peers of rank r are r and r + 8 (rank = (dp x CP + cp) x TP +
  // tp): every CP group joins two nodes. At TP 2 they are r and r + 2, inside one node.
  void clusterMapPlacesCpGroups() {
    ClusterMapPage page;
    Project p = cp_project();
    MainWindow w;
    w.set_project(p);
    QVERIFY(wait_for_result(w));
    QVERIFY(w.result());
    page.set_result(*w.result());
    // The CP bytes between nodes are the library's (sim/cross_node_traffic.h), shown as it counts them.
    const CrossNodeTraffic direct = cross_node_traffic(w.result()->model, w.result()->cluster, w.result()->config);
    const double cp_bytes = direct.total.at(TrafficKind::ContextParallel);
    QVERIFY(cp_bytes > 0);
    QCOMPARE(page.traffic()->total.at(TrafficKind::ContextParallel), cp_bytes);
    QVERIFY2(page.summary()->text().contains(
                 QString("CP groups of 2 span 2 nodes: their key/value exchange crosses the inter-node fabric, "
                         "context parallel %1 GB between nodes")
                     .arg(cp_bytes / 1e9, 0, 'f', cp_bytes >= 1e10 ? 0 : 1)),
             qPrintable(page.summary()->text()));
    // Every CP link joins the two nodes of one CP group: nodes 2k and 2k + 1.
    for (const NodeLink& link : direct.links)
      if (link.kind == TrafficKind::ContextParallel) QVERIFY(link.node_a % 2 == 0 && link.node_b == link.node_a + 1);

    // The highlighted replica's CP hop from node 0 to node 1 is drawn in teal, beside its DP
    // ring step (red) between the same two nodes: DP's ring runs over DP x CP in rank order.
    ClusterMapView& view = *page.view();
    view.resize(1200, 700);
    view.set_replica(0);
    QImage image(view.size(), QImage::Format_RGB32);
    view.render(&image);
    const QRect node0 = view.cell_rect(0).united(view.cell_rect(7)), node1 = view.cell_rect(8).united(view.cell_rect(15));
    // Probed across the line at a fifth and at 0.3 of the way: a byte label may cover one of them,
    // wherever the map's geometry puts it.
    bool teal = false, red = false;
    for (const double along : {0.2, 0.3}) {
      const QPointF on_line = QPointF(node0.center()) + (QPointF(node1.center()) - QPointF(node0.center())) * along;
      for (int dy = -node0.height() / 2; dy <= node0.height() / 2; ++dy) {
        const QColor c = image.pixelColor(on_line.toPoint() + QPoint(0, dy));
        teal = teal || (c.green() > c.red() + 60 && c.blue() > c.red() + 60);
        red = red || (c.red() > c.green() + 60 && c.red() > c.blue() + 60);
      }
    }
    QVERIFY(teal);
    QVERIFY(red);

    Project inside = cp_project();
    inside.config.tp = 2;
    inside.model.seq_length = 32768;
    w.set_project(inside);
    QVERIFY(wait_for_result(w));
    QVERIFY2(w.result(), qPrintable(w.setup()->error_text()));
    page.set_result(*w.result());
    QVERIFY2(page.summary()->text().contains("CP groups of 2 stay inside nodes"), qPrintable(page.summary()->text()));
    QCOMPARE(page.traffic()->total.count(TrafficKind::ContextParallel), std::size_t{0});
  }
};

QTEST_MAIN(TestContextParallel)
#include "test_context_parallel.moc"
