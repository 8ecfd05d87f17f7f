// The rehearsal behind `runara plan`, run in a child process of its own: the script on the
// simulated cloud, its machines boxed (sim/sim_isolation.hpp) and their commands run, its
// delays compressed, its output into `out_dir` and nowhere else (run.log, ssh/*.log, whatever
// the script writes). What it did goes to `record_fd` (plan_record.hpp), never into `out_dir`:
// the plan reads nothing the script could have written. Nothing is printed.
//
// Contract: call in a process that will exit right after (a forked child); returns the status.
// `record_fd` is the write end of the plan's pipe, close-on-exec (no process the rehearsal
// starts, a simulated machine included, holds it).
#pragma once

#include <string>

#include "cli_options.hpp"

namespace runara::cli {

// A rehearsal's clock: boots, downloads and token generation run at this fraction of real time.
constexpr double kRehearsalTimeScale = 0.02;
// The longest a rehearsal may run (the script's own waits are not compressed).
constexpr double kRehearsalLimitS = 300;

int rehearse(CommandLine command, const std::string& out_dir, int record_fd);

}  // namespace runara::cli
