// checkpoint_folders.h — where a training run's checkpoints live on disk, and how a step's folder
// appears there whole or not at all.
//
// A saved step is DIR/step-N, one file per rank. Its files are written under a hidden partial name,
// DIR/.step-N.partial, and the folder is renamed to step-N only when every rank has written its
// file: a run killed mid-save leaves no step-N that a resume could half-read (the partial folder it
// may leave is cleared by the next save of that step). With a keep count, the step folders past the
// newest `keep` are removed after each save. A save is refused before it starts when the disk
// cannot hold what the run would keep.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cc::engine {

std::string step_folder(const std::string& save_dir, long step);
std::string partial_step_folder(const std::string& save_dir, long step);

// Clears any partial folder of `step` a killed run left and makes it afresh (one rank does this
// before any rank writes).
void begin_step_folder(const std::string& save_dir, long step);
// Moves the written partial folder into place as step-N, replacing an older step-N of that number
// only once the new one is complete.
void publish_step_folder(const std::string& save_dir, long step);
// Removes a partial folder after a failed save (best effort: the failure is what is reported).
void discard_step_folder(const std::string& save_dir, long step) noexcept;

// The steps saved in `save_dir` (folders named step-N), in increasing order.
std::vector<long> saved_steps(const std::string& save_dir);
// Removes every step folder but the newest `keep` (keep 0: keeps them all).
void prune_step_folders(const std::string& save_dir, int keep);

// How many checkpoints a run of steps start+1..steps saves (every `save_every`, and the last), and
// how many of them it holds on disk at once with a keep count (0: all), counting the one being
// written before the oldest is removed.
long checkpoints_saved(long start, long steps, int save_every);
long checkpoints_held(long saved, int keep);

// Refuses (SpecError) when the file system of `save_dir` has fewer bytes free than `held`
// checkpoints of `bytes_per_checkpoint` each, naming both and what would fit.
void check_checkpoint_space(const std::string& save_dir, std::uint64_t bytes_per_checkpoint, long held,
                            std::uint64_t available_bytes);
std::uint64_t available_disk_bytes(const std::string& save_dir);

}  // namespace cc::engine
