#include "engine/rank_board.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "sim/error.h"

namespace cc::engine {

namespace {

template <typename T>
T load(const T& field) {
  return std::atomic_ref<T>(const_cast<T&>(field)).load(std::memory_order_acquire);
}

template <typename T>
void store(T& field, T value) {
  std::atomic_ref<T>(field).store(value, std::memory_order_release);
}

template <std::size_t N>
void store_text(char (&field)[N], const char* text) {
  std::size_t i = 0;
  for (; text != nullptr && text[i] != '\0' && i + 1 < N; ++i) store(field[i], text[i]);
  store(field[i], '\0');
}

template <std::size_t N>
std::string load_text(const char (&field)[N]) {
  std::string out;
  for (std::size_t i = 0; i < N; ++i) {
    const char c = load(field[i]);
    if (c == '\0') break;
    out += c;
  }
  return out;
}

}  // namespace

std::int64_t RankBoard::now_ns() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t{t.tv_sec} * 1'000'000'000 + t.tv_nsec;
}

RankBoard::RankBoard(const std::string& name, int world, int rank) : name_(name), world_(world), rank_(rank) {
  if (world < 1 || rank < 0 || rank >= world) fail("rank board: rank {} of {} ranks", rank, world);
  const std::size_t bytes = sizeof(RankSlot) * static_cast<std::size_t>(world);
  const int fd = ::shm_open(name.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) fail("rank board '{}': shm_open: {}", name, std::strerror(errno));
  // Every rank sets the same size; the object starts zeroed, every slot unpublished.
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    ::close(fd);
    fail("rank board '{}': ftruncate to {} bytes: {}", name, bytes, std::strerror(err));
  }
  void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);
  if (map == MAP_FAILED) fail("rank board '{}': mmap: {}", name, std::strerror(err));
  slots_ = static_cast<RankSlot*>(map);
  store(slots_[rank_].pid, static_cast<std::int32_t>(::getpid()));
}

RankBoard::~RankBoard() {
  if (slots_ != nullptr) ::munmap(slots_, sizeof(RankSlot) * static_cast<std::size_t>(world_));
}

void RankBoard::unlink_name() { ::shm_unlink(name_.c_str()); }  // gone already: another rank of the machine

void RankBoard::publish(std::int64_t progress_ns, const char* progress, long step, const char* op, bool collective) {
  RankSlot& s = slots_[rank_];
  store(s.progress_ns, progress_ns);
  store(s.step, std::int64_t{step});
  store(s.collective, std::int32_t{collective});
  store_text(s.progress, progress);
  store_text(s.op, op);
  store(s.heartbeat_ns, now_ns());  // last: a slot with a heartbeat has the rest
}

std::vector<RankView> RankBoard::peers() const {
  std::vector<RankView> out;
  const std::int64_t now = now_ns();
  for (int r = 0; r < world_; ++r) {
    const RankSlot& s = slots_[r];
    const std::int64_t heartbeat = load(s.heartbeat_ns);
    if (r == rank_ || heartbeat == 0) continue;
    RankView v;
    v.rank = r;
    v.pid = load(s.pid);
    v.since_heartbeat_s = static_cast<double>(now - heartbeat) * 1e-9;
    v.since_progress_s = static_cast<double>(now - load(s.progress_ns)) * 1e-9;
    v.step = static_cast<long>(load(s.step));
    v.collective = load(s.collective) != 0;
    v.progress = load_text(s.progress);
    v.op = load_text(s.op);
    out.push_back(v);
  }
  return out;
}

std::string peers_holding_the_job(const std::vector<RankView>& peers, double stale_s) {
  auto last_progress = [](const RankView& v) {
    return v.step >= 0 ? fmt::format("{} {}", v.progress, v.step) : v.progress;
  };
  std::vector<std::string> silent, busy;
  for (const RankView& v : peers) {
    if (v.since_heartbeat_s >= stale_s)
      silent.push_back(fmt::format("rank {} (pid {}) has given no sign of life for {:.1f} s, since {}: it is stopped "
                                   "or dead",
                                   v.rank, v.pid, v.since_heartbeat_s, last_progress(v)));
    else if (!v.collective)
      busy.push_back(fmt::format("rank {} (pid {}) is running but {} for {:.1f} s, since {}", v.rank, v.pid,
                                 v.op.empty() ? "outside any annotated op" : fmt::format("inside '{}'", v.op),
                                 v.since_progress_s, last_progress(v)));
  }
  const std::vector<std::string>& named = silent.empty() ? busy : silent;
  std::string out;
  for (const std::string& s : named) out += (out.empty() ? "" : "; ") + s;
  return out;
}

}  // namespace cc::engine
