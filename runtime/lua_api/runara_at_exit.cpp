// runara.at_exit(fn): a function the runtime calls once when the run ends, however it ends —
// the main chunk returned or failed, the watchdog fired, a signal came — after the script's
// tasks are cancelled and before any primitive tears down (the machines still exist). It is
// how a scenario writes a PARTIAL report after Ctrl-C: the stop hook raises at every
// instruction until the script unwinds, so no code of the script itself can run after a stop.
//
// The script stays in its box while these run: together they get kAtExitBudgetS of wall time
// (a second signal ends them at once), they cannot wait (no sleep, ssh, http: there is no task
// and the loop belongs to teardown), and the memory cap still applies. What they may do is
// what needs no waiting: runara.result, runara.write_file, runara.log, reading a sampler's
// results, a droplet's cost.
#include "lua_args.hpp"
#include "lua_values.hpp"
#include "run_record.hpp"
#include "run_state.hpp"

namespace runara {

namespace {

constexpr int kMaxAtExit = 64;  // a scenario needs one or two; a script cannot queue a million

int at_exit(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  auto& rt = impl_of(L);
  if (rt.finalizing_) args::raise(L, "runara.at_exit: the run is already ending; register functions before it ends");
  lua_rawgeti(L, LUA_REGISTRYINDEX, rt.at_exit_ref_);
  const int n = static_cast<int>(lua_objlen(L, -1));
  if (n >= kMaxAtExit) args::raise(L, "runara.at_exit: at most %d functions may be registered", kMaxAtExit);
  lua_pushvalue(L, 1);
  lua_rawseti(L, -2, n + 1);
  lua_pop(L, 1);
  return 0;
}

const char* ending_word(Exit exit) {
  switch (exit) {
    case Exit::ok: return "ok";
    case Exit::thresholds: return "thresholds";
    case Exit::watchdog: return "watchdog";
    case Exit::interrupted: return "interrupted";
    case Exit::terminated: return "terminated";
    case Exit::hangup: return "hangup";
    case Exit::script_error:
    case Exit::usage: break;
  }
  return "error";
}

}  // namespace

void open_at_exit_api(lua_State* L, Runtime::Impl& rt) {
  lua_newtable(L);
  rt.at_exit_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushcfunction(L, at_exit);
  lua_setfield(L, -2, "at_exit");
}

bool Runtime::Impl::at_exit_over() const {
  return monotonic_seconds() > at_exit_deadline_ || signals_seen_.load() != at_exit_signals_;
}

// Runs the registered functions, last registered first, each in a protected call on a thread
// of its own. Their errors are logged, never change how the run ended.
void Runtime::Impl::run_at_exit(const Outcome& ending) {
  if (!L_ || at_exit_ref_ == LUA_NOREF) return;
  lua_rawgeti(L_, LUA_REGISTRYINDEX, at_exit_ref_);
  const int count = static_cast<int>(lua_objlen(L_, -1));
  if (count == 0) {
    lua_pop(L_, 1);
    return;
  }
  finalizing_ = true;
  at_exit_signals_ = signals_seen_.load();
  at_exit_deadline_ = monotonic_seconds() + kAtExitBudgetS;
  install_hook();  // the stop hook raised at every instruction; it now watches the budget
  const int list = lua_gettop(L_);
  for (int i = count; i >= 1 && !at_exit_over(); --i) {
    lua_State* T = lua_newthread(L_);
    lua_rawgeti(L_, list, i);
    lua_xmove(L_, T, 1);
    lua_createtable(T, 0, 2);
    lua_pushstring(T, ending_word(ending.exit));
    lua_setfield(T, -2, "status");
    lua_pushstring(T, redact(ending.message).c_str());
    lua_setfield(T, -2, "reason");
    if (lua_pcall(T, 1, 0, 0) != 0) log("runara.at_exit function failed: " + redact(describe_value(T, -1)));
    lua_pop(L_, 1);  // the thread
  }
  if (at_exit_over()) log("runara.at_exit: functions stopped (" + std::to_string(static_cast<int>(kAtExitBudgetS)) +
                          " s budget spent, or a second signal)");
  lua_pop(L_, 1);
  lua_sethook(L_, hook, LUA_MASKCOUNT, 1);  // no script code runs after this
}

}  // namespace runara
