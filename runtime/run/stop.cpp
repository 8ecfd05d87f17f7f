// Stopping a run from outside the script: the watchdog thread, a signal handler or a host
// calls request_stop(); the Lua hook then raises an error at every instruction until the
// script has unwound, so pcall cannot keep it alive; waits are cancelled by the event loop.
#include <signal.h>

#include "run/state.hpp"

namespace runara {

namespace {
// How often (in VM instructions) the hook looks at the stop flag and deadlines while the run
// is healthy. The JIT is off for scripts, so count hooks fire in every loop.
constexpr int kCheckEvery = 1000;
}  // namespace

void Runtime::Impl::request_stop(StopReason reason) {
  int expected = 0;
  stop_.compare_exchange_strong(expected, static_cast<int>(reason));
  if (L_) lua_sethook(L_, hook, LUA_MASKCOUNT, 1);  // documented as safe from signal handlers
  uv_async_send(&wake_);                             // async-signal-safe
  watchdog_.poke();                                  // async-signal-safe: starts the stuck backstop
}

// The script did not unwind after being told to stop: it is inside one long C call the hook
// cannot interrupt. Only the host can decide what to do (the CLI exits; the guardian then
// destroys what the run created). Runs on the watchdog's thread.
void Runtime::Impl::report_stuck() {
  if (events_.stuck) {
    events_.stuck(static_cast<int>(stopped_outcome().exit), stop_message() + "; but the script did not stop within " +
                                                                std::to_string(static_cast<int>(kStuckGraceS)) +
                                                                " s (it is stuck inside a C function)");
  }
}

void Runtime::Impl::request_interrupt() {
  interrupt_ = true;
  if (L_) lua_sethook(L_, hook, LUA_MASKCOUNT, 1);
  uv_async_send(&wake_);
}

void Runtime::Impl::install_hook() { lua_sethook(L_, hook, LUA_MASKCOUNT, kCheckEvery); }

std::string Runtime::Impl::stop_message() const {
  switch (stop_reason()) {
    case StopReason::watchdog:
      return "stopped by the watchdog: the run reached its time limit of " + deadline_source_;
    case StopReason::memory:
      return "stopped: the script used more than its memory limit of " +
             std::to_string(heap_.limit() >> 20) + " MiB (raise it with --max-memory)";
    case StopReason::sigint: return "interrupted (SIGINT)";
    case StopReason::sigterm: return "terminated (SIGTERM)";
    case StopReason::sighup: return "hung up (SIGHUP)";
    case StopReason::cancelled: return "cancelled by the host program";
    case StopReason::none: break;
  }
  return {};
}

void Runtime::Impl::hook(lua_State* L, lua_Debug*) {
  Impl& rt = impl_of(L);
  if (rt.finalizing_) {  // runara.at_exit functions: only their own budget stops them
    if (rt.at_exit_over()) {
      // From now on at every instruction (the watchdog's thread has usually done this already,
      // see run_at_exit): a pcall that catches this error gets one instruction further.
      lua_sethook(L, hook, LUA_MASKCOUNT, 1);
      luaL_error(L, "%s", kAtExitOutOfTime);
    }
    return;
  }
  if (rt.stopping()) {
    lua_sethook(L, hook, LUA_MASKCOUNT, 1);
    luaL_error(L, "%s", rt.stop_message().c_str());
  }
  if (rt.interrupt_) {
    lua_sethook(L, hook, LUA_MASKCOUNT, 1);
    luaL_error(L, "interrupted");
  }
  Task* task = rt.scheduler_ ? rt.scheduler_->current() : nullptr;
  if (task && rt.deadline_passed(L, task)) luaL_error(L, "deadline exceeded");
}

}  // namespace runara
