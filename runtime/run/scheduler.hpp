// Tasks: the main chunk and every runara.spawn'ed function run as Lua coroutines. A task that
// waits is suspended (WaitId) and resumed later from an event-loop callback; the scheduler never
// resumes a coroutine from inside Lua, only from drain(), which the event loop calls.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <lua.hpp>

namespace runara {

using WaitId = std::uint64_t;

struct Task {
  enum class State { ready, running, waiting, done, failed, cancelled };

  std::uint64_t id = 0;
  lua_State* co = nullptr;
  int co_ref = LUA_NOREF;       // registry reference keeping the coroutine alive
  State state = State::ready;
  std::string origin;           // "file:line" where it was spawned
  bool is_main = false;         // the chunk being run (its end ends the run)

  int start_nargs = -1;         // >= 0 before the first resume: arguments already on co's stack
  std::function<int(lua_State*)> push_resume;  // values the pending wait returns
  // The wait was made by a function wrapped with Context::push_async: the task is resumed with
  // the pending marker alone and pushes the wait's values itself (take_resume_values).
  bool push_in_task = false;

  WaitId wait = 0;
  std::function<void()> on_cancel;

  int results_ref = LUA_NOREF;  // table {n=, ...} of the function's results once done
  std::string error;            // failed: message (describe_value of the error object)
  std::string traceback;
  bool error_observed = false;  // joined (or reported) so it will not be reported again
  bool failure_logged = false;  // its failure is in run.log already (nobody joined it in time)

  std::vector<WaitId> joiners;  // waits of tasks blocked in join() on this one
  struct Deadline {
    double at;         // monotonic seconds
    int depth;         // stack depth of the watchdog.deadline() call: the error unwinds to it
    std::uint64_t token;
  };
  std::vector<Deadline> deadlines;  // active watchdog.deadline() calls, innermost last
};

class Scheduler {
 public:
  explicit Scheduler(lua_State* L);
  ~Scheduler();

  // Creates a task running the function at `fn_index` with the `nargs` values above it.
  Task* spawn(lua_State* from, int fn_index, int nargs, std::string origin, bool is_main = false);

  Task* current() const { return current_; }
  Task* task_of(lua_State* co) const;
  // True if the coroutine at `index` is or ever was a task (finished ones included).
  bool was_task(lua_State* L, int index) const;
  Task* find(std::uint64_t id) const;

  WaitId suspend(lua_State* co, std::function<void()> on_cancel);  // raises if co is no task
  void resume(WaitId wait, std::function<int(lua_State*)> push);
  // `with_location`: prefix the caller's file:line (false when re-raising another error).
  void fail(WaitId wait, std::string message, bool with_location = true);
  void cancel(Task* task);  // stops it where it is; joiners get an error
  // Cancels every unfinished task (the run is stopping). Linear in the tasks: a script may have
  // queued tens of thousands, and one cancel() at a time would scan the ready queue for each.
  void cancel_all();
  // Ends a task's current wait early with an error raised where it waits (deadlines).
  void interrupt_wait(Task* task, std::string message);

  // Runs ready tasks until none is left, or until `stop_requested` says the run is stopping
  // (the rest are cancelled by the caller, not each failed with the stop's message). Returns
  // false if nothing was ready.
  bool drain();
  std::function<bool()> stop_requested;
  bool has_ready() const { return !ready_.empty(); }

  // Called when a task ends (done, failed or cancelled).
  std::function<void(Task&)> on_finished;
  // Light userdata pushed as first value when a wait fails: the async shim raises the rest.
  void* fail_marker() { return &fail_marker_; }
  // Light userdata a task is resumed with when it pushes its wait's values itself: the async
  // shim then calls take_resume_values() (from inside the task, so under its lua_resume).
  void* pending_marker() { return &pending_marker_; }
  // Pushes the values the current wait of the task running on `co` returns; their count.
  int take_resume_values(lua_State* co);

  std::vector<Task*> unfinished() const;
  std::vector<Task*> failed_unobserved() const;
  void forget(Task* task);  // drop a finished task's bookkeeping once nobody can join it

 private:
  void make_ready(Task* task);
  void run(Task* task);
  void finish(Task* task, Task::State state);
  void collect_results(Task* task, int nresults);
  void record_error(Task* task);
  bool push_outside(Task* task, int& nargs);
  void wake_joiners(Task* task);

  lua_State* L_;
  std::uint64_t next_task_ = 1;
  WaitId next_wait_ = 1;
  std::unordered_map<std::uint64_t, std::unique_ptr<Task>> tasks_;
  std::unordered_map<lua_State*, Task*> by_thread_;
  std::unordered_map<WaitId, Task*> waits_;
  std::deque<Task*> ready_;
  Task* current_ = nullptr;
  char fail_marker_ = 0;
  char pending_marker_ = 0;
};

}  // namespace runara
