#include "sim/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/error.h"

namespace cc {

namespace {

std::string label(const std::string& what, const std::string& path) {
  return what.empty() ? fmt::format("'{}'", path) : fmt::format("{} '{}'", what, path);
}

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

// Renaming over a device node, FIFO or symlink would replace it with a regular file
// (`--export /dev/full` once did), so only a missing target or a regular file is written.
void check_target(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return;  // absent: fine (a missing folder fails at open)
  if (!S_ISREG(st.st_mode))
    fail("{} is {}; clustercast replaces its outputs whole, so it writes only regular files — name a file path",
         label(what, path), kind_of(st.st_mode));
}

// A fresh temporary beside `path` (same folder, so the rename stays on one filesystem),
// created with O_EXCL: two runs writing the same target never share one. Created 0666
// under the umask, like any file the user writes, unlike mkstemp's 0600.
int open_unique_temporary(const std::string& path, const std::string& what, std::string& temp) {
  static std::atomic<unsigned> counter{0};
  thread_local std::mt19937_64 random(std::random_device{}() ^
                                      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp = fmt::format("{}.{}-{:x}-{:08x}.tmp", path, ::getpid(), counter++, static_cast<std::uint32_t>(random()));
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) return fd;
    if (errno != EEXIST) {
      const std::filesystem::path parent = std::filesystem::path(path).parent_path();
      std::error_code ec;
      if (errno == ENOENT && !parent.empty() && !std::filesystem::is_directory(parent, ec))
        fail("cannot write {}: folder '{}' does not exist", label(what, path), parent.string());
      fail("cannot write {}: {}", label(what, path), std::strerror(errno));
    }
  }
  fail("cannot write {}: no unused temporary name beside it after 100 tries", label(what, path));
}

// Writes `contents` to a new temporary and returns its name; nothing is left on failure.
std::string write_temporary(const std::string& path, const std::string& contents, const std::string& what) {
  check_target(path, what);
  std::string temp;
  const int fd = open_unique_temporary(path, what, temp);
  const char* data = contents.data();
  std::size_t left = contents.size();
  int error = 0;
  while (left > 0) {
    const ssize_t wrote = ::write(fd, data, left);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) {
      error = wrote < 0 ? errno : ENOSPC;
      break;
    }
    data += wrote;
    left -= static_cast<std::size_t>(wrote);
  }
  // close() reports deferred write errors (NFS, quota), so it counts too.
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    ::unlink(temp.c_str());
    fail("writing {} failed: {}", label(what, path), std::strerror(error));
  }
  return temp;
}

void move_into_place(const std::string& temp, const std::string& path, const std::string& what) {
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(temp.c_str());
    fail("cannot move {} into place: {}", label(what, path), why);
  }
}

// Another name for `path`'s current contents (a hard link beside it), so a commit that fails
// partway can put them back. `kept` is empty when there was no file, or when the file system
// has no hard links (that target then keeps the new output: it cannot be put back).
struct Previous {
  bool existed = false;
  std::string kept;
};
Previous keep_previous(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string kept = fmt::format("{}.{}-{:x}.kept.tmp", path, ::getpid(), counter++);
    if (::link(path.c_str(), kept.c_str()) == 0) return {true, kept};
    if (errno != EEXIST) break;
  }
  return {true, ""};
}

// Exclusive locks on the folders an output set writes into, held while it renames: two
// commands committing sets into the same folders take turns, so neither leaves a set mixed
// of both runs' files. Taken in one order (device, inode) so two sets never wait on each
// other; released when closed.
class FolderLocks {
 public:
  explicit FolderLocks(const std::vector<std::string>& paths) {
    std::vector<std::pair<std::pair<dev_t, ino_t>, int>> folders;
    for (const std::string& path : paths) {
      const std::filesystem::path parent = std::filesystem::path(path).parent_path();
      const int fd = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd < 0) continue;  // the rename itself reports a folder that has gone
      struct stat st {};
      if (::fstat(fd, &st) != 0) {  // cannot tell it from the others; the rename reports trouble
        ::close(fd);
        continue;
      }
      bool seen = false;
      for (const auto& f : folders) seen = seen || f.first == std::make_pair(st.st_dev, st.st_ino);
      if (seen) {
        ::close(fd);
        continue;
      }
      folders.push_back({{st.st_dev, st.st_ino}, fd});
    }
    std::sort(folders.begin(), folders.end());
    for (const auto& f : folders) {
      while (::flock(f.second, LOCK_EX) != 0 && errno == EINTR) {
      }
      fds_.push_back(f.second);
    }
  }
  ~FolderLocks() {
    for (int fd : fds_) ::close(fd);
  }
  FolderLocks(const FolderLocks&) = delete;
  FolderLocks& operator=(const FolderLocks&) = delete;

 private:
  std::vector<int> fds_;
};

}  // namespace

void report_oversized_writes_as_errors() { ::signal(SIGXFSZ, SIG_IGN); }

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (a == b) return true;
  // weakly_canonical leaves a relative path whose first element does not exist relative
  // ("b.json" stays "b.json" while "./b.json" resolves): make both absolute first.
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ec), ec);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  if (!ca.empty() && ca == cb) return true;
  return fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec);
}

void check_output_target(const std::string& path, const std::string& what) { check_target(path, what); }

void write_file_atomically(const std::string& path, const std::string& contents) {
  move_into_place(write_temporary(path, contents, ""), path, "");
}

OutputSet::~OutputSet() {
  for (const auto& s : staged_) ::unlink(s.temp.c_str());
}

void OutputSet::add(const std::string& path, const std::string& contents, const std::string& what) {
  // Two outputs on one path would have the later silently replace the earlier.
  for (const auto& s : staged_) {
    if (same_file(s.path, path))
      fail("{} and {} name the same file; give each output its own path", label(s.what, s.path), label(what, path));
  }
  staged_.push_back({path, write_temporary(path, contents, what), what});
  paths_.push_back(path);
}

void OutputSet::commit() {
  std::vector<Staged> staged = std::move(staged_);
  staged_.clear();
  std::vector<std::string> targets;
  for (const Staged& s : staged) targets.push_back(s.path);
  const FolderLocks locks(targets);
  std::vector<Previous> previous;
  for (const Staged& s : staged) previous.push_back(keep_previous(s.path));
  auto drop_kept = [&] {
    for (const Previous& p : previous)
      if (!p.kept.empty()) ::unlink(p.kept.c_str());
  };
  for (std::size_t i = 0; i < staged.size(); ++i) {
    if (std::rename(staged[i].temp.c_str(), staged[i].path.c_str()) == 0) continue;
    // All or none: the outputs moved before this one go back to what they were.
    const std::string why = std::strerror(errno);
    std::vector<std::string> stuck;
    for (std::size_t j = 0; j < i; ++j) {
      Previous& p = previous[j];
      if (!p.existed)
        ::unlink(staged[j].path.c_str());
      else if (!p.kept.empty() && std::rename(p.kept.c_str(), staged[j].path.c_str()) == 0)
        p.kept.clear();
      else
        stuck.push_back(staged[j].path);
    }
    for (std::size_t j = i; j < staged.size(); ++j) ::unlink(staged[j].temp.c_str());
    drop_kept();
    fail("cannot move {} into place: {}; {}", label(staged[i].what, staged[i].path), why,
         i == 0           ? std::string("nothing was written")
         : stuck.empty()  ? std::string("the outputs moved before it were put back as they were")
                          : fmt::format("the outputs moved before it were put back, but for {}, which this file system "
                                        "could not keep a copy of",
                                        fmt::join(stuck, ", ")));
  }
  drop_kept();
}

}  // namespace cc
