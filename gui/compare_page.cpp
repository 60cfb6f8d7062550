#include "gui/compare_page.h"

#include <algorithm>

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChartView>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QHorizontalStackedBarSeries>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableWidget>
#include <QVBoxLayout>
#include <QValueAxis>
#include <QtConcurrent/QtConcurrentRun>

#include "gui/chart_axes.h"
#include "gui/breakdown_chart.h"
#include "gui/timeline_model.h"
#include "gui/timeline_view.h"
#include "sim/units.h"

namespace cc::gui {

namespace {

struct Figure {
  const char* name;
  double (*value)(const SimResult&);
  int digits;
  bool higher_is_better;
};

const Figure kFigures[] = {
    {"iteration time (s)", [](const SimResult& r) { return r.iteration_time_s; }, 3, false},
    {"tokens / s", [](const SimResult& r) { return r.tokens_per_s; }, 0, true},
    {"TFLOP/s per GPU", [](const SimResult& r) { return r.tflops_per_gpu; }, 1, true},
    {"MFU (%)", [](const SimResult& r) { return r.mfu * 100; }, 1, true},
    {"HFU (%)", [](const SimResult& r) { return r.hfu * 100; }, 1, true},
    {"training days", [](const SimResult& r) { return r.training_days; }, 1, false},
    {"peak memory (GiB)", [](const SimResult& r) { return r.peak_memory_gib; }, 1, false},
    {"bubble (%)", [](const SimResult& r) { return r.bubble_fraction * 100; }, 1, false},
};


// A new chart in place of the view's old one, with its title and legend placement. Emptying
// the old chart instead (removing its series and axes) left the previous axes' labels and
// grid drawn beside the new ones when the page was rebuilt while hidden (Qt 6 Charts).
QChart* fresh_chart(QChartView* view) {
  QChart* old = view->chart();
  auto* chart = new QChart;
  chart->setTitle(old->title());
  chart->legend()->setAlignment(old->legend()->alignment());
  view->setChart(chart);  // the view releases the old chart without deleting it
  delete old;
  return chart;
}

}  // namespace

ComparePage::ComparePage(QWidget* parent)
    : QWidget(parent), figures_(new QTableWidget), breakdown_(new QChartView), memory_(new QChartView),
      timelines_(new QSplitter(Qt::Vertical)), status_(new QLabel) {
  auto* buttons = new QHBoxLayout;
  auto* pin_current = new QPushButton(tr("Pin current setup"));
  auto* nemo = new QPushButton(tr("NeMo example: 175B full recompute vs SP + selective"));
  auto* clear_all = new QPushButton(tr("Clear"));
  buttons->addWidget(pin_current);
  buttons->addWidget(nemo);
  buttons->addWidget(clear_all);
  buttons->addWidget(status_, 1);
  status_->setWordWrap(true);
  connect(pin_current, &QPushButton::clicked, this, &ComparePage::pin_requested);
  connect(nemo, &QPushButton::clicked, this, &ComparePage::pin_nemo_example);
  connect(clear_all, &QPushButton::clicked, this, &ComparePage::clear);

  figures_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  figures_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  figures_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  figures_->setMinimumHeight(120);
  figures_->horizontalHeader()->setToolTip(tr("Click a setup's name to load it into the setup panel (and export it)"));
  connect(figures_->horizontalHeader(), &QHeaderView::sectionClicked, this, [this](int column) {
    if (column >= 0 && column < pinned()) emit setup_chosen(project(column));
  });
  figures_->setMaximumHeight(240);
  for (QChartView* v : {breakdown_, memory_}) {
    v->setRenderHint(QPainter::Antialiasing);
    v->chart()->legend()->setAlignment(Qt::AlignBottom);
    v->setMinimumHeight(310);  // room for the legend and axis labels; the page scrolls (main_window.cpp)
  }
  // Ten parts do not fit in a row under a half-width chart: one a line beside it, whole.
  breakdown_->chart()->legend()->setAlignment(Qt::AlignRight);
  breakdown_->chart()->setTitle(tr("Iteration time breakdown (s)"));
  breakdown_->setToolTip(tr("Iteration time breakdown in seconds; communication: the exposed part"));
  memory_->chart()->setTitle(tr("Memory per GPU by pipeline stage (GiB)"));

  auto* charts = new QSplitter(Qt::Horizontal);
  charts->addWidget(breakdown_);
  charts->addWidget(memory_);
  auto* top = new QSplitter(Qt::Vertical);
  top->addWidget(figures_);
  top->addWidget(charts);
  top->addWidget(timelines_);
  top->setStretchFactor(0, 2);
  top->setStretchFactor(1, 3);
  top->setStretchFactor(2, 4);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(buttons);
  layout->addWidget(top, 1);
}

ComparePage::~ComparePage() { delete_entries(); }

void ComparePage::delete_entries() {
  // Out of the list first: deleting a box makes the splitter resize the next one at once, whose
  // refit hands its scale to every listed view, and a deleted one must not be listed then.
  std::vector<Entry> going;
  going.swap(entries_);
  for (Entry& e : going) delete e.box;  // the views before the models they draw
}

TimelineView* ComparePage::timeline(int i) const { return entries_[static_cast<std::size_t>(i)].view; }

void ComparePage::pin(const Project& p, const QString& name) {
  ++pending_;
  const int generation = generation_;
  const int order = next_order_++;  // columns keep the order of pinning, not of finishing
  auto* watcher = new QFutureWatcher<SimulationOutcome>(this);
  connect(watcher, &QFutureWatcher<SimulationOutcome>::finished, this, [this, watcher, name, generation, order, p] {
    watcher->deleteLater();
    if (generation != generation_) return;
    --pending_;
    add(name, order, p, watcher->result());
  });
  watcher->setFuture(QtConcurrent::run([p] { return run_simulation(p); }));
}

void ComparePage::pin_nemo_example() {
  // GPT-3 175B on 1,024 A100-80GB, TP 8 x PP 16 x DP 8, global batch 1,536, 300B tokens.
  Project base = project_from_presets("gpt3-175b", "dgx-a100-80gb", 1024);
  base.config.tp = 8;
  base.config.pp = 16;
  base.config.global_batch = 1536;
  base.train_tokens = 300e9;
  base.config.attention = AttentionKernel::Unfused;  // those runs stored the s x s attention scores
  Project full = base;
  full.config.recompute = RecomputeGranularity::Full;
  Project sp = base;
  sp.config.sequence_parallel = true;
  sp.config.recompute = RecomputeGranularity::Selective;
  clear();
  pin(full, tr("full recompute"));
  pin(sp, tr("SP + selective"));
}

void ComparePage::clear() {
  ++generation_;
  pending_ = 0;
  next_order_ = 0;
  delete_entries();
  status_->clear();
  rebuild();
  emit changed();
}

void ComparePage::add(const QString& name, int order, const Project& project, const SimulationOutcome& outcome) {
  if (!outcome.ok()) {  // said in place, never in a modal box
    status_->setText(tr("“%1” was not pinned: %2").arg(name, QString::fromStdString(outcome.error)));
    emit changed();
    return;
  }
  status_->clear();
  Entry e;
  e.name = name;
  e.order = order;
  e.project = project;
  e.outcome = outcome;
  e.model = std::make_unique<TimelineModel>();
  e.view = new TimelineView(e.model.get());
  e.model->set_result(outcome.result);
  e.box = new QWidget;
  auto* v = new QVBoxLayout(e.box);
  v->setContentsMargins(0, 0, 0, 0);
  v->setSpacing(0);
  v->addWidget(new QLabel(QStringLiteral("<b>%1</b> — %2").arg(name.toHtmlEscaped(),
                                                                QString::fromStdString(outcome.result->config.summary()))));
  v->addWidget(e.view, 1);
  const auto at = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& x) { return x.order > order; });
  timelines_->insertWidget(static_cast<int>(at - entries_.begin()), e.box);
  TimelineView* view = e.view;
  connect(view, &TimelineView::scale_changed, this, [this, view] {
    for (Entry& other : entries_)
      if (other.view != view) other.view->set_scale(view->scale());
  });
  entries_.insert(at, std::move(e));
  rebuild();
  emit changed();
}

