#include "gui/timeline_model.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "sim/step_plan.h"

namespace cc::gui {

QString stream_name(StreamLane lane) {
  const QString name = QString::fromUtf8(to_string(lane));
  return lane == StreamLane::Compute ? name : name.toUpper();
}

QString format_time_ns(double ns) {
  const double a = std::abs(ns);
  if (a == 0) return QStringLiteral("0");
  if (a >= 1e9) return QStringLiteral("%1 s").arg(ns / 1e9, 0, 'f', a >= 1e10 ? 1 : 2);
  if (a >= 1e6) return QStringLiteral("%1 ms").arg(ns / 1e6, 0, 'f', a >= 1e8 ? 0 : a >= 1e7 ? 1 : 2);
  if (a >= 1e3) return QStringLiteral("%1 µs").arg(ns / 1e3, 0, 'f', a >= 1e5 ? 0 : a >= 1e4 ? 1 : 2);
  return QStringLiteral("%1 ns").arg(ns, 0, 'f', 0);
}

void TimelineModel::set_result(std::shared_ptr<const SimResult> result) {
  beginResetModel();
  result_ = std::move(result);
  lanes_.clear();
  legend_.clear();
  swatch_.clear();
  end_ = 0;
  replicas_ = 1;
  if (result_) {
    const auto& tl = result_->timeline;
    for (const auto& e : tl) replicas_ = std::max(replicas_, e.replica + 1);
    // (process, lane) -> row; the map orders rows by rank, then by StreamLane's order (compute first).
    std::map<std::pair<int, StreamLane>, int> index;
    std::map<std::pair<int, StreamLane>, const TimelineEvent*> first_of;
    for (const auto& e : tl) first_of.emplace(std::make_pair(e.process, e.lane), &e);
    for (const auto& [key, e] : first_of) {
      index[key] = static_cast<int>(lanes_.size());
      TimelineLane lane;
      lane.process = e->process;
      lane.compute = e->lane == StreamLane::Compute;
      const QString kind = stream_name(e->lane);
      lane.label = replicas_ > 1 ? QStringLiteral("st%1 r%2 %3").arg(e->stage).arg(e->replica).arg(kind)
                                 : QStringLiteral("stage %1 %2").arg(e->stage).arg(kind);
      lanes_.push_back(lane);
    }
    std::set<int> used;
    swatch_.reserve(tl.size());
    for (std::size_t i = 0; i < tl.size(); ++i) {
      lanes_[static_cast<std::size_t>(index[{tl[i].process, tl[i].lane}])].events.push_back(static_cast<int>(i));
      end_ = std::max(end_, tl[i].start + tl[i].duration);
      swatch_.push_back(static_cast<std::uint8_t>(swatch_index(tl[i].lane, tl[i].kind)));
      used.insert(swatch_.back());
    }
    legend_.assign(used.begin(), used.end());
    for (auto& lane : lanes_)
      std::stable_sort(lane.events.begin(), lane.events.end(),
                       [&](int a, int b) { return tl[static_cast<std::size_t>(a)].start < tl[static_cast<std::size_t>(b)].start; });
  }
  endResetModel();
}

int TimelineModel::layers_of(const TimelineEvent& e) const {
  if (!result_ || (e.kind != TaskKind::Forward && e.kind != TaskKind::Backward)) return 0;
  return chunk_layers(result_->model, result_->config, e.stage, e.chunk).count;
}

int TimelineModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() || !result_ ? 0 : static_cast<int>(result_->timeline.size());
}

int TimelineModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant TimelineModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !result_ || index.row() >= rowCount()) return {};
  const TimelineEvent& e = event(index.row());
  if (role == Qt::DisplayRole) {
    switch (index.column()) {
      case Process: return e.process;
      case Lane: return stream_name(e.lane);
      case Name: return QString::fromStdString(e.name);
      case Kind: return kind_label(e.kind);
      case StartUs: return static_cast<double>(e.start) / 1e3;
      case DurationUs: return static_cast<double>(e.duration) / 1e3;
      default: return {};
    }
  }
  if (role == Qt::DecorationRole && index.column() == Kind) return swatch_of(e).color;
  return {};
}

QVariant TimelineModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (role != Qt::DisplayRole || orientation != Qt::Horizontal) return {};
  static const char* names[] = {"Process", "Stream", "Pass", "Kind", "Start (µs)", "Duration (µs)"};
  return section >= 0 && section < ColumnCount ? QVariant(QString::fromUtf8(names[section])) : QVariant();
}

}  // namespace cc::gui
