// TimeScale and ruler ticks: data-driven, every expected value worked out by hand.
#include <QTest>

#include "gui/time_scale.h"

using cc::gui::TimeScale;

class TestTimeScale : public QObject {
  Q_OBJECT
 private slots:
  void mapping_data() {
    QTest::addColumn<double>("origin");
    QTest::addColumn<double>("ns_per_px");
    QTest::addColumn<double>("time");
    QTest::addColumn<double>("px");
    QTest::newRow("identity") << 0.0 << 1.0 << 250.0 << 250.0;
    QTest::newRow("1 µs per px") << 0.0 << 1000.0 << 5e6 << 5000.0;   // 5 ms / 1 µs
    QTest::newRow("offset origin") << 1e6 << 500.0 << 1.5e6 << 1000.0;  // (1.5e6 - 1e6) / 500
    QTest::newRow("left of origin") << 1e6 << 100.0 << 0.0 << -10000.0;
  }
  void mapping() {
    QFETCH(double, origin);
    QFETCH(double, ns_per_px);
    QFETCH(double, time);
    QFETCH(double, px);
    const TimeScale s{origin, ns_per_px};
    QCOMPARE(s.to_px(time), px);
    QCOMPARE(s.to_time(px), time);
  }

  void fit_data() {
    QTest::addColumn<double>("t0");
    QTest::addColumn<double>("t1");
    QTest::addColumn<double>("width");
    QTest::addColumn<double>("ns_per_px");
    QTest::newRow("12 s over 1200 px") << 0.0 << 12e9 << 1200.0 << 1e7;
    QTest::newRow("window 2-4 ms over 400 px") << 2e6 << 4e6 << 400.0 << 5000.0;
    QTest::newRow("empty range keeps 1 ns/px") << 5.0 << 5.0 << 100.0 << 1.0;
  }
  void fit() {
    QFETCH(double, t0);
    QFETCH(double, t1);
    QFETCH(double, width);
    QFETCH(double, ns_per_px);
    TimeScale s;
    s.fit(t0, t1, width);
    QCOMPARE(s.ns_per_px, ns_per_px);
    QCOMPARE(s.origin_ns, t0);
  }

  void zoom_keeps_the_time_under_the_cursor_data() {
    QTest::addColumn<double>("px");
    QTest::addColumn<double>("factor");
    QTest::addColumn<double>("ns_per_px");
    QTest::addColumn<double>("origin");
    // Start: origin 0, 100 ns/px. At px 200 (t = 20,000 ns), zoom x2: 50 ns/px, and
    // origin = 20,000 - 200 * 50 = 10,000.
    QTest::newRow("in x2 at 200") << 200.0 << 2.0 << 50.0 << 10000.0;
    // Zoom out x4 at px 0: 400 ns/px, origin stays 0.
    QTest::newRow("out x4 at 0") << 0.0 << 0.25 << 400.0 << 0.0;
    // Clamped at the finest 1 ns/px (factor 1000 would give 0.1): origin = 20,000 - 200.
    QTest::newRow("clamped") << 200.0 << 1000.0 << 1.0 << 19800.0;
  }
  void zoom_keeps_the_time_under_the_cursor() {
    QFETCH(double, px);
    QFETCH(double, factor);
    QFETCH(double, ns_per_px);
    QFETCH(double, origin);
    TimeScale s{0, 100};
    s.zoom_around(px, factor, 1.0, 1e12);
    QCOMPARE(s.ns_per_px, ns_per_px);
    QCOMPARE(s.origin_ns, origin);
  }

  void pan() {
    TimeScale s{1000, 10};
    s.pan_px(30);  // dragging right by 30 px shows earlier time: 1000 - 300
    QCOMPARE(s.origin_ns, 700.0);
  }

  void ticks_data() {
    QTest::addColumn<double>("ns_per_px");
    QTest::addColumn<double>("min_spacing");
    QTest::addColumn<double>("step");
    // 1 ms/px, labels >= 80 px apart: 80 ms is the minimum; the 1-2-5 step above it is 100 ms.
    QTest::newRow("100 ms") << 1e6 << 80.0 << 1e8;
    // 1 µs/px, 150 px: 150 µs -> 200 µs.
    QTest::newRow("200 µs") << 1e3 << 150.0 << 2e5;
    // 10 ns/px, 40 px: 400 ns -> 500 ns.
    QTest::newRow("500 ns") << 10.0 << 40.0 << 500.0;
    // Exactly on a step: 5 ms/px x 100 px = 500 ms -> 500 ms.
    QTest::newRow("exact") << 5e6 << 100.0 << 5e8;
  }
  void ticks() {
    QFETCH(double, ns_per_px);
    QFETCH(double, min_spacing);
    QFETCH(double, step);
    const TimeScale s{0, ns_per_px};
    QCOMPARE(cc::gui::tick_step_ns(s, min_spacing), step);
    const auto ticks = cc::gui::ruler_ticks(s, 1000, min_spacing);
    QVERIFY(!ticks.empty());
    QCOMPARE(ticks.front().time_ns, 0.0);
    for (std::size_t i = 1; i < ticks.size(); ++i) {
      QCOMPARE(ticks[i].time_ns - ticks[i - 1].time_ns, step);
      QVERIFY(ticks[i].px - ticks[i - 1].px >= min_spacing - 1e-9);
    }
    QVERIFY(ticks.back().px <= 1000);
  }

  void ticks_start_at_the_first_multiple_after_the_origin() {
    const TimeScale s{250, 1};  // origin 250 ns, 1 ns/px, step 100 ns at 100 px spacing
    const auto ticks = cc::gui::ruler_ticks(s, 500, 100);
    QCOMPARE(ticks.front().time_ns, 300.0);
    QCOMPARE(ticks.front().px, 50.0);
    QCOMPARE(ticks.size(), std::size_t(5));  // 300, 400, 500, 600, 700 (px 50..450)
  }
};

QTEST_GUILESS_MAIN(TestTimeScale)
#include "test_time_scale.moc"
