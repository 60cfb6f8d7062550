#include "gui/timeline_view.h"

#include <algorithm>
#include <cmath>

#include <QKeyEvent>
#include <QPainter>
#include <QScrollBar>
#include <QToolTip>

#include "gui/timeline_model.h"
#include "gui/timeline_palette.h"

namespace cc::gui {

namespace {

constexpr double kMinRowHeight = 3;
constexpr double kMaxRowHeight = 20;

// First task of the lane that ends after `t`: a stream runs its tasks one after another,
// so ends ascend with starts.
std::vector<int>::const_iterator first_visible(const TimelineModel& m, const TimelineLane& lane, double t) {
  return std::partition_point(lane.events.begin(), lane.events.end(), [&](int i) {
    const auto& e = m.event(i);
    return static_cast<double>(e.start + e.duration) <= t;
  });
}

QString tooltip_text(const TimelineModel& m, int i) {
  const TimelineEvent& e = m.event(i);
  QString text = QStringLiteral("<b>%1</b> — %2<br>process %3, %4 stream")
                     .arg(QString::fromStdString(e.name).toHtmlEscaped(), kind_label(e.kind))
                     .arg(e.process)
                     .arg(stream_name(e.lane));
  if (const int layers = m.layers_of(e)) text += QStringLiteral("<br>%1 layers").arg(layers);
  text += QStringLiteral("<br>start %1, duration %2")
              .arg(format_time_ns(static_cast<double>(e.start)), format_time_ns(static_cast<double>(e.duration)));
  return text;
}

}  // namespace

TimelineView::TimelineView(TimelineModel* model, QWidget* parent)
    : QWidget(parent), model_(model), vbar_(new QScrollBar(Qt::Vertical, this)) {
  setFocusPolicy(Qt::StrongFocus);
  setMouseTracking(true);
  setMinimumSize(400, 200);
  connect(model_, &QAbstractItemModel::modelReset, this, &TimelineView::model_reset);
  connect(vbar_, &QScrollBar::valueChanged, this, qOverload<>(&QWidget::update));
}

void TimelineView::model_reset() {
  if (selected_ >= model_->rowCount()) selected_ = -1;
  update_rows();
  fit();
}

QRect TimelineView::plot_rect() const {
  const int bar = vbar_->isVisible() ? vbar_->width() : 0;
  return QRect(kLabelWidth, kRulerHeight, std::max(1, width() - kLabelWidth - bar),
               std::max(1, height() - kRulerHeight - legend_height()));
}

void TimelineView::update_rows() {
  const int lanes = static_cast<int>(model_->lanes().size());
  const int h = std::max(1, height() - kRulerHeight - legend_height());
  row_height_ = lanes > 0 ? std::clamp(static_cast<double>(h) / lanes, kMinRowHeight, kMaxRowHeight) : kMaxRowHeight;
  const int visible = static_cast<int>(h / row_height_);
  vbar_->setRange(0, std::max(0, lanes - visible));
  vbar_->setPageStep(std::max(1, visible));
  vbar_->setVisible(lanes > visible);
  vbar_->setGeometry(width() - vbar_->sizeHint().width(), kRulerHeight, vbar_->sizeHint().width(), h);
}

void TimelineView::resizeEvent(QResizeEvent*) {
  update_rows();
  if (fitted_) fit();  // an untouched view keeps showing the whole iteration
}

void TimelineView::fit() {
  scale_.fit(0, static_cast<double>(std::max({model_->end_time(), fit_end_, SimTime{1}})), plot_rect().width());
  fitted_ = true;
  update();
  emit scale_changed();
}

void TimelineView::set_scale(const TimeScale& scale) {
  if (scale.origin_ns == scale_.origin_ns && scale.ns_per_px == scale_.ns_per_px) return;
  scale_ = scale;
  fitted_ = false;
  update();
}

void TimelineView::select(int event) {
  if (event == selected_) return;
  selected_ = event;
  update();
  emit selection_changed(event);
}

int TimelineView::lane_at(int y) const {
  const QRect plot = plot_rect();
  if (y < plot.top() || y >= plot.bottom()) return -1;
  const int lane = vbar_->value() + static_cast<int>((y - plot.top()) / row_height_);
  return lane < static_cast<int>(model_->lanes().size()) ? lane : -1;
}

int TimelineView::event_at(QPoint pos) const {
  const QRect plot = plot_rect();
  const int l = lane_at(pos.y());
  if (l < 0 || pos.x() < plot.left()) return -1;
  const TimelineLane& lane = model_->lanes()[static_cast<std::size_t>(l)];
  // Within a pixel either side, so a merged sub-pixel task can still be picked.
  const double t0 = scale_.to_time(pos.x() - plot.left() - 1), t1 = scale_.to_time(pos.x() - plot.left() + 1);
  for (auto it = first_visible(*model_, lane, t0); it != lane.events.end(); ++it) {
    const auto& e = model_->event(*it);
    if (static_cast<double>(e.start) > t1) break;
    return *it;
  }
  return -1;
}

void TimelineView::zoom(double px, double factor) {
  // No closer than 1 ns per 10 px, no farther than the whole iteration in 10 px.
  const double far = std::max(1.0, static_cast<double>(model_->end_time()) / 10);
  scale_.zoom_around(px, factor, 0.1, far);
  fitted_ = false;
  update();
  emit scale_changed();
}

void TimelineView::pan(double dx_px) {
  scale_.pan_px(dx_px);
  fitted_ = false;
  update();
  emit scale_changed();
}

void TimelineView::wheelEvent(QWheelEvent* e) {
  const double delta = e->angleDelta().y();
  if (e->modifiers() & Qt::ShiftModifier) {
    vbar_->setValue(vbar_->value() - static_cast<int>(delta / 40));
  } else {
    zoom(e->position().x() - plot_rect().left(), std::pow(1.0015, delta));
  }
  e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent* e) {
  press_pos_ = e->pos();
  dragging_ = false;
  setFocus();
}

void TimelineView::mouseMoveEvent(QMouseEvent* e) {
  if (!(e->buttons() & Qt::LeftButton)) return;
  const QPoint d = e->pos() - press_pos_;
  if (!dragging_ && d.manhattanLength() < 4) return;
  dragging_ = true;
  const int rows = static_cast<int>(std::lround(d.y() / row_height_));
  if (rows != 0) vbar_->setValue(vbar_->value() - rows);
  press_pos_ = QPoint(e->pos().x(), rows != 0 ? e->pos().y() : press_pos_.y());
  pan(d.x());
}

void TimelineView::mouseReleaseEvent(QMouseEvent* e) {
  if (!dragging_) select(event_at(e->pos()));
  dragging_ = false;
}

void TimelineView::keyPressEvent(QKeyEvent* e) {
  const QRect plot = plot_rect();
  const QPoint mouse = mapFromGlobal(QCursor::pos());
  const double anchor = plot.contains(mouse) ? mouse.x() - plot.left() : plot.width() / 2.0;
  switch (e->key()) {
    case Qt::Key_W: zoom(anchor, 1.25); break;
    case Qt::Key_S: zoom(anchor, 1 / 1.25); break;
    case Qt::Key_A: pan(plot.width() * 0.1); break;
    case Qt::Key_D: pan(-plot.width() * 0.1); break;
    case Qt::Key_F: fit(); break;
    default: QWidget::keyPressEvent(e); return;
  }
  e->accept();
}

bool TimelineView::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const int i = event_at(help->pos());
    if (i >= 0) QToolTip::showText(help->globalPos(), tooltip_text(*model_, i), this);
    else QToolTip::hideText();
    return true;
  }
  return QWidget::event(e);
}

