// Which process a pid names, and whether a process recorded earlier still runs. A pid alone is
// recycled (the pid of a run killed a minute ago may belong to a shell now), so a process is
// named by its pid, its start time (field 22 of /proc/PID/stat: clock ticks after boot) and the
// boot it started in (/proc/sys/kernel/random/boot_id: after a reboot the same pid may start at
// the same tick again).
//
// Contract. Any thread; reads /proc only; never throws. Where /proc cannot be read (not Linux,
// a /proc that hides other processes) the start and the boot are unknown (0, "") and only the
// pid's existence is compared: a weaker answer, never a wrong "gone" for a live process.
#pragma once

#include <cstdint>
#include <string>

namespace runara {

struct ProcessIdentity {
  int pid = 0;                    // 0: no process
  std::uint64_t start_ticks = 0;  // 0: unknown
  std::string boot_id;            // "": unknown
};

// This process (the thread group, whichever thread asks).
ProcessIdentity this_process();

// The process `pid` names now; pid 0 when there is none: gone, or a zombie (it ended and only
// waits for its parent to collect its exit status).
ProcessIdentity process_identity(int pid);

// Whether the process `recorded` names is still the one running under its pid: alive, started
// at the same tick of the same boot. A part recorded as unknown is not compared.
bool still_running(const ProcessIdentity& recorded);

}  // namespace runara
