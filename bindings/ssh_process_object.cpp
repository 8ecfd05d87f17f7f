// The process objects s:spawn returns: `:lines()` (an iterator that waits for each stdout
// line), `:wait()`, `:kill(signal)`, `:running()`, `:output()`. A process object shares its
// RemoteProcess (ssh/remote_process.hpp) with the session, so it may outlive the session; then
// it only reports.
#include <algorithm>
#include <iterator>

#include "kit/wait.hpp"
#include "script/args.hpp"
#include "ssh_state.hpp"

namespace runara::sshb {

namespace {

// The iterator :lines() returns holds the process in its own userdata (its upvalue).
struct LinesRef {
  std::shared_ptr<ssh::RemoteProcess> process;
};
using LinesHolder = kit::Userdata<LinesRef>;

const char* const kExpected = "a process from s:spawn (call it with ':')";

ssh::RemoteProcess& check_process(lua_State* L, const char* fn) {
  return *ProcessObject::check(L, 1, fn, kExpected).process;
}

void claim(lua_State* L, const ssh::RemoteProcess& p, const char* fn) {
  if (p.waited_on()) args::raise(L, "%s: another task is already waiting on this process", fn);
}

int push_line(lua_State* L, const std::optional<std::string>& line) {
  if (line) lua_pushlstring(L, line->data(), line->size());
  else lua_pushnil(L);
  return 1;
}

int next_line(lua_State* L) {
  auto p = static_cast<LinesRef*>(lua_touserdata(L, lua_upvalueindex(2)))->process;
  if (auto line = p->take_line()) return push_line(L, line);
  if (p->done()) return push_line(L, std::nullopt);
  claim(L, *p, "process:lines");
  auto wait = kit::Wait::start(L, "process:lines", [p] { p->stop_waiting(); });
  p->wait_line([wait](std::optional<std::string> line) {
    wait->resume([line = std::move(line)](lua_State* co) { return push_line(co, line); });
  });
  return wait->yield(L);
}

int lines(lua_State* L) {
  auto& p = ProcessObject::check(L, 1, "process:lines", kExpected);
  Context& ctx = Context::from(L);
  lua_pushlightuserdata(L, &ctx);
  LinesHolder::push(L, LinesRef{p.process});
  ctx.push_async(L, next_line, 2);
  return 1;
}

int wait(lua_State* L) {
  auto p = ProcessObject::check(L, 1, "process:wait", kExpected).process;
  if (p->done()) {
    push_exec_result(L, *p);
    return 1;
  }
  claim(L, *p, "process:wait");
  auto wait = kit::Wait::start(L, "process:wait", [p] { p->stop_waiting(); });
  p->wait_exit([wait, weak = std::weak_ptr<ssh::RemoteProcess>(p)] {
    auto p = weak.lock();  // the process calls its waiter while it holds itself
    if (!p) return;
    wait->resume([p](lua_State* co) {
      push_exec_result(co, *p);
      return 1;
    });
  });
  return wait->yield(L);
}

int kill(lua_State* L) {
  auto& p = check_process(L, "process:kill");
  std::string sig = lua_isnoneornil(L, 2) ? "TERM" : args::string(L, 2, "process:kill", "signal");
  if (sig.rfind("SIG", 0) == 0) sig = sig.substr(3);
  static const char* const kSignals[] = {"TERM", "KILL", "INT", "HUP", "QUIT", "USR1", "USR2"};
  if (std::none_of(std::begin(kSignals), std::end(kSignals), [&](const char* s) { return sig == s; }))
    args::raise(L, "process:kill: signal '%s' is not one of TERM, KILL, INT, HUP, QUIT, USR1, USR2", sig.c_str());
  p.kill(sig);
  lua_pushboolean(L, p.running());
  return 1;
}

int running(lua_State* L) {
  lua_pushboolean(L, !check_process(L, "process:running").done());
  return 1;
}

int output(lua_State* L) {
  auto& p = check_process(L, "process:output");
  const std::string out = p.stdout_so_far(), err = p.stderr_so_far();
  lua_createtable(L, 0, 2);
  lua_pushlstring(L, out.data(), out.size());
  lua_setfield(L, -2, "stdout");
  lua_pushlstring(L, err.data(), err.size());
  lua_setfield(L, -2, "stderr");
  return 1;
}

int process_tostring(lua_State* L) {
  const auto& p = *static_cast<ProcessRef*>(lua_touserdata(L, 1))->process;
  lua_pushfstring(L, "ssh process `%s` (%s)", p.label().c_str(), p.done() ? "ended" : "running");
  return 1;
}

}  // namespace

void push_process(lua_State* L, std::shared_ptr<ssh::RemoteProcess> process) {
  ProcessObject::push(L, ProcessRef{std::move(process)});
}

void define_process_object(lua_State* L, Context& ctx) {
  using kit::Waits;
  ProcessObject::define(L, ctx, "ssh process",
                        {{"lines", lines}, {"wait", wait, Waits::yes}, {"kill", kill}, {"running", running}, {"output", output}},
                        {nullptr, process_tostring});
  LinesHolder::define(L, ctx, "ssh process lines", {});
}

}  // namespace runara::sshb
