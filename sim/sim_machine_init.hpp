// The first process inside an isolated simulated machine (`runara __sim_machine_init`), started
// by bubblewrap in the machine's own user, mount, pid and network namespaces. It starts the
// machine's sshd and then serves one request on the socket runara handed it (fd 3): each byte
// runara writes is answered with a fresh, unconnected TCP socket created here, inside the
// machine's network namespace, passed back with SCM_RIGHTS. That is how runara reaches a
// machine whose network is not this computer's: the socket belongs to the namespace it was made
// in, so connecting it to the machine's address reaches the machine's sshd and nothing else.
// Before sshd starts it sets the box's rlimits (box_limits.hpp) and its seccomp filter
// (box_seccomp.hpp): runara's code is the first to run in the box, so nothing escapes them.
//
// Contract: runs as its own process; exits (and with it, through bubblewrap, every process of
// the machine) when runara closes its end or dies, or when sshd exits.
#pragma once

namespace runara::sim {

// The fd runara passes the request socket on (inherited across bubblewrap's exec).
constexpr int kMachineInitFd = 3;

// `runara __sim_machine_init LIMITS PROGRAM [ARGS...]` (started by SimMachine only; LIMITS is
// box_limits_argument's text).
int sim_machine_init_main(int argc, char** argv);

}  // namespace runara::sim
