// How a command is started on the remote side so that (1) environment values never appear on
// a command line (the remote `ps`, sshd's logs) and (2) the whole process tree it starts can be
// killed as one process group.
//
// The exec request carries only a fixed bootstrap, `bootstrap_command()`, which the login shell
// runs: it reads a length line and then that many bytes from stdin (the "preamble", made by
// `preamble()`) and evals them. The preamble exports the environment, makes sure the shell
// leads its own process group (sshd already gives each session its own, else `setsid`), prints
// one marker line `runara-pgid N` on stdout, then evals the command; whatever stdin follows the
// preamble is the command's stdin.
//
// Contract: pure functions, any thread. Environment names must be shell identifiers.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.hpp"

namespace runara::ssh {

using EnvList = std::vector<std::pair<std::string, std::string>>;

const std::string& bootstrap_command();
// The bytes to send first on stdin. Throws std::invalid_argument naming a bad env name.
Result<std::string> preamble(const std::string& command, const EnvList& env);  // refuses a bad env name
// The command that sends `signal` ("TERM", "KILL", ...) to process group `pgid`.
std::string kill_group_command(long pgid, const std::string& signal);
std::string shell_quote(std::string_view text);  // 'text', safe for any POSIX shell

// The marker line's process group, if `line` is one.
std::optional<long> parse_pgid_marker(std::string_view line);

}  // namespace runara::ssh
