// The `runara` table: the run's own API (tasks, time, logging, files, secrets, results).
#include "base/token_names.hpp"
#include "script/args.hpp"
#include "script/values.hpp"
#include "script/runara_binding.hpp"

namespace runara {

namespace {

int now(lua_State* L) {
  lua_pushnumber(L, monotonic_seconds() - impl_of(L).started_at());
  return 1;
}

// runara.log(...): like print, but timestamped, sent to the log stream and into run.log, marked
// as the script's line ("script: " after the stamp).
int log(lua_State* L) {
  const int n = lua_gettop(L);
  std::string line;
  for (int i = 1; i <= n; ++i) {
    lua_pushvalue(L, lua_upvalueindex(1));  // the original tostring
    lua_pushvalue(L, i);
    lua_call(L, 1, 1);
    std::size_t len;
    const char* s = lua_tolstring(L, -1, &len);
    if (!s) args::raise(L, "runara.log: 'tostring' must return a string");
    if (i > 1) line += ' ';
    line.append(s, len);
    lua_pop(L, 1);
  }
  impl_of(L).script_log(line);
  return 0;
}

int secret(lua_State* L) {
  const std::string name = args::string(L, 1, "runara.secret", "name");
  if (is_cloud_token_name(name)) args::raise(L, "runara.secret: %s %s", name.c_str(), kCloudTokenRefusal);
  if (!impl_of(L).secrets_.grantable(name)) {
    impl_of(L).denied("--secret " + name);
    args::raise(L, "runara.secret: secret '%s' was not granted; run with --secret %s "
                         "(its value is read from the environment variable %s)",
                      name.c_str(), name.c_str(), name.c_str());
  }
  Secrets::push_handle(L, name);
  return 1;
}

int result(lua_State* L) {
  const std::string name = args::string(L, 1, "runara.result", "name");
  if (lua_isnone(L, 2)) args::fail(L, "runara.result", 2, "value", "a value (number, string, boolean or table)");
  if (name == "run") {
    args::raise(L, "runara.result: 'run' is written by runara itself (the run record in results.json); choose another name");
  }
  auto& rt = impl_of(L);
  rt.emit_result(L, name, to_json(L, 2, ("runara.result: '" + name + "'").c_str(), rt.memory_left(),
                                  [&rt] { return rt.must_stop(); }));
  return 0;
}

// runara.usage_error(message): the script's own command line was wrong (an unknown param, a
// value that is no number). Raised as a plain error (pcall sees the message); if it ends the
// main chunk, the run exits 2 and says the message without a traceback, as runara does for its
// own options. Bounded: the message is kept in C++ until the run ends.
constexpr std::size_t kUsageMessageMax = 4096;

int usage_error(lua_State* L) {
  std::size_t len = 0;
  const char* text = lua_type(L, 1) == LUA_TSTRING ? lua_tolstring(L, 1, &len) : nullptr;
  if (!text) args::fail(L, "runara.usage_error", 1, "message", "a string");
  if (len > kUsageMessageMax) {
    args::raise(L, "runara.usage_error: the message is %s bytes, at most %s", std::to_string(len).c_str(),
                std::to_string(kUsageMessageMax).c_str());
  }
  impl_of(L).usage_message_.assign(text, len);
  lua_settop(L, 1);
  return lua_error(L);
}

// runara.is_usage_error(err): whether `err` (a caught error) is the usage error raised last, by
// runara.usage_error or by a primitive that found the user's setup wrong (no cloud token, an
// unknown size, no SSH key, an unknown host key). A scenario then writes no report.
int is_usage_error(lua_State* L) {
  std::size_t len = 0;
  const char* text = lua_type(L, 1) == LUA_TSTRING ? lua_tolstring(L, 1, &len) : nullptr;
  const std::string& usage = impl_of(L).usage_message_;
  lua_pushboolean(L, text && !usage.empty() && usage.size() == len && usage.compare(0, len, text, len) == 0);
  return 1;
}

int out_dir(lua_State* L) {
  lua_pushstring(L, output_dir_or_raise(L, impl_of(L), "runara.out_dir").c_str());
  return 1;
}

// runara.args / arg (arg[0] is the script) / runara.params (key=value arguments).
void push_arguments(lua_State* L, Runtime::Impl& rt) {
  const auto& list = rt.options_.args;
  lua_createtable(L, static_cast<int>(list.size()), 0);
  for (std::size_t i = 0; i < list.size(); ++i) {
    lua_pushstring(L, list[i].c_str());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
  lua_setfield(L, -2, "args");

  lua_createtable(L, static_cast<int>(list.size()), 1);
  lua_pushstring(L, rt.script_path_.c_str());
  lua_rawseti(L, -2, 0);
  for (std::size_t i = 0; i < list.size(); ++i) {
    lua_pushstring(L, list[i].c_str());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
  lua_setglobal(L, "arg");

  lua_newtable(L);
  for (const auto& a : list) {
    const std::size_t eq = a.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    lua_pushstring(L, a.substr(eq + 1).c_str());
    lua_setfield(L, -2, a.substr(0, eq).c_str());
  }
  lua_setfield(L, -2, "params");
}

// runara.on: what --on named ({} when nothing): { machine = {user, host, port}, endpoint = url }.
void push_on_target(lua_State* L, const OnTarget& on) {
  lua_newtable(L);
  if (!on.host.empty()) {
    lua_createtable(L, 0, 3);
    lua_pushstring(L, on.user.c_str());
    lua_setfield(L, -2, "user");
    lua_pushstring(L, on.host.c_str());
    lua_setfield(L, -2, "host");
    lua_pushinteger(L, on.port);
    lua_setfield(L, -2, "port");
    lua_setfield(L, -2, "machine");
  }
  if (!on.endpoint.empty()) {
    lua_pushstring(L, on.endpoint.c_str());
    lua_setfield(L, -2, "endpoint");
  }
  lua_setfield(L, -2, "on");
}

}  // namespace

void open_runara_binding(lua_State* L, Runtime::Impl& rt) {
  lua_newtable(L);
  lua_pushcfunction(L, now);
  lua_setfield(L, -2, "now");
  lua_getglobal(L, "tostring");
  lua_pushcclosure(L, log, 1);
  lua_setfield(L, -2, "log");
  lua_pushcfunction(L, secret);
  lua_setfield(L, -2, "secret");
  lua_pushcfunction(L, result);
  lua_setfield(L, -2, "result");
  lua_pushcfunction(L, out_dir);
  lua_setfield(L, -2, "out_dir");
  lua_pushcfunction(L, usage_error);
  lua_setfield(L, -2, "usage_error");
  lua_pushcfunction(L, is_usage_error);
  lua_setfield(L, -2, "is_usage_error");
  lua_pushstring(L, rt.run_id().c_str());
  lua_setfield(L, -2, "run_id");
  lua_pushstring(L, RUNARA_VERSION);
  lua_setfield(L, -2, "version");
  // true under `runara --sim`: scenarios label what they report as simulated.
  lua_pushboolean(L, rt.options().simulated && !rt.options().plan);  // a plan shows the real run
  lua_setfield(L, -2, "simulated");
  push_arguments(L, rt);
  push_on_target(L, rt.options().on);
  lua_pushboolean(L, rt.options().script_help);  // runara SCRIPT --help
  lua_setfield(L, -2, "help");
  open_task_api(L, rt);
  open_file_api(L, rt);
  open_json_api(L, rt);
  open_at_exit_api(L, rt);
}

}  // namespace runara
