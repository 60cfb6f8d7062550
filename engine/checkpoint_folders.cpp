#include "engine/checkpoint_folders.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "sim/error.h"
#include "sim/units.h"

namespace cc::engine {

namespace fs = std::filesystem;

namespace {

// The step of a folder named step-N (N decimal digits only), or -1 for any other name.
long step_of(const std::string& name) {
  constexpr std::string_view prefix = "step-";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return -1;
  long step = -1;
  const char* first = name.data() + prefix.size();
  const char* last = name.data() + name.size();
  const auto [end, ec] = std::from_chars(first, last, step);
  return ec == std::errc() && end == last && step >= 0 ? step : -1;
}

std::string size_text(double bytes) {
  return bytes < kGiB ? fmt::format("{:.1f} MiB", bytes / kMiB) : fmt::format("{:.1f} GiB", bytes / kGiB);
}

}  // namespace

std::string step_folder(const std::string& save_dir, long step) { return fmt::format("{}/step-{}", save_dir, step); }

std::string partial_step_folder(const std::string& save_dir, long step) {
  return fmt::format("{}/.step-{}.partial", save_dir, step);
}

void begin_step_folder(const std::string& save_dir, long step) {
  const std::string partial = partial_step_folder(save_dir, step);
  std::error_code ec;
  fs::remove_all(partial, ec);
  if (ec) fail("cannot clear the unfinished checkpoint folder '{}': {}", partial, ec.message());
  fs::create_directories(partial, ec);
  if (ec) fail("cannot create checkpoint folder '{}': {}", partial, ec.message());
}

void publish_step_folder(const std::string& save_dir, long step) {
  const std::string partial = partial_step_folder(save_dir, step);
  const std::string final = step_folder(save_dir, step);
  const std::string replaced = fmt::format("{}/.step-{}.replaced", save_dir, step);
  std::error_code ec;
  // rename() cannot replace a folder that has files: the old one steps aside first, and goes only
  // once the new one is in place.
  const bool had_one = fs::exists(final, ec);
  if (had_one) {
    fs::remove_all(replaced, ec);
    fs::rename(final, replaced, ec);
    if (ec) fail("cannot move the earlier checkpoint '{}' aside: {}", final, ec.message());
  }
  fs::rename(partial, final, ec);
  if (ec) fail("cannot move the checkpoint '{}' into place as '{}': {}", partial, final, ec.message());
  if (had_one) fs::remove_all(replaced, ec);  // the new step is complete either way
}

void discard_step_folder(const std::string& save_dir, long step) noexcept {
  std::error_code ec;
  fs::remove_all(partial_step_folder(save_dir, step), ec);
}

std::vector<long> saved_steps(const std::string& save_dir) {
  std::vector<long> steps;
  std::error_code ec;
  for (fs::directory_iterator it(save_dir, ec), end; !ec && it != end; it.increment(ec)) {
    const long step = step_of(it->path().filename().string());
    if (step >= 0 && it->is_directory(ec)) steps.push_back(step);
  }
  if (ec) fail("cannot list the checkpoint folder '{}': {}", save_dir, ec.message());
  std::sort(steps.begin(), steps.end());
  return steps;
}

void prune_step_folders(const std::string& save_dir, int keep) {
  if (keep <= 0) return;
  const std::vector<long> steps = saved_steps(save_dir);
  if (steps.size() <= static_cast<std::size_t>(keep)) return;
  for (std::size_t i = 0; i + static_cast<std::size_t>(keep) < steps.size(); ++i) {
    std::error_code ec;
    fs::remove_all(step_folder(save_dir, steps[i]), ec);
    if (ec)
      fail("--save-keep {}: cannot remove the older checkpoint '{}': {}", keep, step_folder(save_dir, steps[i]),
           ec.message());
  }
}

long checkpoints_saved(long start, long steps, int save_every) {
  if (steps <= start) return 0;
  if (save_every <= 0) return 1;
  const long periodic = steps / save_every - start / save_every;
  return periodic + (steps % save_every == 0 ? 0 : 1);  // the last step saves too
}

long checkpoints_held(long saved, int keep) { return keep <= 0 ? saved : std::min<long>(saved, keep + 1L); }

std::uint64_t available_disk_bytes(const std::string& save_dir) {
  // The folder may not exist yet (nothing is made before the check passes): its nearest existing
  // ancestor is on the file system it will be made in.
  std::error_code ec;
  fs::path existing = fs::absolute(save_dir, ec);
  while (!ec && existing.has_relative_path() && !fs::exists(existing, ec)) existing = existing.parent_path();
  const fs::space_info space = fs::space(existing, ec);
  if (ec) fail("--save {}: cannot read the free space of its file system: {}", save_dir, ec.message());
  return space.available;
}

void check_checkpoint_space(const std::string& save_dir, std::uint64_t bytes_per_checkpoint, long held,
                            std::uint64_t available_bytes) {
  const double need = static_cast<double>(bytes_per_checkpoint) * static_cast<double>(held);
  if (need <= static_cast<double>(available_bytes)) return;
  const long fit = static_cast<long>(available_bytes / std::max<std::uint64_t>(bytes_per_checkpoint, 1));
  const std::string advice = fit >= 2 ? fmt::format(
                                            "keep fewer with --save-keep N (N <= {} fits) or "
                                            "save less often with --save-every",
                                            fit - 1)
                                      : std::string(
                                            "not one checkpoint fits there; free space or "
                                            "--save to another disk");
  fail(
      "--save {}: this run holds {} checkpoint(s) of {} (every rank's file) "
      "at once, {} in all, but its file "
      "system has {} free; {}",
      save_dir, held, size_text(static_cast<double>(bytes_per_checkpoint)), size_text(need),
      size_text(static_cast<double>(available_bytes)), advice);
}

}  // namespace cc::engine
