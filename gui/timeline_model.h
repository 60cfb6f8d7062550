// timeline_model.h — the simulated iteration's tasks (SimResult::timeline) as a table
// model, one row per task, and grouped into lanes (one per pipeline stage or TP group and
// stream) sorted by start, which the Gantt view draws. Lanes and task kinds are the ones the
// timeline carries: a stream or kind the simulator adds shows without a change here.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <QAbstractTableModel>

#include "gui/timeline_palette.h"
#include "sim/simulator.h"

namespace cc::gui {

struct TimelineLane {
  int process = 0;
  QString label;              // e.g. "stage 3 compute"
  std::vector<int> events;    // indices into the timeline, ascending start (a stream is serial)
  bool compute = false;       // idle time on a compute lane is pipeline bubble
};

class TimelineModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { Process, Lane, Name, Kind, StartUs, DurationUs, ColumnCount };
  using QAbstractTableModel::QAbstractTableModel;

  void set_result(std::shared_ptr<const SimResult> result);
  const SimResult* result() const { return result_.get(); }
  const TimelineEvent& event(int i) const { return result_->timeline[static_cast<std::size_t>(i)]; }
  const std::vector<TimelineLane>& lanes() const { return lanes_; }
  // The palette rows (timeline_palette.h) the timeline's tasks are drawn with, in legend order.
  const std::vector<int>& legend() const { return legend_; }
  QRgb bar_rgb(int i) const { return timeline_palette()[swatch_[static_cast<std::size_t>(i)]].color.rgb(); }
  SimTime end_time() const { return end_; }
  // Layers each pass covers, for tooltips and details.
  int layers_of(const TimelineEvent& e) const;

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const SimResult> result_;
  std::vector<TimelineLane> lanes_;
  std::vector<int> legend_;
  std::vector<std::uint8_t> swatch_;  // each task's palette row
  SimTime end_ = 0;
  int replicas_ = 1;  // every-rank mode: processes per pipeline stage
};

// A stream as lanes name it: "compute", and each communication stream by its library name in
// capitals, as parallel dimensions are written ("P2P", "DP", "CP").
QString stream_name(StreamLane lane);
// "12.3 ms", "850 µs", "2.10 s": the unit that keeps 3 significant digits readable.
QString format_time_ns(double ns);

}  // namespace cc::gui