void TimelineView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  const QRect plot = plot_rect();
  draw_bars(p, plot);
  draw_ruler(p, plot);
  draw_legend(p);
}

void TimelineView::draw_bars(QPainter& p, const QRect& plot) {
  const auto& lanes = model_->lanes();
  const int w = plot.width();
  if (buffer_.size() != plot.size()) buffer_ = QImage(plot.size(), QImage::Format_RGB32);
  buffer_.fill(palette().base().color());
  const QRgb bubble = bubble_color().rgb();

  const double t0 = scale_.to_time(0), t1 = scale_.to_time(w);
  const int first = vbar_->value();
  const int last = std::min(static_cast<int>(lanes.size()), first + static_cast<int>(plot.height() / row_height_) + 1);
  std::vector<QRgb> columns(static_cast<std::size_t>(w));
  const double end_px = scale_.to_px(static_cast<double>(model_->end_time()));
  p.setFont(font());
  for (int l = first; l < last; ++l) {
    const TimelineLane& lane = lanes[static_cast<std::size_t>(l)];
    const int y0 = static_cast<int>((l - first) * row_height_);
    const int y1 = std::min(plot.height(), static_cast<int>((l - first + 1) * row_height_) - (row_height_ >= 6 ? 1 : 0));
    // Idle compute time inside the iteration is bubble.
    const QRgb idle = lane.compute ? bubble : palette().base().color().rgb();
    const int idle_from = std::clamp(static_cast<int>(scale_.to_px(0)), 0, w);
    const int idle_to = std::clamp(static_cast<int>(std::ceil(end_px)), 0, w);
    std::fill(columns.begin(), columns.end(), palette().base().color().rgb());
    std::fill(columns.begin() + idle_from, columns.begin() + idle_to, idle);
    for (auto it = first_visible(*model_, lane, t0); it != lane.events.end(); ++it) {
      const TimelineEvent& e = model_->event(*it);
      if (static_cast<double>(e.start) > t1) break;
      // A task narrower than a pixel still owns the pixel it starts in: level of detail
      // without losing short transfers; later tasks in the same pixel overwrite earlier ones.
      const int x0 = std::clamp(static_cast<int>(std::floor(scale_.to_px(static_cast<double>(e.start)))), 0, w - 1);
      const int x1 = std::clamp(static_cast<int>(std::ceil(scale_.to_px(static_cast<double>(e.start + e.duration)))), x0 + 1, w);
      std::fill(columns.begin() + x0, columns.begin() + x1, model_->bar_rgb(*it));
    }
    for (int y = std::max(0, y0); y < y1; ++y) {
      auto* line = reinterpret_cast<QRgb*>(buffer_.scanLine(y));
      std::copy(columns.begin(), columns.end(), line);
    }
  }
  p.drawImage(plot.topLeft(), buffer_);

  // Labels on bars wide enough to hold them, the selection outline, and the lane names.
  const QFontMetrics fm(font());
  const bool labelled = row_height_ >= fm.height();
  p.setClipRect(plot);
  for (int l = first; l < last && labelled; ++l) {
    const TimelineLane& lane = lanes[static_cast<std::size_t>(l)];
    const int y = plot.top() + static_cast<int>((l - first) * row_height_);
    for (auto it = first_visible(*model_, lane, t0); it != lane.events.end(); ++it) {
      const TimelineEvent& e = model_->event(*it);
      if (static_cast<double>(e.start) > t1) break;
      const double x0 = scale_.to_px(static_cast<double>(e.start)), x1 = scale_.to_px(static_cast<double>(e.start + e.duration));
      const QString name = QString::fromStdString(e.name);
      if (x1 - x0 < fm.horizontalAdvance(name) + 6) continue;
      p.setPen(Qt::white);
      p.drawText(QRectF(plot.left() + std::max(0.0, x0) + 3, y, std::min<double>(x1, w) - std::max(0.0, x0) - 3,
                        row_height_),
                 Qt::AlignVCenter | Qt::AlignLeft, name);
    }
  }
  if (selected_ >= 0) {
    const TimelineEvent& e = model_->event(selected_);
    for (int l = first; l < last; ++l) {
      const TimelineLane& lane = lanes[static_cast<std::size_t>(l)];
      if (!std::binary_search(lane.events.begin(), lane.events.end(), selected_,
                              [&](int a, int b) { return model_->event(a).start < model_->event(b).start; }))
        continue;
      const double x0 = scale_.to_px(static_cast<double>(e.start)), x1 = scale_.to_px(static_cast<double>(e.start + e.duration));
      const int y = plot.top() + static_cast<int>((l - first) * row_height_);
      p.setPen(QPen(Qt::black, 2));
      p.setBrush(Qt::NoBrush);
      p.drawRect(QRectF(plot.left() + x0, y, std::max(2.0, x1 - x0), std::max(2.0, row_height_ - 1)));
    }
  }
  p.setClipping(false);
  p.setPen(palette().text().color());
  // Every lane's name: in a smaller font where rows are lower than a line (a line is about 1.2
  // times the font's pixel size; down to 7 pixels), and only below that every n-th, so names
  // never overlap.
  QFont label_font = font();
  if (row_height_ < fm.height()) label_font.setPixelSize(std::max(7, static_cast<int>(row_height_ / 1.2)));
  p.setFont(label_font);
  const QFontMetrics lfm(label_font);
  const int every = std::max(1, static_cast<int>(std::ceil(lfm.height() / row_height_)));
  for (int l = first; l < last; ++l) {
    if ((l % every) != 0) continue;
    const int y = plot.top() + static_cast<int>((l - first) * row_height_);
    const int h = std::max(static_cast<int>(row_height_), lfm.height());
    if (y + h > plot.bottom() + 1) break;
    p.drawText(QRect(4, y, kLabelWidth - 8, h), Qt::AlignVCenter | Qt::AlignLeft,
               lfm.elidedText(lanes[static_cast<std::size_t>(l)].label, Qt::ElideRight, kLabelWidth - 8));
  }
  p.setFont(font());
}

