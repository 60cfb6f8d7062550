#include "engine/checkpoint_file.h"

#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>

#include "sim/atomic_file.h"
#include "sim/error.h"
#include "sim/json_fields.h"

namespace cc::engine {
namespace {

constexpr char kMagic[8] = {'C', 'C', 'K', 'P', 'T', '\0', '\0', '\1'};
constexpr std::size_t kMagicSize = sizeof kMagic;

constexpr std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1U) ? 0xEDB88320U ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<std::uint32_t, 256> kCrcTable = make_crc_table();

// ---- writing -------------------------------------------------------------------------

void put_u32(std::string& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFFU));
}

void put_u64(std::string& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFFU));
}

void put_string(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}

void put_floats(std::string& out, const std::vector<float>& values) {
  put_u64(out, values.size());
  if constexpr (std::endian::native == std::endian::little) {
    const std::size_t at = out.size();
    out.resize(at + values.size() * sizeof(float));
    if (!values.empty()) std::memcpy(out.data() + at, values.data(), values.size() * sizeof(float));
  } else {
    for (const float f : values) put_u32(out, std::bit_cast<std::uint32_t>(f));
  }
}

// ---- reading -------------------------------------------------------------------------

// Walks the file's bytes; every read is bounded by what remains, and running out names
// the part that was being read.
class Reader {
 public:
  Reader(const std::string& bytes, const std::string& path) : bytes_(bytes), path_(path) {}

  std::size_t pos() const { return pos_; }
  std::size_t remaining() const { return bytes_.size() - pos_; }

  [[noreturn]] void truncated(const std::string& part, std::uint64_t needed) const {
    fail("checkpoint '{}': truncated: the file ends inside {} (needs {} bytes at offset {}, "
         "only {} remain of {})",
         path_, part, needed, pos_, remaining(), bytes_.size());
  }

  void need(std::uint64_t n, const std::string& part) const {
    if (n > remaining()) truncated(part, n);
  }

  void skip(std::size_t n, const std::string& part) {
    need(n, part);
    pos_ += n;
  }

  std::uint32_t u32(const std::string& part) {
    need(4, part);
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
      v |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    pos_ += 4;
    return v;
  }

  std::uint64_t u64(const std::string& part) {
    need(8, part);
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i)
      v |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes_[pos_ + i])) << (8 * i);
    pos_ += 8;
    return v;
  }

  std::string string(const std::string& part) {
    const std::uint64_t n = u64("the length of " + part);
    need(n, part);
    std::string s = bytes_.substr(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return s;
  }

  std::vector<float> floats(const std::string& part) {
    const std::uint64_t n = u64("the element count of " + part);
    if (n > remaining() / sizeof(float)) {
      fail("checkpoint '{}': truncated: the file ends inside the data of {} ({} floats of 4 "
           "bytes at offset {}, only {} bytes remain of {})",
           path_, part, n, pos_, remaining(), bytes_.size());
    }
    std::vector<float> values(static_cast<std::size_t>(n));
    if constexpr (std::endian::native == std::endian::little) {
      if (n != 0) std::memcpy(values.data(), bytes_.data() + pos_, values.size() * sizeof(float));
      pos_ += values.size() * sizeof(float);
    } else {
      for (float& f : values) f = std::bit_cast<float>(u32(part));
    }
    return values;
  }

 private:
  const std::string& bytes_;
  const std::string& path_;
  std::size_t pos_ = 0;
};

std::string read_whole_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(fs::status(path, ec))) fail("checkpoint '{}': no such file", path);
  // Refuses a directory, FIFO or device by name (a FIFO would block forever).
  return read_regular_file(path, "checkpoint");
}

// A name read from a possibly damaged file, safe to put in a message: non-printable bytes
// escaped, long names shortened.
std::string printable(const std::string& name) {
  constexpr std::size_t kMax = 64;
  std::string out;
  for (std::size_t i = 0; i < name.size() && i < kMax; ++i) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\')
      out.push_back(static_cast<char>(c));
    else
      out += fmt::format("\\x{:02x}", c);
  }
  if (name.size() > kMax) out += fmt::format("... ({} bytes)", name.size());
  return out;
}

std::string list_names(const std::vector<std::string>& names) {
  if (names.empty()) return "it has none";
  constexpr std::size_t kShown = 12;
  std::string out = "it has: ";
  for (std::size_t i = 0; i < names.size() && i < kShown; ++i) {
    if (i != 0) out += ", ";
    out += "'" + names[i] + "'";
  }
  if (names.size() > kShown) out += fmt::format(" and {} more", names.size() - kShown);
  return out;
}

}  // namespace

std::uint32_t crc32_ieee(const void* data, std::size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t c = 0xFFFFFFFFU;
  for (std::size_t i = 0; i < size; ++i) c = kCrcTable[(c ^ p[i]) & 0xFFU] ^ (c >> 8);
  return c ^ 0xFFFFFFFFU;
}

void write_checkpoint_file(const std::string& path, const CheckpointData& data) {
  std::set<std::string> names;
  std::size_t size = kMagicSize + 4 + 8 + 8 + 4;
  for (const auto& [key, value] : data.meta) size += 16 + key.size() + value.size();
  for (const auto& [name, values] : data.arrays) {
    if (!names.insert(name).second)
      fail("checkpoint '{}': cannot write two arrays named '{}'", path, name);
    size += 16 + name.size() + values.size() * sizeof(float);
  }

  std::string out;
  out.reserve(size);
  out.append(kMagic, kMagicSize);
  put_u32(out, kCheckpointVersion);
  put_u64(out, data.meta.size());
  put_u64(out, data.arrays.size());
  for (const auto& [key, value] : data.meta) {
    put_string(out, key);
    put_string(out, value);
  }
  for (const auto& [name, values] : data.arrays) {
    put_string(out, name);
    put_floats(out, values);
  }
  put_u32(out, crc32_ieee(out.data(), out.size()));
  write_file_atomically(path, out);
}

