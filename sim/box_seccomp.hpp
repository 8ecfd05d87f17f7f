// The system calls a simulated machine's box may not make. Namespaces separate files, processes,
// networks, IPC and host names; some kernel facilities they do not separate, and the box's user
// is, to the kernel, the user running runara (nobody when that is root: box_user.hpp). Refused
// with EPERM, for every process of the box:
//   - keyctl, add_key, request_key: the kernel keyrings are per kernel user, not per namespace
//     (a box could link and read your user keyring's keys);
//   - syslog: the kernel log is this computer's (most kernels already refuse it to a process
//     without CAP_SYSLOG; this holds where kernel.dmesg_restrict is 0 too);
//   - perf_event_open, bpf, userfaultfd: kernel surfaces no simulated program uses, that see
//     beyond the namespaces or have a record of privilege escalations;
//   - inotify_init, inotify_init1: the count of inotify instances is this computer's user's (128
//     by default, shared with every program of that user): a box could use them all.
// On x86_64 the x32 system call numbers are refused too (they would bypass the table above); a
// call of another architecture (a 32-bit int 0x80) ends the process.
// New user namespaces (and with them mounts and time namespaces) are refused by bubblewrap's
// --disable-userns, not here: clone3 passes its flags in memory a filter cannot read.
//
// Contract: install_box_seccomp sets no_new_privs and installs the filter on the calling thread;
// every process it starts afterwards inherits both and cannot remove them. Returns "" or why the
// kernel refused. Call it in a single-threaded process (the machine's init) before exec.
#pragma once

#include <string>

namespace runara::sim {

std::string install_box_seccomp();

}  // namespace runara::sim
