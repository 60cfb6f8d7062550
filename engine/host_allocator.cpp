#include "engine/host_allocator.h"

#include <climits>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace cc::engine {

void keep_freed_host_memory() {
#if defined(__GLIBC__)
  // Every block from the heap (no mmap'd blocks that free unmaps), and a trim threshold no
  // heap top reaches: freed memory stays mapped and the next step reuses it. A sanitizer's
  // allocator intercepts mallopt and ignores it, which only costs speed.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
#endif
}

}  // namespace cc::engine
