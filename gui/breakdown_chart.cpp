#include "gui/breakdown_chart.h"

#include <QBarCategoryAxis>
#include <QBarLegendMarker>
#include <QBarSet>
#include <QHorizontalStackedBarSeries>
#include <QValueAxis>

#include "gui/chart_axes.h"
#include "gui/timeline_palette.h"

namespace cc::gui {

const std::vector<BreakdownPart>& breakdown_parts() {
  static const std::vector<BreakdownPart> parts = {
      {"compute", &TimeBreakdown::compute, QColor(0x4e, 0x79, 0xa7)},
      {"recompute", &TimeBreakdown::recompute, QColor(0xa0, 0xcb, 0xe8)},
      {"TP comm", &TimeBreakdown::tp_comm, QColor(0xb0, 0x7a, 0xa1)},
      {"CP comm", &TimeBreakdown::cp_comm, QColor(0x00, 0x8c, 0x8c)},
      {"EP comm", &TimeBreakdown::ep_comm, expert_parallel_color()},
      {"PP comm", &TimeBreakdown::pp_comm, QColor(0x59, 0xa1, 0x4f)},
      {"DP comm", &TimeBreakdown::dp_comm, QColor(0xe1, 0x57, 0x59)},
      {"optimizer", &TimeBreakdown::optimizer, QColor(0x76, 0xb7, 0xb2)},
      {"host wait", &TimeBreakdown::host, QColor(0xed, 0xc9, 0x48)},
      {"bubble", &TimeBreakdown::bubble, QColor(0xba, 0xb0, 0xac)},
  };
  return parts;
}

BreakdownChart::BreakdownChart(QWidget* parent) : QChartView(parent) {
  setRenderHint(QPainter::Antialiasing);
  chart()->setTitle(tr("Where the iteration time goes (reported stage; communication: the exposed part)"));
  // Beside the bar, one part a line: ten parts with their seconds do not fit one row at 1280 pixels.
  chart()->legend()->setAlignment(Qt::AlignRight);
  setMinimumHeight(300);  // room for every part's legend line
  setMaximumHeight(360);
}

void BreakdownChart::set_breakdown(const TimeBreakdown& b) {
  QChart* c = chart();
  clear_chart(c);
  auto* series = new QHorizontalStackedBarSeries;
  legend_parts_.clear();
  for (const BreakdownPart& part : breakdown_parts()) {
    const double s = b.*part.field;
    if (s != 0) legend_parts_ << QString::fromLatin1(part.name);
    auto* set = new QBarSet(QStringLiteral("%1 %2 s").arg(QString::fromLatin1(part.name)).arg(s, 0, 'f', 3));
    set->setColor(part.color);
    set->append(s);
    series->append(set);
  }

  series->setBarWidth(0.6);
  c->addSeries(series);
  // A part that takes no time (CP on a layout without CP, EP on a dense model) keeps its bar of
  // zero but leaves the legend, which then fits a 1280-pixel window.
  for (QLegendMarker* marker : c->legend()->markers(series))
    if (auto* bar = qobject_cast<QBarLegendMarker*>(marker); bar && bar->barset()->at(0) == 0) marker->setVisible(false);
  auto* x = new QValueAxis;
  x->setTitleText(tr("seconds"));
  set_round_ticks(x, std::max(1e-9, b.total()));
  x->setLabelFormat("%.3g");
  auto* y = new QBarCategoryAxis;
  y->append(tr("iteration"));
  c->addAxis(x, Qt::AlignBottom);
  c->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
}

std::vector<double> BreakdownChart::drawn_seconds() const {
  std::vector<double> out;
  for (QAbstractSeries* s : chart()->series())
    if (auto* bars = qobject_cast<QHorizontalStackedBarSeries*>(s))
      for (QBarSet* set : bars->barSets()) out.push_back(set->at(0));
  return out;
}

}  // namespace cc::gui
