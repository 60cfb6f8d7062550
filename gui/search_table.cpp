#include "gui/search_table.h"

#include <fmt/format.h>

#include <QColor>

#include "interop/search_csv.h"

namespace cc::gui {

namespace {
const char* const kHeaders[] = {"rank", "layout", "EP", "ETP", "iteration (s)", "TFLOP/s/GPU", "MFU", "peak GiB",
                                "headroom GiB", "days", "tied"};
}

void SearchTable::set_outcome(std::shared_ptr<const SearchOutcome> outcome) {
  beginResetModel();
  outcome_ = std::move(outcome);
  endResetModel();
}

int SearchTable::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !outcome_ ? 0 : static_cast<int>(outcome_->ranked.size());
}

int SearchTable::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

double SearchTable::number(int row, int column) const {
  const SimResult& r = layout(row).result;
  switch (column) {
    case Rank: return row + 1;
    case Ep: return r.config.ep;
    case Etp: return r.config.expert_tp();  // ETP as the run has it: TP when not given
    case IterationS: return r.iteration_time_s;
    case Tflops: return r.tflops_per_gpu;
    case Mfu: return r.mfu;
    case PeakGib: return r.peak_memory_gib;
    case HeadroomGib: return r.usable_gib - r.peak_memory_gib;
    case Days: return r.training_days;
    case Tied: return layout(row).tied ? 1 : 0;
    default: return 0;
  }
}

QVariant SearchTable::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= ColumnCount) return {};
  const int row = index.row(), col = index.column();
  if (role == Qt::UserRole) {
    if (col == Layout) return QString::fromStdString(layout(row).result.config.summary());
    return number(row, col);
  }
  if (role == Qt::DisplayRole) {
    switch (col) {
      case Rank: return row + 1;
      case Layout: return QString::fromStdString(layout(row).result.config.summary());
      case Ep:
      case Etp: return static_cast<int>(number(row, col));
      case IterationS: return QString::number(number(row, col), 'f', 3);
      case Tflops: return QString::number(number(row, col), 'f', 1);
      case Mfu: return QStringLiteral("%1 %").arg(number(row, col) * 100, 0, 'f', 1);
      case PeakGib:
      case HeadroomGib: return QString::number(number(row, col), 'f', 1);
      case Days: return layout(row).result.training_days > 0 ? QString::number(number(row, col), 'f', 1) : QString();
      case Tied: return layout(row).tied ? QStringLiteral("=") : QString();
      default: return {};
    }
  }
  if (role == Qt::BackgroundRole && layout(row).tied) return QColor(0xfd, 0xf2, 0xd0);
  if (role == Qt::TextAlignmentRole && col != Layout) return int(Qt::AlignRight | Qt::AlignVCenter);
  return {};
}

QVariant SearchTable::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal || section < 0 || section >= ColumnCount) return {};
  return QString::fromLatin1(kHeaders[section]);
}

std::string SearchTable::to_csv() const { return outcome_ ? search_csv(*outcome_) : search_csv(SearchOutcome{}); }

}  // namespace cc::gui
