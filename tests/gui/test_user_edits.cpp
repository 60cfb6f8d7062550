// The GUI does only what the user asked for: no edit by a stray wheel, no doubtful file
// without a question, no edit lost without one. Under the offscreen platform; the window's
// questions are answered by the tests' callbacks.
#include <QAbstractButton>
#include <QAbstractSpinBox>
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QScrollArea>
#include <QScrollBar>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <QWheelEvent>

#include "gui/main_window.h"
#include "gui/search_page.h"
#include "gui/setup_panel.h"
#include "tests/gui/gui_test_support.h"

using namespace cc;
using namespace cc::gui;

namespace {

// One notch of the wheel down over the middle of `target`, delivered as Qt delivers it (through
// QApplication::notify, which hands an ignored wheel event on to the parent).
void roll_down(QWidget* target) {
  const QPointF local(target->width() / 2.0, target->height() / 2.0);
  QWheelEvent e(local, target->mapToGlobal(local), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                Qt::NoScrollPhase, false);
  QApplication::sendEvent(target, &e);
}

QScrollArea* scroll_area_around(QWidget* w) {
  for (QWidget* p = w->parentWidget(); p; p = p->parentWidget())
    if (auto* area = qobject_cast<QScrollArea*>(p)) return area;
  return nullptr;
}

// GPT-3 175B at TP 1 x PP 16: about 11B parameters a GPU, with their gradients and Adam state
// some 170 GiB against the A100's 80.
Project unfit_project() {
  Project p = paper_project();
  p.config.tp = 1;
  p.config.sequence_parallel = false;
  return p;
}

// The window's Save / Discard / Cancel question, answered with `answer` and counted.
struct SaveAnswers {
  int asked = 0;
  QMessageBox::StandardButton answer = QMessageBox::Cancel;
  void answer_in(MainWindow& w) {
    w.set_questions({}, [this](const QString&) {
      ++asked;
      return answer;
    });
  }
};

QByteArray contents(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestUserEdits : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { isolate_settings(); }

  void wheelOverAnUnfocusedFieldScrollsInsteadOfEditing() {
    MainWindow w;
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    w.resize(1280, 800);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    auto* tp = field<QSpinBox>(w, "tp");
    auto* recompute = field<QComboBox>(w, "recompute");
    QScrollArea* area = scroll_area_around(w.setup());
    QVERIFY(area);
    QVERIFY(area->verticalScrollBar()->maximum() > 0);  // the panel is taller than the window
    QVERIFY(!tp->hasFocus() && !recompute->hasFocus());
    const int scrolled_before = area->verticalScrollBar()->value();
    roll_down(tp);
    roll_down(recompute);
    QCOMPARE(tp->value(), 8);
    QCOMPARE(recompute->currentText(), QString("selective"));
    QVERIFY(area->verticalScrollBar()->value() > scrolled_before);  // the panel took the wheel

    // The Search page's own fields likewise.
    const auto search_spins = w.search_page()->findChildren<QSpinBox*>();
    const auto search_combos = w.search_page()->findChildren<QComboBox*>();
    QVERIFY(!search_spins.isEmpty() && !search_combos.isEmpty());
    for (QSpinBox* s : search_spins) {
      const int before = s->value();
      roll_down(s);
      QCOMPARE(s->value(), before);
    }
    for (QComboBox* c : search_combos) {
      const int before = c->currentIndex();
      roll_down(c);
      QCOMPARE(c->currentIndex(), before);
    }

    // The same event does edit a field the user has focused: the guard is what kept the values.
    tp->setFocus();
    QVERIFY(tp->hasFocus());
    roll_down(tp);
    QCOMPARE(tp->value(), 7);
    recompute->setFocus();
    roll_down(recompute);
    QCOMPARE(recompute->currentText(), QString("full"));
  }

  void exportingALayoutThatDoesNotFitAsksFirst() {
    MainWindow w;
    QStringList asked;
    bool answer = false;
    w.set_questions([&](const QString& q) {
      asked << q;
      return answer;
    }, {});
    QTemporaryDir dir;

    // A layout that fits is written without a question.
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    QVERIFY(w.result()->fits);
    w.export_layout(dir.filePath("fits.json"), "json");
    QVERIFY(asked.isEmpty());
    QVERIFY(QFile::exists(dir.filePath("fits.json")));

    w.set_project(unfit_project());
    QVERIFY(wait_for_result(w));
    QVERIFY(!w.stale());
    QVERIFY(!w.result()->fits);
    const std::pair<QString, QString> formats[] = {{"json", "unfit.json"}, {"megatron", "unfit.txt"},
                                                   {"nemo", "unfit.yaml"}};
    for (const auto& [format, name] : formats) {
      asked.clear();
      answer = false;
      w.export_layout(dir.filePath(name), format);
      QCOMPARE(asked.size(), 1);
      QVERIFY(asked.front().contains("does not fit"));
      QVERIFY(!QFile::exists(dir.filePath(name)));
      answer = true;
      w.export_layout(dir.filePath(name), format);
      QCOMPARE(asked.size(), 2);
      QVERIFY(QFile::exists(dir.filePath(name)));
    }
  }

  void editsMarkTheTitleUntilSaved() {
    MainWindow w;
    QVERIFY(w.windowTitle().contains("[*]"));
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    QVERIFY(!w.isWindowModified());  // opened, not edited
    field<QSpinBox>(w, "micro_batch")->setValue(2);
    QVERIFY(w.isWindowModified());
    QTemporaryDir dir;
    w.save_project(dir.filePath("run"));  // Save As without an extension
    QVERIFY(QFile::exists(dir.filePath("run.ccproj")));
    QVERIFY(!QFile::exists(dir.filePath("run")));
    QVERIFY(!w.isWindowModified());
    QCOMPARE(load_project(dir.filePath("run.ccproj").toStdString()).config.micro_batch, 2);
    w.save_project(dir.filePath("named.json"));  // an extension the user typed stays
    QVERIFY(QFile::exists(dir.filePath("named.json")));
    QVERIFY(!QFile::exists(dir.filePath("named.json.ccproj")));
    field<QSpinBox>(w, "micro_batch")->setValue(1);
    QVERIFY(w.isWindowModified());
    w.set_questions({}, [](const QString&) { return QMessageBox::Discard; });
    w.open_project(dir.filePath("run.ccproj"));
    QVERIFY(!w.isWindowModified());
  }

  void megatronExportNamedAfterItsScriptWritesNoDoubleSuffix() {
    MainWindow w;
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    QTemporaryDir dir;
    w.export_layout(dir.filePath("launch.sh"), "megatron");
    QVERIFY(!QFile::exists(dir.filePath("launch.sh.sh")));
    QVERIFY(contents(dir.filePath("launch.sh")).startsWith("#!/usr/bin/env bash"));  // the script has the name
    QVERIFY(contents(dir.filePath("launch")).contains("--tensor-model-parallel-size 8"));
    w.export_layout(dir.filePath("args"), "megatron");
    QVERIFY(contents(dir.filePath("args.txt")).contains("--tensor-model-parallel-size 8"));
    QVERIFY(contents(dir.filePath("args.txt.sh")).startsWith("#!/usr/bin/env bash"));
  }

  void closingWithUnsavedEditsAsks() {
    MainWindow w;
    SaveAnswers questions;
    questions.answer_in(w);
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    field<QSpinBox>(w, "micro_batch")->setValue(2);

    QVERIFY(!w.close());  // Cancel: the window and the edit stay
    QCOMPARE(questions.asked, 1);
    QVERIFY(w.isVisible());
    QCOMPARE(field<QSpinBox>(w, "micro_batch")->value(), 2);

    QAction* quit = nullptr;  // File > Quit (Ctrl+Q) asks the same
    for (QAction* a : w.findChildren<QAction*>())
      if (a->text() == "&Quit") quit = a;
    QVERIFY(quit);
    quit->trigger();
    QCOMPARE(questions.asked, 2);
    QVERIFY(w.isVisible());

    // Save, to the project's own file: written, then closed.
    QTemporaryDir dir;
    w.save_project(dir.filePath("p.ccproj"));
    field<QSpinBox>(w, "micro_batch")->setValue(4);
    questions.answer = QMessageBox::Save;
    QVERIFY(w.close());
    QCOMPARE(questions.asked, 3);
    QCOMPARE(load_project(dir.filePath("p.ccproj").toStdString()).config.micro_batch, 4);

    // Discard closes without writing; nothing unsaved closes without asking.
    w.show();
    field<QSpinBox>(w, "micro_batch")->setValue(1);
    questions.answer = QMessageBox::Discard;
    QVERIFY(w.close());
    QCOMPARE(questions.asked, 4);
    QCOMPARE(load_project(dir.filePath("p.ccproj").toStdString()).config.micro_batch, 4);
    w.show();
    w.save_project(dir.filePath("p.ccproj"));
    QVERIFY(w.close());
    QCOMPARE(questions.asked, 4);
  }

  // Opening a project or importing a layout replaces the whole setup: unsaved edits are asked
  // about as closing asks, and Cancel keeps them.
  void openingOrImportingWithUnsavedEditsAsks() {
    MainWindow w;
    SaveAnswers questions;
    questions.answer_in(w);
    w.set_project(paper_project());  // micro batch 1
    QVERIFY(wait_for_result(w));
    QTemporaryDir dir;
    const QString project = dir.filePath("one.ccproj");
    const QString layout = dir.filePath("layout.json");
    w.save_project(project);
    w.export_layout(layout, "json");
    auto* micro = field<QSpinBox>(w, "micro_batch");
    micro->setValue(2);

    w.open_project(project);  // Cancel: the edit stays, still unsaved
    QCOMPARE(questions.asked, 1);
    w.import_layout(layout);
    QCOMPARE(questions.asked, 2);
    QCOMPARE(micro->value(), 2);
    QVERIFY(w.isWindowModified());
    QCOMPARE(load_project(project.toStdString()).config.micro_batch, 1);

    questions.answer = QMessageBox::Discard;  // the file's setup, the edit gone and the file untouched
    w.open_project(project);
    QCOMPARE(questions.asked, 3);
    QCOMPARE(micro->value(), 1);
    QVERIFY(!w.isWindowModified());
    QCOMPARE(load_project(project.toStdString()).config.micro_batch, 1);

    micro->setValue(4);  // Save writes the edit to the project's file, then the layout comes in
    questions.answer = QMessageBox::Save;
    w.import_layout(layout);
    QCOMPARE(questions.asked, 4);
    QCOMPARE(load_project(project.toStdString()).config.micro_batch, 4);
    QCOMPARE(micro->value(), 1);

    w.save_project(project);  // nothing unsaved: no question
    w.open_project(project);
    QCOMPARE(questions.asked, 4);
  }

  // A cost database that is not there is refused where it is named; the analytic model never
  // stands in for it.
  void missingCostDatabaseIsAnErrorNotAnotherCostSource() {
    MainWindow w;
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    const double before = w.result()->iteration_time_s;
    QTemporaryDir dir;
    const QString missing = dir.filePath("no-such-costs.json");
    Project p = paper_project();
    p.costs_file = missing.toStdString();
    w.set_project(p);
    QVERIFY(wait_for_result(w));
    QCOMPARE(QString::fromStdString(w.setup()->project().costs_file), missing);
    QVERIFY(w.stale());
    QCOMPARE(w.result()->iteration_time_s, before);  // the last valid result stays, marked stale
    QVERIFY(w.setup()->error_text().contains("no-such-costs.json"));
    QCOMPARE(w.setup()->error_field_widget(), w.setup()->field("costs"));
  }

  void missingProjectFileIsAnErrorAndChangesNothing() {
    MainWindow w;
    w.set_project(paper_project());
    QVERIFY(wait_for_result(w));
    const Project before = w.setup()->project();
    QTemporaryDir dir;
    bool refused = false;
    try {
      w.open_project(dir.filePath("gone.ccproj"));
    } catch (const SpecError& e) {
      refused = QString(e.what()).contains("gone.ccproj");
    }
    QVERIFY(refused);
    QVERIFY(w.setup()->project() == before);
    QVERIFY(w.result());
  }

  // The MLP's activation is shown as it is and passes through as it is: a GeGLU (Gemma) or
  // squared-ReLU (Nemotron-4) model is not turned into GeLU by the setup, and a choice made in
  // the panel is the model's.
  void everyActivationPassesThroughTheSetupUnchanged() {
    MainWindow w;
    auto* combo = qobject_cast<QComboBox*>(w.setup()->field("activation"));
    QVERIFY(combo);
    for (const Activation a : {Activation::GeLU, Activation::SwiGLU, Activation::GeGLU, Activation::SquaredReLU}) {
      Project p = paper_project();
      p.model.activation = a;
      p.model.mlp_bias = false;
      w.setup()->set_project(p);
      QCOMPARE(combo->currentIndex(), static_cast<int>(a));
      const Project back = w.setup()->project();
      QVERIFY(back.model.activation == a);
      QVERIFY(!back.model.dense_mlp_bias());
    }
    Project p = paper_project();
    p.model.mlp_bias = false;
    w.setup()->set_project(p);
    combo->setCurrentIndex(combo->findText("squared ReLU"));
    QVERIFY(w.setup()->project().model.activation == Activation::SquaredReLU);
  }

  // Every editor of the setup says what it is: the flag it maps to and what that means.
  void everySetupFieldHasATooltip() {
    MainWindow w;
    QStringList bare;
    const auto editors = w.setup()->findChildren<QWidget*>();
    int checked = 0;
    for (QWidget* e : editors) {
      const bool editor = qobject_cast<QAbstractSpinBox*>(e) || qobject_cast<QComboBox*>(e) ||
                          qobject_cast<QAbstractButton*>(e) ||
                          (qobject_cast<QLineEdit*>(e) && !qobject_cast<QAbstractSpinBox*>(e->parentWidget()) &&
                           !qobject_cast<QComboBox*>(e->parentWidget()));  // a spin box's own line edit is the box
      if (!editor) continue;
      ++checked;
      if (e->toolTip().trimmed().isEmpty()) {
        const auto* form = qobject_cast<QFormLayout*>(e->parentWidget()->layout());
        QWidget* label = form ? form->labelForField(e) : nullptr;
        const auto* text = qobject_cast<QLabel*>(label);
        const auto* button = qobject_cast<QAbstractButton*>(e);
        bare << (text ? text->text() : button ? button->text() : e->metaObject()->className());
      }
    }
    QVERIFY(checked > 60);
    QVERIFY2(bare.isEmpty(), qPrintable("no tooltip: " + bare.join(", ")));
    // The Megatron-LM flag is named where there is one.
    for (const char* name : {"tp", "pp", "micro_batch", "global_batch", "recompute", "sequence_parallel",
                             "distributed_optimizer", "virtual_stages"})
      QVERIFY2(w.setup()->field(name)->toolTip().startsWith("--"), name);
  }
};

QTEST_MAIN(TestUserEdits)
#include "test_user_edits.moc"
