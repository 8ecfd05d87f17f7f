// How a simulated machine is boxed: bubblewrap (Debian's `bwrap`, unprivileged user namespaces;
// no setuid helper of runara's own) gives each machine its own user, mount, pid, ipc, uts and
// network namespaces. Inside, the machine sees:
//   - its own folder (read-only but for its home and state folder, at the same path), a private
//     /tmp, /proc of its own processes;
//   - read-only: /usr (and the /bin, /lib… links into it), the few /etc files programs need to
//     start (no shadow, no ssh keys, no user's configuration), the shims and the runara program;
//   - a network of its own: loopback only, where its own 127.x address lives. This computer's
//     services, other machines and the internet are not there.
// It runs as an unprivileged user ("runara", uid 1000 inside) whatever user runs runara, with no
// capabilities and no way to make user namespaces of its own (--disable-userns). What namespaces
// do not separate is closed by the machine's init (box_seccomp.hpp), how much it may take is
// bounded (box_limits.hpp): its /tmp, /dev/shm, home and state folder are tmpfs of fixed sizes,
// the rest of its own folder, /dev, /proc/sys and its root are read-only, and /proc's files that
// show this computer's keyrings, kernel log and timers (and its SysRq keys) are empty.
//
// Contract: pure functions plus one probe (isolation_problem runs bwrap once; call it before
// the first machine, from the thread that creates the cloud).
#pragma once

#include <string>
#include <vector>

#include "sim/box_limits.hpp"

namespace runara::sim {

struct IsolationLayout {
  std::string machine_dir;        // read-only at its own path; home/ and state/ tmpfs in it
  std::string shims_dir;          // read-only
  std::string runara_executable;  // read-only (the shims start the simulated LLM server with it)
  std::string hostname;
  std::string fabric_dir;         // read-write, at its own path: the VPC's fabric ("" none)
  BoxLimits limits;               // the tmpfs sizes (the rlimits are the machine init's)
};

// The user the machine's sshd logs in (its own /etc/passwd names only this one).
constexpr const char* kIsolatedUser = "runara";

// Writes the machine's passwd, group and hosts files into machine_dir/etc.
void write_isolated_etc(const IsolationLayout& layout);

// bwrap's argv up to and including "--": the program to run follows.
std::vector<std::string> bwrap_arguments(const IsolationLayout& layout);

// "" when an isolated machine can start here; otherwise what refused and how to allow it.
std::string isolation_problem();

}  // namespace runara::sim
