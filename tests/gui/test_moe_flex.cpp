// The flex MoE dispatcher (DeepEP, HybridEP) in the GUI: a flex config shows "flex" and its
// backend, and the panel hands it back unchanged (before the dispatcher offered flex, it read
// back as allgather); the backend is editable while the dispatcher is flex; the library's flex
// refusals land beside the field they name; a Megatron argument file with flex opens showing both.
// Expected values are what the test sets, or the library's refusal of the same project.
#include <QComboBox>
#include <QFile>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "gui/launch_flags.h"
#include "gui/main_window.h"
#include "gui/project.h"
#include "gui/setup_panel.h"
#include "gui/simulation.h"
#include "tests/gui/gui_test_support.h"

using namespace cc;
using namespace cc::gui;

namespace {

// Mixtral at EP 8 (ETP 1, as the flex dispatcher needs) with the flex dispatcher on `backend`.
Project flex_project(FlexBackend backend) {
  Project p = with_ep(mixtral_project(), 8);
  p.config.moe.dispatcher = TokenDispatcher::Flex;
  p.config.moe.flex_backend = backend;
  return p;
}

QComboBox* dispatcher(MainWindow& w) { return field<QComboBox>(w, "moe_token_dispatcher_type"); }
QComboBox* backend(MainWindow& w) { return field<QComboBox>(w, "moe_flex_dispatcher_backend"); }

// The refusal the window shows with its next result ("" for none).
QString next_refusal(MainWindow& w) { return wait_for_result(w) ? w.setup()->error_text() : QString("no result"); }

void choose(QComboBox* box, const char* text) {
  const int index = box->findText(text);
  QVERIFY2(index >= 0, text);
  box->setCurrentIndex(index);
}

}  // namespace

