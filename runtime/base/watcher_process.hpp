// Starting a watcher: a process of runara's own executable that outlives runara to clean up after
// it (the guardian, the simulated cloud's sweeper). It runs in its own session (the terminal's
// Ctrl-C must not end it before runara's teardown does), with default signal handling, stdout on
// /dev/null and stderr too unless it is a terminal (no pipe waits for a watcher), and holds the read end of a pipe whose write end runara keeps: whenever runara
// ends, however it ends, the watcher reads EOF.
//
// Contract: call from any thread; posix_spawn, so nothing runs in the child before exec. The
// caller owns the returned pid (to wait for, or not) and the write end.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

namespace runara {

struct WatcherProcess {
  pid_t pid = -1;
  int pipe_fd = -1;  // the write end, close-on-exec
};

// `args[0]` is the executable. `child_fd` is where the watcher finds the pipe's read end; stdin
// is /dev/null unless that is 0. nullopt and `error` (errno's text) when it could not start.
std::optional<WatcherProcess> start_watcher(const std::vector<std::string>& args, int child_fd, std::string& error);

}  // namespace runara
