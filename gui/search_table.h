// search_table.h — the ranked layouts of a search (SearchOutcome::ranked, best first) as a
// table model: rank, layout, EP, ETP, iteration time, TFLOP/s, MFU, peak GiB, headroom, days, tied.
// Sort and filter through a QSortFilterProxyModel; Qt::UserRole gives the sortable number.
#pragma once

#include <memory>

#include <QAbstractTableModel>

#include "sim/search.h"

namespace cc::gui {

class SearchTable : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Rank, Layout, Ep, Etp, IterationS, Tflops, Mfu, PeakGib, HeadroomGib, Days, Tied, ColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  void set_outcome(std::shared_ptr<const SearchOutcome> outcome);
  const SearchOutcome* outcome() const { return outcome_.get(); }
  const RankedLayout& layout(int row) const { return outcome_->ranked[static_cast<std::size_t>(row)]; }
  // The table as CSV (header line, one line per layout, best first).
  std::string to_csv() const;  // interop/search_csv.h, as `search --csv` writes it

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  double number(int row, int column) const;
  std::shared_ptr<const SearchOutcome> outcome_;
};

}  // namespace cc::gui
