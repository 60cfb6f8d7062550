#include "gui/memory_page.h"

#include <algorithm>

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChartView>
#include <QHeaderView>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSplitter>
#include <QStackedBarSeries>
#include <QTableView>
#include <QVBoxLayout>
#include <QValueAxis>

#include "gui/chart_axes.h"
#include "gui/memory_table.h"
#include "sim/units.h"

namespace cc::gui {

namespace {

const QColor kPartColors[MemoryTable::kParts] = {QColor(0x4e, 0x79, 0xa7), QColor(0xf2, 0x8e, 0x2b),
                                                 QColor(0x59, 0xa1, 0x4f), QColor(0xe1, 0x57, 0x59),
                                                 QColor(0x76, 0xb7, 0xb2), QColor(0xba, 0xb0, 0xac)};


}  // namespace

MemoryPage::MemoryPage(MemoryTable* table, QWidget* parent)
    : QWidget(parent), table_(table), stages_(new QChartView), curves_(new QChartView), numbers_(new QTableView) {
  for (QChartView* v : {stages_, curves_}) {
    v->setRenderHint(QPainter::Antialiasing);
    v->chart()->legend()->setAlignment(Qt::AlignRight);
    v->setMinimumHeight(260);
  }
  stages_->chart()->setTitle(tr("Memory per GPU by pipeline stage (GiB)"));
  curves_->chart()->setTitle(tr("Memory over the iteration per stage (GiB); ● = peak"));
  numbers_->setModel(table_);
  numbers_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  numbers_->verticalHeader()->setDefaultSectionSize(20);
  numbers_->setMaximumHeight(160);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(stages_);
  split->addWidget(curves_);
  split->addWidget(numbers_);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 3);
  split->setStretchFactor(2, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);
  connect(table_, &QAbstractItemModel::modelReset, this, &MemoryPage::rebuild_bars);
}

void MemoryPage::rebuild_bars() {
  QChart* c = stages_->chart();
  clear_chart(c);
  const int stages = table_->rowCount();
  if (stages == 0) return;
  auto* bars = new QStackedBarSeries;
  for (int part = 0; part < MemoryTable::kParts; ++part) {
    auto* set = new QBarSet(table_->headerData(part, Qt::Horizontal).toString());
    set->setColor(kPartColors[part]);
    for (int s = 0; s < stages; ++s) set->append(table_->gib(s, part));
    bars->append(set);
  }
  c->addSeries(bars);
  // The usable-HBM line across all bars (HBM less the headroom a layout must leave free).
  auto* usable = new QLineSeries;
  usable->setName(tr("usable HBM %1 GiB").arg(table_->usable_gib(), 0, 'f', 1));
  usable->setPen(QPen(Qt::red, 2, Qt::DashLine));
  usable->append(-0.5, table_->usable_gib());
  usable->append(stages - 0.5, table_->usable_gib());
  c->addSeries(usable);

  auto* x = new QBarCategoryAxis;
  QStringList names;
  // Every stage's number when they fit; with many stages every k-th, so labels never overlap.
  const int every = stages > 24 ? (stages + 23) / 24 : 1;
  for (int s = 0; s < stages; ++s) names << ((s % every) == 0 ? QString::number(s) : QStringLiteral(" ").repeated(s % every));
  x->append(names);
  x->setTitleText(tr("pipeline stage"));
  auto* y = new QValueAxis;
  double top = table_->usable_gib();
  for (int s = 0; s < stages; ++s) top = std::max(top, table_->gib(s, MemoryTable::Total));
  y->setRange(0, top * 1.1);
  y->applyNiceNumbers();
  y->setTitleText(tr("GiB"));
  y->setLabelFormat("%.0f");
  c->addAxis(x, Qt::AlignBottom);
  c->addAxis(y, Qt::AlignLeft);
  bars->attachAxis(x);
  bars->attachAxis(y);
  // The line lives on a value x axis spanning the same range as the categories.
  auto* line_x = new QValueAxis;
  line_x->setRange(-0.5, stages - 0.5);
  line_x->setVisible(false);
  c->addAxis(line_x, Qt::AlignBottom);
  usable->attachAxis(line_x);
  usable->attachAxis(y);
}

std::vector<double> MemoryPage::drawn_totals_gib() const {
  std::vector<double> totals;
  for (QAbstractSeries* s : stages_->chart()->series())
    if (auto* bars = qobject_cast<QStackedBarSeries*>(s))
      for (QBarSet* set : bars->barSets()) {
        totals.resize(static_cast<std::size_t>(std::max<qsizetype>(static_cast<qsizetype>(totals.size()), set->count())), 0);
        for (int i = 0; i < set->count(); ++i) totals[static_cast<std::size_t>(i)] += set->at(i);
      }
  return totals;
}

void MemoryPage::set_curves(const std::vector<StageMemoryCurve>& curves, double usable_gib) {
  QChart* c = curves_->chart();
  clear_chart(c);
  if (curves.empty()) return;
  auto* x = new QValueAxis;
  auto* y = new QValueAxis;
  c->addAxis(x, Qt::AlignBottom);
  c->addAxis(y, Qt::AlignLeft);
  double end_ms = 0, top = usable_gib;
  auto* peaks = new QScatterSeries;
  peaks->setName(tr("peak"));
  peaks->setMarkerSize(8);
  peaks->setColor(Qt::black);
  const int n = static_cast<int>(curves.size());
  // Many stages: a colour ramp from blue (first) to red (last); the legend names a few.
  const int legend_every = n > 8 ? (n + 7) / 8 : 1;
  for (const StageMemoryCurve& curve : curves) {
    auto* line = new QLineSeries;
    line->setName(tr("stage %1").arg(curve.stage));
    const double f = n > 1 ? static_cast<double>(curve.stage) / (n - 1) : 0;
    line->setColor(QColor::fromHsvF(0.62 * (1 - f), 0.8, 0.8));
    // Steps: each level holds until the next point.
    for (std::size_t i = 0; i < curve.points.size(); ++i) {
      const double t = to_seconds(curve.points[i].time) * 1e3, gib = curve.points[i].bytes / kGiB;
      if (i > 0) line->append(t, curve.points[i - 1].bytes / kGiB);
      line->append(t, gib);
      end_ms = std::max(end_ms, t);
      top = std::max(top, gib);
    }
    peaks->append(to_seconds(curve.peak_time) * 1e3, curve.peak_bytes / kGiB);
    c->addSeries(line);
    line->attachAxis(x);
    line->attachAxis(y);
    if (curve.stage % legend_every != 0 && curve.stage != n - 1)
      for (auto* marker : c->legend()->markers(line)) marker->setVisible(false);
  }
  auto* usable = new QLineSeries;
  usable->setName(tr("usable HBM"));
  usable->setPen(QPen(Qt::red, 2, Qt::DashLine));
  usable->append(0, usable_gib);
  usable->append(end_ms, usable_gib);
  c->addSeries(usable);
  usable->attachAxis(x);
  usable->attachAxis(y);
  c->addSeries(peaks);
  peaks->attachAxis(x);
  peaks->attachAxis(y);
  set_round_ticks(x, std::max(end_ms, 1e-6));
  x->setTitleText(tr("time in the iteration (ms)"));
  x->setLabelFormat("%.0f");
  y->setRange(0, top * 1.1);
  y->applyNiceNumbers();
  y->setTitleText(tr("GiB"));
  y->setLabelFormat("%.0f");
}

}  // namespace cc::gui
