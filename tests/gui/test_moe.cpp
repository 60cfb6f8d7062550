// Mixture of experts in the GUI: the model's MoE fields and the layout's EP, ETP and MoE switches
// show what the project holds and round-trip through the project file; EP 8 changes the result and
// brings the EP part into the time breakdown; what the library refuses lands beside the field it
// names, in its words, and nothing else changes; the search table, the cluster map and the memory
// table show the expert layout. Expected values are hand counts in the comments, published
// figures, or the library called directly with the same inputs.
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <set>

#include "gui/breakdown_chart.h"
#include "gui/cluster_map.h"
#include "gui/main_window.h"
#include "gui/memory_table.h"
#include "gui/project.h"
#include "gui/search_page.h"
#include "gui/search_table.h"
#include "gui/setup_panel.h"
#include "gui/summary_page.h"
#include "sim/cross_node_traffic.h"
#include "sim/memory_model.h"
#include "sim/units.h"
#include "tests/gui/gui_test_support.h"

using namespace cc;
using namespace cc::gui;

namespace {

QSpinBox* ep_field(MainWindow& w) { return field<QSpinBox>(w, "ep"); }

}  // namespace

class TestMoe : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { isolate_settings(); }

  // The preset's MoE fields are shown as the model holds them, the parameters line counts
  // Mixtral as published (issue 31: 46,702,792,704 total, 12,879,925,248 active), and every
  // field survives the project file and the panel.
  // Small models keep their digits: the exact count with separators below a million (tiny read
  // "0.00B total"), millions below a billion. The counts are the library's (ModelSpec), which
  // other tests check against the architectures; this checks how the panel writes them.
  void parametersLineKeepsTheDigitsOfSmallModels() {
    MainWindow w;
    const Project tiny = project_from_presets("tiny", "dgx-h100", 8);
    w.setup()->set_project(tiny);
    const auto* parameters = w.setup()->findChild<QLabel*>("parameters");
    QVERIFY(parameters);
    const QString exact = QLocale(QLocale::English).toString(static_cast<qlonglong>(tiny.model.total_parameters()));
    QVERIFY(tiny.model.total_parameters() < 1000000 && exact.contains(','));
    QCOMPARE(parameters->text(), QString("%1 total, %1 active").arg(exact));

    const Project small = project_from_presets("gpt3-125m", "dgx-h100", 8);
    w.setup()->set_project(small);
    const double total = static_cast<double>(small.model.total_parameters());
    QVERIFY(total >= 1e6 && total < 1e9);
    QCOMPARE(parameters->text(), QString("%1M total, %1M active").arg(total / 1e6, 0, 'f', 2));
  }

  void fieldsShowTheModelAndRoundTrip() {
    Project p = with_ep(mixtral_project(), 8);
    p.config.moe.dispatcher = TokenDispatcher::AllToAll;
    p.config.moe.grouped_gemm = true;
    p.config.moe.capacity_factor = 1.25;
    p.config.moe.load_imbalance = 1.1;
    MainWindow w;
    w.setup()->set_project(p);
    QCOMPARE(field<QSpinBox>(w, "num_experts")->value(), 8);
    QCOMPARE(field<QSpinBox>(w, "moe_router_topk")->value(), 2);
    QCOMPARE(field<QSpinBox>(w, "moe_ffn_hidden_size")->value(), 14336);
    QCOMPARE(field<QSpinBox>(w, "moe_shared_expert_intermediate_size")->value(), 0);
    QCOMPARE(field<QLineEdit>(w, "moe_layer_freq")->text(), QString("1"));
    QCOMPARE(field<QSpinBox>(w, "ep")->value(), 8);
    QCOMPARE(field<QSpinBox>(w, "etp")->value(), 1);
    QCOMPARE(field<QComboBox>(w, "moe_token_dispatcher_type")->currentText(), QString("alltoall"));
    QCOMPARE(field<QDoubleSpinBox>(w, "moe_expert_capacity_factor")->value(), 1.25);
    QCOMPARE(field<QDoubleSpinBox>(w, "moe_load_imbalance")->value(), 1.1);
    const auto* parameters = w.setup()->findChild<QLabel*>("parameters");
    QVERIFY(parameters);
    QCOMPARE(parameters->text(), QString("46.70B total, 12.88B active"));
    QVERIFY(w.setup()->project() == p);

    QTemporaryDir dir;
    const std::string path = dir.filePath("mixtral.ccproj").toStdString();
    save_project(path, p);
    const Project back = load_project(path);
    QVERIFY(back == p);
    QCOMPARE(back.config.ep, 8);
    QCOMPARE(back.model.moe.num_experts, 8);
    QVERIFY(project_to_json(p).at("version").get<int>() >= 4);  // version 4 added the MoE fields
  }

  // DeepSeek-V3's config.json (tests/reference/hf-configs) fills every MoE, MLA and MTP field as
  // the file states it, the panel hands the imported model back unchanged, and the parameters
  // line gives the counts docs/moe.md states for it (682,636,487,424 total with its MTP layer,
  // 38,240,398,080 active).
  void huggingFaceImportFillsTheMoeFields() {
    MainWindow w;
    const QString path = QStringLiteral(QT_TESTCASE_SOURCEDIR "/../reference/hf-configs/deepseek-v3.json");
    w.setup()->import_hf_config(path);
    const Project p = w.setup()->project();
    QCOMPARE(field<QSpinBox>(w, "num_experts")->value(), 256);     // n_routed_experts
    QCOMPARE(field<QSpinBox>(w, "moe_router_topk")->value(), 8);   // num_experts_per_tok
    QCOMPARE(field<QSpinBox>(w, "moe_ffn_hidden_size")->value(), 2048);
    QCOMPARE(field<QSpinBox>(w, "moe_shared_expert_intermediate_size")->value(), 2048);  // 1 shared x 2048
    QCOMPARE(field<QComboBox>(w, "moe_router_score_function")->currentText(), QString("sigmoid"));
    QCOMPARE(field<QSpinBox>(w, "moe_router_num_groups")->value(), 8);   // n_group
    QCOMPARE(field<QSpinBox>(w, "moe_router_group_topk")->value(), 4);  // topk_group
    // first_k_dense_replace 3: three dense layers, then 58 MoE layers.
    QString pattern = "0,0,0";
    for (int i = 0; i < 58; ++i) pattern += ",1";
    QCOMPARE(field<QLineEdit>(w, "moe_layer_freq")->text(), pattern);
    QVERIFY(field<QCheckBox>(w, "multi_latent_attention")->isChecked());
    QCOMPARE(field<QSpinBox>(w, "q_lora_rank")->value(), 1536);
    QCOMPARE(field<QSpinBox>(w, "kv_lora_rank")->value(), 512);
    QCOMPARE(field<QSpinBox>(w, "qk_head_dim")->value(), 128);        // qk_nope_head_dim
    QCOMPARE(field<QSpinBox>(w, "qk_pos_emb_head_dim")->value(), 64);  // qk_rope_head_dim
    QCOMPARE(field<QSpinBox>(w, "v_head_dim")->value(), 128);
    QCOMPARE(field<QSpinBox>(w, "mtp_num_layers")->value(), 1);  // num_nextn_predict_layers
    QCOMPARE(w.setup()->findChild<QLabel*>("parameters")->text(), QString("682.64B total, 38.24B active"));
    QVERIFY(model_to_json(p.model) == model_to_json(w.setup()->project().model));
    w.setup()->set_project(p);
    QVERIFY(w.setup()->project() == p);
  }

  // EP 8 typed into its field re-simulates: the library's result for EP 8 is on screen, its
  // time differs from EP 1's, and the breakdown gains the EP part (at EP 1 with ETP 1 no token
  // leaves its GPU, so there is none).
  void epEightChangesTheResultAndTheEpRowAppears() {
    MainWindow w;
    w.show();
    w.set_project(mixtral_project());
    QVERIFY(wait_for_result(w));
    QVERIFY(w.result());
    QCOMPARE(w.result()->config.ep, 1);
    QCOMPARE(w.result()->breakdown.ep_comm, 0.0);
    QVERIFY(!w.summary()->breakdown()->legend_parts().contains("EP comm"));
    const double ep1_time = w.result()->iteration_time_s;

    ep_field(w)->setValue(8);
    QVERIFY(wait_for_result(w));
    QVERIFY(w.setup()->error_text().isEmpty());
    QCOMPARE(w.result()->config.ep, 8);
    const SimResult& r = *w.result();
    QVERIFY(r.iteration_time_s != ep1_time);
    QVERIFY(r.breakdown.ep_comm > 0);
    QVERIFY(w.summary()->breakdown()->legend_parts().contains("EP comm"));
    const std::vector<double> drawn = w.summary()->breakdown()->drawn_seconds();
    QCOMPARE(drawn[4], r.breakdown.ep_comm);  // the fifth part: compute, recompute, TP, CP, EP

    // Routed experts on one GPU of a stage: 8 MoE layers x 8/8 local experts x 3 x 4,096 x
    // 14,336 (SwiGLU: gate, up, down) / ETP 1 = 1,409,286,144.
    QCOMPARE(w.memory_table()->columnCount(), static_cast<int>(MemoryTable::ColumnCount));
    for (int s = 0; s < 4; ++s) QCOMPARE(w.memory_table()->expert_parameters(s), 1409286144.0);
    // Their state in GiB, the library's share of weights, gradients and optimizer.
    for (int s = 0; s < 4; ++s) {
      const MemoryBreakdown& b = r.memory.stages[static_cast<std::size_t>(s)].bytes;
      QVERIFY(b.experts > 0 && b.experts < b.weights + b.gradients + b.optimizer);
      QCOMPARE(w.memory_table()->gib(s, MemoryTable::ExpertState), b.experts / kGiB);
    }
  }

  // EP 3 does not divide 8 experts: refused beside the EP field in the library's words; the
  // field keeps 3, nothing else changes, and the last valid result stays.
  void badEpIsRefusedBesideTheField() {
    MainWindow w;
    w.show();
    const Project good = with_ep(mixtral_project(), 8);
    w.set_project(good);
    QVERIFY(wait_for_result(w));
    QVERIFY(w.setup()->error_text().isEmpty());
    ep_field(w)->setValue(3);
    QVERIFY(wait_for_result(w));
    const Project expected = with_ep(good, 3);
    const QString message = refusal(expected);
    QVERIFY2(message.contains("--expert-model-parallel-size"), qPrintable(message));
    QCOMPARE(w.setup()->error_text(), message);
    QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("ep"));
    QCOMPARE(ep_field(w)->value(), 3);
    QVERIFY(w.setup()->project() == expected);
    QCOMPARE(w.result()->config.ep, 8);  // stale, not replaced
    QVERIFY(w.stale());
  }

  // The model's and the switches' refusals land on their own fields, each in the library's words.
  void moeRefusalsLandOnTheirFields() {
    MainWindow w;
    w.show();
    const Project good = with_ep(mixtral_project(), 8);
    w.set_project(good);
    QVERIFY(wait_for_result(w));

    field<QSpinBox>(w, "moe_router_topk")->setValue(9);  // above the 8 experts
    QVERIFY(wait_for_result(w));
    Project expected = good;
    expected.model.moe.router_topk = 9;
    QCOMPARE(w.setup()->error_text(), refusal(expected));
    QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("moe_router_topk"));
    QVERIFY(w.setup()->project() == expected);
    field<QSpinBox>(w, "moe_router_topk")->setValue(2);
    QVERIFY(wait_for_result(w));
    QVERIFY(w.setup()->error_text().isEmpty());

    field<QDoubleSpinBox>(w, "moe_load_imbalance")->setValue(0.5);  // below 1: the busiest rank is at least the mean
    QVERIFY(wait_for_result(w));
    expected = good;
    expected.config.moe.load_imbalance = 0.5;
    QCOMPARE(w.setup()->error_text(), refusal(expected));
    QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("moe_load_imbalance"));
    field<QDoubleSpinBox>(w, "moe_load_imbalance")->setValue(0);  // the default again
    QVERIFY(wait_for_result(w));
    QVERIFY(w.setup()->error_text().isEmpty());

    // A 0/1 pattern needs one entry per layer: two for 32 layers is refused by the model.
    QLineEdit* freq = field<QLineEdit>(w, "moe_layer_freq");
    freq->setFocus();
    freq->selectAll();
    QTest::keyClick(freq, Qt::Key_Delete);
    QTest::keyClicks(freq, "0,1");
    QTest::keyClick(freq, Qt::Key_Return);
    QVERIFY(wait_for_result(w));
    expected = good;
    expected.model.moe.layer_pattern = {0, 1};
    const QString message = refusal(expected);
    QVERIFY2(message.contains("--moe-layer-freq") || message.contains("moe_layer_freq"), qPrintable(message));
    QCOMPARE(w.setup()->error_text(), message);
    QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("moe_layer_freq"));
    QCOMPARE(freq->text(), QString("0,1"));
  }

  // Sinkhorn load balancing has no field of its own; a capacity factor typed beside it is refused
  // (Megatron-Core: the capacity factor works with the aux-loss kinds or none) beside the capacity
  // factor, the field that made it so.
  void sinkhornRefusalLandsOnTheCapacityFactor() {
    MainWindow w;
    w.show();
    Project good = with_ep(mixtral_project(), 8);
    good.config.moe.load_balancing = LoadBalancing::Sinkhorn;
    w.set_project(good);
    QVERIFY(wait_for_result(w));
    QVERIFY2(w.setup()->error_text().isEmpty(), qPrintable(w.setup()->error_text()));
    field<QDoubleSpinBox>(w, "moe_expert_capacity_factor")->setValue(1.25);
    QVERIFY(wait_for_result(w));
    Project expected = good;
    expected.config.moe.capacity_factor = 1.25;
    const QString message = refusal(expected);
    QVERIFY2(message.contains("sinkhorn"), qPrintable(message));
    QCOMPARE(w.setup()->error_text(), message);
    QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("moe_expert_capacity_factor"));
  }

  // Where the EP groups sit, from the expert grid ("etp-ep-edp-pp"): at ETP 1 an EP group of 8
  // is 8 consecutive ranks, one 8-GPU node; at ETP 2 its members are 2 apart (0, 2, ..., 14),
  // two nodes.
  void clusterMapPlacesEpGroups() {
    ClusterMapPage page;
    Project p = with_ep(mixtral_project(), 8);
    SimResult r;
    r.model = p.model;
    r.cluster = p.cluster;
    r.config = p.resolved_config();
    page.set_result(r);
    QVERIFY2(page.summary()->text().contains("EP 8 × ETP 1 (expert DP 2)"), qPrintable(page.summary()->text()));
    QVERIFY(page.summary()->text().contains("EP groups stay inside NVLink domains"));
    p.config.etp = 2;  // EP x ETP = 16 divides TP x DP = 16
    r.config = p.resolved_config();
    page.set_result(r);
    QVERIFY2(page.summary()->text().contains("EP groups span 2 NVLink domains"), qPrintable(page.summary()->text()));
    // The bytes it states are the library's expert-parallel total.
    const double ep_bytes = cross_node_traffic(r.model, r.cluster, r.config).total.at(TrafficKind::ExpertParallel);
    QVERIFY(ep_bytes > 0);
    QCOMPARE(page.traffic()->total.at(TrafficKind::ExpertParallel), ep_bytes);
    const QString stated = QStringLiteral("expert parallel %1 GB").arg(ep_bytes / 1e9, 0, 'f', ep_bytes >= 1e10 ? 0 : 1);
    QVERIFY2(page.summary()->text().contains(stated), qPrintable(page.summary()->text() + " / " + stated));
  }

  // A search over EP 4 and 8 (ETP 1, everything else pinned): the EP and ETP columns hold each
  // ranked layout's own, and the CSV names them.
  void searchTableShowsEpAndEtp() {
    MainWindow w;
    w.show();
    w.set_project(mixtral_project());
    QVERIFY(wait_for_result(w));
    SearchPage* s = w.search_page();
    s->tp_list()->setText("2");
    s->pp_list()->setText("4");
    s->ep_list()->setText("4,8");
    s->etp_list()->setText("1");
    QSignalSpy done(s, &SearchPage::finished);
    s->start(w.setup()->project());
    QVERIFY(done.wait(240000));
    const SearchTable* t = s->table();
    QVERIFY(t->rowCount() > 0);
    std::set<int> eps;
    for (int row = 0; row < t->rowCount(); ++row) {
      const ParallelConfig& c = t->layout(row).result.config;
      QCOMPARE(t->index(row, SearchTable::Ep).data(Qt::UserRole).toInt(), c.ep);
      QCOMPARE(t->index(row, SearchTable::Etp).data(Qt::UserRole).toInt(), 1);
      eps.insert(c.ep);
    }
    QVERIFY(eps.count(4) || eps.count(8));
    for (const int ep : eps) QVERIFY(ep == 4 || ep == 8);
    QVERIFY(t->to_csv().starts_with("rank,layout,tp,cp,ep,etp,"));  // the columns of search --csv
  }
};

QTEST_MAIN(TestMoe)
#include "test_moe.moc"
