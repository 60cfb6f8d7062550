// timeline_palette.h — the one table of the timeline's colours and legend names. Compute work
// is coloured by its task kind (forward, backward, optimizer); communication by what it moves:
// PP transfers, the DP lane's collectives, and the CP lane, whose events carry their pass's kind
// (forward or backward) but are coloured as the K/V exchange they are. TP collectives run inside
// the passes on the compute stream in the simulator's timeline (their time is in the Summary's
// breakdown), so no bar is TP's own; a stream for them would be one more row here. MoE layers'
// dispatch and combine (EP) likewise run inside the passes: their colour is the breakdown's EP
// part and the cluster map's EP lines, so the dimension reads the same in both.
#pragma once

#include <span>

#include <QColor>
#include <QString>

#include "sim/simulator.h"

namespace cc::gui {

struct Swatch {
  QColor color;
  QString label;  // the legend's name for it
};

// Every swatch, in legend order.
std::span<const Swatch> timeline_palette();
// The palette row a task is drawn with: its lane's, where the lane has a colour of its own,
// else its kind's.
int swatch_index(StreamLane lane, TaskKind kind);
inline const Swatch& swatch_of(const TimelineEvent& e) {
  return timeline_palette()[static_cast<std::size_t>(swatch_index(e.lane, e.kind))];
}
// A task kind's name (pipeline transfer, DP collective, ...), as the legend writes it.
QString kind_label(TaskKind kind);
QColor bubble_color();  // idle compute time inside the iteration
QColor expert_parallel_color();  // EP all-to-all: the breakdown's EP part, the cluster map's EP lines

}  // namespace cc::gui
