// `runara --sim`: stands the simulated cloud up for one run (a fake DigitalOcean API on loopback
// whose Droplets are real sshds with shim commands; see runtime/sim/sim_cloud.hpp) and points
// the run's cloud options at it: its API, its token, a ledger of its own, so nothing of a
// rehearsal ever mixes with the user's real account or real ledger.
#pragma once

#include <memory>
#include <string>

#include "runara/runtime.hpp"

namespace runara::cli {

// nullptr and `error` set when it cannot start. Call before the Runtime is made (it sets an
// environment variable every process runara starts afterwards inherits).
std::shared_ptr<const SimulatedCloud> start_simulated_cloud(Options& options, const std::string& runara_executable,
                                                            std::string& error);

}  // namespace runara::cli
