// `runara --sim`: stands the simulated cloud up for one run (a fake DigitalOcean API on loopback
// whose Droplets are real sshds with shim commands; see sim/sim_cloud.hpp) and points
// the run's cloud options at it: its API, its token, a ledger of its own, so nothing of a
// rehearsal ever mixes with the user's real account or real ledger.
#pragma once

#include <memory>
#include <string>

#include "runara/runtime.hpp"
#include "sim/sim_cloud.hpp"

namespace runara::cli {

// RUNARA_SIM_TIME_SCALE (a number > 0 and <= 1: the simulated machines' delays and token timings
// are multiplied by it; for tests), else 1.
double time_scale_from_environment();

// This very executable (the guardian, the sweeper and the shims' `runara serve-fake-llm` run it).
std::string own_executable();

// nullptr and `error` set when it cannot start. Call before the Runtime is made (it sets an
// environment variable every process runara starts afterwards inherits). `time_scale` < 1
// compresses the simulated delays (runara plan).
// `isolated = false` (--sim-unisolated): the machines' commands run on this computer; otherwise, when the kernel
// refuses the box (sim_isolation.hpp), nothing starts and `error` says how to allow it.
std::shared_ptr<sim::SimCloud> start_simulated_cloud(Options& options, const std::string& runara_executable,
                                                     std::string& error, double time_scale = 1,
                                                     bool isolated = true);

}  // namespace runara::cli
