#include "http_load_remote.hpp"

#include "kit/raise.hpp"
#include "script/args.hpp"
#include "runara/command_target.hpp"
#include "runara/runtime.hpp"

namespace runara {

namespace {

const char* const kRun = "http_load.run";

// A machine whose loopback has an address of its own (MachineRoute::loopback): the agent there
// reaches "127.0.0.1" at that address.
void point_at_machine_loopback(Context& ctx, const CommandTarget& target, TargetUrl& url) {
  const RunMachine* machine = ctx.machine(target.address());
  if (machine) point_loopback_at(url, machine->route.loopback);
}

}  // namespace

std::optional<RemoteAgent> parse_remote_load(lua_State* L, Context& ctx, TargetUrl& url, const TargetPolicy* secrets_policy) {
  lua_getfield(L, 1, "on");
  const int index = lua_gettop(L);
  if (lua_isnil(L, index)) {
    lua_pop(L, 1);
    return std::nullopt;
  }
  auto target = ctx.command_target(L, index);
  if (!target || target->address().empty()) {
    args::raise(L, "%s: option 'on' must be an open ssh session (from ssh.connect), got %s", kRun, luaL_typename(L, index));
  }
  lua_pop(L, 1);
  lua_getfield(L, 1, "http2");
  const bool http2 = lua_toboolean(L, -1);
  lua_getfield(L, 1, "ca_file");
  const bool ca_file = !lua_isnil(L, -1);
  lua_pop(L, 2);
  if (http2) args::raise(L, "%s: option 'on': the load agent speaks HTTP/1.1 only; leave out http2 (or measure from here without 'on')", kRun);
  if (ca_file) args::raise(L, "%s: option 'on': the load agent speaks plain http:// only; 'ca_file' has no use there", kRun);
  point_at_machine_loopback(ctx, *target, url);
  kit::check(L, kRun, check_remote_target(url, *target, secrets_policy));
  RemoteAgent agent;
  agent.target = target;
  agent.agent_local = kit::value_or_raise(L, kRun, agent_executable(ctx.options().load_agent));
  agent.memory_bytes = ctx.options().max_memory_bytes;
  agent.remaining_s = [&ctx] { return ctx.remaining_runtime_s(); };
  agent.redact = [&ctx](std::string_view text) { return ctx.redact(text); };
  return agent;
}

}  // namespace runara