class TestMoeFlex : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { isolate_settings(); }

  // Flex with either backend shows as set, and the panel and the project file hand it back.
  void flexConfigShowsAndRoundTrips() {
    for (const FlexBackend b : {FlexBackend::DeepEP, FlexBackend::HybridEP}) {
      const Project p = flex_project(b);
      MainWindow w;
      w.setup()->set_project(p);
      QCOMPARE(dispatcher(w)->currentText(), QString("flex"));
      QCOMPARE(backend(w)->currentText(), QString::fromUtf8(to_string(b)));
      QVERIFY(backend(w)->isEnabled());
      QCOMPARE(backend(w)->objectName(), QString("moe_flex_dispatcher_backend"));
      QVERIFY(backend(w)->toolTip().contains("--moe-flex-dispatcher-backend"));
      const Project shown = w.setup()->project();
      QVERIFY(shown.config.moe == p.config.moe);
      QVERIFY(shown == p);
    }

    // A flex + hybridep project reloads unchanged, the backend written under Megatron-LM's name.
    const Project p = flex_project(FlexBackend::HybridEP);
    QCOMPARE(project_to_json(p).at("config").at("moe_flex_dispatcher_backend").get<std::string>(),
             std::string("hybridep"));
    QTemporaryDir dir;
    const std::string path = dir.filePath("flex.ccproj").toStdString();
    save_project(path, p);
    const Project back = load_project(path);
    QVERIFY(back == p);
    QVERIFY(back.config.moe.dispatcher == TokenDispatcher::Flex);
    QVERIFY(back.config.moe.flex_backend == FlexBackend::HybridEP);
  }

  // The backend is editable while the dispatcher is flex; another dispatcher greys it, keeping
  // its value.
  void backendFollowsTheDispatcher() {
    MainWindow w;
    w.setup()->set_project(flex_project(FlexBackend::DeepEP));
    choose(dispatcher(w), "alltoall");
    QVERIFY(!backend(w)->isEnabled());
    QVERIFY(w.setup()->project().config.moe.dispatcher == TokenDispatcher::AllToAll);
    QVERIFY(w.setup()->project().config.moe.flex_backend == FlexBackend::DeepEP);
    choose(dispatcher(w), "allgather");
    QVERIFY(!backend(w)->isEnabled());
    choose(dispatcher(w), "flex");
    QVERIFY(backend(w)->isEnabled());

    // A dense model with the defaults keeps the MoE rows, the backend's included, hidden.
    w.setup()->set_project(paper_project());
    QVERIFY(!backend(w)->isVisibleTo(w.setup()));
    QVERIFY(!backend(w)->isEnabled());
  }

  // DeepEP at EP 1 is refused (Megatron-Core's DeepEP dispatcher needs TP x EP > 1) beside the
  // dispatcher, the switch the rule hangs on; HybridEP at EP 1 runs.
  void deepEpWithEpOneIsRefusedBesideTheDispatcher() {
    MainWindow w;
    w.show();
    w.set_project(flex_project(FlexBackend::DeepEP));
    QCOMPARE(next_refusal(w), QString());
    QVERIFY(w.result()->config.moe.dispatcher == TokenDispatcher::Flex);

    field<QSpinBox>(w, "ep")->setValue(1);
    const QString shown = next_refusal(w);
    Project expected = with_ep(flex_project(FlexBackend::DeepEP), 1);
    const QString message = refusal(expected);
    QVERIFY2(message.contains("--expert-model-parallel-size") && message.contains("deepep"), qPrintable(message));
    QCOMPARE(shown, message);
    QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("moe_token_dispatcher_type"));
    QVERIFY(w.setup()->project() == expected);

    choose(backend(w), "hybridep");
    QCOMPARE(next_refusal(w), QString());
    QCOMPARE(w.result()->config.ep, 1);
    QVERIFY(w.result()->config.moe.flex_backend == FlexBackend::HybridEP);
  }

  // HybridEP beside another dispatcher is refused beside the backend, which stays editable so
  // the refusal can be fixed where it is shown.
  void hybridEpBesideAnotherDispatcherIsRefusedBesideTheBackend() {
    MainWindow w;
    w.show();
    w.set_project(flex_project(FlexBackend::HybridEP));
    QCOMPARE(next_refusal(w), QString());
    choose(dispatcher(w), "alltoall");
    const QString shown = next_refusal(w);
    Project expected = flex_project(FlexBackend::HybridEP);
    expected.config.moe.dispatcher = TokenDispatcher::AllToAll;
    const QString message = refusal(expected);
    QVERIFY2(message.contains("--moe-flex-dispatcher-backend"), qPrintable(message));
    QCOMPARE(shown, message);
    QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("moe_flex_dispatcher_backend"));
    QVERIFY(backend(w)->isEnabled());
    choose(backend(w), "deepep");
    QCOMPARE(next_refusal(w), QString());
    QVERIFY(!backend(w)->isEnabled());
  }

  // Both of Megatron-LM's ways of choosing the backend name the backend's field, so a refusal of
  // either lands beside it.
  void backendFlagsNameTheBackendField() {
    MainWindow w;
    for (const char* flag : {"--moe-flex-dispatcher-backend", "--moe-enable-deepep"})
      QCOMPARE(w.setup()->field(setup_field_of(flag)), static_cast<QWidget*>(backend(w)));
  }

  // A Megatron argument file with the flex dispatcher and its backend opens showing both.
  void megatronArgumentFileShowsFlexAndItsBackend() {
    QTemporaryDir dir;
    const QString path = dir.filePath("flex.args");
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("--tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 --expert-model-parallel-size 8\n"
               "--expert-tensor-parallel-size 1 --sequence-parallel --global-batch-size 256 --bf16\n"
               "--moe-token-dispatcher-type flex --moe-flex-dispatcher-backend hybridep\n");
    file.close();
    const std::vector<std::string> args{"--config", path.toStdString(), "--model", "mixtral-8x7b",
                                        "--cluster", "dgx-h100", "--gpus", "64"};
    CLI::App app;
    GuiFlags flags;
    flags.add_to(app);
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));  // CLI11 takes them last first
    const Project p = project_from_flags(flags, app);
    MainWindow w;
    w.setup()->set_project(p);
    QCOMPARE(dispatcher(w)->currentText(), QString("flex"));
    QCOMPARE(backend(w)->currentText(), QString("hybridep"));
    QVERIFY(backend(w)->isEnabled());
    QCOMPARE(field<QSpinBox>(w, "ep")->value(), 8);
    QVERIFY(w.setup()->project().config.moe == p.config.moe);
  }
};

QTEST_MAIN(TestMoeFlex)
#include "test_moe_flex.moc"
