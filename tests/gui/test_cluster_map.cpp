// The Cluster map: cells map to the right ranks, and the traffic it lists is the library's.
#include <QLabel>
#include <QTest>

#include "gui/cluster_map.h"
#include "sim/analytic_costs.h"
#include "tests/gui/gui_test_support.h"

using namespace cc;
using namespace cc::gui;

class TestClusterMap : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { isolate_settings(); }

  void everyCellIsItsRank() {
    ClusterMapView view;
    view.resize(1200, 800);
    ParallelConfig c;
    c.tp = 8;
    c.pp = 16;
    c.dp = 8;
    view.set_layout(c, 8, nullptr);
    for (int r : {0, 7, 8, 67, 511, 1023}) {
      const QRect cell = view.cell_rect(r);
      QVERIFY(cell.width() >= 4);  // 1,024 GPUs fit on one screen
      QCOMPARE(view.rank_at(cell.center()), r);
    }
    // Cells of one node sit side by side: rank 1 is right of rank 0, rank 8 starts a new node.
    QCOMPARE(view.cell_rect(1).top(), view.cell_rect(0).top());
    QVERIFY(view.cell_rect(1).left() > view.cell_rect(0).left());
    QVERIFY(view.cell_rect(8).left() > view.cell_rect(7).right());  // the gap between nodes
    QCOMPARE(view.rank_at(QPoint(-5, -5)), -1);
  }

  // GB200 NVL72: 4-GPU trays, 72-GPU NVLink domains. The 18 trays of one rack share a background
  // shade, the next rack's differs; on nodes that are their own domain every shade is alike.
  void framesShowNvlinkDomains() {
    ClusterMapView view;
    view.resize(1200, 800);
    ParallelConfig c;
    c.tp = 4;
    c.dp = 36;  // 144 GPUs: two racks
    view.set_layout(c, 4, nullptr, 72);
    QCOMPARE(view.domain_shade(17), view.domain_shade(0));
    QVERIFY(view.domain_shade(18) != view.domain_shade(17));
    QCOMPARE(view.domain_shade(35), view.domain_shade(18));
    view.set_layout(c, 8, nullptr, 0);
    for (int node : {1, 9, 17}) QCOMPARE(view.domain_shade(node), view.domain_shade(0));
  }

  void listsTheLibrarysTraffic() {
    ClusterMapPage page;
    const Project p = paper_project();
    const ParallelConfig c = p.resolved_config();
    SimOptions o;
    o.train_tokens = p.train_tokens;
    const SimResult r = simulate(p.model, p.cluster, c, AnalyticCosts(p.cluster, c.precision), o);
    page.set_result(r);
    const CrossNodeTraffic direct = cross_node_traffic(r.model, r.cluster, r.config);
    QVERIFY(page.traffic());
    QCOMPARE(page.traffic()->total.at(TrafficKind::Pipeline), direct.total.at(TrafficKind::Pipeline));
    QCOMPARE(page.traffic()->busiest_node_bytes, direct.busiest_node_bytes);
    // TP 8 x PP 16 x DP 8 on nodes of 8: each node holds one TP group, every stage boundary
    // and every DP ring hop crosses nodes.
    QVERIFY(!direct.tp_spans_nodes);
    const QString text = page.summary()->text();
    QVERIFY2(text.contains(QString("pipeline %1 GB").arg(direct.total.at(TrafficKind::Pipeline) / 1e9, 0, 'f', 0)),
             qPrintable(text));
    QVERIFY(text.contains("TP groups stay inside nodes"));
  }

  void listsCrossNodeTensorParallelTraffic() {
    // TP 16 on nodes of 8: every TP group joins two nodes; its bytes are the library's.
    Project p = paper_project();
    p.config.tp = 16;
    p.config.pp = 8;
    p.config.sequence_parallel = false;
    ClusterMapPage page;
    const ParallelConfig c = p.resolved_config();
    const SimResult r = simulate(p.model, p.cluster, c, AnalyticCosts(p.cluster, c.precision), SimOptions{});
    page.set_result(r);
    const CrossNodeTraffic direct = cross_node_traffic(r.model, r.cluster, r.config);
    QVERIFY(direct.tp_spans_nodes);
    const double tp = direct.total.at(TrafficKind::TensorParallel);
    QVERIFY(tp > 0);
    QCOMPARE(page.traffic()->total.at(TrafficKind::TensorParallel), tp);
    const QString text = page.summary()->text();
    QVERIFY2(text.contains(QString("tensor parallel %1 GB").arg(tp / 1e9, 0, 'f', 0)), qPrintable(text));
    QVERIFY(text.contains("TP groups span nodes"));
  }
};

QTEST_MAIN(TestClusterMap)
#include "test_cluster_map.moc"
