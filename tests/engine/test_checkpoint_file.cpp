// Engine checkpoint container: round trips (value- and byte-exact), CRC-32 against the
// standard check value, and every kind of damage giving a SpecError that names the file and
// the reason — never a crash, never an absurd allocation.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "engine/checkpoint_file.h"
#include "sim/error.h"

namespace cc::engine {
namespace {

namespace fs = std::filesystem;

class CheckpointFile : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("cc_ckpt_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // The names in the test's folder: a temporary left behind (whatever its name) shows here.
  std::set<std::string> entries() const {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir_)) names.insert(e.path().filename().string());
    return names;
  }

  static std::string read(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
  static void write(const std::string& p, const std::string& bytes) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
  }

  // Writes `bytes` to a fresh file and expects reading it to fail with every part in the message.
  void expect_rejected(const std::string& name, const std::string& bytes,
                       const std::vector<std::string>& parts) {
    const std::string p = path(name);
    write(p, bytes);
    try {
      read_checkpoint_file(p);
      ADD_FAILURE() << name << ": expected a SpecError";
    } catch (const SpecError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("checkpoint '" + p + "'"), std::string::npos) << message;
      for (const auto& part : parts)
        EXPECT_NE(message.find(part), std::string::npos)
            << name << ": message '" << message << "' lacks '" << part << "'";
    }
  }

  fs::path dir_;
};

CheckpointData sample_data() {
  CheckpointData data;
  data.meta["step"] = "120";
  data.meta["layout"] = "tp2 pp1 dp2";
  data.meta["rank"] = "3";
  data.meta["empty"] = "";
  std::vector<float> weights(1000);
  for (std::size_t i = 0; i < weights.size(); ++i)
    weights[i] = std::sin(static_cast<float>(i) * 0.37f) * 3.0f;
  data.arrays.emplace_back("layer0.attn.qkv.weight", weights);
  data.arrays.emplace_back("layer0.attn.qkv.bias", std::vector<float>{0.5f, -0.0f, 1e-30f});
  data.arrays.emplace_back("empty", std::vector<float>{});
  data.arrays.emplace_back(
      "special", std::vector<float>{std::numeric_limits<float>::infinity(),
                                    -std::numeric_limits<float>::infinity(),
                                    std::numeric_limits<float>::denorm_min(),
                                    std::numeric_limits<float>::max(), 1.0f / 3.0f});
  return data;
}

TEST(Crc32, MatchesTheStandardCheckValue) {
  EXPECT_EQ(crc32_ieee("123456789", 9), 0xCBF43926u);
  EXPECT_EQ(crc32_ieee("", 0), 0u);
  EXPECT_EQ(crc32_ieee("The quick brown fox jumps over the lazy dog", 43), 0x414FA339u);
}

TEST_F(CheckpointFile, RoundTripIsExactAndLeavesNoTempFile) {
  const CheckpointData data = sample_data();
  const std::string p = path("rank3.ckpt");
  write_checkpoint_file(p, data);
  EXPECT_TRUE(fs::exists(p));
  EXPECT_EQ(entries(), std::set<std::string>{"rank3.ckpt"});
  const CheckpointData back = read_checkpoint_file(p);
  EXPECT_EQ(back.meta, data.meta);
  ASSERT_EQ(back.arrays.size(), data.arrays.size());
  for (std::size_t a = 0; a < data.arrays.size(); ++a) {
    EXPECT_EQ(back.arrays[a].first, data.arrays[a].first);
    ASSERT_EQ(back.arrays[a].second.size(), data.arrays[a].second.size());
    // Bit-exact, including the sign of -0.0 and denormals.
    for (std::size_t i = 0; i < data.arrays[a].second.size(); ++i)
      EXPECT_EQ(std::bit_cast<std::uint32_t>(back.arrays[a].second[i]),
                std::bit_cast<std::uint32_t>(data.arrays[a].second[i]))
          << data.arrays[a].first << "[" << i << "]";
  }
  EXPECT_TRUE(back == data);
}

