#include "gui/summary_page.h"

#include <QGridLayout>
#include <QLabel>
#include <QLocale>
#include <QVBoxLayout>

#include "gui/breakdown_chart.h"

namespace cc::gui {

namespace {

// The library may carry a prediction interval (cross-validated error of the cost source);
// shown when this build's SimResult has one.
template <typename R>
QString with_interval(const R& r, double value, double (R::*low)() const, double (R::*high)() const, int digits) {
  if constexpr (requires { r.interval; }) {
    if (r.interval)
      return QStringLiteral("%1  (%2 – %3)")
          .arg(value, 0, 'f', digits)
          .arg((r.*low)(), 0, 'f', digits)
          .arg((r.*high)(), 0, 'f', digits);
  }
  return QString::number(value, 'f', digits);
}

template <typename R>
QString iteration_text(const R& r) {
  if constexpr (requires { r.iteration_time_low_s(); })
    return with_interval(r, r.iteration_time_s, &R::iteration_time_low_s, &R::iteration_time_high_s, 3) + " s";
  else
    return QString::number(r.iteration_time_s, 'f', 3) + " s";
}

template <typename R>
QString days_text(const R& r) {
  if (r.training_days <= 0) return QObject::tr("— (set a token budget)");
  if constexpr (requires { r.training_days_low(); })
    return with_interval(r, r.training_days, &R::training_days_low, &R::training_days_high, 1) + " days";
  else
    return QString::number(r.training_days, 'f', 1) + " days";
}

}  // namespace

SummaryPage::SummaryPage(QWidget* parent)
    : QWidget(parent), stale_(new QLabel), heading_(new QLabel), grid_(new QGridLayout), breakdown_(new BreakdownChart) {
  auto* layout = new QVBoxLayout(this);
  heading_->setWordWrap(true);
  QFont hf = heading_->font();
  hf.setPointSizeF(hf.pointSizeF() * 1.15);
  hf.setBold(true);
  heading_->setFont(hf);
  layout->addWidget(heading_);
  stale_->setWordWrap(true);
  stale_->setStyleSheet("QLabel { background: #fff3cd; color: #664d03; padding: 6px; border: 1px solid #ffe69c; }");
  stale_->hide();
  layout->addWidget(stale_);
  grid_->setHorizontalSpacing(28);
  grid_->setVerticalSpacing(10);
  // Three columns, read left to right.
  const std::pair<const char*, QString> cells[] = {
      {"iteration", tr("Iteration time")},     {"tokens", tr("Tokens / s")},
      {"tflops", tr("TFLOP/s per GPU (model)")}, {"mfu", tr("MFU / HFU")},
      {"days", tr("Training days")},           {"gpu_hours", tr("GPU-hours")},
      {"memory", tr("Peak memory / usable")},  {"fits", tr("Fits in memory")},
      {"measured", tr("Measured share of the prediction")}, {"bubble", tr("Pipeline bubble")},
      {"costs", tr("Cost source")},            {"coverage", tr("Coverage")}};
  for (int i = 0; i < static_cast<int>(std::size(cells)); ++i)
    add_value(QString::fromLatin1(cells[i].first), cells[i].second, i / 3, i % 3);
  layout->addLayout(grid_);
  layout->addWidget(breakdown_);
  layout->addStretch(1);
}

void SummaryPage::add_value(const QString& key, const QString& title, int row, int column) {
  auto* box = new QWidget;
  auto* v = new QVBoxLayout(box);
  v->setContentsMargins(0, 0, 0, 0);
  v->setSpacing(2);
  auto* t = new QLabel(title);
  t->setStyleSheet("QLabel { color: #555; }");
  auto* value = new QLabel(QStringLiteral("—"));
  QFont f = value->font();
  f.setPointSizeF(f.pointSizeF() * 1.5);
  value->setFont(f);
  value->setWordWrap(true);
  value->setTextInteractionFlags(Qt::TextSelectableByMouse);
  if (key == "costs" || key == "coverage") value->setFont(font());  // long text: normal size
  v->addWidget(t);
  v->addWidget(value);
  grid_->addWidget(box, row, column);
  values_[key] = value;
}

void SummaryPage::set_result(const SimResult& r) {
  heading_->setText(QStringLiteral("%1 on %2 × %3 (%4) — %5")
                        .arg(QString::fromStdString(r.model.name))
                        .arg(r.config.gpus())
                        .arg(QString::fromStdString(r.cluster.gpu.name), QString::fromStdString(r.cluster.name),
                             QString::fromStdString(r.config.summary())));
  values_["iteration"]->setText(iteration_text(r));
  values_["tokens"]->setText(QLocale().toString(r.tokens_per_s, 'f', 0));
  values_["tflops"]->setText(QString::number(r.tflops_per_gpu, 'f', 1));
  values_["mfu"]->setText(QStringLiteral("%1 % / %2 %").arg(r.mfu * 100, 0, 'f', 1).arg(r.hfu * 100, 0, 'f', 1));
  values_["days"]->setText(days_text(r));
  values_["gpu_hours"]->setText(r.training_days > 0 ? QLocale().toString(r.training_days * 24 * r.config.gpus(), 'f', 0)
                                                    : QStringLiteral("—"));
  values_["memory"]->setText(QStringLiteral("%1 / %2 GiB (stage %3)")
                                 .arg(r.peak_memory_gib, 0, 'f', 1)
                                 .arg(r.usable_gib, 0, 'f', 1)
                                 .arg(r.memory.peak_stage));
  values_["fits"]->setText(r.fits ? tr("yes") : tr("<span style='color:#b00020'>no</span>"));
  values_["measured"]->setText(QStringLiteral("%1 %").arg(r.measured_fraction * 100, 0, 'f', 0));
  values_["bubble"]->setText(QStringLiteral("%1 %").arg(r.bubble_fraction * 100, 0, 'f', 1));
  values_["costs"]->setText(QString::fromStdString(r.cost_source));
  values_["coverage"]->setText(r.cost_coverage.empty() ? tr("all analytic") : QString::fromStdString(r.cost_coverage));
  breakdown_->set_breakdown(r.breakdown);
}

void SummaryPage::set_stale(bool stale, const QString& why) {
  stale_->setVisible(stale);
  stale_->setText(tr("Stale: these numbers are from the last valid setup. %1").arg(why));
}

QString SummaryPage::value(const QString& key) const {
  const auto it = values_.find(key);
  return it == values_.end() ? QString() : it->second->text();
}

}  // namespace cc::gui
