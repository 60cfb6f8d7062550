#include "sim/result_json.h"

#include <map>

#include "sim/units.h"

namespace cc {

namespace {

// `moe`: the model has routed experts, so "experts" (their share of weights, gradients and
// optimizer state, inside those three) is written too.
nlohmann::json memory_json(const MemoryBreakdown& m, bool moe) {
  nlohmann::json j = {{"weights", m.weights / kGiB},
                      {"gradients", m.gradients / kGiB},
                      {"optimizer", m.optimizer / kGiB},
                      {"activations", m.activations / kGiB},
                      {"workspaces", m.workspaces / kGiB},
                      {"other", m.other / kGiB}};
  if (moe) j["experts"] = m.experts / kGiB;
  return j;
}

}  // namespace

nlohmann::json result_to_json(const SimResult& r) {
  const TimeBreakdown& b = r.breakdown;
  nlohmann::json stages = nlohmann::json::array();
  for (std::size_t s = 0; s < r.memory.stages.size(); ++s) {
    const StageMemory& st = r.memory.stages[s];
    stages.push_back({{"stage", s},
                      {"parameters", st.parameters},
                      {"in_flight_microbatches", st.in_flight},
                      {"total_gib", st.bytes.total() / kGiB},
                      {"memory_gib", memory_json(st.bytes, r.model.moe.enabled())}});
  }
  nlohmann::json j = {
      {"iteration_time_s", r.iteration_time_s},
      {"tflops_per_gpu", r.tflops_per_gpu},
      {"hardware_tflops_per_gpu", r.hardware_tflops_per_gpu},
      {"mfu", r.mfu},
      {"hfu", r.hfu},
      {"tokens_per_s", r.tokens_per_s},
      {"parameters_total", r.model.total_parameters()},
      {"parameters_active", r.model.active_parameters()},
      {"model_flops_per_iteration", r.model_flops},
      {"hardware_flops_per_iteration", r.hardware_flops},
      {"peak_memory_gib", r.peak_memory_gib},
      {"peak_memory_stage", r.memory.peak_stage},
      {"hbm_gib", r.hbm_gib},
      {"usable_gib", r.usable_gib},
      {"fits", r.fits},
      {"memory_gib", memory_json(r.memory.peak(), r.model.moe.enabled())},
      {"memory_per_stage", stages},
      {"bubble_fraction", r.bubble_fraction},
      {"time_breakdown_s",
       {{"compute", b.compute},
        {"recompute", b.recompute},
        {"tp_communication", b.tp_comm},
        {"cp_communication", b.cp_comm},
        {"ep_communication", b.ep_comm},
        {"pp_communication", b.pp_comm},
        {"dp_communication", b.dp_comm},
        {"optimizer", b.optimizer},
        {"host", b.host},
        {"bubble", b.bubble}}},
      {"breakdown_stage", r.reported_stage},
      {"training_days", r.train_tokens > 0 ? nlohmann::json(r.training_days) : nlohmann::json(nullptr)},
      {"train_tokens", r.train_tokens > 0 ? nlohmann::json(r.train_tokens) : nlohmann::json(nullptr)},
      {"gpus", r.config.gpus()},
      {"num_microbatches", r.config.num_microbatches()},
      {"cost_source", r.cost_source},
      {"measured_fraction", r.measured_fraction},
      {"cost_coverage", r.cost_coverage},
      {"simulated_tasks", r.tasks},
      {"config", config_to_json(r.config)},
      {"model", model_to_json(r.model)},
      {"cluster", r.cluster.name},
  };
  // The interval the cross-validated error puts around the prediction (null without one).
  const auto bounds = [&](double low, double high) {
    return r.interval ? nlohmann::json{{"low", low}, {"high", high}} : nlohmann::json(nullptr);
  };
  j["iteration_time_interval_s"] = bounds(r.iteration_time_low_s(), r.iteration_time_high_s());
  j["training_days_interval"] =
      r.train_tokens > 0 ? bounds(r.training_days_low(), r.training_days_high()) : nlohmann::json(nullptr);
  j["interval_basis"] = r.interval ? nlohmann::json(r.interval->basis) : nlohmann::json(nullptr);
  return j;
}

nlohmann::json timeline_to_chrome_trace(const SimResult& r) {
  nlohmann::json events = nlohmann::json::array();
  std::map<std::pair<int, StreamLane>, int> threads;
  for (const auto& e : r.timeline) {
    auto key = std::make_pair(e.process, e.lane);
    if (!threads.count(key)) {
      const int tid = static_cast<int>(threads.size());
      threads[key] = tid;
      events.push_back(
          {{"ph", "M"}, {"name", "thread_name"}, {"pid", e.process}, {"tid", tid}, {"args", {{"name", to_string(e.lane)}}}});
    }
  }
  std::map<int, bool> named;
  for (const auto& e : r.timeline)
    if (!named[e.process]) {
      named[e.process] = true;
      events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", e.process}, {"args", {{"name", "stage " + std::to_string(e.process)}}}});
    }
  for (const auto& e : r.timeline) {
    if (e.duration == 0) continue;
    // Integer nanoseconds in, microseconds out: exact to the nanosecond for any realistic run.
    auto us = [](SimTime ns) { return static_cast<double>(ns) / 1000.0; };
    events.push_back({{"ph", "X"},
                      {"name", e.name},
                      {"cat", to_string(e.kind)},
                      {"pid", e.process},
                      {"tid", threads[{e.process, e.lane}]},
                      {"ts", us(e.start)},
                      {"dur", us(e.duration)}});
  }
  return {{"traceEvents", events}, {"displayTimeUnit", "ms"}, {"otherData", {{"config", r.config.summary()}, {"model", r.model.name}}}};
}

}  // namespace cc
