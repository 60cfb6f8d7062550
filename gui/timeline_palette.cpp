#include "gui/timeline_palette.h"

#include <array>
#include <optional>

namespace cc::gui {

namespace {

// Either a lane's colour (every task on it) or a kind's (wherever no lane row applies).
struct Row {
  std::optional<StreamLane> lane;
  std::optional<TaskKind> kind;
  QRgb rgb;
  const char* label;
};

// Tableau 10 hues; CP in the cluster map's CP teal, so one dimension reads the same in both.
constexpr std::array<Row, 9> kRows{{
    {{}, TaskKind::Forward, 0xff4e79a7, "forward"},
    {{}, TaskKind::Backward, 0xfff28e2b, "backward (+recompute)"},
    {{}, TaskKind::Send, 0xff59a14f, "PP transfer"},
    {StreamLane::Cp, {}, 0xff008c8c, "CP K/V exchange"},
    {{}, TaskKind::GradReduce, 0xffe15759, "DP gradient comm"},
    {{}, TaskKind::ParamGather, 0xffedc948, "DP param gather"},
    {{}, TaskKind::EmbeddingSync, 0xffb07aa1, "embedding sync"},
    {{}, TaskKind::GradNorm, 0xff9c755f, "grad norm"},
    {{}, TaskKind::Optimizer, 0xff76b7b2, "optimizer"},
}};

const std::array<Swatch, kRows.size()>& swatches() {
  static const auto table = [] {
    std::array<Swatch, kRows.size()> s;
    for (std::size_t i = 0; i < kRows.size(); ++i) s[i] = {QColor::fromRgb(kRows[i].rgb), QString::fromUtf8(kRows[i].label)};
    return s;
  }();
  return table;
}

}  // namespace

std::span<const Swatch> timeline_palette() { return swatches(); }

int swatch_index(StreamLane lane, TaskKind kind) {
  for (std::size_t i = 0; i < kRows.size(); ++i)
    if (kRows[i].lane == lane) return static_cast<int>(i);
  for (std::size_t i = 0; i < kRows.size(); ++i)
    if (kRows[i].kind == kind) return static_cast<int>(i);
  return 0;  // unreachable while every TaskKind has a row (tests/gui checks each)
}

QString kind_label(TaskKind kind) {
  for (const Row& r : kRows)
    if (r.kind == kind) return QString::fromUtf8(r.label);
  return QStringLiteral("?");
}

QColor bubble_color() { return QColor(0xe8, 0xe8, 0xe8); }

QColor expert_parallel_color() { return QColor(0xbc, 0xbd, 0x22); }  // Tableau's olive: no other part's hue

}  // namespace cc::gui