CheckpointData read_checkpoint_file(const std::string& path) {
  const std::string bytes = read_whole_file(path);
  if (bytes.empty())
    fail("checkpoint '{}': the file is empty (not a clustercast checkpoint)", path);

  // Magic: a prefix of it that simply stops is a truncated checkpoint; anything else is not one.
  const std::size_t magic_seen = std::min(bytes.size(), kMagicSize);
  if (std::memcmp(bytes.data(), kMagic, magic_seen) != 0)
    fail("checkpoint '{}': not a clustercast checkpoint (bad magic number; expected the file to "
         "start with \"CCKPT\\0\\0\\1\")",
         path);
  Reader in(bytes, path);
  in.skip(kMagicSize, "the magic number");

  const std::uint32_t version = in.u32("the format version");
  if (version != kCheckpointVersion)
    fail("checkpoint '{}': unsupported format version {}; this build reads version {}", path,
         version, kCheckpointVersion);

  // Each meta entry and each array takes at least two u64 lengths (16 bytes), which bounds
  // the counts by what remains before anything is allocated.
  const std::uint64_t meta_count = in.u64("the meta entry count");
  const std::uint64_t array_count = in.u64("the array count");
  const std::uint64_t room = in.remaining() / 16;
  if (meta_count > room || array_count > room - meta_count)
    fail("checkpoint '{}': truncated: the header lists {} meta entries and {} arrays, but only {} "
         "bytes follow it (room for at most {} entries of 16 bytes or more)",
         path, meta_count, array_count, in.remaining(), room);

  std::vector<std::pair<std::string, std::string>> meta;
  meta.reserve(static_cast<std::size_t>(meta_count));
  for (std::uint64_t i = 0; i < meta_count; ++i) {
    std::string key = in.string(fmt::format("the key of meta entry {}", i));
    std::string value = in.string(fmt::format("the value of meta entry '{}'", printable(key)));
    meta.emplace_back(std::move(key), std::move(value));
  }
  CheckpointData data;
  data.arrays.reserve(static_cast<std::size_t>(array_count));
  for (std::uint64_t i = 0; i < array_count; ++i) {
    std::string name = in.string(fmt::format("the name of array {}", i));
    std::vector<float> values = in.floats(fmt::format("array '{}'", printable(name)));
    data.arrays.emplace_back(std::move(name), std::move(values));
  }

  const std::size_t body_end = in.pos();
  const std::uint32_t stored_crc = in.u32("the checksum");
  if (in.remaining() != 0)
    fail("checkpoint '{}': {} trailing bytes after the checksum (the file should end at byte {})",
         path, in.remaining(), in.pos());
  const std::uint32_t computed_crc = crc32_ieee(bytes.data(), body_end);
  if (stored_crc != computed_crc)
    fail("checkpoint '{}': corrupt: checksum mismatch (stored CRC-32 {:#010x}, computed {:#010x})",
         path, stored_crc, computed_crc);

  for (auto& [key, value] : meta)
    if (!data.meta.emplace(key, std::move(value)).second)
      fail("checkpoint '{}': corrupt: meta key '{}' appears twice", path, printable(key));
  std::set<std::string> names;
  for (const auto& entry : data.arrays)
    if (!names.insert(entry.first).second)
      fail("checkpoint '{}': corrupt: array '{}' appears twice", path,
           printable(entry.first));
  return data;
}

const std::vector<float>& find_array(const CheckpointData& data, const std::string& name,
                                     const std::string& path) {
  for (const auto& entry : data.arrays)
    if (entry.first == name) return entry.second;
  std::vector<std::string> names;
  for (const auto& entry : data.arrays) names.push_back(entry.first);
  fail("checkpoint '{}': no array named '{}' ({})", path, name, list_names(names));
}

std::string find_meta(const CheckpointData& data, const std::string& key,
                      const std::string& path) {
  const auto it = data.meta.find(key);
  if (it != data.meta.end()) return it->second;
  std::vector<std::string> keys;
  for (const auto& entry : data.meta) keys.push_back(entry.first);
  fail("checkpoint '{}': no meta entry '{}' ({})", path, key, list_names(keys));
}

void expect_meta(const CheckpointData& data, const std::string& key, const std::string& expected,
                 const std::string& path, const std::string& hint) {
  const std::string found = find_meta(data, key, path);
  if (found != expected)
    fail("checkpoint '{}': {} is '{}', but this rank's is '{}'{}", path, key, printable(found), expected,
         hint.empty() ? "" : "; " + hint);
}

std::map<std::string, std::string> shard_meta(const ParallelGrid& grid, int rank) {
  std::map<std::string, std::string> meta{{"rank", std::to_string(rank)}};
  for (const std::string_view always : {"tp", "dp", "pp"})
    meta.emplace(fmt::format("{}_rank", always), std::to_string(grid.coord(rank, always)));
  for (int i = 0; i < grid.dimension_count(); ++i) {
    const GridDimension d = grid.dimension(i);
    if (d.size > 1) meta.emplace(fmt::format("{}_rank", d.name), std::to_string(grid.coord(rank, d.name)));
  }
  return meta;
}

}  // namespace cc::engine
