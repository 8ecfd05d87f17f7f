// The guardian: a small process, started before a run's first machine is created, that
// outlives the runtime if it must. It sits in its own session (a terminal's Ctrl-C or hang-up
// never reaches it) and holds the read end of a pipe whose write end only the runtime has.
// When that pipe closes it looks at the ledger: a run that finished cleanly needs nothing; any
// other end (SIGKILL, segfault, OOM-kill, teardown that could not finish) makes the guardian
// destroy everything the ledger and the run's tag show. If the runtime hangs past its hard
// deadline plus a grace period, the guardian kills it and cleans up.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "base/result.hpp"

namespace runara {

struct GuardianSpec {
  std::string executable;  // the runara binary (runs `runara __guardian ...`)
  std::string run_id, state_dir, api_base, token;
  double deadline_unix = 0;  // when the run must be over, teardown included
};

class Guardian {
 public:
  // Starts the guardian process, or says why it could not be started.
  static Result<std::unique_ptr<Guardian>> start(const GuardianSpec& spec);
  ~Guardian();  // closes the pipe: the guardian then checks the ledger and acts or exits
  pid_t pid() const { return pid_; }

 private:
  Guardian(pid_t pid, int pipe_fd) : pid_(pid), pipe_fd_(pipe_fd) {}
  pid_t pid_;
  int pipe_fd_;
};

// The guardian process's main (the CLI's hidden `__guardian` command).
int guardian_main(int argc, char** argv);

}  // namespace runara
