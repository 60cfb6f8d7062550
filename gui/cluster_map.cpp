#include "gui/cluster_map.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include <QHBoxLayout>
#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QSpinBox>
#include <QToolTip>
#include <QVBoxLayout>

#include "sim/memory_model.h"
#include "sim/parallel_grid.h"
#include "sim/parallel_layout.h"

#include "gui/timeline_palette.h"

namespace cc::gui {

namespace {

// The stage swatches in a row, and under them the line legend over the whole width (beside the
// swatches it was cut at 1280 pixels), in up to three lines.
constexpr int kSwatchRow = 20;
constexpr int kLegendHeight = 68;

QColor stage_color(int stage, int stages) {
  const double f = stages > 1 ? static_cast<double>(stage) / (stages - 1) : 0;
  return QColor::fromHsvF(0.66 * (1 - f), 0.55, 0.92);
}

QString gigabytes(double bytes) { return QStringLiteral("%1 GB").arg(bytes / 1e9, 0, 'f', bytes >= 1e10 ? 0 : 1); }

}  // namespace

QString ClusterMapPage::expert_parallel_text(const SimResult& r) const {
  if (!r.model.moe.enabled()) return {};
  // Where the EP groups sit, as the expert grid places them: the most NVLink domains one joins.
  int nodes = 1;
  for (const std::vector<int>& group : r.config.expert_grid().groups("ep"))
    nodes = std::max(nodes, place_in_nvlink_domains(group, r.cluster).nodes);
  const QString shape = tr(" EP %1 × ETP %2 (expert DP %3):").arg(r.config.ep).arg(r.config.expert_tp()).arg(r.config.expert_dp());
  if (r.config.ep == 1) return shape + tr(" every GPU holds all the experts of its stage; no all-to-all.");
  if (nodes == 1) return shape + tr(" EP groups stay inside NVLink domains.");
  const auto ep = traffic_->total.find(TrafficKind::ExpertParallel);
  return shape + tr(" EP groups span %1 NVLink domains: dispatch and combine cross the inter-node fabric, expert "
                    "parallel %2 between nodes (their time is the Summary's EP comm).")
                     .arg(nodes)
                     .arg(gigabytes(ep == traffic_->total.end() ? 0.0 : ep->second));
}

QString ClusterMapPage::context_parallel_text(const SimResult& r) const {
  if (r.config.cp == 1) return {};
  // Where the CP groups sit, as the grid places them: the most nodes any one of them joins.
  int nodes = 1;
  for (const std::vector<int>& group : r.config.grid().groups("cp"))
    nodes = std::max(nodes, place_in_nvlink_domains(group, r.cluster).nodes);
  if (nodes == 1) return tr(" CP groups of %1 stay inside nodes (NVLink).").arg(r.config.cp);
  const auto cp = traffic_->total.find(TrafficKind::ContextParallel);
  return tr(" CP groups of %1 span %2 nodes: their key/value exchange crosses the inter-node fabric, context parallel "
            "%3 between nodes.")
      .arg(r.config.cp)
      .arg(nodes)
      .arg(gigabytes(cp == traffic_->total.end() ? 0.0 : cp->second));
}

ClusterMapView::ClusterMapView(QWidget* parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(300, 200);
}

void ClusterMapView::set_layout(const ParallelConfig& config, int gpus_per_node, std::shared_ptr<const CrossNodeTraffic> traffic,
                                int nvlink_domain_gpus) {
  config_ = config;
  gpus_per_node_ = std::max(1, gpus_per_node);
  nodes_per_domain_ = std::max(1, nvlink_domain_gpus / gpus_per_node_);
  traffic_ = std::move(traffic);
  if (replica_ >= config_.dp) replica_ = -1;
  update();
}

QColor ClusterMapView::domain_shade(int node) const {
  if (nodes_per_domain_ <= 1) return palette().base().color();
  return (node / nodes_per_domain_) % 2 == 1 ? QColor(0xc6, 0xdc, 0xee) : QColor(0xdd, 0xdd, 0xdd);
}

void ClusterMapView::set_replica(int dp) {
  replica_ = dp;
  update();
}

ClusterMapView::Grid ClusterMapView::grid() const {
  Grid g;
  const int nodes = std::max(1, (config_.gpus() + gpus_per_node_ - 1) / gpus_per_node_);
  g.cells_per_row = gpus_per_node_ <= 8 ? gpus_per_node_ : (gpus_per_node_ + 1) / 2;
  const int cell_rows = (gpus_per_node_ + g.cells_per_row - 1) / g.cells_per_row;
  const double w = width(), h = std::max(1, height() - kLegendHeight);
  // Node boxes are cells_per_row : cell_rows cells; pick the column count that makes cells
  // largest while every node fits.
  double best = 0;
  for (int cols = 1; cols <= nodes; ++cols) {
    const int rows = (nodes + cols - 1) / cols;
    const double cell = std::min(w / (cols * (g.cells_per_row + 0.6)), h / (rows * (cell_rows + 0.6)));
    if (cell > best) {
      best = cell;
      g.columns = cols;
    }
  }
  g.cell_w = g.cell_h = best;
  g.gap = best * 0.6;
  g.node_w = best * g.cells_per_row + g.gap;
  g.node_h = best * cell_rows + g.gap;
  return g;
}

QRectF ClusterMapView::node_rect(const Grid& g, int node) const {
  const int col = node % g.columns, row = node / g.columns;
  return QRectF(col * g.node_w + g.gap / 2, row * g.node_h + g.gap / 2, g.node_w - g.gap, g.node_h - g.gap);
}

QRect ClusterMapView::cell_rect(int rank) const { return cell_rect(grid(), rank); }

QRect ClusterMapView::cell_rect(const Grid& g, int rank) const {
  const QRectF n = node_rect(g, rank / gpus_per_node_);
  const int local = rank % gpus_per_node_;
  return QRectF(n.left() + (local % g.cells_per_row) * g.cell_w, n.top() + (local / g.cells_per_row) * g.cell_h, g.cell_w,
                g.cell_h)
      .toAlignedRect();
}

int ClusterMapView::rank_at(QPoint pos) const {
  const Grid g = grid();
  if (g.node_w <= 0) return -1;
  const int col = static_cast<int>(pos.x() / g.node_w), row = static_cast<int>(pos.y() / g.node_h);
  if (col >= g.columns || pos.x() < 0 || pos.y() < 0) return -1;
  const int node = row * g.columns + col;
  const QRectF n = node_rect(g, node);
  if (!n.contains(pos)) return -1;
  const int local = static_cast<int>((pos.y() - n.top()) / g.cell_h) * g.cells_per_row +
                    static_cast<int>((pos.x() - n.left()) / g.cell_w);
  const int rank = node * gpus_per_node_ + local;
  return local < gpus_per_node_ && rank < config_.gpus() ? rank : -1;
}

void ClusterMapView::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  if (config_.gpus() == 0) return;
  const Grid g = grid();
  const ParallelGrid ranks = config_.grid();
  const int nodes = (config_.gpus() + gpus_per_node_ - 1) / gpus_per_node_;
  const bool outlines = g.cell_w >= 4;
  if (nodes_per_domain_ > 1)  // the NVLink domains, in the gaps around their node boxes
    for (int n = 0; n < nodes; ++n) {
      const double m = g.gap / 2;
      p.fillRect(node_rect(g, n).adjusted(-m, -m, m, m), domain_shade(n));
    }
  for (int n = 0; n < nodes; ++n) p.fillRect(node_rect(g, n).adjusted(-1, -1, 1, 1), QColor(0x55, 0x55, 0x55));
  // Cells: one fill each, dimmed outside the highlighted replica.
  for (int r = 0; r < config_.gpus(); ++r) {
    QColor c = stage_color(ranks.coord(r, "pp"), config_.pp);
    if (replica_ >= 0 && ranks.coord(r, "dp") != replica_) c = QColor::fromHsvF(c.hsvHueF(), 0.12, 0.97);
    p.fillRect(cell_rect(g, r).adjusted(0, 0, outlines ? -1 : 0, outlines ? -1 : 0), c);
  }
  // TP groups, as the grid lists them: outline each run of consecutive ranks on one row of a
  // node (with TP innermost a whole group is one run per node).
  if (outlines) {
    p.setPen(QPen(Qt::black, std::max(1.0, g.cell_w / 10)));
    p.setBrush(Qt::NoBrush);
    for (const std::vector<int>& group : ranks.groups("tp")) {
      for (std::size_t i = 0; i < group.size();) {
        const int first = group[i], node = first / gpus_per_node_;
        std::size_t j = i;
        while (j + 1 < group.size() && group[j + 1] == group[j] + 1 && group[j + 1] / gpus_per_node_ == node &&
               group[j + 1] % gpus_per_node_ % g.cells_per_row != 0)
          ++j;
        const QRectF run(cell_rect(g, first).topLeft(), cell_rect(g, group[j]).bottomRight());
        p.drawRect(run.adjusted(0.5, 0.5, -0.5, -0.5));
        i = j + 1;
      }
    }
  }
  // The highlighted replica's hops between nodes (TP and CP rank 0), with the bytes their node
  // pair carries per iteration: pipeline to the next stage (black), its DP ring step (red),
  // where a TP group spans nodes its ring's hops between them (purple), and its CP groups'
  // rings (teal; dashed cell to cell inside a node, where the map lists no bytes). The rings
  // are the library's (sim/cross_node_traffic.h): DP's runs over the gradient group
  // (kGradientGroup, DP x CP) in rank order.
  if (replica_ >= 0 && traffic_) {
    p.setRenderHint(QPainter::Antialiasing);
    const QFontMetrics fm(font());
    const double pen = std::max(2.0, g.cell_w / 5);
    std::map<std::pair<int, int>, int> lines_between;  // a second kind on one node pair runs beside the first
    auto hop = [&](int a, int b, TrafficKind kind, const QColor& color) {
      if (a == b) return;
      double bytes = 0;
      for (const NodeLink& l : traffic_->links)
        if (l.kind == kind && l.node_a == std::min(a, b) && l.node_b == std::max(a, b)) bytes = l.bytes;
      const QPointF ca = node_rect(g, std::min(a, b)).center(), cb = node_rect(g, std::max(a, b)).center();
      const QPointF along = cb - ca;
      const double length = std::max(1.0, std::hypot(along.x(), along.y()));
      const int k = lines_between[{std::min(a, b), std::max(a, b)}]++;
      const QPointF shift = QPointF(-along.y(), along.x()) / length * (k * 1.6 * pen);
      const QPointF pa = ca + shift, pb = cb + shift;
      p.setPen(QPen(color, pen));
      p.drawLine(pa, pb);
      const QString label = gigabytes(bytes);
      const QPointF mid = pa + along * (0.5 - 0.12 * k);  // labels of lines side by side do not cover each other
      const QRectF box(mid.x() - fm.horizontalAdvance(label) / 2.0 - 3, mid.y() - fm.height() / 2.0,
                       fm.horizontalAdvance(label) + 6, fm.height());
      p.fillRect(box, QColor(255, 255, 255, 220));
      p.setPen(color.darker(150));
      p.drawText(box, Qt::AlignCenter, label);
    };
    const int node_size = gpus_per_node_;
    auto node_of = [&](int rank) { return rank / node_size; };
    // From `rank`, the next member of its ring over `members` (in group order).
    auto next_in = [](const std::vector<int>& members, int rank) {
      const auto it = std::find(members.begin(), members.end(), rank);
      return members[static_cast<std::size_t>((it - members.begin() + 1) % static_cast<std::ptrdiff_t>(members.size()))];
    };
    // A ring over `members` in group order; it leaves each node once: one line per node pair.
    auto ring = [&](const std::vector<int>& members, TrafficKind kind, const QColor& color) {
      std::set<std::pair<int, int>> drawn;
      for (const int r : members) {
        const int a = node_of(r), b = node_of(next_in(members, r));
        if (a != b && drawn.insert({std::min(a, b), std::max(a, b)}).second) hop(a, b, kind, color);
      }
    };
    // The replica's first rank (TP, CP and PP coordinate 0), and its stages in order from it.
    const int first = ranks.groups("dp").front()[static_cast<std::size_t>(replica_)];
    const std::vector<int> stages = ranks.group(first, "pp");
    for (std::size_t s = 0; s + 1 < stages.size(); ++s)
      hop(node_of(stages[s]), node_of(stages[s + 1]), TrafficKind::Pipeline, QColor(0, 0, 0, 170));
    for (const int stage_rank : stages)
      if (const std::vector<int> dp_ring = ranks.group(stage_rank, kGradientGroup); dp_ring.size() > 1)
        hop(node_of(stage_rank), node_of(next_in(dp_ring, stage_rank)), TrafficKind::DataParallel, QColor(200, 0, 0, 170));
    if (traffic_->tp_spans_nodes)
      for (const int stage_rank : stages) ring(ranks.group(stage_rank, "tp"), TrafficKind::TensorParallel, QColor(130, 0, 200, 170));
    if (config_.cp > 1) {
      const QColor teal(0, 140, 140, 190);
      for (const int stage_rank : stages) {
        const std::vector<int> members = ranks.group(stage_rank, "cp");
        ring(members, TrafficKind::ContextParallel, teal);
        p.setPen(QPen(teal, std::max(1.5, g.cell_w / 8), Qt::DashLine));
        for (const int r : members)
          if (const int next = next_in(members, r); r != next && node_of(r) == node_of(next))
            p.drawLine(QRectF(cell_rect(g, r)).center(), QRectF(cell_rect(g, next)).center());
      }
    }
    // Its MoE layers' EP groups (the expert grid's, Megatron-Core's folding): a dot in each
    // member's cell, and since dispatch and combine are all-to-all, a line between every two
    // nodes a group joins. With a few such node pairs each line carries the expert-parallel bytes
    // of its pair; with many (EP 256 joins 32 nodes: 496 pairs) labels would cover the map, so the
    // lines are thin and the total is in the text above.
    if (config_.ep > 1) {
      constexpr std::size_t kLabelledPairs = 8;
      const QColor olive = expert_parallel_color().darker(130);
      const ParallelGrid experts = config_.expert_grid();
      std::set<std::pair<int, int>> pairs;
      for (const int stage_rank : stages) {
        const std::vector<int> members = experts.group(stage_rank, "ep");
        p.setPen(Qt::NoPen);
        p.setBrush(olive);
        for (const int r : members) {
          const QRectF cell = cell_rect(g, r);
          p.drawEllipse(cell.center(), cell.width() / 5, cell.height() / 5);
        }
        for (const int a : members)
          for (const int b : members)
            if (node_of(a) < node_of(b)) pairs.insert({node_of(a), node_of(b)});
      }
      p.setBrush(Qt::NoBrush);
      p.setPen(QPen(olive, std::max(1.5, pen / 2)));
      for (const auto& [a, b] : pairs) {
        if (pairs.size() <= kLabelledPairs) hop(a, b, TrafficKind::ExpertParallel, olive);
        else p.drawLine(node_rect(g, a).center(), node_rect(g, b).center());
      }
    }
    p.setRenderHint(QPainter::Antialiasing, false);
  }
  // Legend: stage colours.
  const int y = height() - kLegendHeight;
  p.fillRect(QRect(0, y, width(), kLegendHeight), palette().window());
  p.setPen(palette().text().color());
  const QFontMetrics fm(font());
  int x = 8;
  const int every = std::max(1, (config_.pp + 7) / 8);  // at most 8 stage swatches: room for the line legend
  for (int s = 0; s < config_.pp; s += every) {
    const QString text = QStringLiteral("stage %1").arg(s);
    p.fillRect(QRect(x, y + (kSwatchRow - 12) / 2, 12, 12), stage_color(s, config_.pp));
    p.drawText(QRect(x + 16, y, fm.horizontalAdvance(text) + 4, kSwatchRow), Qt::AlignVCenter, text);
    x += 16 + fm.horizontalAdvance(text) + 12;
  }
  p.drawText(QRect(8, y + kSwatchRow, width() - 12, kLegendHeight - kSwatchRow), Qt::AlignTop | Qt::TextWordWrap,
             tr("outline: a TP group · lines, bytes per iteration: black pipeline hop · red DP ring hop · "
                "purple cross-node TP ring hop%1%2%3")
                 .arg(config_.cp > 1 ? tr(" · teal CP ring hop (dashed: inside a node)") : QString(),
                      config_.ep > 1 ? tr(" · olive dots: EP group, lines: its all-to-all between nodes") : QString(),
                      nodes_per_domain_ > 1 ? tr(" · background grey / blue: NVLink domains of %1 nodes in turn")
                                                  .arg(nodes_per_domain_)
                                            : QString()));
}

