#include "run/scheduler.hpp"

#include "run/record.hpp"
#include "script/traceback.hpp"

#include <algorithm>

#include "script/args.hpp"
#include "guards/lua_heap.hpp"
#include "script/values.hpp"

namespace runara {

namespace {
// Registry key of a weak-keyed set of every coroutine that has been a task.
char kTaskThreadsKey;
}  // namespace

Scheduler::Scheduler(lua_State* L) : L_(L) {
  lua_pushlightuserdata(L, &kTaskThreadsKey);
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_rawset(L, LUA_REGISTRYINDEX);
}

Scheduler::~Scheduler() = default;

bool Scheduler::was_task(lua_State* L, int index) const {
  if (lua_type(L, index) != LUA_TTHREAD) return false;
  index = index < 0 ? lua_gettop(L) + index + 1 : index;
  lua_pushlightuserdata(L, &kTaskThreadsKey);
  lua_rawget(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, index);
  lua_rawget(L, -2);
  const bool found = lua_toboolean(L, -1);
  lua_pop(L, 2);
  return found;
}

Task* Scheduler::spawn(lua_State* from, int fn_index, int nargs, std::string origin, bool is_main) {
  auto task = std::make_unique<Task>();
  task->id = next_task_++;
  task->origin = std::move(origin);
  task->is_main = is_main;
  task->co = lua_newthread(from);
  lua_pushlightuserdata(from, &kTaskThreadsKey);
  lua_rawget(from, LUA_REGISTRYINDEX);
  lua_pushvalue(from, -2);
  lua_pushboolean(from, 1);
  lua_rawset(from, -3);
  lua_pop(from, 1);
  task->co_ref = luaL_ref(from, LUA_REGISTRYINDEX);
  lua_pushvalue(from, fn_index);
  lua_xmove(from, task->co, 1);
  for (int i = 1; i <= nargs; ++i) {
    lua_pushvalue(from, fn_index + i);
    lua_xmove(from, task->co, 1);
  }
  task->start_nargs = nargs;
  Task* raw = task.get();
  by_thread_[raw->co] = raw;
  tasks_[raw->id] = std::move(task);
  make_ready(raw);
  return raw;
}

Task* Scheduler::task_of(lua_State* co) const {
  auto it = by_thread_.find(co);
  return it == by_thread_.end() ? nullptr : it->second;
}

Task* Scheduler::find(std::uint64_t id) const {
  auto it = tasks_.find(id);
  return it == tasks_.end() ? nullptr : it->second.get();
}

WaitId Scheduler::suspend(lua_State* co, std::function<void()> on_cancel) {
  Task* task = task_of(co);
  if (!task || task != current_) {
    args::raise(co, "cannot wait inside a coroutine made with coroutine.create/wrap; "
                   "run the waiting code in a task (runara.spawn) instead");
  }
  task->wait = next_wait_++;
  task->on_cancel = std::move(on_cancel);
  task->state = Task::State::waiting;
  waits_[task->wait] = task;
  return task->wait;
}

void Scheduler::resume(WaitId wait, std::function<int(lua_State*)> push) {
  auto it = waits_.find(wait);
  if (it == waits_.end()) return;  // cancelled meanwhile: nobody is waiting any more
  Task* task = it->second;
  waits_.erase(it);
  task->wait = 0;
  task->on_cancel = nullptr;
  task->push_resume = std::move(push);
  make_ready(task);
}

void Scheduler::fail(WaitId wait, std::string message, bool with_location) {
  void* marker = fail_marker();
  resume(wait, [marker, with_location, message = std::move(message)](lua_State* co) {
    lua_pushlightuserdata(co, marker);
    lua_pushlstring(co, message.data(), message.size());
    lua_pushboolean(co, with_location);
    return 3;
  });
}

void Scheduler::make_ready(Task* task) {
  task->state = Task::State::ready;
  ready_.push_back(task);
}

bool Scheduler::drain() {
  if (ready_.empty()) return false;
  while (!ready_.empty()) {
    if (stop_requested && stop_requested()) break;
    Task* task = ready_.front();
    ready_.pop_front();
    if (task->state == Task::State::ready) run(task);
  }
  return true;
}

void Scheduler::run(Task* task) {
  lua_State* co = task->co;
  int nargs = 0;
  if (task->start_nargs >= 0) {
    nargs = task->start_nargs;
    task->start_nargs = -1;
  } else {
    if (lua_status(co) != LUA_YIELD) return;  // defensive: only a suspended coroutine resumes
    lua_settop(co, 0);
    if (task->push_resume && task->push_in_task) {
      // DANGER: nothing protects a suspended coroutine here; a value that needs memory, pushed
      // from this loop, panics LuaJIT at the cap. The task pushes them itself once resumed
      // (take_resume_values, under its lua_resume): here only a light userdata goes, which
      // takes no memory (the C function that yielded has LUA_MINSTACK free slots).
      lua_pushlightuserdata(co, pending_marker());
      nargs = 1;
    } else if (task->push_resume && !push_outside(task, nargs)) {
      return;
    }
  }
  task->state = Task::State::running;
  current_ = task;
  const int status = lua_resume(co, nargs);
  current_ = nullptr;
  if (task->state == Task::State::cancelled) return;
  if (status == LUA_YIELD) {
    if (task->wait == 0) make_ready(task);  // a bare coroutine.yield(): let the others run
    return;
  }
  // The coroutine has returned or raised: its results (a new table) and its traceback (a new
  // string) are built from here, outside any protected call.
  LuaHeap& heap = LuaHeap::of(L_);
  const int top = lua_gettop(L_);
  if (status == 0) {
    const std::string error = heap.unprotected([&] { collect_results(task, lua_gettop(co)); });
    if (error.empty()) {
      finish(task, Task::State::done);
      return;
    }
    task->error = error;
  } else {
    const std::string error = heap.unprotected([&] { record_error(task); });
    if (!error.empty() && task->error.empty()) task->error = error;
  }
  lua_settop(L_, top);
  finish(task, Task::State::failed);
}

// A wait ended by a function that was not wrapped with push_async (a host's primitive may
// yield without it): its values are pushed here, from the loop, as an unprotected section
// (lua_heap.hpp). False if that failed: the task has failed, and its coroutine is given up.
bool Scheduler::push_outside(Task* task, int& nargs) {
  auto push = std::move(task->push_resume);
  task->push_resume = nullptr;
  const std::string error = LuaHeap::of(L_).unprotected([&] { nargs = push(task->co); });
  if (error.empty()) return true;
  task->error = error;
  finish(task, Task::State::failed);
  return false;
}

int Scheduler::take_resume_values(lua_State* co) {
  Task* task = task_of(co);
  if (!task || task != current_ || !task->push_resume) return 0;
  auto push = std::move(task->push_resume);
  task->push_resume = nullptr;
  return push(co);  // raising here (not enough memory) is an error of the task, where it waited
}

void Scheduler::collect_results(Task* task, int nresults) {
  lua_State* co = task->co;
  lua_createtable(co, nresults, 1);
  lua_insert(co, 1);
  for (int i = nresults; i >= 1; --i) lua_rawseti(co, 1, i);
  lua_pushinteger(co, nresults);
  lua_setfield(co, 1, "n");
  task->results_ref = luaL_ref(co, LUA_REGISTRYINDEX);
}

void Scheduler::record_error(Task* task) {
  lua_State* co = task->co;
  task->error = describe_value(co, -1);
  // A C function spawned directly (runara.spawn(droplet.create, ...)) fails with no file:line of
  // the script's in its message: the spawn's line is where the script asked for it.
  if (!task->is_main && task->origin != "?" && error_location(task->error).empty()) {
    task->error = task->origin + ": " + task->error;
  }
  luaL_traceback(L_, co, nullptr, 0);
  task->traceback = script_traceback(lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "");
  lua_pop(L_, 1);
}

void Scheduler::finish(Task* task, Task::State state) {
  task->state = state;
  if (task->wait) {
    waits_.erase(task->wait);
    task->wait = 0;
  }
  task->on_cancel = nullptr;
  task->push_resume = nullptr;  // values never taken: what they hold goes now
  by_thread_.erase(task->co);
  luaL_unref(L_, LUA_REGISTRYINDEX, task->co_ref);
  task->co_ref = LUA_NOREF;
  task->co = nullptr;
  wake_joiners(task);
  if (on_finished) on_finished(*task);
}

void Scheduler::wake_joiners(Task* task) {
  std::vector<WaitId> joiners;
  joiners.swap(task->joiners);
  for (WaitId wait : joiners) {
    if (task->state == Task::State::done) {
      const int ref = task->results_ref;
      resume(wait, [ref](lua_State* co) {
        lua_rawgeti(co, LUA_REGISTRYINDEX, ref);
        lua_getfield(co, -1, "n");
        const int n = static_cast<int>(lua_tointeger(co, -1));
        lua_pop(co, 1);
        luaL_checkstack(co, n + 1, "too many results to join");
        for (int i = 1; i <= n; ++i) lua_rawgeti(co, -i, i);
        lua_remove(co, -n - 1);
        return n;
      });
    } else if (task->state == Task::State::failed) {
      task->error_observed = true;
      fail(wait, task->error, false);
    } else {
      fail(wait, "task " + std::to_string(task->id) + " was cancelled");
    }
  }
}

void Scheduler::interrupt_wait(Task* task, std::string message) {
  if (task->state != Task::State::waiting || !task->wait) return;
  if (task->on_cancel) {
    auto on_cancel = std::move(task->on_cancel);
    on_cancel();
  }
  fail(task->wait, std::move(message));
}

void Scheduler::cancel(Task* task) {
  if (task == current_) return;  // a running task ends by returning or raising
  if (task->state == Task::State::done || task->state == Task::State::failed ||
      task->state == Task::State::cancelled) {
    return;
  }
  if (task->state == Task::State::waiting && task->on_cancel) {
    auto on_cancel = std::move(task->on_cancel);
    on_cancel();
  }
  ready_.erase(std::remove(ready_.begin(), ready_.end(), task), ready_.end());
  finish(task, Task::State::cancelled);
}

void Scheduler::cancel_all() {
  // Every task in the ready queue is among those cancelled below (or already finished): the
  // queue goes at once, so that cancel() finds nothing to scan.
  ready_.clear();
  for (Task* task : unfinished()) cancel(task);
}

std::vector<Task*> Scheduler::unfinished() const {
  std::vector<Task*> out;
  for (const auto& [id, task] : tasks_) {
    if (task->state != Task::State::done && task->state != Task::State::failed &&
        task->state != Task::State::cancelled) {
      out.push_back(task.get());
    }
  }
  std::sort(out.begin(), out.end(), [](Task* a, Task* b) { return a->id < b->id; });
  return out;
}

std::vector<Task*> Scheduler::failed_unobserved() const {
  std::vector<Task*> out;
  for (const auto& [id, task] : tasks_) {
    if (task->state == Task::State::failed && !task->error_observed && !task->is_main) {
      out.push_back(task.get());
    }
  }
  std::sort(out.begin(), out.end(), [](Task* a, Task* b) { return a->id < b->id; });
  return out;
}

void Scheduler::forget(Task* task) {
  if (task->results_ref != LUA_NOREF) luaL_unref(L_, LUA_REGISTRYINDEX, task->results_ref);
  tasks_.erase(task->id);
}

}  // namespace runara
