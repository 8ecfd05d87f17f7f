// How many CPU cores this process may run on. Header-only, so the remote load agent (agent/),
// which links only the load engine, counts its own machine's cores the way runara does.
//
// Contract: any thread; a system call, no allocation.
#pragma once

#include <sched.h>

#include <algorithm>
#include <thread>

namespace runara {

// The cores this process may run on (taskset, cgroup cpusets), not all the machine's.
inline int usable_cores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace runara
