// `http_load.run{ on = session }`: the load runs on the machine behind an ssh session, by the
// remote load agent (agent/, load_job/remote_load.hpp), so its TTFT and ITL carry no network
// between runara and the cloud. This file checks what the agent can do, installs the agent
// (hashed off the loop, named by its content's hash: once per machine and content) and makes the
// runner that runs each of a plan's points there. LoadJob::start installs it before the first
// point when the plan has one (LoadPlan::remote).
//
// Contract. The loop thread only (CommandTarget's), except agent_hash (any thread, reads the
// file). Must not call: Lua.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "base/result.hpp"
#include "load/engine.hpp"
#include "load_job/target_url.hpp"
#include "net/target_policy.hpp"
#include "runara/command_target.hpp"

typedef struct uv_loop_s uv_loop_t;

namespace runara {

struct RemoteAgent {
  std::weak_ptr<CommandTarget> target;
  std::string agent_local;  // the agent executable here
  // Where it is installed there, named by its content's hash: set by install_agent before any
  // point starts.
  std::shared_ptr<std::string> agent_remote = std::make_shared<std::string>();
  std::size_t memory_bytes = 0;          // the agent's cap (the run's --max-memory)
  std::function<double()> remaining_s;   // the run's time left, when a point starts
  std::function<std::string(std::string_view)> redact;  // masks the run's secrets; null: as is
};

// The agent to install: `configured` (--load-agent) or the one built beside runara (installed
// beside it), checked to be an executable file.
Result<std::string> agent_executable(const std::string& configured);

// What the agent cannot honour: a url that is not plain http:// to a numeric address on the
// machine itself (its loopback, a private address, or the one ssh reached), and a secret
// (`secrets_policy`: where the load's secrets may go; null when it carries none) that may not go
// to the machine.
Status check_remote_target(const TargetUrl& url, const CommandTarget& target, const TargetPolicy* secrets_policy);

// 64-bit FNV-1a of the agent's bytes, as 16 hex digits. Reads a few MB: call it off the loop.
Result<std::string> agent_hash(const std::string& path);

// Hashes the agent (on libuv's thread pool) and installs it (an existing copy of the same
// content is kept), then `done` on the loop.
void install_agent(uv_loop_t* loop, const RemoteAgent& agent, std::function<void(Status)> done);

// The runner of each point on the agent (LoadPlan::runner).
std::function<std::unique_ptr<LoadRunner>(uv_loop_t*, std::shared_ptr<const LoadSpec>, LoadRunner::Progress)> remote_runner(
    const RemoteAgent& agent);

}  // namespace runara
