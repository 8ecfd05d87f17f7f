// s:exec and s:spawn: their arguments read and checked, the command started by the engine
// (ssh/machine_session.hpp; its output, tails and --max-memory accounting are
// ssh/remote_process.hpp's), and exec's result pushed; spawn's process objects live in
// ssh_process_object.cpp. Env values may be secret handles: they reach the remote shell on stdin,
// never a command line, and a granted host gets one only with --secret NAME@HOST.
#include <algorithm>

#include "kit/raise.hpp"
#include "kit/wait.hpp"
#include "runara/runtime.hpp"
#include "script/args.hpp"
#include "ssh_state.hpp"

namespace runara::sshb {

namespace {

// A secret may go to a granted host only when bound to it (--secret NAME@HOST).
void check_secret_destination(lua_State* L, const char* fn, Context& ctx, const ssh::MachineLogin& login,
                              const char* secret) {
  if (login.run_machine) return;
  const auto& dest = ctx.permissions().secret_destinations;
  auto it = dest.find(secret);
  const std::string hp = login.host + ":" + std::to_string(login.port);
  const bool ok = it != dest.end() && std::any_of(it->second.begin(), it->second.end(), [&](const std::string& d) {
                    return d == login.host || d == hp;
                  });
  if (!ok)
    args::raise(L, "%s: option 'env': secret %s may not be sent to %s: a secret goes only to the run's own "
                "machines and to hosts bound to it (run with --secret %s@%s)", fn, secret, hp.c_str(), secret, hp.c_str());
}

ssh::EnvList read_env(lua_State* L, int opts, const char* fn, const ssh::MachineLogin& login, Context& ctx) {
  ssh::EnvList env;
  lua_pushliteral(L, "env");
  lua_rawget(L, opts);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return env;
  }
  if (!lua_istable(L, -1)) args::raise(L, "%s: option 'env' must be a table of NAME = value, got %s", fn, luaL_typename(L, -1));
  const int t = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, t)) {
    if (lua_type(L, -2) != LUA_TSTRING) args::raise(L, "%s: option 'env': names must be strings", fn);
    const std::string name = lua_tostring(L, -2);
    if (lua_type(L, -1) == LUA_TSTRING || lua_type(L, -1) == LUA_TNUMBER) {
      env.emplace_back(name, lua_tostring(L, -1));
    } else if (const std::string secret = ctx.secret_name(L, -1); !secret.empty()) {
      check_secret_destination(L, fn, ctx, login, secret.c_str());
      env.emplace_back(name, ctx.secret_value(L, -1));
    } else {
      args::raise(L, "%s: option 'env': %s must be a string or a secret handle (runara.secret), got %s", fn,
                  name.c_str(), luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  return env;
}

struct Request {
  ssh::ExecOptions exec;
  bool check = true, quiet = false;
};

Request read_request(lua_State* L, const char* fn, bool spawned, const ssh::MachineSession& session, Context& ctx) {
  Request r;
  r.exec.command = args::string(L, 2, fn, "command");
  if (lua_isnoneornil(L, 3)) return r;
  args::table(L, 3, fn, "options");
  if (spawned) args::only_fields(L, 3, fn, {"timeout", "env", "stdin", "quiet"});
  else args::only_fields(L, 3, fn, {"timeout", "env", "stdin", "check", "quiet"});
  const double timeout = args::opt_number(L, 3, fn, "timeout").value_or(0);
  if (timeout < 0) args::raise(L, "%s: option 'timeout' must be a number of seconds >= 0 (0: none)", fn);
  r.exec.timeout_s = timeout;
  r.exec.stdin_data = args::opt_string(L, 3, fn, "stdin").value_or("");
  if (!spawned) r.check = args::opt_bool(L, 3, fn, "check").value_or(true);
  r.quiet = args::opt_bool(L, 3, fn, "quiet").value_or(false);
  r.exec.env = read_env(L, 3, fn, session.login(), ctx);
  return r;
}

}  // namespace

int session_exec(lua_State* L) {
  const char* fn = "s:exec";
  auto session = check_session(L, 1, fn);
  Context& ctx = *run_of(L).ctx;
  Request r = read_request(L, fn, false, *session, ctx);
  auto p = kit::value_or_raise(L, fn, session->start_process(std::move(r.exec), ssh::ProcessKind::exec, r.quiet));
  const std::string waits_for = "s:exec on " + session->where();
  auto wait = kit::Wait::start(L, waits_for.c_str(), [p] {
    p->stop_waiting();
    p->kill("TERM");  // the task is gone: so is its command
  });
  p->wait_exit([wait, weak = std::weak_ptr<ssh::RemoteProcess>(p), check = r.check] {
    auto p = weak.lock();  // the process calls its waiter while it holds itself
    if (!p) return;
    if (Status ended = p->outcome(check); !ended) return wait->fail(ended.error());
    wait->resume([p](lua_State* co) {
      push_exec_result(co, *p);
      p->forget_result();
      return 1;
    });
  });
  return wait->yield(L);
}

int session_spawn(lua_State* L) {
  const char* fn = "s:spawn";
  auto session = check_session(L, 1, fn);
  Context& ctx = *run_of(L).ctx;
  Request r = read_request(L, fn, true, *session, ctx);
  push_process(L, kit::value_or_raise(L, fn, session->start_process(std::move(r.exec), ssh::ProcessKind::spawn, r.quiet)));
  return 1;
}

void push_exec_result(lua_State* L, const ssh::RemoteProcess& p) {
  const auto& r = p.result();
  lua_createtable(L, 0, 7);
  if (r.exit_code) {
    lua_pushinteger(L, *r.exit_code);
    lua_setfield(L, -2, "code");
  }
  lua_pushlstring(L, r.stdout_tail.data(), r.stdout_tail.size());
  lua_setfield(L, -2, "stdout");
  lua_pushlstring(L, r.stderr_tail.data(), r.stderr_tail.size());
  lua_setfield(L, -2, "stderr");
  lua_pushnumber(L, r.seconds);
  lua_setfield(L, -2, "seconds");
  if (!r.signal.empty()) {
    lua_pushstring(L, r.signal.c_str());
    lua_setfield(L, -2, "signal");
  }
  if (r.timed_out) {
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "timed_out");
  }
  lua_pushnumber(L, static_cast<lua_Number>(r.stdout_bytes));
  lua_setfield(L, -2, "stdout_bytes");
  lua_pushnumber(L, static_cast<lua_Number>(r.stderr_bytes));
  lua_setfield(L, -2, "stderr_bytes");
  if (!r.error.empty() || !p.memory_error().empty()) {
    const std::string& e = r.error.empty() ? p.memory_error() : r.error;
    lua_pushlstring(L, e.data(), e.size());
    lua_setfield(L, -2, "error");
  }
}

}  // namespace runara::sshb
