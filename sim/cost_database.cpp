#include "sim/cost_database.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/atomic_file.h"
#include "sim/error.h"
#include "sim/framework_spec.h"
#include "sim/json_fields.h"

namespace cc {

namespace {

using nlohmann::json;

constexpr const char* kSchemaName = "clustercast-cost-database";
const std::vector<std::string> kPhases = {"forward", "backward", "recompute"};
const std::vector<std::string> kCollectives = {"all_reduce", "all_gather", "reduce_scatter", "send_recv"};
const std::vector<std::string> kDtypes = {"fp32", "bf16", "fp16", "fp8"};

Phase phase_from(const std::string& s) {
  return s == "forward" ? Phase::Forward : s == "backward" ? Phase::Backward : Phase::Recompute;
}

CollectiveKind collective_from(const std::string& s) {
  if (s == "all_reduce") return CollectiveKind::AllReduce;
  if (s == "all_gather") return CollectiveKind::AllGather;
  if (s == "reduce_scatter") return CollectiveKind::ReduceScatter;
  return CollectiveKind::SendRecv;
}

// Calls read(element, "where[i]") for each element of the array field `key`.
template <typename Read>
void each(const JsonFields& f, const std::string& key, Read read) {
  const json& array = f.raw(key);
  if (!array.is_array()) fail("{}: field '{}' must be an array, found {}", f.where(), key, array.type_name());
  for (std::size_t i = 0; i < array.size(); ++i) read(array[i], fmt::format("{} {}[{}]", f.where(), key, i));
}

json machine_to_json(const MachineFingerprint& m) {
  return {{"backend", m.backend},         {"cpu_model", m.cpu_model},       {"cpu_cores", m.cpu_cores},
          {"memory_gib", m.memory_gib},   {"gpu_name", m.gpu_name},         {"gpu_sms", m.gpu_sms},
          {"gpu_clock_mhz", m.gpu_clock_mhz}, {"driver_version", m.driver_version},
          {"cuda_version", m.cuda_version}, {"nccl_version", m.nccl_version},
          {"cublas_version", m.cublas_version}, {"mpi_version", m.mpi_version}};
}

MachineFingerprint machine_from(const JsonFields& f) {
  MachineFingerprint m;
  m.backend = f.choice("backend", {"cpu", "cuda"});
  m.cpu_model = f.string("cpu_model");
  m.cpu_cores = static_cast<int>(f.integer("cpu_cores", 1));
  m.memory_gib = f.number("memory_gib", 0);
  m.gpu_name = f.string("gpu_name");
  m.gpu_sms = static_cast<int>(f.integer("gpu_sms", 0));
  m.gpu_clock_mhz = static_cast<int>(f.integer("gpu_clock_mhz", 0));
  m.driver_version = f.string("driver_version");
  m.cuda_version = f.string("cuda_version");
  m.nccl_version = f.string("nccl_version");
  m.cublas_version = f.string("cublas_version");
  m.mpi_version = f.string("mpi_version");
  return m;
}

json run_to_json(const ProfiledRun& r) {
  return {{"model", json::parse(r.model)},
          {"tp", r.tp},
          {"micro_batch", r.micro_batch},
          {"global_batch", r.global_batch},
          {"recompute", r.recompute},
          {"sequence_parallel", r.sequence_parallel},
          {"timed_steps", r.timed_steps},
          {"iteration_mean_s", r.iteration_mean_s},
          {"iteration_median_s", r.iteration_median_s},
          {"iteration_p10_s", r.iteration_p10_s},
          {"iteration_p90_s", r.iteration_p90_s}};
}

ProfiledRun run_from(const JsonFields& f) {
  ProfiledRun r;
  const json& model = f.raw("model");
  if (!model.is_object()) fail("{}: field 'model' must be a model JSON object", f.where());
  r.model = model.dump();
  r.tp = static_cast<int>(f.integer("tp", 1));
  r.micro_batch = static_cast<int>(f.integer("micro_batch", 1));
  r.global_batch = static_cast<int>(f.integer("global_batch", 1));
  r.recompute = f.choice("recompute", {"none", "selective", "full"});
  r.sequence_parallel = f.boolean("sequence_parallel");
  r.timed_steps = static_cast<int>(f.integer("timed_steps", 1));
  r.iteration_mean_s = f.number("iteration_mean_s", 0);
  r.iteration_median_s = f.number("iteration_median_s", 0);
  r.iteration_p10_s = f.number("iteration_p10_s", 0);
  r.iteration_p90_s = f.number("iteration_p90_s", 0);
  return r;
}

json op_to_json(const OpRecord& o) {
  json j = {{"name", o.name}, {"phase", to_string(o.phase)}, {"shape", o.shape},         {"dtype", o.dtype},
            {"tp", o.tp},     {"samples", o.samples},        {"mean_s", o.mean_s},       {"median_s", o.median_s},
            {"p10_s", o.p10_s}, {"p90_s", o.p90_s}};
  if (o.host_mean_s > 0) j["host_mean_s"] = o.host_mean_s;  // databases without it read as before
  return j;
}

OpRecord op_from(const JsonFields& f) {
  OpRecord o;
  o.name = f.string("name");
  if (o.name.empty()) fail("{}: field 'name' is empty", f.where());
  o.phase = phase_from(f.choice("phase", kPhases));
  const json& shape = f.raw("shape");
  if (!shape.is_array() || shape.size() != 4 ||
      !std::all_of(shape.begin(), shape.end(), [](const json& d) { return d.is_number_integer() && d.get<long long>() >= 1; }))
    fail("{}: field 'shape' must be 4 positive integers [m, n, k, batch], found {}", f.where(), shape.dump());
  for (std::size_t i = 0; i < 4; ++i) o.shape[i] = shape[i].get<std::int64_t>();
  o.dtype = f.choice("dtype", kDtypes);
  o.tp = static_cast<int>(f.integer("tp", 1));
  o.samples = static_cast<int>(f.integer("samples", 1));
  o.mean_s = f.number("mean_s", 0);
  o.median_s = f.number("median_s", 0);
  o.p10_s = f.number("p10_s", 0);
  o.p90_s = f.number("p90_s", 0);
  o.host_mean_s = f.number_or("host_mean_s", 0, 0);  // absent: not recorded
  return o;
}

json curve_to_json(const CollectiveCurve& c) {
  json points = json::array();
  for (const auto& p : c.points)
    points.push_back({{"bytes", p.bytes}, {"count", p.count}, {"time_s", p.time_s}, {"algbw_gbs", p.algbw_gbs},
                      {"busbw_gbs", p.busbw_gbs}});
  return {{"kind", to_string(c.kind)},   {"group_size", c.group_size},
          {"latency_s", c.latency_s},    {"bus_bandwidth_gbs", c.bus_bandwidth_gbs},
          {"max_residual", c.max_residual}, {"points", points}};
}

CollectiveCurve curve_from(const JsonFields& f) {
  CollectiveCurve c;
  c.kind = collective_from(f.choice("kind", kCollectives));
  c.group_size = static_cast<int>(f.integer("group_size", 2));
  c.latency_s = f.number("latency_s", 0);
  c.bus_bandwidth_gbs = f.number("bus_bandwidth_gbs", 0);
  if (c.bus_bandwidth_gbs <= 0) fail("{}: field 'bus_bandwidth_gbs' must be > 0", f.where());
  c.max_residual = f.number("max_residual", 0);
  each(f, "points", [&](const json& p, const std::string& where) {
    const JsonFields pf(p, where);
    CollectivePoint point{pf.number("bytes", 1), pf.integer("count", 1, 1LL << 50), pf.number("time_s", 0),
                          pf.number("algbw_gbs", 0), pf.number("busbw_gbs", 0)};
    if (!c.points.empty() && point.bytes <= c.points.back().bytes)
      fail("{}: field 'bytes' must be larger than the previous point's ({})", where, c.points.back().bytes);
    c.points.push_back(point);
  });
  if (c.points.empty()) fail("{}: field 'points' is empty", f.where());
  return c;
}

json in_step_to_json(const InStepCollective& c) {
  return {{"kind", to_string(c.kind)}, {"group_size", c.group_size}, {"bytes", c.bytes}, {"calls", c.calls},
          {"mean_s", c.mean_s}};
}

InStepCollective in_step_from(const JsonFields& f) {
  InStepCollective c;
  c.kind = collective_from(f.choice("kind", kCollectives));
  c.group_size = static_cast<int>(f.integer("group_size", 2));
  c.bytes = f.number("bytes", 1);
  c.calls = static_cast<int>(f.integer("calls", 1));
  c.mean_s = f.number("mean_s", 0);
  return c;
}

}  // namespace

std::string cost_database_to_text(const CostDatabase& db) {
  json doc;
  doc["schema"] = kSchemaName;
  doc["version"] = db.version;
  doc["created"] = db.created;
  doc["command"] = db.command;
  doc["machine"] = machine_to_json(db.machine);
  doc["dtype"] = db.dtype;
  doc["framework"] = db.framework;
  doc["fused_ops"] = db.fused_ops;
  doc["runs"] = json::array();
  for (const auto& r : db.runs) doc["runs"].push_back(run_to_json(r));
  doc["ops"] = json::array();
  for (const auto& o : db.ops) doc["ops"].push_back(op_to_json(o));
  doc["collectives"] = json::array();
  for (const auto& c : db.collectives) doc["collectives"].push_back(curve_to_json(c));
  doc["in_step_collectives"] = json::array();
  for (const auto& c : db.in_step_collectives) doc["in_step_collectives"].push_back(in_step_to_json(c));
  return doc.dump(1) + "\n";
}

CostDatabase cost_database_from_text(const std::string& text, const std::string& where) {
  const json doc = parse_json(text, where);
  const JsonFields f(doc, where);
  if (f.string("schema") != kSchemaName)
    fail("{}: field 'schema' is '{}'; a cost database says '{}'", where, f.string("schema"), kSchemaName);
  CostDatabase db;
  db.version = static_cast<int>(f.integer("version", 0));
  if (db.version != kCostDatabaseVersion)
    fail("{}: field 'version' is {}; this clustercast reads cost database version {} (re-run `clustercast profile`)",
         where, db.version, kCostDatabaseVersion);
  db.created = f.string("created");
  db.command = f.string("command");
  db.machine = machine_from(f.object("machine"));
  db.dtype = f.choice("dtype", kDtypes);
  // Databases written before the field existed all came from clustercast's own profiler.
  db.framework = f.choice_or("framework", framework_preset_names(), kMeasuredEngineFramework);
  each(f, "fused_ops", [&](const json& name, const std::string& at) {
    if (!name.is_string()) fail("{}: must be an op name (a string), found {}", at, name.dump());
    db.fused_ops.push_back(name.get<std::string>());
  });
  each(f, "runs", [&](const json& r, const std::string& at) { db.runs.push_back(run_from(JsonFields(r, at))); });
  each(f, "ops", [&](const json& o, const std::string& at) {
    db.ops.push_back(op_from(JsonFields(o, at)));
    if (db.ops.back().dtype != db.dtype)
      fail("{}: field 'dtype' is '{}' but the database's dtype is '{}'", at, db.ops.back().dtype, db.dtype);
  });
  each(f, "collectives", [&](const json& c, const std::string& at) {
    db.collectives.push_back(curve_from(JsonFields(c, at)));
  });
  // Databases written before the field existed price collectives by the sweep alone.
  if (f.has("in_step_collectives"))
    each(f, "in_step_collectives", [&](const json& c, const std::string& at) {
      db.in_step_collectives.push_back(in_step_from(JsonFields(c, at)));
    });
  return db;
}

CostDatabase read_cost_database(const std::string& path) {
  return cost_database_from_text(read_regular_file(path, "cost database"), fmt::format("cost database '{}'", path));
}

void write_cost_database(const std::string& path, const CostDatabase& db) {
  write_file_atomically(path, cost_database_to_text(db));
}

}  // namespace cc
