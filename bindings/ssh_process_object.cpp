// The process objects s:spawn returns: `:lines()` (an iterator that waits for each stdout
// line), `:wait()`, `:kill(signal)`, `:running()`, `:output()`. A process userdata shares its
// Proc with the session (ssh_state.hpp), so it may outlive the session; then it only reports.
#include <algorithm>
#include <iterator>

#include "script/args.hpp"
#include "ssh_state.hpp"

namespace runara::sshb {

namespace {

char kProcessKey;  // registry key of the process userdata's metatable

struct ProcRef {
  std::shared_ptr<Proc> proc;
};

std::shared_ptr<Proc>& check_proc(lua_State* L, const char* fn) {
  auto* ref = static_cast<ProcRef*>(lua_touserdata(L, 1));
  bool ok = false;
  if (ref && lua_getmetatable(L, 1)) {
    lua_pushlightuserdata(L, &kProcessKey);
    lua_rawget(L, LUA_REGISTRYINDEX);
    ok = lua_rawequal(L, -1, -2);
    lua_pop(L, 2);
  }
  if (!ok) args::fail(L, fn, 1, "self", "a process from s:spawn (call it with ':')");
  return ref->proc;
}

Context& ctx_of(lua_State* L) { return *static_cast<Context*>(lua_touserdata(L, lua_upvalueindex(1))); }

void claim(lua_State* L, Proc& p, const char* fn) {
  if (p.waiting != Proc::Waiting::none) args::raise(L, "%s: another task is already waiting on this process", fn);
}

int next_line(lua_State* L) {
  auto p = *static_cast<std::shared_ptr<Proc>*>(lua_touserdata(L, lua_upvalueindex(2)));
  Context& ctx = ctx_of(L);
  if (!p->lines.empty() || p->done) {
    if (p->lines.empty()) return lua_pushnil(L), 1;
    const std::string line = p->take_line();
    lua_pushlstring(L, line.data(), line.size());
    return 1;
  }
  claim(L, *p, "process:lines");
  p->waiting = Proc::Waiting::line;
  p->waiter = ctx.suspend(L, [p] { p->waiting = Proc::Waiting::none; });
  return ctx.yield(L);
}

int iter_gc(lua_State* L) {
  static_cast<std::shared_ptr<Proc>*>(lua_touserdata(L, 1))->~shared_ptr();
  return 0;
}

int lines(lua_State* L) {
  auto p = check_proc(L, "process:lines");
  Context& ctx = ctx_of(L);
  lua_pushlightuserdata(L, &ctx);
  auto* holder = static_cast<std::shared_ptr<Proc>*>(lua_newuserdata(L, sizeof(std::shared_ptr<Proc>)));
  new (holder) std::shared_ptr<Proc>(p);
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, iter_gc);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  ctx.push_async(L, next_line, 2);
  return 1;
}

int wait(lua_State* L) {
  auto p = check_proc(L, "process:wait");
  Context& ctx = ctx_of(L);
  if (p->done) {
    push_exec_result(L, *p);
    return 1;
  }
  claim(L, *p, "process:wait");
  p->waiting = Proc::Waiting::exit;
  p->waiter = ctx.suspend(L, [p] { p->waiting = Proc::Waiting::none; });
  return ctx.yield(L);
}

int kill(lua_State* L) {
  auto p = check_proc(L, "process:kill");
  std::string sig = lua_isnoneornil(L, 2) ? "TERM" : args::string(L, 2, "process:kill", "signal");
  if (sig.rfind("SIG", 0) == 0) sig = sig.substr(3);
  static const char* const kSignals[] = {"TERM", "KILL", "INT", "HUP", "QUIT", "USR1", "USR2"};
  if (std::none_of(std::begin(kSignals), std::end(kSignals), [&](const char* s) { return sig == s; }))
    args::raise(L, "process:kill: signal '%s' is not one of TERM, KILL, INT, HUP, QUIT, USR1, USR2", sig.c_str());
  if (p->exec && p->exec->running()) p->exec->kill(sig);
  lua_pushboolean(L, p->exec && !p->done);
  return 1;
}

int running(lua_State* L) {
  auto p = check_proc(L, "process:running");
  lua_pushboolean(L, !p->done);
  return 1;
}

int output(lua_State* L) {
  auto p = check_proc(L, "process:output");
  const std::string out = p->done ? p->result.stdout_tail : p->exec ? p->exec->stdout_tail() : "";
  const std::string err = p->done ? p->result.stderr_tail : p->exec ? p->exec->stderr_tail() : "";
  lua_createtable(L, 0, 2);
  lua_pushlstring(L, out.data(), out.size());
  lua_setfield(L, -2, "stdout");
  lua_pushlstring(L, err.data(), err.size());
  lua_setfield(L, -2, "stderr");
  return 1;
}

int process_gc(lua_State* L) {
  static_cast<ProcRef*>(lua_touserdata(L, 1))->~ProcRef();
  return 0;
}

int process_tostring(lua_State* L) {
  auto* ref = static_cast<ProcRef*>(lua_touserdata(L, 1));
  lua_pushfstring(L, "ssh process `%s` (%s)", ref->proc->label.c_str(), ref->proc->done ? "ended" : "running");
  return 1;
}

}  // namespace

void push_process(lua_State* L, std::shared_ptr<Proc> proc) {
  auto* ref = static_cast<ProcRef*>(lua_newuserdata(L, sizeof(ProcRef)));
  new (ref) ProcRef{std::move(proc)};
  lua_pushlightuserdata(L, &kProcessKey);
  lua_rawget(L, LUA_REGISTRYINDEX);
  lua_setmetatable(L, -2);
}

void open_process_metatable(lua_State* L, Context& ctx) {
  lua_pushlightuserdata(L, &kProcessKey);
  lua_newtable(L);
  lua_newtable(L);  // methods
  struct M {
    const char* name;
    lua_CFunction fn;
    bool waits;
  };
  for (const M& m : {M{"lines", lines, false}, M{"wait", wait, true}, M{"kill", kill, false},
                     M{"running", running, false}, M{"output", output, false}}) {
    lua_pushlightuserdata(L, &ctx);
    if (m.waits) ctx.push_async(L, m.fn, 1);
    else lua_pushcclosure(L, m.fn, 1);
    lua_setfield(L, -2, m.name);
  }
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, process_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushcfunction(L, process_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushliteral(L, "ssh process");
  lua_setfield(L, -2, "__metatable");
  lua_rawset(L, LUA_REGISTRYINDEX);
}

}  // namespace runara::sshb
