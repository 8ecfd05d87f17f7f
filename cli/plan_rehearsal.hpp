// The rehearsal behind `runara plan`, run in a child process of its own: the script on the
// simulated cloud, its machines boxed (sim/sim_isolation.hpp) and their commands run, its
// delays compressed, its output into `out_dir` and nowhere else (run.log, ssh/*.log, plus the
// files plan_record.hpp reads). Nothing is printed.
//
// Contract: call in a process that will exit right after (a forked child); returns the status.
#pragma once

#include <string>

#include "cli_options.hpp"

namespace runara::cli {

// A rehearsal's clock: boots, downloads and token generation run at this fraction of real time.
constexpr double kRehearsalTimeScale = 0.02;
// The longest a rehearsal may run (the script's own waits are not compressed).
constexpr double kRehearsalLimitS = 300;

int rehearse(CommandLine command, const std::string& out_dir);

}  // namespace runara::cli
