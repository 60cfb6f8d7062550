// timeline_view.h — the Gantt chart of one simulated iteration: a row per pipeline stage
// (or TP group) and stream, bars coloured from timeline_palette.h (compute by task kind,
// communication by what it moves), idle compute time shown as bubble.
// Wheel zooms around the cursor, drag pans, W/S zoom, A/D pan, F fits (as in Perfetto);
// hovering shows a tooltip, a click selects a task. Drawing is level-of-detail: only
// visible tasks are visited (binary search per lane) and tasks narrower than a pixel merge
// into the pixel column they fall in, so a frame costs O(visible tasks + pixels).
#pragma once

#include <utility>
#include <vector>

#include <QColor>
#include <QImage>
#include <QPoint>
#include <QString>
#include <QWidget>

#include "gui/time_scale.h"
#include "sim/units.h"

class QScrollBar;

namespace cc::gui {

class TimelineModel;

class TimelineView : public QWidget {
  Q_OBJECT
 public:
  explicit TimelineView(TimelineModel* model, QWidget* parent = nullptr);

  const TimeScale& scale() const { return scale_; }
  void fit();  // the whole iteration (or fit_end, when later) across the plot
  // Compare: several views share one time axis; the one the user moves is copied to the rest.
  void set_scale(const TimeScale& scale);
  void set_fit_end(SimTime end) { fit_end_ = end; }
  int selected() const { return selected_; }
  void select(int event);
  int event_at(QPoint pos) const;  // -1 when no task is under pos
  QSize sizeHint() const override { return {900, 500}; }

  static constexpr int kLabelWidth = 118;
  static constexpr int kRulerHeight = 24;
  static constexpr int kLegendHeight = 26;  // one line of the legend

 signals:
  void selection_changed(int event);
  void scale_changed();  // zoom, pan or fit by the user (not by set_scale)

 protected:
  void paintEvent(QPaintEvent*) override;
  void resizeEvent(QResizeEvent*) override;
  void wheelEvent(QWheelEvent*) override;
  void mousePressEvent(QMouseEvent*) override;
  void mouseMoveEvent(QMouseEvent*) override;
  void mouseReleaseEvent(QMouseEvent*) override;
  void keyPressEvent(QKeyEvent*) override;
  bool event(QEvent*) override;

 private:
  void model_reset();
  void update_rows();
  QRect plot_rect() const;
  int lane_at(int y) const;  // -1 outside the lanes
  double row_height() const { return row_height_; }
  void zoom(double px, double factor);
  void pan(double dx_px);
  void draw_bars(QPainter& p, const QRect& plot);
  void draw_ruler(QPainter& p, const QRect& plot);
  void draw_legend(QPainter& p);
  std::vector<std::pair<QColor, QString>> legend_entries() const;
  std::vector<QPoint> legend_places(int* lines = nullptr) const;  // x in pixels, y in lines
  int legend_height() const;

  TimelineModel* model_;
  QScrollBar* vbar_;
  TimeScale scale_;
  double row_height_ = 18;
  int selected_ = -1;
  QPoint press_pos_;
  bool dragging_ = false;
  bool fitted_ = true;  // showing the whole iteration (kept on resize)
  SimTime fit_end_ = 0;
  QImage buffer_;  // the bars, written pixel by pixel
};

}  // namespace cc::gui
