#include "http_load_remote.hpp"

#include <unistd.h>
#include <uv.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

#include "load_job/off_loop.hpp"
#include "load_job/remote_load.hpp"
#include "load/request_target.hpp"
#include "net/target_policy.hpp"
#include "script/args.hpp"
#include "runara/command_target.hpp"
#include "runara/runtime.hpp"

namespace runara {

namespace {

const char* const kRun = "http_load.run";

std::string default_agent() {
  return access(RUNARA_DEFAULT_AGENT, X_OK) == 0 ? RUNARA_DEFAULT_AGENT : RUNARA_INSTALLED_AGENT;
}

// 64-bit FNV-1a of the agent's bytes, for its remote file name: a changed agent gets a new
// name, so a stale copy is never run. Reads a few MB: called off the loop.
std::string agent_hash(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "the load agent " + path + " cannot be read";
    return {};
  }
  std::uint64_t h = 0xcbf29ce484222325ull;
  std::vector<char> block(1 << 16);
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
    for (std::streamsize i = 0; i < in.gcount(); ++i) h = (h ^ static_cast<unsigned char>(block[static_cast<std::size_t>(i)])) * 0x100000001b3ull;
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return hex;
}

// One hash on libuv's thread pool, its answer back on the loop.
void check_target_url(lua_State* L, const TargetUrl& url, const CommandTarget& target) {
  if (url.scheme != "http") {
    args::raise(L, "%s: option 'on': the load agent speaks plain http:// to the machine's own server; give url = \"http://127.0.0.1:PORT\", not %s://", kRun, url.scheme.c_str());
  }
  sockaddr_storage address{};
  if (!numeric_host(url.host, url.port, address)) {
    args::raise(L, "%s: option 'on': the url's host must be a numeric address on that machine (e.g. 127.0.0.1), got '%s'", kRun, url.host.c_str());
  }
  const AddressClass cls = classify_address(reinterpret_cast<const sockaddr*>(&address));
  const std::string text = address_text(reinterpret_cast<const sockaddr*>(&address));
  if (cls != AddressClass::kLoopback && cls != AddressClass::kPrivate && text != target.address()) {
    args::raise(L, "%s: option 'on': the agent may load only the machine it runs on: its loopback (127.0.0.1) or its own private address, not %s (%s)", kRun,
                text.c_str(), std::string(address_class_name(cls)).c_str());
  }
}

// A secret in the load's headers travels to the machine (inside ssh), so it must be allowed
// to go there, as a local load's secrets must be allowed to go to its server.
void check_secrets(lua_State* L, const TargetPolicy* secrets_policy, const CommandTarget& target) {
  if (!secrets_policy) return;
  sockaddr_storage address{};
  std::string why = "its address is not numeric";
  if (!numeric_host(target.address(), target.port(), address) ||
      !secrets_policy->allows(reinterpret_cast<const sockaddr*>(&address), target.address(), why)) {
    args::raise(L, "%s: option 'on': the load carries a secret, which would go to %s: %s", kRun, target.name().c_str(), why.c_str());
  }
}

// A machine whose loopback has an address of its own (MachineRoute::loopback): the agent there
// reaches "127.0.0.1" at that address.
void point_at_machine_loopback(Context& ctx, const CommandTarget& target, TargetUrl& url) {
  const RunMachine* machine = ctx.machine(target.address());
  if (machine) point_loopback_at(url, machine->route.loopback);
}

}  // namespace

std::optional<RemoteLoadChoice> parse_remote_load(lua_State* L, Context& ctx, TargetUrl& url,
                                                  const TargetPolicy* secrets_policy) {
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
  check_target_url(L, url, *target);
  check_secrets(L, secrets_policy, *target);
  RemoteLoadChoice choice;
  choice.target = target;
  choice.agent_local = ctx.options().load_agent.empty() ? default_agent() : ctx.options().load_agent;
  if (access(choice.agent_local.c_str(), R_OK | X_OK) != 0) {
    args::raise(L, "%s: option 'on': the load agent %s is not an executable file here (build the runara_agent target, or give --load-agent PATH)", kRun,
                choice.agent_local.c_str());
  }
  return choice;
}

void run_points_remotely(LoadPlan& plan, Context& ctx, const RemoteLoadChoice& remote) {
  const std::size_t memory = ctx.options().max_memory_bytes;
  plan.runner = [remote, memory, &ctx](uv_loop_t*, std::shared_ptr<const LoadSpec> spec, LoadRunner::Progress progress) {
    RemoteLoadPlan plan{remote.target, *remote.agent_remote, ctx.remaining_runtime_s(), memory,
                        [&ctx](std::string_view text) { return ctx.redact(text); }};
    return make_remote_load(std::move(spec), std::move(progress), std::move(plan));
  };
}

void install_agent(Context& ctx, const RemoteLoadChoice& remote, std::function<void(const std::string& error)> done) {
  struct Hashed {
    std::string hash, error;
  };
  auto hashed = std::make_shared<Hashed>();
  off_loop(
      ctx.loop(), [hashed, path = remote.agent_local] { hashed->hash = agent_hash(path, hashed->error); },
      [hashed, remote, done = std::move(done)] {
        if (hashed->hash.empty()) return done(hashed->error.empty() ? "reading the load agent was cancelled" : hashed->error);
        *remote.agent_remote = ".cache/runara/runara-agent-" + hashed->hash;
        auto target = remote.target.lock();
        if (!target) return done("the ssh session was closed");
        target->install(remote.agent_local, *remote.agent_remote, done);
      });
}

}  // namespace runara
