// runara.spawn / task:join / task:cancel / task:status / runara.sleep: tasks as script objects.
// A task handle holds only the task's id, so a stale handle can never reach freed memory.
#include <cmath>

#include "script/args.hpp"
#include "script/pretty.hpp"
#include "run/state.hpp"
#include "script/runara_binding.hpp"

namespace runara {

namespace {

const char* const kTaskType = "runara.task";

std::uint64_t check_task_id(lua_State* L, int index, const char* fn) {
  void* block = luaL_testudata(L, index, kTaskType);
  if (!block) args::fail(L, fn, index, "task", "a task (from runara.spawn)");
  return *static_cast<std::uint64_t*>(block);
}

void push_task(lua_State* L, std::uint64_t id) {
  *static_cast<std::uint64_t*>(lua_newuserdata(L, sizeof(std::uint64_t))) = id;
  luaL_getmetatable(L, kTaskType);
  lua_setmetatable(L, -2);
}

const char* state_name(Task::State state) {
  switch (state) {
    case Task::State::ready: return "ready";
    case Task::State::running: return "running";
    case Task::State::waiting: return "waiting";
    case Task::State::done: return "done";
    case Task::State::failed: return "failed";
    case Task::State::cancelled: return "cancelled";
  }
  return "?";
}

int push_results(lua_State* L, const Task& task) {
  lua_rawgeti(L, LUA_REGISTRYINDEX, task.results_ref);
  lua_getfield(L, -1, "n");
  const int n = static_cast<int>(lua_tointeger(L, -1));
  lua_pop(L, 1);
  luaL_checkstack(L, n + 1, "too many results to join");
  const int table = lua_gettop(L);
  for (int i = 1; i <= n; ++i) lua_rawgeti(L, table, i);
  return n;
}

int spawn(lua_State* L) {
  args::function(L, 1, "runara.spawn", "fn");
  auto& rt = impl_of(L);
  if (rt.finalizing_) args::raise(L, "runara.spawn: no new task inside a runara.at_exit function: the run is ending");
  if (rt.stopping()) args::raise(L, "runara.spawn: %s", rt.stop_message().c_str());
  Task* task = rt.scheduler_->spawn(L, 1, lua_gettop(L) - 1, caller_location(L));
  push_task(L, task->id);
  return 1;
}

int join(lua_State* L) {
  const std::uint64_t id = check_task_id(L, 1, "task:join");
  auto& rt = impl_of(L);
  Task* task = rt.scheduler_->find(id);
  if (!task) args::raise(L, "task:join: task %d no longer exists", static_cast<int>(id));
  if (task == rt.scheduler_->task_of(L)) args::raise(L, "task:join: a task cannot join itself");
  switch (task->state) {
    case Task::State::done: return push_results(L, *task);
    case Task::State::failed:
      task->error_observed = true;
      lua_pushlstring(L, task->error.data(), task->error.size());
      return lua_error(L);
    case Task::State::cancelled: args::raise(L, "task %d was cancelled", static_cast<int>(id));
    default: break;
  }
  // If the joiner is cancelled first, its wait id simply finds nobody when the task ends.
  task->joiners.push_back(rt.suspend(L, {}));
  return rt.yield(L);
}

int cancel(lua_State* L) {
  const std::uint64_t id = check_task_id(L, 1, "task:cancel");
  auto& rt = impl_of(L);
  Task* task = rt.scheduler_->find(id);
  if (task == rt.scheduler_->current()) args::raise(L, "task:cancel: a task cannot cancel itself; return from it instead");
  if (task) rt.scheduler_->cancel(task);
  return 0;
}

int status(lua_State* L) {
  const std::uint64_t id = check_task_id(L, 1, "task:status");
  Task* task = impl_of(L).scheduler_->find(id);
  lua_pushstring(L, task ? state_name(task->state) : "done");
  return 1;
}

int task_tostring(lua_State* L) {
  const std::uint64_t id = check_task_id(L, 1, "tostring");
  Task* task = impl_of(L).scheduler_->find(id);
  lua_pushfstring(L, "task %d (%s)", static_cast<int>(id), task ? state_name(task->state) : "done");
  return 1;
}

int task_index(lua_State* L) {
  const std::uint64_t id = check_task_id(L, 1, "task");
  const char* key = lua_tostring(L, 2);
  if (key && std::string(key) == "id") {
    lua_pushnumber(L, static_cast<lua_Number>(id));
    return 1;
  }
  lua_pushvalue(L, 2);
  lua_rawget(L, lua_upvalueindex(1));
  return 1;
}

// A handle no script can reach any more: forget a finished task's results. Failed tasks stay
// until reported at exit, unless their error was observed.
int task_gc(lua_State* L) {
  auto* id = static_cast<std::uint64_t*>(lua_touserdata(L, 1));
  auto& rt = impl_of(L);
  if (!rt.scheduler_) return 0;
  Task* task = rt.scheduler_->find(*id);
  if (task && (task->state == Task::State::done || task->state == Task::State::cancelled ||
               (task->state == Task::State::failed && task->error_observed))) {
    rt.scheduler_->forget(task);
  }
  return 0;
}

struct Sleep {
  uv_timer_t timer;
  Runtime::Impl* rt;
  WaitId wait;
};

void close_sleep(Sleep* sleep) {
  uv_timer_stop(&sleep->timer);
  uv_close(reinterpret_cast<uv_handle_t*>(&sleep->timer),
           [](uv_handle_t* handle) { delete static_cast<Sleep*>(handle->data); });
}

int sleep(lua_State* L) {
  const double seconds = args::number(L, 1, "runara.sleep", "seconds");
  if (!(seconds >= 0) || !std::isfinite(seconds)) args::fail(L, "runara.sleep", 1, "seconds", "a number >= 0");
  auto& rt = impl_of(L);
  auto owned = std::make_unique<Sleep>();
  Sleep* op = owned.get();
  op->rt = &rt;
  op->wait = rt.suspend(L, [op] { close_sleep(op); });  // raises if this task may not wait
  owned.release();  // from here the timer's close callback owns it
  op->timer.data = op;
  uv_timer_init(rt.loop(), &op->timer);
  uv_update_time(rt.loop());  // the loop's cached clock may be stale after running Lua
  uv_timer_start(&op->timer, [](uv_timer_t* timer) {
    auto* sleep = static_cast<Sleep*>(timer->data);
    sleep->rt->resume(sleep->wait, [](lua_State*) { return 0; });
    close_sleep(sleep);
  }, static_cast<std::uint64_t>(std::llround(seconds * 1000)), 0);
  return rt.yield(L);
}

}  // namespace

void open_task_api(lua_State* L, Runtime::Impl& rt) {
  luaL_newmetatable(L, kTaskType);
  lua_newtable(L);  // methods
  lua_pushcfunction(L, cancel);
  lua_setfield(L, -2, "cancel");
  lua_pushcfunction(L, status);
  lua_setfield(L, -2, "status");
  rt.push_async(L, join, 0);
  lua_setfield(L, -2, "join");
  lua_pushcclosure(L, task_index, 1);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, task_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pushcfunction(L, task_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushliteral(L, "task");
  lua_setfield(L, -2, "__metatable");
  mark_displayable(L, -1);  // the REPL shows the task, not "userdata"
  lua_pop(L, 1);

  lua_pushcfunction(L, spawn);
  lua_setfield(L, -2, "spawn");
  rt.push_async(L, sleep, 0);
  lua_setfield(L, -2, "sleep");
}

}  // namespace runara
