// Whether to trust a server's host key, for one session: a key already pinned in this run must
// match; a run machine's key is trusted on first use and pinned for the run (and recorded through
// the rules' `pin`); any other host's must be in known_hosts (or is accepted for the run with
// --accept-new-host-keys). A refusal leaves its reason on the session, for the connect error.
//
// Contract: the returned function is called on the loop thread by the session's connect, while
// `run` and `session` live (the session owns its connection, which holds the function).
#pragma once

#include <functional>

#include "ssh/run_sessions.hpp"

namespace runara::ssh {

std::function<bool(const HostKey&)> host_key_policy(RunSessions& run, MachineSession& session, HostKeyRules rules);

}  // namespace runara::ssh
