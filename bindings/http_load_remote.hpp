// `http_load.run{ on = session, ... }`: reads the option for the load job, which installs the
// agent and runs each point on that machine (runtime/load_job/remote_agent.hpp).
#pragma once

#include <optional>

#include "load_job/remote_agent.hpp"
#include "load_job/target_url.hpp"
#include "net/target_policy.hpp"
#include "runara/primitive.hpp"

namespace runara {

// Option 'on' of the options table at index 1: nullopt when absent. Raises for a value that is
// not an ssh session, and for what the agent cannot honour (https, http2, ca_file, a host name,
// a target that is not the machine itself, a secret that may not go to that machine). On a
// simulated droplet (runara --sim) 127.0.0.1 in `url` becomes the address standing for the
// machine's own loopback, as s:forward does. `secrets_policy`: where the load's secrets may go
// when sent encrypted (the binding's target policy); null when the load carries none.
std::optional<RemoteAgent> parse_remote_load(lua_State* L, Context& ctx, TargetUrl& url, const TargetPolicy* secrets_policy);

}  // namespace runara
