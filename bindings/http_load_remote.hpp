// `http_load.run{ on = session, ... }`: the load runs on the machine behind an ssh session, by
// the remote load agent (agent/, runtime/load_job/remote_load.hpp), so its TTFT and ITL carry no
// network between runara and the cloud. This file reads the option, refuses what the agent
// cannot do, and installs the agent before the load starts.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "load_job/job.hpp"
#include "net/target_policy.hpp"
#include "load_job/target_url.hpp"
#include "runara/primitive.hpp"

namespace runara {

struct RemoteLoadChoice {
  std::weak_ptr<CommandTarget> target;
  std::string agent_local;  // the agent executable here
  // Where it is installed there, named by its content's hash: set by install_agent(), which
  // reads the file off the loop, before any point starts.
  std::shared_ptr<std::string> agent_remote = std::make_shared<std::string>();
};

// Option 'on' of the options table at index 1: nullopt when absent. Raises for a value that is
// not an ssh session, and for what the agent cannot honour (https, http2, ca_file, a host name,
// a target that is not the machine itself, a secret that may not go to that machine). On a
// simulated droplet (runara --sim) 127.0.0.1 in `url` becomes the address standing for the
// machine's own loopback, as s:forward does. `secrets_policy`: where the load's secrets may go
// when sent encrypted (the binding's target policy); null when the load carries none.
std::optional<RemoteLoadChoice> parse_remote_load(lua_State* L, Context& ctx, TargetUrl& url,
                                                  const TargetPolicy* secrets_policy);

// Runs each point of `plan` on the agent.
void run_points_remotely(LoadPlan& plan, Context& ctx, const RemoteLoadChoice& remote);

// Hashes the agent (on libuv's thread pool) and installs it (once per machine: an existing copy
// of the same content is kept), then `done("")`, or `done(why)`, on the loop.
void install_agent(Context& ctx, const RemoteLoadChoice& remote, std::function<void(const std::string& error)> done);

}  // namespace runara
