#include "profiler/machine_fingerprint.h"

#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

namespace cc::profiler {

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  const auto e = s.find_last_not_of(" \t\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The value after "key:" on the first line of `path` that starts with `key`.
std::string proc_field(const char* path, const std::string& key) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key, 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return trim(line.substr(colon + 1));
    }
  return "";
}

}  // namespace

MachineFingerprint host_fingerprint() {
  MachineFingerprint m;
  m.backend = "cpu";
  m.cpu_model = proc_field("/proc/cpuinfo", "model name");
  if (m.cpu_model.empty()) m.cpu_model = "unknown CPU";
  m.cpu_cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  std::istringstream kib(proc_field("/proc/meminfo", "MemTotal"));  // "24576000 kB"
  double total_kib = 0;
  kib >> total_kib;
  m.memory_gib = std::round(total_kib / (1024.0 * 1024.0) * 10.0) / 10.0;
  return m;
}

MachineFingerprint cpu_fingerprint() {
  MachineFingerprint m = host_fingerprint();
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  m.mpi_version = trim(std::string(version, static_cast<std::size_t>(length)).substr(0, std::string(version).find(',')));
  return m;
}

}  // namespace cc::profiler
