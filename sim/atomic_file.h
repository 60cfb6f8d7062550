// atomic_file.h — every file clustercast writes goes to a temporary of its own beside the
// target (a unique name, so concurrent runs never share one) and is renamed into place only
// when complete, so a failed or interrupted run never leaves half a file. A target that
// exists and is not a regular file (a device, a FIFO, a directory, a symlink) is refused
// rather than replaced.
#pragma once

#include <string>
#include <vector>

namespace cc {

// Throws SpecError naming the path if the folder is missing or not writable, the target is
// not a regular file, or the write fails (disk full).
void write_file_atomically(const std::string& path, const std::string& contents);

// A write past the file-size limit (`ulimit -f`) then fails with EFBIG, which the writers
// report and clean up after, instead of SIGXFSZ ending the process with its temporary left
// behind. Every program calls it before writing anything.
void report_oversized_writes_as_errors();

// Whether two paths name one file: the same absolute path once "." and ".." and the links of
// the folders that exist are resolved, or, where both exist, the same inode (hard links).
bool same_file(const std::string& a, const std::string& b);

// Refuses (SpecError naming `what` and the path) a target that exists and is not a regular
// file; the writers check again, this lets a command refuse before its hour of work.
void check_output_target(const std::string& path, const std::string& what);

// Several outputs of one command, all or none: add() writes each to its temporary, and only
// commit() renames them into place, so when the second of three cannot be written the
// first is not left behind. Temporaries not committed are removed by the destructor. A rename
// failing inside commit() (a folder's permissions or a target changed under us) puts back
// the outputs renamed before it: their earlier contents are kept as hard links until every
// rename succeeded. While it renames, commit() holds an exclusive lock (flock) on each folder
// it writes into, so concurrent commands writing one set of paths never leave it mixed.
class OutputSet {
 public:
  OutputSet() = default;
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;
  ~OutputSet();

  // `what` names the output in messages, e.g. "--export"; empty: just the path.
  void add(const std::string& path, const std::string& contents, const std::string& what = "");
  void commit();
  // The targets added so far, in order (also after commit(): what was written).
  const std::vector<std::string>& paths() const { return paths_; }

 private:
  struct Staged {
    std::string path, temp, what;
  };
  std::vector<Staged> staged_;
  std::vector<std::string> paths_;
};

}  // namespace cc
