// fuzz_cost_database — a measured cost database (sim/cost_database.h cost_database_from_text),
// as `--costs FILE` reads it. An accepted database must keep its promise that what it writes
// reads back and writes byte-identical, and is then priced as the simulator prices from it:
// MeasuredCosts in its own precision, every op at its measured shape and at a doubled one
// (the scaled path), every collective curve below, inside and beyond its sweep.
#include "sim/cost_database.h"
#include "sim/measured_costs.h"
#include "sim/presets.h"
#include "tests/fuzz/fuzz_support.h"

namespace {

cc::Precision precision_of(const std::string& dtype) {
  if (dtype == "bf16") return cc::Precision::BF16;
  if (dtype == "fp16") return cc::Precision::FP16;
  if (dtype == "fp8") return cc::Precision::FP8;
  return cc::Precision::FP32;
}

void price(const cc::CostDatabase& db) {
  static const cc::ClusterSpec cluster = cc::load_cluster("dgx-a100-80gb");
  const cc::MeasuredCosts costs(db, "fuzz.json", cluster, precision_of(db.dtype));
  for (const auto& r : db.ops) {
    cc::ComputeOp op;
    op.name = r.name.c_str();
    op.kind = cc::OpKind::Gemm;
    op.phase = r.phase;
    op.m = r.shape[0];
    op.n = r.shape[1];
    op.k = r.shape[2];
    op.batch = r.shape[3];
    op.flops = 2.0 * static_cast<double>(op.m) * static_cast<double>(op.n) * static_cast<double>(op.k) *
               static_cast<double>(op.batch);
    op.bytes = 2.0 * static_cast<double>(op.m) * static_cast<double>(op.n);
    (void)costs.compute(op);
    op.m = op.m < (std::int64_t{1} << 40) ? 2 * op.m : op.m / 2;
    op.flops *= 2;
    (void)costs.compute(op);
  }
  for (const auto& c : db.collectives) {
    for (const double bytes : {c.points.front().bytes / 2, c.points.front().bytes,
                               (c.points.front().bytes + c.points.back().bytes) / 2, c.points.back().bytes * 2})
      (void)cc::measured_collective_time(c, bytes);
    (void)costs.collective({"fuzz", c.kind, cc::Phase::Backward, c.points.back().bytes, {c.group_size, 1, c.group_size}});
  }
  (void)costs.coverage();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = cc::fuzz::text_of(data, size);
  cc::fuzz::parse_or_refuse([&] {
    const cc::CostDatabase db = cc::cost_database_from_text(text, "cost database 'fuzz.json'");
    const std::string written = cc::cost_database_to_text(db);
    std::string again;
    try {
      again = cc::cost_database_to_text(cc::cost_database_from_text(written, "written cost database"));
    } catch (const cc::SpecError& e) {
      cc::fuzz::finding(std::string("an accepted cost database does not read back from its own text: ") + e.what());
    }
    if (again != written) cc::fuzz::finding("an accepted cost database does not write back byte-identical");
    price(db);
  });
  return 0;
}
