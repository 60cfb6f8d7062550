#include "sim/measured_costs.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/error.h"

namespace cc {

namespace {

std::array<std::int64_t, 4> shape_of(const ComputeOp& op) { return {op.m, op.n, op.k, op.batch}; }

// The op as it would be at `shape`: FLOPs and bytes follow the op kind's own formulas
// (layer_program.cpp), so the analytic model can say how the two shapes compare.
ComputeOp at_shape(const ComputeOp& op, const std::array<std::int64_t, 4>& shape) {
  ComputeOp r = op;
  r.m = shape[0];
  r.n = shape[1];
  r.k = shape[2];
  r.batch = shape[3];
  auto d = [](std::int64_t x) { return static_cast<double>(x); };
  auto volume = [&](const ComputeOp& o) { return d(o.m) * d(o.n) * d(o.k) * d(o.batch); };
  switch (op.kind) {
    case OpKind::Gemm:
    case OpKind::BatchedGemm: {
      auto traffic = [&](const ComputeOp& o) { return d(o.batch) * (d(o.m) * d(o.k) + d(o.k) * d(o.n) + d(o.m) * d(o.n)); };
      r.flops = op.flops * volume(r) / volume(op);
      r.bytes = op.bytes * traffic(r) / traffic(op);
      break;
    }
    case OpKind::FlashAttention:
      r.flops = op.flops * volume(r) / volume(op);
      r.bytes = op.bytes * (d(r.batch) * d(r.m) * d(r.k)) / (d(op.batch) * d(op.m) * d(op.k));
      break;
    case OpKind::Elementwise:
    case OpKind::Optimizer:
      r.flops = op.flops * d(r.m) / d(op.m);
      r.bytes = op.bytes * d(r.m) / d(op.m);
      break;
  }
  return r;
}

// What an op's time follows: FLOPs for matrix products and attention, bytes moved for
// elementwise ops and the optimizer.
double work(const ComputeOp& op) {
  return op.kind == OpKind::Elementwise || op.kind == OpKind::Optimizer ? op.bytes : op.flops;
}

double shape_distance(const std::array<std::int64_t, 4>& a, const std::array<std::int64_t, 4>& b) {
  double sum = 0;
  for (std::size_t i = 0; i < 4; ++i) sum += std::abs(std::log(static_cast<double>(a[i]) / static_cast<double>(b[i])));
  return sum;
}

}  // namespace

double measured_collective_time(const CollectiveCurve& c, double bytes) {
  const auto& p = c.points;
  // Below the sweep: latency dominates, and the fit's latency is what the small sizes set.
  if (bytes <= p.front().bytes)
    return std::min(p.front().time_s, c.latency_s + (p.front().time_s - c.latency_s) * bytes / p.front().bytes);
  // Above it: the largest messages' bandwidth holds (memory-bound transfers do not speed up).
  if (bytes >= p.back().bytes) return p.back().time_s * bytes / p.back().bytes;
  // Between two measured sizes: straight line in log(size)-log(time).
  const auto hi =
      std::upper_bound(p.begin(), p.end(), bytes, [](double b, const CollectivePoint& q) { return b < q.bytes; });
  const auto lo = hi - 1;
  const double f = std::log(bytes / lo->bytes) / std::log(hi->bytes / lo->bytes);
  return std::exp(std::log(lo->time_s) + f * (std::log(hi->time_s) - std::log(lo->time_s)));
}

std::vector<std::pair<double, double>> in_step_ratios(const CostDatabase& db, const CollectiveCurve& curve) {
  auto ratios_of = [&](bool same_kind) {
    std::vector<std::pair<double, double>> ratios;  // (bytes, in-step time / sweep time)
    for (const InStepCollective& c : db.in_step_collectives) {
      if (c.group_size != curve.group_size || c.calls <= 0 || (same_kind && c.kind != curve.kind) ||
          (!same_kind && c.kind == CollectiveKind::SendRecv))
        continue;
      for (const CollectiveCurve& sweep : db.collectives)
        if (sweep.kind == c.kind && sweep.group_size == c.group_size)
          ratios.emplace_back(c.bytes, c.mean_s / measured_collective_time(sweep, c.bytes));
    }
    std::sort(ratios.begin(), ratios.end());
    return ratios;
  };
  std::vector<std::pair<double, double>> ratios = ratios_of(true);
  // Pipeline sends are not a meeting of the group (on the CPU engine they do not block):
  // they borrow no other kind's level.
  if (ratios.empty() && curve.kind != CollectiveKind::SendRecv) ratios = ratios_of(false);
  return ratios;
}

double in_step_factor(const std::vector<std::pair<double, double>>& ratios, double bytes) {
  if (ratios.empty()) return 1.0;
  if (bytes <= ratios.front().first) return ratios.front().second;
  if (bytes >= ratios.back().first) return ratios.back().second;
  const auto hi = std::upper_bound(ratios.begin(), ratios.end(), bytes,
                                   [](double b, const std::pair<double, double>& r) { return b < r.first; });
  const auto lo = hi - 1;
  if (hi->first == lo->first) return hi->second;
  const double f = std::log(bytes / lo->first) / std::log(hi->first / lo->first);
  return lo->second + f * (hi->second - lo->second);
}

double in_step_factor(const CostDatabase& db, const CollectiveCurve& curve, double bytes) {
  return in_step_factor(in_step_ratios(db, curve), bytes);
}

MeasuredCosts::MeasuredCosts(CostDatabase db, std::string path, const ClusterSpec& cluster, Precision precision)
    // Scaling and fallbacks use the device model without the GPU stacks' fitted host costs:
    // those describe a PyTorch stack on a GPU, not the machine this database measured.
    : db_(std::move(db)), path_(std::move(path)), analytic_(cluster, precision, AnalyticParams{}) {
  for (const CollectiveCurve& c : db_.collectives) in_step_ratios_.push_back(in_step_ratios(db_, c));
  if (db_.dtype != to_string(precision))
    fail("cost database '{}' was measured in {}; simulate with --precision {} to use it (asked for {})", path_,
         db_.dtype, db_.dtype, to_string(precision));
}

void MeasuredCosts::note(const std::string& name, Phase phase, Pricing how) const {
  const std::lock_guard<std::mutex> lock(mutex_);
  Pricing& seen = pricing_.try_emplace(fmt::format("{} ({})", name, to_string(phase)), how).first->second;
  seen = std::max(seen, how);  // report the least measured way an op was priced
}

// A recomputed forward op is the same kernel as the forward one: its measurement counts
// when the profiled run did not recompute.
const OpRecord* MeasuredCosts::exact(const ComputeOp& op) const {
  const OpRecord* best = nullptr;
  for (const Phase phase : {op.phase, Phase::Forward}) {
    if (phase != op.phase && op.phase != Phase::Recompute) break;
    for (const auto& r : db_.ops)
      if (r.phase == phase && r.name == op.name && r.shape == shape_of(op) && (!best || r.samples > best->samples))
        best = &r;
    if (best) return best;
  }
  return nullptr;
}

const OpRecord* MeasuredCosts::nearest(const ComputeOp& op) const {
  const OpRecord* best = nullptr;
  double best_distance = 0;
  for (const Phase phase : {op.phase, Phase::Forward}) {
    if (phase != op.phase && op.phase != Phase::Recompute) break;
    for (const auto& r : db_.ops) {
      if (r.phase != phase || r.name != op.name) continue;
      const double distance = shape_distance(r.shape, shape_of(op));
      if (!best || distance < best_distance) {
        best = &r;
        best_distance = distance;
      }
    }
    if (best) return best;
  }
  return nullptr;
}

// Along the op's measured shapes at the nearest record's TP degree (the profile's micro
// batch sizes), as a collective along its sweep: between two measured shapes a straight
// line in log(work)-log(time); beyond them the last measured throughput (time per FLOP or
// byte) holds. Measured, not a device model's ratio: the analytic model is a GPU's, whose
// latency floors made doubled CPU work look 1.6x as long when it took 2x.
double MeasuredCosts::scaled_time(const ComputeOp& op, const OpRecord& nearest) const {
  std::vector<std::pair<double, double>> points;  // (work, seconds), each measured shape of the op
  for (const auto& r : db_.ops)
    if (r.name == nearest.name && r.phase == nearest.phase && r.tp == nearest.tp && r.mean_s > 0)
      points.emplace_back(work(at_shape(op, r.shape)), r.mean_s);
  // Every record of the op timed at zero (below the timer's resolution): no throughput to
  // scale by, and zero work per second scales to zero.
  if (points.empty()) return 0.0;
  std::sort(points.begin(), points.end());
  const double w = work(op);
  const auto hi = std::find_if(points.begin(), points.end(), [&](const auto& p) { return p.first >= w; });
  if (hi == points.begin() || hi == points.end() || hi->first == (hi - 1)->first) {
    const auto& end = hi == points.begin() ? points.front() : points.back();
    if (hi != points.end() && hi->first == w) return hi->second;
    return end.second * w / end.first;
  }
  const auto lo = hi - 1;
  const double f = std::log(w / lo->first) / std::log(hi->first / lo->first);
  return std::exp(std::log(lo->second) + f * (std::log(hi->second) - std::log(lo->second)));
}

OpCost MeasuredCosts::compute(const ComputeOp& op) const {
  if (std::find(db_.fused_ops.begin(), db_.fused_ops.end(), op.name) != db_.fused_ops.end()) {
    note(op.name, op.phase, Pricing::Fused);
    return {0.0, true};
  }
  // The host's time goes with the device's where the profile recorded it: the simulator
  // prices the step as the flow shop of launches and device work (cost_of), so a host that
  // cannot keep up sets the pace. A launch costs the same at any size, so a scaled op keeps
  // its nearest record's host time.
  if (const OpRecord* r = exact(op)) {
    note(op.name, op.phase, Pricing::Exact);
    return {r->mean_s, true, r->host_mean_s};
  }
  if (const OpRecord* r = nearest(op)) {
    note(op.name, op.phase, Pricing::Scaled);
    return {scaled_time(op, *r), true, r->host_mean_s};
  }
  note(op.name, op.phase, Pricing::Analytic);
  return analytic_.compute(op);
}

OpCost MeasuredCosts::collective(const CollectiveOp& op) const {
  if (op.group.size <= 1 || op.bytes <= 0) return {0.0, false};
  // The sweeps and in-step records are of TP groups and pipeline pairs; a context-parallel
  // exchange runs beside attention on a group of its own, and the flex dispatcher's relayed
  // all-to-all is not NCCL's, neither of which any database has measured, so they are priced
  // by the analytic model and named in coverage().
  if (op.group.nodes <= 1 && !is_context_parallel(op.runs_on) && op.node_relay_share == 0)
    for (std::size_t i = 0; i < db_.collectives.size(); ++i) {
      const CollectiveCurve& c = db_.collectives[i];
      if (c.kind == op.kind && c.group_size == op.group.size) {
        note(fmt::format("{}:{}", op.name, to_string(op.kind)), op.phase, Pricing::Exact);
        return {measured_collective_time(c, op.bytes) * in_step_factor(in_step_ratios_[i], op.bytes), true};
      }
    }
  note(fmt::format("{}:{} on {} ranks", op.name, to_string(op.kind), op.group.size), op.phase, Pricing::Analytic);
  return analytic_.collective(op);
}

std::string MeasuredCosts::describe() const {
  const auto& m = db_.machine;
  const std::string device =
      m.gpu_name.empty() ? fmt::format("{}, {} cores", m.cpu_model, m.cpu_cores) : m.gpu_name;
  return fmt::format("measured cost database {} ({} backend on {}, {}; {})", path_, m.backend, device, db_.created,
                     db_.dtype);
}

MeasuredCosts::PricingCounts MeasuredCosts::pricing_counts() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  PricingCounts c;
  for (const auto& [name, how] : pricing_) {
    if (how == Pricing::Exact) ++c.exact;
    if (how == Pricing::Scaled) ++c.scaled;
    if (how == Pricing::Fused) ++c.fused;
    if (how == Pricing::Analytic) c.analytic.push_back(name);
  }
  return c;
}

std::string MeasuredCosts::coverage() const {
  const PricingCounts c = pricing_counts();
  std::string line = fmt::format("{} ops measured at their shape, {} scaled from the nearest measured shape, {} fused",
                                 c.exact, c.scaled, c.fused);
  if (c.analytic.empty()) return line + ", none from the analytic model";
  return fmt::format("{}, {} from the analytic model (not in the database): {}", line, c.analytic.size(),
                     fmt::join(c.analytic, ", "));
}

}  // namespace cc
