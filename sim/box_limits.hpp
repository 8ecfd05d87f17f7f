// How much of this computer one simulated machine's box may take. Namespaces separate what a
// box sees, not how much it uses: without these a script's commands could fill this computer's
// memory through the box's tmpfs folders, its disk through the machine's home, and its process
// table by forking. Every memory-backed folder of the box is a tmpfs of a fixed size (bubblewrap
// makes them, see sim_isolation.hpp); every process in it runs under the rlimits below, set by the
// machine's init before sshd starts (sim_machine_init.hpp), so nothing the box runs can raise them.
//
// Contract: pure functions. box_limits_for derives the memory-like sizes from the run's
// --max-memory (the same number the user gave for the script's own memory), with floors that
// keep the shims working; the process and file counts are fixed. The text form travels on the
// machine init's command line and is parsed back there; apply_box_rlimits runs inside the box.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace runara::sim {

struct BoxLimits {
  std::uint64_t tmp_bytes = 0;      // /tmp (tmpfs)
  std::uint64_t shm_bytes = 0;      // /dev/shm (tmpfs)
  std::uint64_t home_bytes = 0;     // the machine's home (tmpfs at its own path)
  std::uint64_t state_bytes = 0;    // the shims' state folder (tmpfs at its own path)
  std::uint64_t data_bytes = 0;     // RLIMIT_DATA: each process's heap and private writable memory
  std::uint64_t file_bytes = 0;     // RLIMIT_FSIZE: the largest file a process may write
  std::uint64_t processes = 0;      // RLIMIT_NPROC: processes and threads of the box's user
  std::uint64_t open_files = 0;     // RLIMIT_NOFILE: per process
};

// The limits for a run whose --max-memory is `max_memory_bytes`.
BoxLimits box_limits_for(std::size_t max_memory_bytes);

// One line for people: "/tmp 1 GiB, /dev/shm 256 MiB, ...".
std::string describe_box_limits(const BoxLimits& limits);

// The machine init's argument ("tmp=...,shm=...,...") and back; parse returns "" or what is wrong.
std::string box_limits_argument(const BoxLimits& limits);
std::string parse_box_limits(const std::string& text, BoxLimits& limits);

// Sets RLIMIT_DATA, FSIZE, NPROC, NOFILE (soft and hard) and CORE 0 on the calling process;
// "" or which one the kernel refused and why.
std::string apply_box_rlimits(const BoxLimits& limits);

}  // namespace runara::sim
