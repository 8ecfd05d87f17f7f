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
#include "script/args.hpp"
#include "script/values.hpp"
#include "run/record.hpp"
#include "run/state.hpp"

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

// One at_exit function, called on a thread of its own.
struct AtExitCall {
  int list_ref;
  int index;
  const char* status;
  std::string reason;
};

// Inside lua_cpcall on the function's thread: the ending table (the reason may be long: a
// task's error) is built where an allocation refused by the memory cap is an error like the
// function's own, not a LuaJIT panic.
int call_at_exit(lua_State* T) {
  const auto* call = static_cast<const AtExitCall*>(lua_touserdata(T, 1));
  lua_settop(T, 0);
  lua_rawgeti(T, LUA_REGISTRYINDEX, call->list_ref);
  lua_rawgeti(T, 1, call->index);
  lua_createtable(T, 0, 2);
  lua_pushstring(T, call->status);
  lua_setfield(T, -2, "status");
  lua_pushlstring(T, call->reason.data(), call->reason.size());
  lua_setfield(T, -2, "reason");
  lua_call(T, 1, 0);
  return 0;
}

}  // namespace

void open_at_exit_api(lua_State* L, Runtime::Impl& rt) {
  lua_newtable(L);
  rt.at_exit_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushcfunction(L, at_exit);
  lua_setfield(L, -2, "at_exit");
}

bool Runtime::Impl::at_exit_over() const {
  return monotonic_seconds() >= at_exit_deadline_ || signals_seen_.load() != at_exit_signals_;
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
  // The hook looks at the budget every few hundred instructions only, and one instruction may be
  // a C call that takes a while (a string.rep of 100 MB, a full collection): a loop of them ran
  // for minutes past the budget while the run's machines stayed up. As at the run's own
  // deadline, the watchdog's thread makes the hook run at every instruction once the budget is
  // spent, so the first instruction after it raises (and so does every one after a pcall that
  // caught it): only the C call in flight then may finish late, and the long ones look at the
  // budget themselves (collectgarbage, the pattern functions, runara.result's conversion).
  // A second signal does the same through request_stop().
  watchdog_.arm_ending(at_exit_deadline_, [this] { lua_sethook(L_, hook, LUA_MASKCOUNT, 1); });
  lua_pop(L_, 1);  // the list: each call takes its function from the registry
  const AtExitCall base{at_exit_ref_, 0, ending_word(ending.exit), redact(ending.message)};
  const int top = lua_gettop(L_);
  for (int i = count; i >= 1 && !at_exit_over(); --i) {
    AtExitCall call = base;
    call.index = i;
    lua_State* T = nullptr;
    // The thread is made, and an error described, outside a protected call (lua_heap.hpp);
    // the function runs inside one, where the cap holds as it does for the script.
    std::string failure = heap_.unprotected([&] { T = lua_newthread(L_); });
    if (T && lua_cpcall(T, call_at_exit, &call) != 0) {
      const std::string error = heap_.unprotected([&] { failure = redact(describe_value(T, -1)); });
      if (failure.empty()) failure = error;
    }
    if (!failure.empty()) log("runara.at_exit function failed: " + failure);
    lua_settop(L_, top);  // the thread (or an error left where it was raised)
  }
  watchdog_.disarm_ending();  // returns once its callback cannot touch the state any more
  if (at_exit_over()) log("runara.at_exit: functions stopped (" + std::to_string(static_cast<int>(kAtExitBudgetS)) +
                          " s budget spent, or a second signal)");
  lua_sethook(L_, hook, LUA_MASKCOUNT, 1);  // no script code runs after this
}

}  // namespace runara