bool ClusterMapView::event(QEvent* e) {
  if (e->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(e);
    const int r = rank_at(help->pos());
    if (r < 0) {
      QToolTip::hideText();
      return true;
    }
    const ParallelGrid ranks = config_.grid();
    QStringList coords;
    for (int i = 0; i < ranks.dimension_count(); ++i) {
      const std::string_view name = ranks.dimension(i).name;
      coords << QStringLiteral("%1 %2").arg(QString::fromUtf8(name.data(), static_cast<qsizetype>(name.size())).toUpper())
                    .arg(ranks.coord(r, name));
    }
    QToolTip::showText(help->globalPos(), tr("rank %1 — node %2, GPU %3\n%4")
                                              .arg(r)
                                              .arg(r / gpus_per_node_)
                                              .arg(r % gpus_per_node_)
                                              .arg(coords.join(QStringLiteral(", "))),
                       this);
    return true;
  }
  return QWidget::event(e);
}

ClusterMapPage::ClusterMapPage(QWidget* parent)
    : QWidget(parent), view_(new ClusterMapView), replica_(new QSpinBox), summary_(new QLabel) {
  replica_->setRange(-1, 0);
  replica_->setSpecialValueText(tr("none"));
  replica_->setValue(-1);
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("Highlight DP replica")));
  controls->addWidget(replica_);
  controls->addStretch(1);
  summary_->setWordWrap(true);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(summary_);
  layout->addWidget(view_, 1);
  connect(replica_, &QSpinBox::valueChanged, view_, &ClusterMapView::set_replica);
}