void TimelineView::draw_ruler(QPainter& p, const QRect& plot) {
  const QFontMetrics fm(font());
  p.fillRect(QRect(0, 0, width(), kRulerHeight), palette().window());
  p.setPen(palette().text().color());
  p.drawLine(plot.left(), kRulerHeight - 1, plot.right(), kRulerHeight - 1);
  const int label_width = fm.horizontalAdvance(QStringLiteral("888.88 ms")) + 12;
  for (const Tick& t : ruler_ticks(scale_, plot.width(), label_width)) {
    const int x = plot.left() + static_cast<int>(std::lround(t.px));
    p.drawLine(x, kRulerHeight - 6, x, kRulerHeight - 1);
    if (x + label_width / 2 > width()) continue;
    p.drawText(QRect(x - label_width / 2, 2, label_width, kRulerHeight - 8), Qt::AlignCenter, format_time_ns(t.time_ns));
  }
  p.drawText(QRect(4, 2, kLabelWidth - 8, kRulerHeight - 4), Qt::AlignVCenter | Qt::AlignLeft, tr("time"));
}

std::vector<std::pair<QColor, QString>> TimelineView::legend_entries() const {
  std::vector<std::pair<QColor, QString>> entries;
  for (const int i : model_->legend()) {
    const Swatch& s = timeline_palette()[static_cast<std::size_t>(i)];
    entries.emplace_back(s.color, s.label);
  }
  entries.emplace_back(bubble_color(), tr("idle (bubble)"));
  return entries;
}