TEST_F(CheckpointFile, RewriteIsByteIdenticalEvenWithNaN) {
  CheckpointData data = sample_data();
  data.arrays.emplace_back("nan",
                           std::vector<float>{std::numeric_limits<float>::quiet_NaN(), 2.0f});
  const std::string a = path("a.ckpt"), b = path("b.ckpt");
  write_checkpoint_file(a, data);
  write_checkpoint_file(b, read_checkpoint_file(a));
  const std::string bytes = read(a);
  EXPECT_EQ(bytes, read(b));
  EXPECT_EQ(bytes.substr(0, 8), std::string("CCKPT\0\0\1", 8));
  EXPECT_EQ(bytes.substr(8, 4), std::string("\1\0\0\0", 4));  // version 1, little-endian
  // Overwriting an existing checkpoint also goes through a temporary and leaves none behind.
  write_checkpoint_file(a, data);
  EXPECT_EQ(entries(), (std::set<std::string>{"a.ckpt", "b.ckpt"}));
  EXPECT_EQ(read(a), bytes);
}

TEST_F(CheckpointFile, EmptyDataRoundTrips) {
  const std::string p = path("empty.ckpt");
  write_checkpoint_file(p, CheckpointData{});
  EXPECT_EQ(read(p).size(), 8u + 4u + 8u + 8u + 4u);
  EXPECT_TRUE(read_checkpoint_file(p) == CheckpointData{});
}

TEST_F(CheckpointFile, FlippedByteInTheMiddleIsAChecksumMismatch) {
  const std::string p = path("good.ckpt");
  write_checkpoint_file(p, sample_data());
  std::string bytes = read(p);
  bytes[bytes.size() / 2] ^= 0x01;
  expect_rejected("flipped.ckpt", bytes, {"corrupt: checksum mismatch"});
  // Damage to the stored checksum itself is caught the same way.
  bytes = read(p);
  bytes.back() ^= 0x80;
  expect_rejected("crc.ckpt", bytes, {"corrupt: checksum mismatch"});
}

TEST_F(CheckpointFile, TruncationSaysWhere) {
  const std::string p = path("good.ckpt");
  write_checkpoint_file(p, sample_data());
  const std::string bytes = read(p);
  expect_rejected("cut_magic.ckpt", bytes.substr(0, 5), {"truncated", "the magic number"});
  expect_rejected("cut_version.ckpt", bytes.substr(0, 10), {"truncated", "the format version"});
  expect_rejected("cut_counts.ckpt", bytes.substr(0, 22), {"truncated", "the array count"});
  expect_rejected("cut_header.ckpt", bytes.substr(0, 36), {"truncated", "the header lists"});
  CheckpointData long_meta;
  long_meta.meta["notes"] = std::string(300, 'n');
  write_checkpoint_file(path("long_meta.ckpt"), long_meta);
  expect_rejected("cut_meta.ckpt", read(path("long_meta.ckpt")).substr(0, 100),
                  {"truncated", "the value of meta entry 'notes'"});
  expect_rejected("cut_array.ckpt", bytes.substr(0, bytes.size() / 2),
                  {"truncated", "array 'layer0.attn.qkv.weight'"});
  expect_rejected("cut_crc.ckpt", bytes.substr(0, bytes.size() - 2),
                  {"truncated", "the checksum"});
  // Every possible cut is rejected as truncated (never accepted, never a crash).
  for (std::size_t n = 1; n < bytes.size(); n += 7)
    expect_rejected("cut.ckpt", bytes.substr(0, n), {"truncated"});
}

TEST_F(CheckpointFile, WrongMagicIsNotACheckpoint) {
  const std::string p = path("good.ckpt");
  write_checkpoint_file(p, sample_data());
  std::string bytes = read(p);
  bytes[0] = 'X';
  expect_rejected("magic.ckpt", bytes, {"not a clustercast checkpoint"});
  expect_rejected("text.ckpt", "Genesis 1:1 In the beginning\n", {"not a clustercast checkpoint"});
  expect_rejected("zero.ckpt", "", {"empty"});
}

