// cluster_map.h — the Cluster map tab: every GPU as a cell in its node (nodes x GPUs per
// node), coloured by pipeline stage, tensor-parallel groups outlined, one data-parallel
// replica highlighted on request; hover a GPU for its rank and its coordinate in each
// dimension of the layout's grid. The traffic that crosses nodes each iteration
// (sim/cross_node_traffic.h) is listed, and the highlighted replica's pipeline, DP-ring,
// cross-node TP and context-parallel hops are drawn, those between nodes with their bytes.
// Every group comes from the grid (ParallelConfig::grid), by name.
#pragma once

#include <memory>

#include <QWidget>

#include "sim/cross_node_traffic.h"
#include "sim/simulator.h"

class QLabel;
class QSpinBox;

namespace cc::gui {

class ClusterMapView : public QWidget {
  Q_OBJECT
 public:
  explicit ClusterMapView(QWidget* parent = nullptr);
  // `traffic` may be null (not computed): no hops are drawn. `nvlink_domain_gpus` 0: the node is
  // the NVLink domain; larger (GB200 NVL72's 72-GPU rack of 4-GPU trays): the node boxes of one
  // domain sit on one background shade, alternating from domain to domain.
  void set_layout(const ParallelConfig& config, int gpus_per_node, std::shared_ptr<const CrossNodeTraffic> traffic,
                  int nvlink_domain_gpus = 0);
  // The shade behind `node`'s box: its NVLink domain's (none where the node is its own domain).
  QColor domain_shade(int node) const;
  void set_replica(int dp);  // -1: none highlighted
  int rank_at(QPoint pos) const;  // -1 outside every GPU
  QRect cell_rect(int rank) const;
  QSize sizeHint() const override { return {900, 600}; }

 protected:
  void paintEvent(QPaintEvent*) override;
  bool event(QEvent*) override;

 private:
  struct Grid {
    int columns = 1;   // nodes per row
    double node_w = 0, node_h = 0, cell_w = 0, cell_h = 0, gap = 0;
    int cells_per_row = 8;  // GPU cells across a node box
  };
  Grid grid() const;
  QRectF node_rect(const Grid& g, int node) const;
  QRect cell_rect(const Grid& g, int rank) const;  // grid() once per frame, not per cell

  ParallelConfig config_;
  int gpus_per_node_ = 8;
  int nodes_per_domain_ = 1;
  int replica_ = -1;
  std::shared_ptr<const CrossNodeTraffic> traffic_;
};

class ClusterMapPage : public QWidget {
  Q_OBJECT
 public:
  explicit ClusterMapPage(QWidget* parent = nullptr);
  void set_result(const SimResult& result);  // computes the traffic through the library
  ClusterMapView* view() const { return view_; }
  QLabel* summary() const { return summary_; }
  const CrossNodeTraffic* traffic() const { return traffic_.get(); }

 private:
  QString context_parallel_text(const SimResult& r) const;  // "" at CP 1
  QString expert_parallel_text(const SimResult& r) const;   // "" for a dense model

  ClusterMapView* view_;
  QSpinBox* replica_;
  QLabel* summary_;
  std::shared_ptr<const CrossNodeTraffic> traffic_;
};

}  // namespace cc::gui