// The legend flows onto another line where the view is too narrow for one (a pinned timeline in
// a 1280-pixel window cut the last entry); each entry's place, and the lines it takes.
std::vector<QPoint> TimelineView::legend_places(int* lines) const {
  const QFontMetrics fm(font());
  std::vector<QPoint> places;
  int x = 8, line = 0;
  for (const auto& [color, text] : legend_entries()) {
    const int w = 16 + fm.horizontalAdvance(text) + 4;
    if (x > 8 && x + w > width()) {
      ++line;
      x = 8;
    }
    places.emplace_back(x, line);
    x += w + 10;
  }
  if (lines) *lines = line + 1;
  return places;
}

int TimelineView::legend_height() const {
  int lines = 1;
  legend_places(&lines);
  return lines * kLegendHeight;
}

void TimelineView::draw_legend(QPainter& p) {
  const QFontMetrics fm(font());
  const int top = height() - legend_height();
  p.fillRect(QRect(0, top, width(), legend_height()), palette().window());
  const auto entries = legend_entries();
  const auto places = legend_places();
  p.setPen(palette().text().color());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& [color, text] = entries[i];
    const int x = places[i].x(), y = top + places[i].y() * kLegendHeight;
    p.fillRect(QRect(x, y + (kLegendHeight - 12) / 2, 12, 12), color);
    p.drawText(QRect(x + 16, y, fm.horizontalAdvance(text) + 4, kLegendHeight), Qt::AlignVCenter, text);
  }
}

}  // namespace cc::gui
