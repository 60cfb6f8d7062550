// The Search tab against the library's search for the same inputs, under the offscreen
// platform. Expected lists come from calling sim's search() directly.
#include <QAbstractItemModelTester>
#include <QComboBox>
#include <QChartView>
#include <QCheckBox>
#include <QElapsedTimer>
#include <QFile>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QProcess>
#include <QScatterSeries>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QThreadPool>

#include <optional>

#include "gui/main_window.h"
#include "tests/gui/gui_test_support.h"
#include "gui/search_page.h"
#include "gui/search_table.h"
#include "gui/setup_panel.h"
#include "gui/simulation.h"
#include "gui/timeline_model.h"
#include "sim/analytic_costs.h"

using namespace cc;
using namespace cc::gui;

namespace {

// The searches below are pinned to TP 8 and PP 8 or 16, so each takes a fraction of a second.
// `clustercast simulate ARGS --json`'s document, or nothing when it does not exit 0 within two minutes.
std::optional<nlohmann::json> cli_simulate_json(QStringList args) {
  args.prepend("simulate");
  args.append("--json");
  QProcess cli;
  cli.start(CLUSTERCAST_BINARY, args);
  if (!cli.waitForFinished(120000) || cli.exitCode() != 0) return std::nullopt;
  return nlohmann::json::parse(cli.readAllStandardOutput().toStdString());
}

bool run_search(MainWindow& w) {
  QSignalSpy spy(w.search_page(), &SearchPage::finished);
  w.search_page()->start(w.setup()->project());
  return spy.wait(300000);
}

void pin(MainWindow& w) {
  w.search_page()->tp_list()->setText("8");
  w.search_page()->pp_list()->setText("8,16");
}

// The proxy row of the first result whose PP is not `pp`; -1 if none.
int row_with_other_pp(MainWindow& w, int pp) {
  QSortFilterProxyModel* proxy = w.search_page()->proxy();
  for (int r = 0; r < proxy->rowCount(); ++r)
    if (w.search_page()->table()->layout(proxy->mapToSource(proxy->index(r, 0)).row()).result.config.pp != pp) return r;
  return -1;
}

void select_row(MainWindow& w, int row) {
  w.search_page()->view()->selectionModel()->setCurrentIndex(
      w.search_page()->proxy()->index(row, 0), QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
}

}  // namespace

class TestSearch : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { isolate_settings(); }

  void searchFillsTheTableWithTheLibrarysRankedList() {
    MainWindow w;
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    pin(w);
    const SearchOutcome lib = search(w.search_page()->request_for(w.setup()->project()));
    QVERIFY(run_search(w));
    SearchTable* t = w.search_page()->table();
    QVERIFY(!lib.ranked.empty());
    QCOMPARE(t->rowCount(), static_cast<int>(lib.ranked.size()));
    for (int i = 0; i < t->rowCount(); ++i) {
      QCOMPARE(t->layout(i).result.config.summary(), lib.ranked[static_cast<std::size_t>(i)].result.config.summary());
      QCOMPARE(t->layout(i).result.iteration_time_s, lib.ranked[static_cast<std::size_t>(i)].result.iteration_time_s);
      QCOMPARE(t->layout(i).tied, lib.ranked[static_cast<std::size_t>(i)].tied);
      QCOMPARE(t->layout(i).result.config.tp, 8);  // the pin holds
    }
    // Every layout is TP 8 x PP 8 or 16, so DP is 16 or 8.
    for (int i = 0; i < t->rowCount(); ++i) QVERIFY(t->layout(i).result.config.dp == 16 || t->layout(i).result.config.dp == 8);
    QVERIFY(w.search_page()->status()->text().contains(QString("%1 layouts ranked").arg(lib.ranked.size())));
  }

  void scatterGreysExactlyTheLibrarysUnfitLayouts() {
    MainWindow w;
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    pin(w);
    const SearchOutcome lib = search(w.search_page()->request_for(w.setup()->project()));
    // TP 8 x PP 8 of 175B without recomputation needs more than 76 GiB: some are refused.
    QVERIFY(!lib.unfit.empty());
    QVERIFY(run_search(w));
    QScatterSeries* grey = w.search_page()->unfit_series();
    QVERIFY(grey);
    QCOMPARE(grey->count(), static_cast<int>(lib.unfit.size()));
    // The usable-HBM line the points must lie right of.
    double line_x = -1;
    for (QAbstractSeries* s : w.search_page()->scatter()->chart()->series())
      if (s->name() == "usable HBM") line_x = static_cast<QLineSeries*>(s)->at(0).x();
    QCOMPARE(line_x, lib.ranked.front().result.usable_gib);
    for (int k = 0; k < grey->count(); ++k) {
      const SimResult& u = lib.unfit[static_cast<std::size_t>(k)].result;
      QCOMPARE(grey->at(k).x(), u.peak_memory_gib);
      QCOMPARE(grey->at(k).y(), u.tokens_per_s);
      QVERIFY2(grey->at(k).x() > line_x, qPrintable(QString::fromStdString(u.config.summary())));
    }
    // The table ranks only what fits.
    SearchTable* t = w.search_page()->table();
    QCOMPARE(t->rowCount(), static_cast<int>(lib.ranked.size()));
    for (int i = 0; i < t->rowCount(); ++i) QVERIFY(t->layout(i).result.fits);
  }

