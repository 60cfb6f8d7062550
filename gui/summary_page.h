// summary_page.h — the Summary tab: the headline numbers of a result (iteration time with
// its interval when the library gives one, tokens/s, TFLOP/s per GPU, MFU/HFU, days and
// GPU-hours for the token budget, fits, measured share) and the time breakdown bar.
#pragma once

#include <map>

#include <QWidget>

#include "sim/simulator.h"

class QGridLayout;
class QLabel;

namespace cc::gui {

class BreakdownChart;

class SummaryPage : public QWidget {
  Q_OBJECT
 public:
  explicit SummaryPage(QWidget* parent = nullptr);
  void set_result(const SimResult& result);
  void set_stale(bool stale, const QString& why = {});
  QString value(const QString& key) const;  // the text shown for a key, e.g. "iteration"
  BreakdownChart* breakdown() const { return breakdown_; }

 private:
  void add_value(const QString& key, const QString& title, int row, int column);

  std::map<QString, QLabel*> values_;
  QLabel* stale_;
  QLabel* heading_;
  QGridLayout* grid_;
  BreakdownChart* breakdown_;
};

}  // namespace cc::gui