TEST_F(CheckpointFile, OtherVersionIsNamedWithTheSupportedOne) {
  const std::string p = path("good.ckpt");
  write_checkpoint_file(p, sample_data());
  std::string bytes = read(p);
  bytes[8] = 2;
  expect_rejected("v2.ckpt", bytes, {"unsupported format version 2", "reads version 1"});
}

TEST_F(CheckpointFile, TrailingBytesAreRejected) {
  const std::string p = path("good.ckpt");
  write_checkpoint_file(p, sample_data());
  expect_rejected("trailing.ckpt", read(p) + "garbage", {"7 trailing bytes after the checksum"});
}

TEST_F(CheckpointFile, AbsurdLengthsAreBoundedByTheFileSize) {
  // A valid header whose counts and lengths claim far more than the file holds.
  std::string header("CCKPT\0\0\1\1\0\0\0", 12);
  const std::string huge(8, '\xff');
  expect_rejected("meta_count.ckpt", header + huge + std::string(8, '\0') + std::string(40, 'a'),
                  {"truncated", "the header lists 18446744073709551615 meta entries"});
  const std::string one("\1\0\0\0\0\0\0\0", 8), zero(8, '\0');
  // One array whose name length is 2^64-1.
  expect_rejected("name_len.ckpt", header + zero + one + huge + std::string(20, 'b'),
                  {"truncated", "the name of array 0"});
  // One array "w" with 2^64-1 floats.
  expect_rejected("float_count.ckpt",
                  header + zero + one + one + "w" + huge + std::string(20, 'c'),
                  {"truncated", "array 'w'"});
}

TEST_F(CheckpointFile, EverySingleByteFlipAndRandomGarbageIsRejected) {
  CheckpointData small;
  small.meta["step"] = "7";
  small.arrays.emplace_back("w", std::vector<float>{1.0f, 2.0f, 3.0f});
  const std::string p = path("small.ckpt");
  write_checkpoint_file(p, small);
  const std::string bytes = read(p);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    for (const unsigned char mask : {0x01, 0x80, 0xFF}) {
      std::string damaged = bytes;
      damaged[i] = static_cast<char>(damaged[i] ^ mask);
      write(path("flip.ckpt"), damaged);
      EXPECT_THROW(read_checkpoint_file(path("flip.ckpt")), SpecError) << "byte " << i;
    }
  }
  std::mt19937 gen(1);
  for (int trial = 0; trial < 200; ++trial) {
    std::string garbage = std::string("CCKPT\0\0\1\1\0\0\0", 12);
    const int n = static_cast<int>(gen() % 200);
    for (int i = 0; i < n; ++i) garbage.push_back(static_cast<char>(gen() & 0xFF));
    write(path("garbage.ckpt"), garbage);
    EXPECT_THROW(read_checkpoint_file(path("garbage.ckpt")), SpecError) << "trial " << trial;
  }
}

TEST_F(CheckpointFile, MissingFileAndUnwritableFolderNameThePath) {
  const std::string missing = path("nope.ckpt");
  try {
    read_checkpoint_file(missing);
    ADD_FAILURE() << "expected a SpecError";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint '" + missing + "': no such file"),
              std::string::npos)
        << e.what();
  }
  const std::string nowhere = path("no_dir/rank0.ckpt");
  try {
    write_checkpoint_file(nowhere, sample_data());
    ADD_FAILURE() << "expected a SpecError";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find(nowhere), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path("no_dir")));
}

TEST_F(CheckpointFile, DuplicateArrayNamesAreRefused) {
  CheckpointData data;
  data.arrays.emplace_back("w", std::vector<float>{1.0f});
  data.arrays.emplace_back("w", std::vector<float>{2.0f});
  const std::string p = path("dup.ckpt");
  EXPECT_THROW(write_checkpoint_file(p, data), SpecError);
  EXPECT_FALSE(fs::exists(p));
}

std::string u64le(std::uint64_t v) {
  std::string out;
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  return out;
}

// A hand-assembled file with a valid checksum (the reader must check structure, too).
std::string with_crc(std::string body) {
  const std::uint32_t crc = crc32_ieee(body.data(), body.size());
  for (int i = 0; i < 4; ++i) body.push_back(static_cast<char>((crc >> (8 * i)) & 0xFF));
  return body;
}