void ClusterMapPage::set_result(const SimResult& r) {
  traffic_ = std::make_shared<CrossNodeTraffic>(cross_node_traffic(r.model, r.cluster, r.config));
  replica_->setRange(-1, r.config.dp - 1);
  if (replica_->value() < 0 && r.config.dp > 0) replica_->setValue(0);
  view_->set_layout(r.config, r.cluster.gpus_per_node, traffic_, r.cluster.nvlink_domain_gpus);
  view_->set_replica(replica_->value());
  const CrossNodeTraffic& t = *traffic_;
  auto total = [&](TrafficKind k) {
    const auto it = t.total.find(k);
    return it == t.total.end() ? 0.0 : it->second;
  };
  summary_->setText(
      tr("%1 GPUs on %2 nodes of %3. Between nodes each iteration: pipeline %4, data parallel %5, embedding sync %6, "
         "tensor parallel %11. Busiest node: %7 moves %8, %9 s at its NICs' line rate. %10")
          .arg(r.config.gpus())
          .arg((r.config.gpus() + r.cluster.gpus_per_node - 1) / r.cluster.gpus_per_node)
          .arg(r.cluster.gpus_per_node)
          .arg(gigabytes(total(TrafficKind::Pipeline)), gigabytes(total(TrafficKind::DataParallel)),
               gigabytes(total(TrafficKind::Embedding)))
          .arg(t.busiest_node)
          .arg(gigabytes(t.busiest_node_bytes))
          .arg(t.busiest_node_seconds, 0, 'f', 2)
          .arg(t.tp_spans_nodes ? tr("TP groups span nodes: their all-reduces cross the inter-node fabric.")
                                : tr("TP groups stay inside nodes (NVLink)."))
          .arg(gigabytes(total(TrafficKind::TensorParallel))) +
      context_parallel_text(r) + expert_parallel_text(r));
}

}  // namespace cc::gui