void ComparePage::rebuild() {
  // Figures: one column per pinned setup; the difference from the first in brackets.
  const int n = static_cast<int>(entries_.size());
  figures_->clear();
  figures_->setColumnCount(n);
  figures_->setRowCount(static_cast<int>(std::size(kFigures)) + 1);
  QStringList columns;
  for (const Entry& e : entries_) columns << e.name;
  figures_->setHorizontalHeaderLabels(columns);
  QStringList rows;
  rows << tr("layout");
  for (const Figure& f : kFigures) rows << tr(f.name);
  figures_->setVerticalHeaderLabels(rows);
  for (int c = 0; c < n; ++c) {
    const SimResult& r = *entries_[static_cast<std::size_t>(c)].outcome.result;
    figures_->setItem(0, c, new QTableWidgetItem(QString::fromStdString(r.config.summary())));
    for (int k = 0; k < static_cast<int>(std::size(kFigures)); ++k) {
      const Figure& f = kFigures[k];
      const double v = f.value(r), first = f.value(*entries_.front().outcome.result);
      QString text = QString::number(v, 'f', f.digits);
      if (c > 0 && first != 0) text += QStringLiteral("  (%1%2 %)").arg(v >= first ? "+" : "").arg((v / first - 1) * 100, 0, 'f', 1);
      auto* item = new QTableWidgetItem(text);
      item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      if (c > 0 && v != first) item->setForeground((v > first) == f.higher_is_better ? QColor(0x1b, 0x7f, 0x3b) : QColor(0xb0, 0x00, 0x20));
      figures_->setItem(k + 1, c, item);
    }
  }

  // Breakdowns: one stacked bar per setup on a common axis.
  QChart* b = fresh_chart(breakdown_);
  // Memory: each setup's per-stage totals as a group of bars.
  QChart* m = fresh_chart(memory_);
  for (Entry& e : entries_) e.view->set_fit_end(0);
  if (n == 0) return;
  auto* stacked = new QHorizontalStackedBarSeries;
  double longest = 0;
  SimTime end = 0;
  for (const Entry& e : entries_) {
    longest = std::max(longest, e.outcome.result->breakdown.total());
    end = std::max(end, e.model->end_time());
  }
  for (const BreakdownPart& part : breakdown_parts()) {
    auto* set = new QBarSet(QString::fromLatin1(part.name));
    set->setColor(part.color);
    for (const Entry& e : entries_) set->append(e.outcome.result->breakdown.*part.field);
    stacked->append(set);
  }
  b->addSeries(stacked);
  auto* names = new QBarCategoryAxis;
  for (const Entry& e : entries_) names->append(e.name);
  auto* seconds = new QValueAxis;
  seconds->setLabelFormat("%.3g");
  b->addAxis(seconds, Qt::AlignBottom);
  b->addAxis(names, Qt::AlignLeft);
  stacked->attachAxis(seconds);
  stacked->attachAxis(names);
  set_round_ticks(seconds, std::max(longest, 1e-9));

  auto* grouped = new QBarSeries;
  int stages = 0;
  double top = 0;
  for (const Entry& e : entries_) {
    auto* set = new QBarSet(e.name);
    for (const StageMemory& s : e.outcome.result->memory.stages) {
      set->append(s.bytes.total() / kGiB);
      top = std::max(top, s.bytes.total() / kGiB);
    }
    top = std::max(top, e.outcome.result->usable_gib);
    stages = std::max(stages, static_cast<int>(e.outcome.result->memory.stages.size()));
    grouped->append(set);
  }
  m->addSeries(grouped);
  auto* stage_axis = new QValueAxis;
  stage_axis->setTitleText(tr("pipeline stage"));
  auto* gib = new QValueAxis;
  gib->setLabelFormat("%.0f");
  m->addAxis(stage_axis, Qt::AlignBottom);
  m->addAxis(gib, Qt::AlignLeft);
  grouped->attachAxis(stage_axis);
  grouped->attachAxis(gib);
  set_round_ticks(gib, top * 1.1);
  set_group_number_ticks(stage_axis, stages);  // after attachAxis, which sets the range to the series'

  // Timelines on one axis: every view fits the longest iteration.
  for (Entry& e : entries_) {
    e.view->set_fit_end(end);
    e.view->fit();
  }
}

}  // namespace cc::gui