TEST_F(CheckpointFile, HandAssembledFileReadsAndDuplicatesAreCorrupt) {
  const std::string header("CCKPT\0\0\1\1\0\0\0", 12);
  const std::string entry = u64le(1) + "k" + u64le(1) + "v";
  const std::string good = with_crc(header + u64le(1) + u64le(0) + entry);
  write(path("hand.ckpt"), good);
  EXPECT_EQ(find_meta(read_checkpoint_file(path("hand.ckpt")), "k", "hand.ckpt"), "v");
  expect_rejected("dup_meta.ckpt", with_crc(header + u64le(2) + u64le(0) + entry + entry),
                  {"corrupt", "meta key 'k' appears twice"});
  const std::string array = u64le(1) + "w" + u64le(0);
  expect_rejected("dup_array.ckpt", with_crc(header + u64le(0) + u64le(2) + array + array),
                  {"corrupt", "array 'w' appears twice"});
}

TEST_F(CheckpointFile, LookupsNameWhatIsMissingAndWhatExists) {
  const CheckpointData data = sample_data();
  EXPECT_EQ(find_meta(data, "step", "x.ckpt"), "120");
  EXPECT_EQ(find_array(data, "layer0.attn.qkv.bias", "x.ckpt").size(), 3u);
  try {
    find_array(data, "layer9.mlp.weight", "x.ckpt");
    ADD_FAILURE() << "expected a SpecError";
  } catch (const SpecError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("checkpoint 'x.ckpt'"), std::string::npos) << m;
    EXPECT_NE(m.find("no array named 'layer9.mlp.weight'"), std::string::npos) << m;
    EXPECT_NE(m.find("'layer0.attn.qkv.weight'"), std::string::npos) << m;
  }
  try {
    find_meta(data, "seed", "x.ckpt");
    ADD_FAILURE() << "expected a SpecError";
  } catch (const SpecError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("checkpoint 'x.ckpt': no meta entry 'seed'"), std::string::npos) << m;
    EXPECT_NE(m.find("'layout'"), std::string::npos) << m;
  }
}

TEST(ShardMeta, NamesTheRankAndItsGridCoordinatesWithTheKeysOfEveryEarlierCheckpoint) {
  // tp 2, dp 2, pp 2: rank 6 = (pp 1 · 2 + dp 1) · 2 + tp 0.
  const std::map<std::string, std::string> expected = {
      {"rank", "6"}, {"tp_rank", "0"}, {"dp_rank", "1"}, {"pp_rank", "1"}};
  EXPECT_EQ(shard_meta(ParallelGrid(kDenseGridOrder, {{"tp", 2}, {"dp", 2}, {"pp", 2}}), 6), expected);
  // A grid that names context parallelism at size 1 resumes from the same keys.
  EXPECT_EQ(shard_meta(ParallelGrid("tp-cp-dp-pp", {{"tp", 2}, {"cp", 1}, {"dp", 2}, {"pp", 2}}), 6), expected);
  // At size 2 it adds its coordinate: rank 13 = ((pp 1 · 2 + dp 1) · 2 + cp 0) · 2 + tp 1.
  const std::map<std::string, std::string> with_cp = {
      {"rank", "13"}, {"tp_rank", "1"}, {"cp_rank", "0"}, {"dp_rank", "1"}, {"pp_rank", "1"}};
  EXPECT_EQ(shard_meta(ParallelGrid("tp-cp-dp-pp", {{"tp", 2}, {"cp", 2}, {"dp", 2}, {"pp", 2}}), 13), with_cp);
  // Without tensor or pipeline parallelism the keys are still there (coordinate 0).
  EXPECT_EQ(shard_meta(ParallelGrid(kDenseGridOrder, {{"dp", 4}}), 3),
            (std::map<std::string, std::string>{{"rank", "3"}, {"tp_rank", "0"}, {"dp_rank", "3"}, {"pp_rank", "0"}}));
}

}  // namespace
}  // namespace cc::engine
