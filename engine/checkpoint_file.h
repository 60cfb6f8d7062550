// checkpoint_file.h — a generic, versioned binary container for checkpoints. The engine
// decides what goes in (named float arrays: parameters, optimizer moments; string metadata:
// step, layout, rank); this file stores and validates, and names a shard by its grid
// coordinates.
//
// Format, version 1 (all integers little-endian):
//   magic        8 bytes  "CCKPT\0\0\1"
//   version      u32      1
//   meta count   u64
//   array count  u64
//   meta entries          key (u64 length + bytes), value (u64 length + bytes), in key order
//   arrays                name (u64 length + bytes), u64 element count, raw IEEE-754 floats
//   crc          u32      CRC-32 (IEEE 802.3, as zlib/PNG) of every byte before it
// Writing is atomic (a temporary of its own beside PATH, then rename) and deterministic: the
// same data gives the same bytes. Reading validates everything; every length is bounded by the
// bytes that remain, so a damaged or foreign file gives a SpecError, never a crash or a huge
// allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "sim/parallel_grid.h"

namespace cc::engine {

inline constexpr std::uint32_t kCheckpointVersion = 1;

struct CheckpointData {
  std::map<std::string, std::string> meta;  // e.g. "step" -> "120", "layout" -> "tp2 pp1 dp2"
  std::vector<std::pair<std::string, std::vector<float>>> arrays;  // names must be unique

  bool operator==(const CheckpointData&) const = default;  // note: NaN != NaN
};

// Throws SpecError ("checkpoint 'PATH': ...") for duplicate array names or if the file
// cannot be written.
void write_checkpoint_file(const std::string& path, const CheckpointData& data);

// Throws SpecError "checkpoint 'PATH': <reason>" for a missing/unreadable file, an empty
// file, bad magic ("not a clustercast checkpoint"), an unsupported version, truncation
// ("truncated: ..." naming the part), a checksum mismatch ("corrupt: checksum mismatch"),
// trailing bytes, or an inconsistent structure (duplicate names).
CheckpointData read_checkpoint_file(const std::string& path);

// Lookups that throw SpecError "checkpoint 'PATH': no array named 'NAME' ..." (listing what
// the file holds) when the entry is missing. `path` is only used in the message.
const std::vector<float>& find_array(const CheckpointData& data, const std::string& name,
                                     const std::string& path);
std::string find_meta(const CheckpointData& data, const std::string& key,
                      const std::string& path);

// Throws SpecError "checkpoint 'PATH': KEY is 'FOUND', but this rank's is 'EXPECTED'; HINT"
// when the entry differs (and find_meta's message when it is missing).
void expect_meta(const CheckpointData& data, const std::string& key, const std::string& expected,
                 const std::string& path, const std::string& hint = "");

// Which shard of the model a rank's checkpoint holds: "rank" (its world rank) and
// "<name>_rank", its coordinate in each dimension of `grid`. tp_rank, dp_rank and pp_rank
// are always written (every checkpoint since version 1 has them); another dimension adds its
// key only at a size above 1, so a layout without it writes, and resumes from, the same keys
// as before the dimension existed.
std::map<std::string, std::string> shard_meta(const ParallelGrid& grid, int rank);

// CRC-32/IEEE (reflected polynomial 0xEDB88320, init and final XOR 0xFFFFFFFF).
// crc32_ieee("123456789") == 0xCBF43926.
std::uint32_t crc32_ieee(const void* data, std::size_t size);

}  // namespace cc::engine
