// The `watchdog` table: scripts may tighten time limits, never loosen them.
//   watchdog.limit(s)            lowers the whole run's hard deadline (not catchable)
//   watchdog.deadline(s, fn,...) the script's own timeout for one call (a catchable error)
//   watchdog.remaining()         seconds left before the run's hard deadline
#include <algorithm>
#include <cmath>
#include <cstring>

#include "script/args.hpp"
#include "run/state.hpp"

namespace runara {

namespace {

int stack_depth(lua_State* L) {
  lua_Debug ar;
  int depth = 0;
  while (lua_getstack(L, depth, &ar)) ++depth;
  return depth;
}

double check_seconds(lua_State* L, const char* fn) {
  const double seconds = args::number(L, 1, fn, "seconds");
  if (!(seconds > 0) || !std::isfinite(seconds)) args::fail(L, fn, 1, "seconds", "a number > 0");
  return seconds;
}

int limit(lua_State* L) {
  const double seconds = check_seconds(L, "watchdog.limit");
  auto& rt = impl_of(L);
  char source[64];
  std::snprintf(source, sizeof source, "%g s (watchdog.limit at %s)", seconds, caller_location(L).c_str());
  rt.set_run_deadline(monotonic_seconds() + seconds, source);
  rt.lower_budget_deadline(monotonic_seconds() + seconds);
  rt.log(std::string("watchdog: the run is limited to ") + source);
  Activity limit;  // `runara plan` counts the worst case until this deadline
  limit.kind = Activity::Kind::script_limit;
  limit.number = seconds;
  rt.activity(limit);
  lua_pushnumber(L, rt.remaining_runtime_s());
  return 1;
}

int remaining(lua_State* L) {
  lua_pushnumber(L, impl_of(L).remaining_runtime_s());
  return 1;
}

// A watchdog.deadline() timer: when it fires while its task waits, the wait ends with an error.
struct DeadlineTimer {
  uv_timer_t timer;  // first member: the uv_timer_t* handed around is this object
  Runtime::Impl* rt;
  std::uint64_t task;
  std::uint64_t token;
};

void on_deadline(uv_timer_t* timer) {
  auto* deadline = reinterpret_cast<DeadlineTimer*>(timer);
  if (Task* target = deadline->rt->scheduler_->find(deadline->task)) {
    // libuv's timers may fire a hair before the clock we compare against: the timer is the
    // authority, so its entry counts as passed from now on.
    const double now = monotonic_seconds();
    for (auto& entry : target->deadlines) {
      if (entry.token == deadline->token) entry.at = std::min(entry.at, now);
    }
    deadline->rt->scheduler_->interrupt_wait(target, "deadline exceeded");
  }
}

// push(seconds, fn) -> token: starts a deadline for the calling task.
int push_deadline(lua_State* L) {
  const double seconds = check_seconds(L, "watchdog.deadline");
  args::function(L, 2, "watchdog.deadline", "fn");
  auto& rt = impl_of(L);
  Task* task = rt.scheduler_->task_of(L);
  if (!task) args::raise(L, "watchdog.deadline: call it from a task, not inside coroutine.create/wrap");
  const std::uint64_t token = rt.next_deadline_token_++;
  // Level 0 is this function, level 1 the wrapper: everything deeper is the guarded call.
  task->deadlines.push_back({monotonic_seconds() + seconds, stack_depth(L) - 1, token});
  auto* deadline = new DeadlineTimer{{}, &rt, task->id, token};
  uv_timer_init(rt.loop(), &deadline->timer);
  uv_update_time(rt.loop());  // the loop's cached clock may be stale after running Lua
  uv_timer_start(&deadline->timer, on_deadline, static_cast<std::uint64_t>(std::ceil(seconds * 1000)), 0);
  rt.deadline_timers_[token] = &deadline->timer;
  lua_pushnumber(L, static_cast<lua_Number>(token));
  return 1;
}

void release_timer(Runtime::Impl& rt, std::uint64_t token) {
  auto it = rt.deadline_timers_.find(token);
  if (it == rt.deadline_timers_.end()) return;
  uv_timer_stop(it->second);
  uv_close(reinterpret_cast<uv_handle_t*>(it->second),
           [](uv_handle_t* h) { delete reinterpret_cast<DeadlineTimer*>(h); });
  rt.deadline_timers_.erase(it);
}

// pop(token) -> expired: ends the deadline; true if it had passed.
int pop_deadline(lua_State* L) {
  const auto token = static_cast<std::uint64_t>(lua_tonumber(L, 1));
  auto& rt = impl_of(L);
  bool expired = false;
  if (Task* task = rt.scheduler_->task_of(L)) {
    auto& list = task->deadlines;
    for (auto it = list.begin(); it != list.end(); ++it) {
      if (it->token == token) {
        expired = monotonic_seconds() >= it->at;
        list.erase(it);
        break;
      }
    }
  }
  release_timer(rt, token);
  lua_pushboolean(L, expired);
  return 1;
}

// pack(...) -> { n = count, ... }, in C on purpose. Between the guarded call's end and pop() the
// deadline has usually passed, and any Lua function running there sits deeper than the
// deadline's frame: the instruction hook would raise "deadline exceeded" inside it, outside
// pcall, so pop() never ran and the expired entry failed every later wait of the task.
// C functions execute no instructions, so the hook cannot fire in them.
int pack_results(lua_State* L) {
  const int n = lua_gettop(L);
  lua_createtable(L, n, 1);
  lua_insert(L, 1);
  for (int i = n; i >= 1; --i) lua_rawseti(L, 1, i);
  lua_pushinteger(L, n);
  lua_setfield(L, 1, "n");
  return 1;
}

// Only C functions may be called from this wrapper outside its pcall (see pack_results).
const char* const kDeadlineWrapper = R"lua(
local push, pop, pack, pcall, unpack, error, format = ...
return function(seconds, fn, ...)
  local token = push(seconds, fn)
  local r = pack(pcall(fn, ...))
  if pop(token) then error(format("deadline of %g s exceeded", seconds), 2) end
  if not r[1] then error(r[2], 0) end
  return unpack(r, 2, r.n)
end
)lua";

}  // namespace

bool Runtime::Impl::deadline_passed(lua_State* L, Task* task) const {
  if (task->deadlines.empty()) return false;
  const double now = monotonic_seconds();
  int depth = -1;
  for (const auto& deadline : task->deadlines) {
    if (now < deadline.at) continue;
    if (depth < 0) depth = stack_depth(L);
    if (depth > deadline.depth) return true;
  }
  return false;
}

void Runtime::Impl::clear_deadlines(Task& task) {
  for (const auto& deadline : task.deadlines) release_timer(*this, deadline.token);
  task.deadlines.clear();
}

void open_watchdog_binding(lua_State* L, Runtime::Impl& rt) {
  (void)rt;
  lua_newtable(L);
  lua_pushcfunction(L, limit);
  lua_setfield(L, -2, "limit");
  lua_pushcfunction(L, remaining);
  lua_setfield(L, -2, "remaining");
  luaL_loadbufferx(L, kDeadlineWrapper, std::strlen(kDeadlineWrapper), "=watchdog", "t");
  lua_pushcfunction(L, push_deadline);
  lua_pushcfunction(L, pop_deadline);
  lua_pushcfunction(L, pack_results);
  lua_getglobal(L, "pcall");
  lua_getglobal(L, "unpack");
  lua_getglobal(L, "error");
  lua_getglobal(L, "string");
  lua_getfield(L, -1, "format");
  lua_remove(L, -2);
  lua_call(L, 7, 1);
  lua_setfield(L, -2, "deadline");
}

}  // namespace runara
