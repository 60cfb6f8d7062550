// machine_fingerprint.h — what a cost database was measured on, read from the machine
// itself (/proc/cpuinfo, /proc/meminfo, the MPI library), so a database says where its
// numbers come from.
#pragma once

#include "sim/cost_database.h"

namespace cc::profiler {

MachineFingerprint cpu_fingerprint();  // needs MPI initialised (reads the MPI library version)
MachineFingerprint host_fingerprint();  // the same without the MPI library: CPU, cores, memory

}  // namespace cc::profiler