  void sortingAndFilteringKeepTheModelsConsistent() {
    MainWindow w;
    QAbstractItemModelTester source(w.search_page()->table(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester proxy(w.search_page()->proxy(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    pin(w);
    QVERIFY(run_search(w));
    QSortFilterProxyModel* m = w.search_page()->proxy();
    const int all = m->rowCount();
    QVERIFY(all > 2);
    // Slowest first.
    w.search_page()->view()->sortByColumn(SearchTable::IterationS, Qt::DescendingOrder);
    for (int r = 1; r < m->rowCount(); ++r)
      QVERIFY(m->index(r - 1, SearchTable::IterationS).data(Qt::UserRole).toDouble() >=
              m->index(r, SearchTable::IterationS).data(Qt::UserRole).toDouble());
    // Only selective recomputation.
    int expected = 0;
    for (int i = 0; i < w.search_page()->table()->rowCount(); ++i)
      expected += w.search_page()->table()->layout(i).result.config.recompute == RecomputeGranularity::Selective;
    w.search_page()->filter()->setText("selective");
    QCOMPARE(m->rowCount(), expected);
    for (int r = 0; r < m->rowCount(); ++r) QVERIFY(m->index(r, SearchTable::Layout).data().toString().contains("selective"));
    w.search_page()->filter()->clear();
    QCOMPARE(m->rowCount(), all);
  }

  void selectingARowLoadsIt() {
    MainWindow w;
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    pin(w);
    QVERIFY(run_search(w));
    QTableView* view = w.search_page()->view();
    const int row = std::min(2, w.search_page()->proxy()->rowCount() - 1);
    const RankedLayout chosen = w.search_page()->table()->layout(w.search_page()->proxy()->mapToSource(
        w.search_page()->proxy()->index(row, 0)).row());
    QSignalSpy shown(&w, &MainWindow::result_shown);
    view->selectionModel()->setCurrentIndex(w.search_page()->proxy()->index(row, 0),
                                            QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    QVERIFY(shown.wait(120000));
    const ParallelConfig loaded = w.setup()->project().resolved_config();
    QCOMPARE(loaded.summary(), chosen.result.config.summary());
    QCOMPARE(w.result()->iteration_time_s, chosen.result.iteration_time_s);
    // The timeline is the direct simulation of that layout.
    const Project p = w.setup()->project();
    SimOptions o;
    o.keep_timeline = true;
    o.train_tokens = p.train_tokens;
    const SimResult direct = simulate(p.model, p.cluster, loaded, AnalyticCosts(p.cluster, loaded.precision), o);
    QCOMPARE(w.timeline_model()->rowCount(), static_cast<int>(direct.timeline.size()));
    QCOMPARE(w.result()->iteration_time_s, direct.iteration_time_s);
  }

  void cancelStopsTheWorkerAndKeepsThePreviousResults() {
    MainWindow w;
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    pin(w);
    QVERIFY(run_search(w));
    const SearchOutcome* before = w.search_page()->table()->outcome();
    QVERIFY(before);
    w.search_page()->tp_list()->clear();  // a bigger search, cancelled at once
    w.search_page()->pp_list()->clear();
    w.search_page()->start(w.setup()->project());
    QVERIFY(w.search_page()->running());
    QElapsedTimer clock;
    clock.start();
    w.search_page()->cancel();
    QVERIFY(clock.elapsed() < 100);
    QVERIFY(!w.search_page()->running());
    // The abandoned run's answer, when it arrives, is dropped.
    QThreadPool::globalInstance()->waitForDone();
    QCoreApplication::processEvents();
    QTest::qWait(50);
    QCOMPARE(w.search_page()->table()->outcome(), before);
    QVERIFY(w.search_page()->status()->text().contains("cancelled"));
  }

  void exportIsReadBackBySimulateConfigWithTheSamePrediction() {
    MainWindow w;
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    pin(w);
    QVERIFY(run_search(w));
    QSignalSpy shown(&w, &MainWindow::result_shown);
    w.search_page()->view()->selectRow(0);
    QVERIFY(shown.wait(120000));
    QTemporaryDir dir;
    const QString path = dir.filePath("best.json");
    w.export_layout(path, "json");
    const auto doc = cli_simulate_json({"--config", path});
    QVERIFY(doc);
    QCOMPARE(doc->at("iteration_time_s").get<double>(), w.result()->iteration_time_s);
    QCOMPARE(doc->at("peak_memory_gib").get<double>(), w.result()->peak_memory_gib);
  }

  // The setup's "Grad reduce in bf16" reaches every searched layout, as `search --grad-reduce-in-bf16`
  // gives it, and the layout loaded from the results keeps it.
  void gradientsReducedInBf16ReachTheSearch() {
    MainWindow w;
    Project p = project_from_presets("gpt3-1.3b", "dgx-a100-80gb", 16);
    p.config.global_batch = 64;
    p.config.grad_reduce_in_bf16 = true;
    w.set_project(p);
    QVERIFY(wait_for_result(w));
    QVERIFY(w.setup()->project().config.grad_reduce_in_bf16);
    QVERIFY(w.search_page()->request_for(w.setup()->project()).space.grad_reduce_in_bf16);
    QVERIFY(run_search(w));
    QSignalSpy shown(&w, &MainWindow::result_shown);
    w.search_page()->view()->selectRow(0);
    QVERIFY(shown.wait(120000));
    QVERIFY(w.result()->config.grad_reduce_in_bf16);
  }

  // The optimizer's instances (--num-distributed-optimizer-instances) show in their own field, reach
  // every searched distributed-optimizer layout as `search --num-distributed-optimizer-instances`
  // gives them, and the layout loaded from the results keeps them.
  void partialDistributedOptimizerIsShownAndReachesTheSearch() {
    MainWindow w;
    Project p = project_from_presets("gpt3-1.3b", "dgx-a100-80gb", 16);
    p.config.global_batch = 64;
    p.config.distributed_optimizer = true;
    p.config.distributed_optimizer_instances = 2;
    w.set_project(p);
    QVERIFY(wait_for_result(w));
    auto* instances = qobject_cast<QSpinBox*>(w.setup()->field("num_distributed_optimizer_instances"));
    QVERIFY(instances);
    QCOMPARE(instances->value(), 2);
    QCOMPARE(w.result()->config.distributed_optimizer_instances, 2);
    QCOMPARE(w.search_page()->request_for(w.setup()->project()).space.distributed_optimizer_instances, 2);
    QVERIFY(run_search(w));
    QSignalSpy shown(&w, &MainWindow::result_shown);
    w.search_page()->view()->selectRow(0);
    QVERIFY(shown.wait(120000));
    // A plain-optimizer layout runs one instance; the greyed-out field keeps the user's value.
    QCOMPARE(w.result()->config.distributed_optimizer_instances, w.result()->config.distributed_optimizer ? 2 : 1);
    QCOMPARE(instances->value(), 2);
    QCOMPARE(instances->isEnabled(), w.result()->config.distributed_optimizer);
    QVERIFY(!w.search_page()->results_stale());
  }

  // A launch line's kernel fusions are shown, kept when the setup is read back, and searched with.
  void kernelFusionsAreShownAndReachTheSearch() {
    MainWindow w;
    Project p = project_from_presets("llama3-8b", "dgx-h100", 16);
    p.config.global_batch = 64;
    p.config.cross_entropy_fusion = true;
    p.config.rope_fusion = false;
    w.set_project(p);
    QVERIFY(wait_for_result(w));
    auto* loss = qobject_cast<QCheckBox*>(w.setup()->field("cross_entropy_loss_fusion"));
    auto* rope = qobject_cast<QCheckBox*>(w.setup()->field("apply_rope_fusion"));
    QVERIFY(loss && rope);
    QVERIFY(loss->isChecked());
    QVERIFY(!rope->isChecked());
    QVERIFY(w.result()->config.cross_entropy_fusion);
    QVERIFY(!w.result()->config.rope_fusion);
    const SearchRequest r = w.search_page()->request_for(w.setup()->project());
    QVERIFY(r.space.cross_entropy_fusion);
    QVERIFY(!r.space.rope_fusion);
    // The same run as simulate's with both flags.
    const auto doc = cli_simulate_json({"--model", "llama3-8b", "--cluster", "dgx-h100", "--gpus", "16",
                                        "--global-batch-size", "64", "--cross-entropy-loss-fusion", "--no-rope-fusion"});
    QVERIFY(doc);
    QCOMPARE(doc->at("iteration_time_s").get<double>(), w.result()->iteration_time_s);
  }

  // FP8 parameters (--fp8-param-gather) and the FP8 recipe (--fp8-recipe) are shown, kept when the
  // setup is read back, priced as simulate prices them, and reach the searched layouts.
  void fp8ParametersAndRecipeAreShownKeptAndReachTheSearch() {
    MainWindow w;
    Project p = project_from_presets("gpt3-1.3b", "dgx-h100", 16);
    p.config.global_batch = 64;
    p.config.precision = Precision::FP8;
    p.config.distributed_optimizer = true;
    p.config.fp8_param_gather = true;
    p.config.fp8_recipe = Fp8Recipe::Tensorwise;
    w.set_project(p);
    QVERIFY(wait_for_result(w));
    auto* box = qobject_cast<QCheckBox*>(w.setup()->field("fp8_param_gather"));
    auto* recipe = qobject_cast<QComboBox*>(w.setup()->field("fp8_recipe"));
    QVERIFY(box && recipe);
    QVERIFY(box->isChecked());
    QCOMPARE(recipe->currentText(), QString("tensorwise"));
    QVERIFY(!box->toolTip().isEmpty() && !recipe->toolTip().isEmpty());
    QVERIFY(w.setup()->project().config.fp8_param_gather);
    QCOMPARE(w.setup()->project().config.fp8_recipe, Fp8Recipe::Tensorwise);
    QVERIFY(w.result()->config.fp8_param_gather);
    QCOMPARE(w.result()->config.fp8_recipe, Fp8Recipe::Tensorwise);
    const auto doc = cli_simulate_json({"--model", "gpt3-1.3b", "--cluster", "dgx-h100", "--gpus", "16",
                                        "--global-batch-size", "64", "--fp8-format", "hybrid",
                                        "--use-distributed-optimizer", "--fp8-param-gather", "--fp8-recipe", "tensorwise"});
    QVERIFY(doc);
    QCOMPARE(doc->at("iteration_time_s").get<double>(), w.result()->iteration_time_s);
    QCOMPARE(doc->at("peak_memory_gib").get<double>(), w.result()->peak_memory_gib);
    QVERIFY(w.search_page()->request_for(w.setup()->project()).space.fp8_param_gather);
    QCOMPARE(w.search_page()->request_for(w.setup()->project()).space.fp8_recipe, Fp8Recipe::Tensorwise);
    QVERIFY(run_search(w));
    QSignalSpy shown(&w, &MainWindow::result_shown);
    w.search_page()->view()->selectRow(0);
    QVERIFY(shown.wait(120000));
    QCOMPARE(w.result()->config.fp8_param_gather, w.result()->config.distributed_optimizer);
    QCOMPARE(box->isChecked(), w.result()->config.distributed_optimizer);
    QCOMPARE(w.result()->config.fp8_recipe, Fp8Recipe::Tensorwise);
  }

  // A new project and a launch line without an attention flag mean the same run: the
  // stack's default kernel (megatron-core: flash), the same prediction.
  void defaultProjectPredictsWhatSimulateDoesWithoutAnAttentionFlag() {
    Project p = project_from_presets("gpt3-175b", "dgx-a100-80gb", 1024);
    p.config.tp = 8;
    p.config.pp = 16;
    p.config.global_batch = 1536;
    QVERIFY(p.config.attention == AttentionKernel::Flash);
    const SimulationOutcome gui = run_simulation(p);
    QVERIFY2(gui.ok(), gui.error.c_str());
    const auto doc = cli_simulate_json({"--model", "gpt3-175b", "--cluster", "dgx-a100-80gb", "--gpus", "1024",
                                        "--tp", "8", "--pp", "16", "--global-batch-size", "1536"});
    QVERIFY(doc);
    QCOMPARE(doc->at("iteration_time_s").get<double>(), gui.result->iteration_time_s);
    QCOMPARE(doc->at("peak_memory_gib").get<double>(), gui.result->peak_memory_gib);
  }

  void searchResultsForAnotherSetupAreStaleAndDoNotLoad() {
    MainWindow w;
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    pin(w);
    QVERIFY(run_search(w));
    SearchPage* page = w.search_page();
    QVERIFY(!page->results_stale());
    QVERIFY(!page->stale_note()->isVisibleTo(page));

    // Another global batch: the ranked layouts were simulated for 1,536 sequences, not 768.
    field<QSpinBox>(w, "global_batch")->setValue(768);
    QVERIFY(wait_for_result(w));
    QVERIFY(page->results_stale());
    QVERIFY(page->stale_note()->isVisibleTo(page));
    QVERIFY(page->stale_note()->text().contains("global batch 1536"));
    QVERIFY(page->stale_note()->text().contains("Run the search again"));
    const int row = row_with_other_pp(w, 16);
    QVERIFY(row >= 0);
    select_row(w, row);
    QTest::qWait(300);  // longer than the setup's edit pause: a load would have started by now
    QCOMPARE(field<QSpinBox>(w, "pp")->value(), 16);
    QCOMPARE(w.setup()->project().config.global_batch, 768);

    // Searched again for this setup, a row loads, and loading it keeps the results current.
    QVERIFY(run_search(w));
    QVERIFY(!page->results_stale());
    QVERIFY(!page->stale_note()->isVisibleTo(page));
    const int fresh = row_with_other_pp(w, 16);
    QVERIFY(fresh >= 0);
    QSignalSpy shown(&w, &MainWindow::result_shown);
    select_row(w, fresh);
    QVERIFY(shown.wait(120000));
    QVERIFY(field<QSpinBox>(w, "pp")->value() != 16);
    QCOMPARE(w.setup()->project().config.global_batch, 768);
    QVERIFY(!page->results_stale());

    // Another model marks them stale too.
    field<QComboBox>(w, "model")->setCurrentText("llama3-8b");
    QVERIFY(page->results_stale());
  }

  // Results that arrive after the setup changed are stale on arrival.
  void searchResultsForASetupEditedWhileRunningArriveStale() {
    MainWindow w;
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    pin(w);
    QSignalSpy done(w.search_page(), &SearchPage::finished);
    w.search_page()->start(w.setup()->project());
    field<QSpinBox>(w, "global_batch")->setValue(768);  // before the worker can answer
    QVERIFY(done.wait(300000));
    QVERIFY(w.search_page()->table()->outcome());
    QVERIFY(w.search_page()->results_stale());
    QVERIFY(w.search_page()->stale_note()->text().contains("global batch 1536"));
  }

  // Filtering hides rows, and Qt moves the current row off a hidden one: that is not a choice.
  void typingInTheFilterNeverLoadsALayout() {
    MainWindow w;
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    pin(w);
    QVERIFY(run_search(w));
    SearchTable* t = w.search_page()->table();
    QSignalSpy chosen(w.search_page(), &SearchPage::layout_chosen);
    QSignalSpy shown(&w, &MainWindow::result_shown);
    select_row(w, 0);  // the user's click: loads it
    QVERIFY(shown.wait(120000));
    QCOMPARE(chosen.count(), 1);
    QSortFilterProxyModel* proxy = w.search_page()->proxy();
    const RankedLayout first = t->layout(proxy->mapToSource(proxy->index(0, 0)).row());
    const QString loaded = QString::fromStdString(w.setup()->project().resolved_config().summary());
    QCOMPARE(loaded, QString::fromStdString(first.result.config.summary()));
    // A recompute mode the current row does not have, but other rows do: typing it hides the row.
    QString other;
    for (int i = 0; i < t->rowCount() && other.isEmpty(); ++i)
      if (t->layout(i).result.config.recompute != first.result.config.recompute)
        other = QString::fromUtf8(to_string(t->layout(i).result.config.recompute));
    QVERIFY(!other.isEmpty());
    QTest::keyClicks(w.search_page()->filter(), other);
    QVERIFY(proxy->rowCount() > 0);
    QTest::qWait(300);  // longer than the setup's edit pause
    QCOMPARE(chosen.count(), 1);
    QCOMPARE(QString::fromStdString(w.setup()->project().resolved_config().summary()), loaded);
    w.search_page()->filter()->clear();
    QTest::qWait(300);
    QCOMPARE(chosen.count(), 1);
  }

  void csvHasOneLinePerLayout() {
    MainWindow w;
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    pin(w);
    QVERIFY(run_search(w));
    QTemporaryDir dir;
    w.export_search_csv(dir.filePath("r.csv"));
    QFile f(dir.filePath("r.csv"));
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QStringList lines = QString::fromUtf8(f.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), w.search_page()->table()->rowCount() + 1);
    QVERIFY(lines.front().startsWith("rank,layout,tp,cp,ep,etp,dp,pp,micro_batch_size"));  // as search --csv
  }
};

QTEST_MAIN(TestSearch)
#include "test_search.moc"
