// The target policy a primitive that sends traffic for a script starts from: the run's own
// endpoints (its droplets' public addresses, its simulated servers), the tunnels it opened (judged
// as the machines they lead to), and the --allow-host grants. http_load and metrics judge every
// connection with it; s:forward judges where a tunnel may lead with it. Uses only the public
// Context.
#pragma once

#include <memory>
#include <string>

#include "net/target_policy.hpp"
#include "runara/primitive.hpp"

namespace runara {

// `who` names the primitive in refusals ("http_load", "metrics", "s:forward").
std::shared_ptr<TargetPolicy> run_target_policy(const Context& ctx, std::string who);

}  // namespace runara
