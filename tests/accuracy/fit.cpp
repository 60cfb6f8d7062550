#include "accuracy/fit.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <Eigen/Dense>
#include <fmt/format.h>

#include "sim/analytic_costs.h"
#include "sim/error.h"
#include "sim/framework_spec.h"
#include "sim/simulator.h"

namespace cc::accuracy {

namespace {

// Typical relative error of one measured row: the scale of a data residual against the prior.
constexpr double kRowSigma = 0.05;
// Efficiency fractions are physical shares of a peak: never above this.
constexpr double kMaxFraction = 0.98;

// Host-side stack overheads before any fit. Sources: a CUDA kernel launch through PyTorch
// eager costs ~5 us of host time (PyTorch profiler "cudaLaunchKernel" on A100 hosts); a
// Megatron pass of one chunk adds ~0.2 ms of Python (schedule, p2p setup, autograd hooks).
// Per iteration, beyond the optimizer's device time and the gradient-norm all-reduce the
// model prices itself: the host's own work — some hundred launches for the multi-tensor
// Adam, norm and gradient zeroing at ~10 us, and the two host syncs of the step (the
// gradient norm's and the loss scaler's .item()) — about 2 ms.
constexpr double kHostLaunchPrior = 5e-6;
constexpr double kPassOverheadPrior = 2e-4;
// NCCL kernel launch plus c10d dispatch of one collective call: ~10 us (nccl-tests'
// smallest all-reduce on one node is ~10-15 us end to end).
constexpr double kCollectiveLaunchPrior = 1e-5;
constexpr double kIterationOverheadPrior = 2e-3;
// Common scales on the shared host costs (the only shared parameters) tried as the fit's
// starting point; 1 is the prior itself.
constexpr std::array<double, 6> kHostStartScales = {1.0, 2.0, 4.0, 8.0, 16.0, 32.0};

// Hopper's own hardware ceilings, where they differ from the defaults (A100 figures):
// - large bf16 GEMMs: 792.1 of 989 TFLOP/s on H100 SXM (80.1%) against 267.9 of 312 on A100
//   SXM (85.9%), the maximum-achievable-matmul-FLOPS table of S. Bekman's ml-engineering
//   (compute/accelerator/README.md, mamf-finder.py, CUDA 12.1);
// - attention: Transformer Engine runs cuDNN's fused attention on Hopper, 500-620 TFLOP/s
//   forward at head dim 128 and 1k-8k tokens (FlashAttention-3 paper, Shah et al. 2024,
//   arXiv 2407.08608, Fig. 5 cuDNN bars) and about 0.8 of that backward (its Fig. 7).
const std::map<std::string, double> kHopperPrior = {
    {"gemm_peak_fraction", 0.80}, {"flash_forward_fraction", 0.60}, {"flash_backward_fraction", 0.47}};

std::map<std::string, double> field_values(const AnalyticParams& p) {
  std::map<std::string, double> v;
  for (const auto& f : analytic_param_fields()) v[f.name] = p.*f.member;
  return v;
}

bool is_fraction(const std::string& field) { return field.size() > 9 && field.ends_with("_fraction"); }

// The calibration at scale factors `theta` (log) over `prior`: shared values first, then a
// generation's own values, then each stack's factor on the shared value.
Calibration at(const Calibration& prior, const std::vector<FreeParameter>& params, const Eigen::VectorXd& theta) {
  Calibration c = prior;
  const auto prior_values = field_values(prior.defaults);
  auto set = [](AnalyticParams& p, const std::string& field, double value) {
    for (const auto& f : analytic_param_fields())
      if (field == f.name) p.*f.member = value;
  };
  auto bounded = [](const std::string& field, double value) {
    return is_fraction(field) ? std::min(value, kMaxFraction) : value;
  };
  for (auto scope : {FreeParameter::Scope::Shared, FreeParameter::Scope::Generation, FreeParameter::Scope::Stack})
    for (std::size_t j = 0; j < params.size(); ++j) {
      const FreeParameter& p = params[j];
      if (p.scope != scope) continue;
      const double factor = std::exp(theta[static_cast<Eigen::Index>(j)]);
      const auto current = field_values(c.defaults);
      for (const auto& field : p.fields) {
        if (scope == FreeParameter::Scope::Shared) set(c.defaults, field, bounded(field, prior_values.at(field) * factor));
        if (scope == FreeParameter::Scope::Generation) {
          const auto own = prior.generations.find(p.group);
          const bool has_own = own != prior.generations.end() && own->second.count(field);
          const double base = has_own ? own->second.at(field) : prior_values.at(field);
          c.generations[p.group][field] = bounded(field, base * factor);
        }
        if (scope == FreeParameter::Scope::Stack) c.frameworks[p.group][field] = bounded(field, current.at(field) * factor);
      }
    }
  return c;
}

template <typename F>
void parallel_rows(std::size_t n, int threads, F body) {
  const int t = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (t == 1) {
    for (std::size_t k = 0; k < n; ++k) body(k);
    return;
  }
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> pool;
  for (int i = 0; i < t; ++i)
    pool.emplace_back([&] {
      for (std::size_t k = next++; k < n; k = next++) body(k);
    });
  for (auto& th : pool) th.join();
}

std::vector<std::size_t> fit_subset(const std::vector<CorpusRow>& rows, std::size_t max_per_source) {
  std::map<std::string, std::vector<std::size_t>> by_source;
  for (std::size_t i = 0; i < rows.size(); ++i) by_source[rows[i].source].push_back(i);
  std::vector<std::size_t> out;
  for (const auto& [source, idx] : by_source) {
    const double stride = std::max(1.0, static_cast<double>(idx.size()) / static_cast<double>(max_per_source));
    for (double k = 0; k < static_cast<double>(idx.size()); k += stride) out.push_back(idx[static_cast<std::size_t>(k)]);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

Calibration prior_calibration() {
  Calibration c;
  c.defaults = AnalyticParams{};
  c.defaults.host_launch_s = kHostLaunchPrior;
  c.defaults.collective_launch_s = kCollectiveLaunchPrior;
  c.defaults.pass_overhead_s = kPassOverheadPrior;
  c.defaults.iteration_overhead_s = kIterationOverheadPrior;
  c.generations["hopper"] = kHopperPrior;
  return c;
}

std::vector<FreeParameter> free_parameters(const std::vector<CorpusRow>& rows) {
  using Scope = FreeParameter::Scope;
  std::set<std::string> generations;
  std::map<std::string, std::set<std::string>> sources_of_stack;
  for (const auto& r : rows) {
    generations.insert(gpu_generation(r.cluster.gpu));
    sources_of_stack[r.config.framework].insert(r.source);
  }
  // A stack's own constants only where enough independent sources measure it (fit.h); below
  // that it takes the shared values, and what it does differently stays as its facts
  // (framework_spec.h).
  std::set<std::string> stacks;
  for (const auto& [stack, sources] : sources_of_stack)
    if (sources.size() >= kSourcesForStackConstants) stacks.insert(stack);
  const std::vector<std::vector<std::string>> host = {
      {"host_launch_s"}, {"collective_launch_s"}, {"pass_overhead_s"}, {"iteration_overhead_s"}};
  std::vector<FreeParameter> p;
  // Host costs are shared by every stack (a weak prior: they are what small runs measure);
  // a stack's own factor on them stays near 1 unless its rows insist.
  for (const auto& fields : host) p.push_back({Scope::Shared, "", fields, 1.5});
  for (const auto& g : generations) {
    // A measured hardware ceiling (kHopperPrior, AnalyticParams): the fit may move it little.
    p.push_back({Scope::Generation, g, {"gemm_peak_fraction"}, 0.1});
    // The servers' CPUs: host costs scale with them.
    p.push_back({Scope::Generation, g, {"host_time_factor"}, 0.3});
    p.push_back({Scope::Generation, g, {"memory_fraction"}, 0.3});
    p.push_back({Scope::Generation, g, {"flash_forward_fraction", "flash_backward_fraction"}, 0.3});
    p.push_back({Scope::Generation, g, {"nvlink_fraction"}, 0.3});
    p.push_back({Scope::Generation, g, {"fp8_gemm_fraction"}, 0.3});
    p.push_back({Scope::Generation, g, {"network_fraction"}, 0.3});
  }
  // A stack's own host costs: a factor on the shared ones, pulled towards 1.
  for (const auto& s : stacks)
    for (const auto& fields : host) p.push_back({Scope::Stack, s, fields, 0.7});
  // A stack's own kernel speed: releases differ by some percent on one GPU (cuBLAS, fusions,
  // deterministic algorithms), so a tight prior around the generation's efficiencies.
  for (const auto& s : stacks) p.push_back({Scope::Stack, s, {"compute_time_factor"}, 0.1});
  return p;
}

SimResult simulate_row(const CorpusRow& r, const Calibration& c, const ParallelConfig& config) {
  const AnalyticCosts costs(r.cluster, config.precision, c.params_for(r.cluster.gpu, config.framework));
  return simulate(r.model, r.cluster, config, costs);
}

SimResult simulate_row(const CorpusRow& r, const Calibration& c) { return simulate_row(r, c, r.config); }

std::vector<double> predict(const std::vector<CorpusRow>& rows, const Calibration& c, int threads) {
  std::vector<double> out(rows.size(), 0.0);
  parallel_rows(rows.size(), threads, [&](std::size_t i) { out[i] = simulate_row(rows[i], c).iteration_time_s; });
  return out;
}

namespace {

// The rows a fit on `all_rows` uses (an even stride through large sources), each with its
// weight (each source counts alike) and its log measured time.
struct FitRows {
  std::vector<CorpusRow> rows;
  Eigen::VectorXd weight, log_measured;
};
FitRows fit_rows(const std::vector<CorpusRow>& all_rows, const FitOptions& o) {
  FitRows f;
  for (std::size_t i : fit_subset(all_rows, o.max_rows_per_source)) f.rows.push_back(all_rows[i]);
  std::map<std::string, double> per_source;
  for (const auto& r : f.rows) per_source[r.source] += 1;
  const auto n = static_cast<Eigen::Index>(f.rows.size());
  f.weight.resize(n);
  f.log_measured.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto& r = f.rows[static_cast<std::size_t>(i)];
    f.weight[i] = 1.0 / (kRowSigma * std::sqrt(per_source[r.source]));
    f.log_measured[i] = std::log(r.measured_s);
  }
  return f;
}

}  // namespace

double data_cost(const std::vector<CorpusRow>& all_rows, const Calibration& c, const FitOptions& o) {
  const FitRows f = fit_rows(all_rows, o);
  const std::vector<double> pred = predict(f.rows, c, o.threads);
  double cost = 0;
  for (std::size_t i = 0; i < pred.size(); ++i) {
    const auto k = static_cast<Eigen::Index>(i);
    cost += std::pow(f.weight[k] * (std::log(pred[i]) - f.log_measured[k]), 2);
  }
  return cost;
}

Calibration fit(const std::vector<CorpusRow>& all_rows, const FitOptions& o, const FitProgress& progress) {
  const Calibration prior = prior_calibration();
  const std::vector<FreeParameter> params = free_parameters(all_rows);
  const FitRows fitted = fit_rows(all_rows, o);
  const std::vector<CorpusRow>& rows = fitted.rows;
  const Eigen::VectorXd& weight = fitted.weight;
  const Eigen::VectorXd& log_measured = fitted.log_measured;
  const auto n = static_cast<Eigen::Index>(rows.size());
  const auto p = static_cast<Eigen::Index>(params.size());
  // Which rows a parameter can move: a generation's rows, a stack's rows, or all of them.
  auto moves = [&](const FreeParameter& fp, const CorpusRow& row) {
    if (fp.scope == FreeParameter::Scope::Generation) return gpu_generation(row.cluster.gpu) == fp.group;
    if (fp.scope == FreeParameter::Scope::Stack) return row.config.framework == fp.group;
    return true;
  };
  // Residuals: weighted log errors of the rows, then the prior's pull on each parameter.
  // With `only` set, rows that parameter cannot move keep their residual from `base`.
  auto residuals = [&](const Eigen::VectorXd& theta, const FreeParameter* only = nullptr,
                       const Eigen::VectorXd* base = nullptr) {
    Eigen::VectorXd res(n + p);
    std::vector<CorpusRow> moved;
    std::vector<Eigen::Index> moved_index;
    for (Eigen::Index i = 0; i < n; ++i)
      if (!only || moves(*only, rows[static_cast<std::size_t>(i)])) {
        moved.push_back(rows[static_cast<std::size_t>(i)]);
        moved_index.push_back(i);
      } else {
        res[i] = (*base)[i];
      }
    const std::vector<double> pred = predict(moved, at(prior, params, theta), o.threads);
    for (std::size_t k = 0; k < moved.size(); ++k)
      res[moved_index[k]] = weight[moved_index[k]] * (std::log(pred[k]) - log_measured[moved_index[k]]);
    for (Eigen::Index j = 0; j < p; ++j) res[n + j] = theta[j] / params[static_cast<std::size_t>(j)].prior_sigma;
    return res;
  };

  // Levenberg-Marquardt with a forward-difference Jacobian, from `theta`.
  auto solve = [&](Eigen::VectorXd theta, double& cost) {
    Eigen::VectorXd r = residuals(theta);
    cost = r.squaredNorm();
    double lambda = 1e-2;
    constexpr double kStep = 1e-3;
    for (int it = 0; it < o.max_iterations; ++it) {
      Eigen::MatrixXd jac(n + p, p);
      for (Eigen::Index j = 0; j < p; ++j) {
        Eigen::VectorXd t = theta;
        t[j] += kStep;
        jac.col(j) = (residuals(t, &params[static_cast<std::size_t>(j)], &r) - r) / kStep;
      }
      const Eigen::MatrixXd jtj = jac.transpose() * jac;
      const Eigen::VectorXd jtr = jac.transpose() * r;
      bool improved = false;
      for (int tries = 0; tries < 8 && !improved; ++tries) {
        Eigen::MatrixXd a = jtj;
        a.diagonal() += lambda * jtj.diagonal().cwiseMax(1e-9);
        const Eigen::VectorXd step = a.ldlt().solve(-jtr);
        const Eigen::VectorXd candidate = theta + step;
        const Eigen::VectorXd rc = residuals(candidate);
        if (rc.squaredNorm() < cost) {
          const double gain = (cost - rc.squaredNorm()) / cost;
          theta = candidate;
          r = rc;
          cost = rc.squaredNorm();
          lambda = std::max(1e-6, lambda / 3);
          improved = true;
          if (progress) progress(fmt::format("iteration {}: cost {:.4g}", it + 1, cost));
          if (gain < 1e-3) it = o.max_iterations;  // converged: the last step gained under 0.1%
        } else {
          lambda *= 4;
        }
      }
      if (!improved) break;
    }
    return theta;
  };
  // Where to start. A host cost has almost no gradient while it hides behind the device (a
  // pass costs the slower of host and device), so started at the prior's 5 us per launch the
  // fit stays there and lets the per-iteration overhead absorb what small runs measure: fitted
  // without the functional tests, vTrain's host-bound rows missed by 24.7% in-sample that way.
  // So the shared host costs start at the best of a coarse grid of common scales first.
  Eigen::VectorXd start;
  double best_start = std::numeric_limits<double>::infinity(), start_scale = 0;
  for (double scale : kHostStartScales) {
    Eigen::VectorXd t = Eigen::VectorXd::Zero(p);
    for (Eigen::Index j = 0; j < p; ++j)
      if (params[static_cast<std::size_t>(j)].scope == FreeParameter::Scope::Shared) t[j] = std::log(scale);
    const double c = residuals(t).squaredNorm();
    if (c < best_start) {
      best_start = c;
      start_scale = scale;
      start = t;
    }
  }
  if (progress) progress(fmt::format("start: shared host costs x{:.3g} (cost {:.4g})", start_scale, best_start));
  double cost = 0;
  const Eigen::VectorXd theta = solve(start, cost);
  Calibration out = at(prior, params, theta);
  out.provenance["fit_rows"] = rows.size();
  out.provenance["objective"] = cost;
  return out;
}

CrossValidation cross_validate(const std::vector<CorpusRow>& rows, const FitOptions& o, const FitProgress& progress,
                               const std::map<std::string, Calibration>& reused) {
  // One fit on every source, then one without each source that `reused` does not hold:
  // independent, so they run side by side, each predicting on one thread (a lone fit on all).
  const std::vector<std::string> sources = sources_of(rows);
  std::vector<Calibration> fits(sources.size() + 1);
  std::vector<std::size_t> to_fit = {0};
  for (std::size_t k = 0; k < sources.size(); ++k) {
    const auto kept = reused.find(sources[k]);
    if (kept == reused.end()) {
      to_fit.push_back(k + 1);
    } else {
      fits[k + 1] = kept->second;
    }
  }
  std::mutex say_lock;
  FitOptions one = o;
  one.threads = to_fit.size() == 1 ? o.threads : 1;
  parallel_rows(to_fit.size(), to_fit.size() == 1 ? 1 : o.threads, [&](std::size_t j) {
    const std::size_t k = to_fit[j];
    const std::string what = k == 0 ? "all sources" : "without " + sources[k - 1];
    const std::vector<CorpusRow> train = k == 0 ? rows : rows_without(rows, sources[k - 1]);
    fits[k] = fit(train, one, [&](const std::string& line) {
      const std::lock_guard<std::mutex> hold(say_lock);
      if (progress) progress(what + ": " + line);
    });
  });
  CrossValidation cv;
  cv.all = fits[0];
  for (std::size_t k = 0; k < sources.size(); ++k) cv.without[sources[k]] = fits[k + 1];
  cv.in_sample = predict(rows, cv.all, o.threads);
  cv.held_out.assign(rows.size(), 0.0);
  for (std::size_t k = 0; k < sources.size(); ++k) {
    std::vector<CorpusRow> test;
    std::vector<std::size_t> test_index;
    for (std::size_t i = 0; i < rows.size(); ++i)
      if (rows[i].source == sources[k]) {
        test.push_back(rows[i]);
        test_index.push_back(i);
      }
    const std::vector<double> pred = predict(test, fits[k + 1], o.threads);
    for (std::size_t j = 0; j < test.size(); ++j) cv.held_out[test_index[j]] = pred[j];
  }
  cv.held_out_default_stack.assign(rows.size(), std::numeric_limits<double>::quiet_NaN());
  parallel_rows(rows.size(), o.threads, [&](std::size_t i) {
    CorpusRow unnamed = rows[i];
    unnamed.config.framework = kDefaultFramework;
    try {
      cv.held_out_default_stack[i] = simulate_row(unnamed, cv.without.at(rows[i].source)).iteration_time_s;
    } catch (const SpecError&) {  // a layout only the named stack runs (its layer partition)
    }
  });
  return cv;
}

}  // namespace cc::accuracy
