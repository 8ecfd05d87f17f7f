// The target policy a primitive that sends traffic for a script judges connections with: what
// the run holds (its endpoints, tunnels, --allow-host grants, secrets' destinations) read from
// the public Context, made into a policy by the one engine function that makes it
// (net/run_policy.hpp). http_load and metrics judge every connection with it; s:forward judges
// where a tunnel may lead with it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "net/run_policy.hpp"
#include "runara/primitive.hpp"

namespace runara {

// What the run may reach now.
RunReach run_reach(const Context& ctx);

// `who` names the primitive in refusals ("http_load", "metrics", "s:forward"); `secrets`: the
// names of the secrets the traffic carries (plain_http: unencrypted).
std::shared_ptr<TargetPolicy> run_target_policy(const Context& ctx, std::string who,
                                                const std::vector<std::string>& secrets = {}, bool plain_http = false);

}  // namespace runara
